//! A session a window at a time, so no answer grows with the session:
//!
//! - `GET /api/sessions/{id}`: the session (as the list has it) with its forks
//! - `GET /api/sessions/{id}/events?from=SEQ&limit=N`: `limit` events from `from` (default
//!   1 and [`DEFAULT_LIMIT`], at most [`MAX_LIMIT`]) with the plan before the first
//! - `GET /api/sessions/{id}/summary?buckets=N`: the minimap: the session's seqs in at most
//!   N buckets (default [`DEFAULT_BUCKETS`], at most [`MAX_BUCKETS`]) with their marks counted,
//!   the first [`MAX_MARKS`] marks, the forks, and how much of the session is indexed
//! - `GET /api/sessions/{id}/marks?after=SEQ` (or `before=SEQ`) `&kinds=refusal,flag`: the
//!   next (previous) mark of those kinds

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use planlog_core::{EventLog, LogError, Seq, SessionId, SessionInfo, UserError};
use planlog_export::viewer;
use planlog_index::{Mark, MarkKind};
use serde_json::{Value, json};

use super::Ui;
use super::api::{Answer, ApiError, blocking, json_answer, session_id, with_index};

/// Events in a window when the page does not say.
pub(crate) const DEFAULT_LIMIT: u64 = 200;
/// The most events one window holds.
pub(crate) const MAX_LIMIT: u64 = 1_000;
/// Minimap buckets when the page does not say.
pub(crate) const DEFAULT_BUCKETS: u64 = 200;
/// The most minimap buckets.
pub(crate) const MAX_BUCKETS: u64 = 4_000;
/// The most marks a summary lists one by one (the buckets count them all).
pub(crate) const MAX_MARKS: usize = 2_000;

fn number(query: &HashMap<String, String>, name: &str) -> Result<Option<u64>, ApiError> {
    query
        .get(name)
        .map(|v| {
            v.parse::<u64>().map_err(|_| {
                ApiError(
                    StatusCode::BAD_REQUEST,
                    format!("{name}={v:?} is not a whole number"),
                )
            })
        })
        .transpose()
}

fn info_of(log: &dyn EventLog, id: &SessionId) -> Result<SessionInfo, ApiError> {
    Ok(log
        .session(id)?
        .ok_or_else(|| LogError::from(UserError::UnknownSession(id.clone())))?)
}

fn forks_of(log: &dyn EventLog, id: &SessionId) -> Result<Vec<Value>, ApiError> {
    Ok(log
        .sessions()?
        .iter()
        .filter(|s| matches!(&s.origin, planlog_core::events::Origin::Fork { parent, .. } if parent == id))
        .map(viewer::session_json)
        .collect())
}

fn mark_json(m: &Mark) -> Value {
    json!({"seq": m.seq, "kind": m.kind.as_str(), "text": m.text})
}

/// `GET /api/sessions/{id}`.
pub(crate) async fn session(State(ui): State<Arc<Ui>>, Path(id): Path<String>) -> Answer {
    let id = session_id(&id)?;
    let v = blocking(&ui, move |log| {
        let mut v = viewer::session_json(&info_of(log, &id)?);
        v["forks"] = Value::Array(forks_of(log, &id)?);
        Ok(v)
    })
    .await?;
    json_answer(v)
}

