//! The page, its assets, and the JSON API the page uses (documented in the README):
//!
//! - `GET /api/sessions`: every session (`id`, `label`, `origin`, `events`, `done`, `total`, …)
//! - a session, its events a window at a time, its summary and marks: see `window`
//! - `GET /api/sessions/{id}/plan?at=SEQ`: the plan after SEQ (default: now), the same array
//!   `planlog show --json --at SEQ` prints
//! - `GET /api/search?q=TEXT`: see `search`
//! - `POST /api/sessions/{id}/fork` with `{"at": SEQ, "label": "..."}`: a fork; `{"id": NEW}`
//! - `GET /api/stream`: server-sent events as sessions change
//!
//! Errors are JSON `{"error": "..."}` with 400 (a malformed id, seq or body), 403 (see
//! `guard`), 404 (no such session, seq or route).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use planlog_core::{EventLog, LogError, PlanSession, Seq, SessionId, UserError};
use planlog_export::viewer::{self, APP_CSS, APP_JS};
use planlog_store::host::{PlanFiles, SystemEnv};
use serde_json::{Value, json};

use super::{Ui, guard, live, search, window};

/// A JSON error answer.
pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({"error": message}))).into_response()
}

/// Why a request failed.
pub(crate) struct ApiError(pub(crate) StatusCode, pub(crate) String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        error(self.0, &self.1)
    }
}

impl From<LogError> for ApiError {
    fn from(e: LogError) -> Self {
        let status = match &e {
            LogError::User(UserError::UnknownSession(_) | UserError::SeqOutOfRange { .. }) => {
                StatusCode::NOT_FOUND
            }
            LogError::User(_) => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError(status, e.to_string())
    }
}

impl From<planlog_index::IndexError> for ApiError {
    fn from(e: planlog_index::IndexError) -> Self {
        match e {
            planlog_index::IndexError::Store(e) => e.into(),
            e @ planlog_index::IndexError::File { .. } => {
                ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string())
            }
        }
    }
}

/// A handler's answer.
pub(crate) type Answer = Result<Response, ApiError>;

/// The routes, behind the guard.
pub(crate) fn router(ui: Arc<Ui>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/assets/app.js", get(js))
        .route("/assets/app.css", get(css))
        .route("/api/sessions", get(sessions))
        .route("/api/sessions/{id}", get(window::session))
        .route("/api/sessions/{id}/events", get(window::events))
        .route("/api/sessions/{id}/summary", get(window::summary))
        .route("/api/sessions/{id}/marks", get(window::marks))
        .route("/api/sessions/{id}/plan", get(plan))
        .route("/api/sessions/{id}/fork", post(fork))
        .route("/api/search", get(search::search))
        .route("/api/stream", get(live::stream))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such page or API route") })
        .layer(middleware::from_fn_with_state(
            Arc::clone(&ui),
            guard::check,
        ))
        .with_state(ui)
}

/// Runs blocking store work on the blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    ui: &Arc<Ui>,
    f: impl FnOnce(&dyn EventLog) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    // A few store reads at a time: each holds a window of events, so memory stays bounded
    // however many requests arrive together.
    let _turn = ui
        .reads
        .acquire()
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let ui = Arc::clone(ui);
    tokio::task::spawn_blocking(move || f(&*ui.log))
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
}

/// Runs blocking work that needs the index too (503 when the viewer has none).
pub(crate) async fn with_index<T: Send + 'static>(
    ui: &Arc<Ui>,
    f: impl FnOnce(&dyn EventLog, &planlog_index::Index) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let indexer = Arc::clone(&ui.indexer);
    blocking(ui, move |log| {
        let index = indexer
            .index()
            .map_err(|why| ApiError(StatusCode::SERVICE_UNAVAILABLE, format!("no index: {why}")))?;
        f(log, index)
    })
    .await
}

