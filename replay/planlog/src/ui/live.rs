//! `GET /api/stream`: server-sent events, one `{"id": SESSION, "events": N}` message whenever
//! a session's event count changes (a write by any process: an agent, another viewer, the
//! CLI). A file store is polled every quarter second (writers may be other processes, which
//! no in-process signal would see); a PostgreSQL store wakes the stream at once with the
//! `NOTIFY` of each append, from any machine (and is polled every two seconds besides).

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use planlog_core::SessionId;

use super::Ui;

const POLL: Duration = Duration::from_millis(250);
const NOTIFY_WAIT: Duration = Duration::from_secs(2);

struct Watch {
    ui: Arc<Ui>,
    seen: Option<HashMap<SessionId, u64>>,
    pending: VecDeque<String>,
}

/// Every session's event count now (`None` when the store cannot be read this time).
async fn counts(ui: &Arc<Ui>) -> Option<HashMap<SessionId, u64>> {
    let ui = Arc::clone(ui);
    tokio::task::spawn_blocking(move || ui.log.sessions())
        .await
        .ok()?
        .ok()
        .map(|list| list.into_iter().map(|s| (s.id, s.events)).collect())
}

/// The stream.
pub(crate) async fn stream(
    State(ui): State<Arc<Ui>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let start = Watch {
        seen: counts(&ui).await,
        ui,
        pending: VecDeque::new(),
    };
    let events = stream::unfold(start, |mut w| async move {
        loop {
            if let Some(message) = w.pending.pop_front() {
                return Some((Ok(Event::default().data(message)), w));
            }
            match &w.ui.changes {
                Some(pg) => {
                    let pg = Arc::clone(pg);
                    let _ =
                        tokio::task::spawn_blocking(move || pg.wait_for_change(NOTIFY_WAIT)).await;
                }
                None => tokio::time::sleep(POLL).await,
            }
            let Some(now) = counts(&w.ui).await else {
                continue;
            };
            if let Some(before) = &w.seen {
                let mut changed: Vec<(&SessionId, &u64)> = now
                    .iter()
                    .filter(|(id, n)| before.get(*id) != Some(*n))
                    .collect();
                changed.sort();
                for (id, n) in changed {
                    w.pending
                        .push_back(serde_json::json!({"id": id.as_str(), "events": n}).to_string());
                }
            }
            w.seen = Some(now);
        }
    });
    Sse::new(events).keep_alive(KeepAlive::default())
}