/// `GET /api/sessions/{id}/events?from=SEQ&limit=N`.
pub(crate) async fn events(
    State(ui): State<Arc<Ui>>,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let id = session_id(&id)?;
    let from = number(&query, "from")?.unwrap_or(1).max(1);
    let limit = number(&query, "limit")?
        .unwrap_or(DEFAULT_LIMIT)
        .clamp(1, MAX_LIMIT);
    let v = blocking(&ui, move |log| {
        let last = info_of(log, &id)?.events;
        if from > last {
            return Err(LogError::from(UserError::SeqOutOfRange {
                session: id,
                seq: from,
                last,
            })
            .into());
        }
        let to = (from + limit - 1).min(last);
        let before = match Seq::new(from - 1) {
            Ok(at) => log.state_at(&id, at)?,
            Err(_) => planlog_core::SessionState::default(),
        };
        let plan_before: Value =
            serde_json::from_str(&before.plan.to_json()).unwrap_or(Value::Null);
        let range = |n: u64| Seq::new(n).map_err(LogError::from);
        let window = log.read(&id, range(from)?, Some(range(to)?))?;
        let earlier = planlog_audit::plans_in(log, &id);
        // Written as text an event at a time: no tree of the whole window is held.
        let mut body =
            format!("{{\"last\":{last},\"from\":{from},\"plan_before\":{plan_before},\"events\":[");
        for (i, v) in viewer::event_values(before, &window, &earlier).enumerate() {
            if i > 0 {
                body.push(',');
            }
            body.push_str(&v.to_string());
        }
        body.push_str("]}");
        Ok(body)
    })
    .await?;
    Ok(([(axum::http::header::CONTENT_TYPE, "application/json")], v).into_response())
}

/// `GET /api/sessions/{id}/summary?buckets=N`.
pub(crate) async fn summary(
    State(ui): State<Arc<Ui>>,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let id = session_id(&id)?;
    let buckets = number(&query, "buckets")?
        .unwrap_or(DEFAULT_BUCKETS)
        .clamp(1, MAX_BUCKETS);
    ui.indexer.focus(&id);
    let v = with_index(&ui, move |log, index| {
        let info = info_of(log, &id)?;
        let last = info.events;
        let indexed = index.indexed(&id).map_err(ApiError::from)?.min(last);
        let buckets: Vec<Value> = index
            .buckets(&id, last, buckets)
            .map_err(ApiError::from)?
            .iter()
            .map(|b| {
                let mut v = json!({"from": b.from, "to": b.to});
                for (kind, n) in MarkKind::ALL.iter().zip(b.counts) {
                    v[kind.as_str()] = json!(n);
                }
                v
            })
            .collect();
        let marks = index
            .marks(&id, 1, last, MAX_MARKS + 1)
            .map_err(ApiError::from)?;
        Ok(json!({
            "last": last,
            "indexed": indexed,
            "buckets": buckets,
            "marks": marks.iter().take(MAX_MARKS).map(mark_json).collect::<Vec<_>>(),
            "marks_complete": marks.len() <= MAX_MARKS,
            "forks": forks_of(log, &id)?,
            "first_at": info.created.to_string(),
            "last_at": info.updated.to_string(),
        }))
    })
    .await?;
    json_answer(v)
}

/// `GET /api/sessions/{id}/marks?after=SEQ|before=SEQ&kinds=refusal,flag`.
pub(crate) async fn marks(
    State(ui): State<Arc<Ui>>,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let id = session_id(&id)?;
    let (seq, forward) = match (number(&query, "after")?, number(&query, "before")?) {
        (Some(s), None) => (s, true),
        (None, Some(s)) => (s, false),
        _ => {
            return Err(ApiError(
                StatusCode::BAD_REQUEST,
                "give after=SEQ (the next mark) or before=SEQ (the previous one)".to_owned(),
            ));
        }
    };
    let kinds = match query.get("kinds") {
        None => MarkKind::ALL.to_vec(),
        Some(words) => words
            .split(',')
            .map(|w| {
                MarkKind::from_word(w.trim()).ok_or_else(|| {
                    ApiError(
                        StatusCode::BAD_REQUEST,
                        format!("{w:?} is not a kind of mark (refusal, flag, compaction, restore)"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    let v = with_index(&ui, move |log, index| {
        let last = info_of(log, &id)?.events;
        let found = index
            .next_mark(&id, seq, forward, &kinds)
            .map_err(ApiError::from)?;
        Ok(json!({
            "mark": found.as_ref().filter(|m| m.seq <= last).map(mark_json),
            "indexed": index.indexed(&id).map_err(ApiError::from)?.min(last),
            "last": last,
        }))
    })
    .await?;
    json_answer(v)
}