pub(crate) fn session_id(text: &str) -> Result<SessionId, ApiError> {
    SessionId::new(text.to_owned()).map_err(|e| {
        ApiError(
            StatusCode::BAD_REQUEST,
            format!("{text:?} is not a session id: {e}"),
        )
    })
}

pub(crate) fn json_answer(v: Value) -> Answer {
    Ok(axum::Json(v).into_response())
}

async fn page(State(ui): State<Arc<Ui>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        viewer::served_page(&ui.token, ui.read_only),
    )
        .into_response()
}

async fn js() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        APP_JS,
    )
        .into_response()
}

async fn css() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], APP_CSS).into_response()
}

async fn sessions(State(ui): State<Arc<Ui>>) -> Answer {
    let list = blocking(&ui, |log| Ok(log.sessions()?)).await?;
    json_answer(Value::Array(
        list.iter().map(viewer::session_json).collect(),
    ))
}

fn seq_of(text: &str) -> Result<Seq, ApiError> {
    text.parse::<u64>()
        .ok()
        .and_then(|n| Seq::new(n).ok())
        .ok_or_else(|| {
            ApiError(
                StatusCode::BAD_REQUEST,
                format!("{text:?} is not a seq (a whole number from 1)"),
            )
        })
}

async fn plan(
    State(ui): State<Arc<Ui>>,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let id = session_id(&id)?;
    let at = query.get("at").map(|a| seq_of(a)).transpose()?;
    let plan = blocking(&ui, move |log| {
        let info = log
            .session(&id)?
            .ok_or_else(|| LogError::from(UserError::UnknownSession(id.clone())))?;
        let at = at.unwrap_or(
            Seq::new(info.events)
                .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?,
        );
        if at.get() > info.events {
            return Err(LogError::from(UserError::SeqOutOfRange {
                session: id,
                seq: at.get(),
                last: info.events,
            })
            .into());
        }
        Ok(log.state_at(&id, at)?.plan)
    })
    .await?;
    let array: Value = serde_json::from_str(&plan.to_json()).unwrap_or(Value::Null);
    json_answer(array)
}

async fn fork(State(ui): State<Arc<Ui>>, Path(id): Path<String>, body: Bytes) -> Answer {
    let id = session_id(&id)?;
    let body: Value = serde_json::from_slice(&body).map_err(|e| {
        ApiError(
            StatusCode::BAD_REQUEST,
            format!("the body must be JSON such as {{\"at\": 3, \"label\": \"try b\"}} ({e})"),
        )
    })?;
    let at = body
        .get("at")
        .and_then(Value::as_u64)
        .and_then(|n| Seq::new(n).ok())
        .ok_or_else(|| {
            ApiError(
                StatusCode::BAD_REQUEST,
                "\"at\" must be the seq to fork after (a whole number from 1)".to_owned(),
            )
        })?;
    let label = match body.get("label") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(ApiError(
                StatusCode::BAD_REQUEST,
                "\"label\" must be a string".to_owned(),
            ));
        }
    };
    let ui2 = Arc::clone(&ui);
    let new = tokio::task::spawn_blocking(move || {
        let log = Arc::clone(&ui2.log);
        let last = log
            .session(&id)?
            .ok_or_else(|| LogError::from(UserError::UnknownSession(id.clone())))?
            .events;
        if at.get() > last {
            return Err(LogError::from(UserError::SeqOutOfRange {
                session: id,
                seq: at.get(),
                last,
            })
            .into());
        }
        let mut builder =
            PlanSession::builder(log, SystemEnv).sink(PlanFiles::beside(&ui2.store.path));
        if let Some(label) = label {
            builder = builder.label(label);
        }
        let fork = builder.fork(&id, at).map_err(ApiError::from)?;
        Ok::<_, ApiError>(fork.id().to_string())
    })
    .await
    .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))??;
    Ok((StatusCode::CREATED, axum::Json(json!({"id": new}))).into_response())
}
