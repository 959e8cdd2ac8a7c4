//! `GET /api/search?q=TEXT&limit=N`: items whose text holds TEXT (case-insensitive), grouped
//! per item and session with every matching text the item had and the seqs it had it, then
//! refusals and flags whose words hold it (at most `limit`, default and maximum 100). From
//! the index: the answer says how much of the store it covers (`indexed` of `events`).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use planlog_index::Hit;
use serde_json::{Value, json};

use super::Ui;
use super::api::{Answer, ApiError, json_answer, with_index};

/// The most hits one answer holds.
const MAX_HITS: usize = 100;

/// The name the page shows for a session: its title, first prompt or label, else its id.
fn name_of(info: &planlog_core::SessionInfo) -> String {
    let d = info.description.as_ref();
    d.and_then(|d| d.title.clone())
        .or_else(|| d.and_then(|d| d.first_prompt.clone()))
        .or_else(|| info.label.clone())
        .unwrap_or_else(|| info.id.to_string())
}

pub(crate) async fn search(
    State(ui): State<Arc<Ui>>,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let needle = query
        .get("q")
        .map(|q| q.trim().to_owned())
        .unwrap_or_default();
    if needle.is_empty() {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            "give the text to find as ?q=TEXT".to_owned(),
        ));
    }
    let limit = query
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(MAX_HITS)
        .clamp(1, MAX_HITS);
    let indexer = Arc::clone(&ui.indexer);
    let v = with_index(&ui, move |log, index| {
        let hits = index.search(&needle, limit).map_err(ApiError::from)?;
        let sessions = log.sessions()?;
        let covered = index.coverage(&sessions).map_err(ApiError::from)?;
        let names: HashMap<String, String> = sessions
            .iter()
            .map(|s| (s.id.to_string(), name_of(s)))
            .collect();
        let name = |s: &str| names.get(s).cloned().unwrap_or_else(|| s.to_owned());
        let hits: Vec<Value> = hits
            .iter()
            .map(|h| match h {
                Hit::Item { session, item, texts } => json!({
                    "type": "item",
                    "session": session,
                    "name": name(session),
                    "item": item,
                    "texts": texts.iter().map(|t| json!({"content": t.content, "first": t.first, "last": t.last})).collect::<Vec<_>>(),
                }),
                Hit::Mark { session, mark } => json!({
                    "type": mark.kind.as_str(),
                    "session": session,
                    "name": name(session),
                    "seq": mark.seq,
                    "text": mark.text,
                }),
            })
            .collect();
        Ok(json!({
            "hits": hits,
            "indexed": covered.events,
            "events": covered.of,
            "index_error": indexer.error(),
        }))
    })
    .await?;
    json_answer(v)
}
