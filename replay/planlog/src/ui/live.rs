//! Watching the store for changes, once for the whole viewer, and `GET /api/stream`:
//! server-sent events, one `{"id": SESSION, "events": N}` message whenever a session's event
//! count changes (a write by any process: an agent, another viewer, the CLI).
//!
//! One watcher task serves every open stream and wakes the indexer. A file store is looked
//! at every quarter second, and its catalogue read only when its journal's or its index's
//! size or modification time moved (and every five seconds besides); a PostgreSQL store
//! wakes the watcher at once with the `NOTIFY` of each append, from any machine (and is read
//! every two seconds besides).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use planlog_core::SessionId;
use tokio::sync::broadcast;

use super::Ui;

const POLL: Duration = Duration::from_millis(250);
const NOTIFY_WAIT: Duration = Duration::from_secs(2);
/// A file store's catalogue is read at least this often, whatever its metadata says.
const ANYWAY: Duration = Duration::from_secs(5);

/// Every session's event count now (`None` when the store cannot be read this time).
async fn counts(ui: &Arc<Ui>) -> Option<HashMap<SessionId, u64>> {
    let ui = Arc::clone(ui);
    tokio::task::spawn_blocking(move || ui.log.sessions())
        .await
        .ok()?
        .ok()
        .map(|list| list.into_iter().map(|s| (s.id, s.events)).collect())
}

/// A file's size and modification time, as far as they can be read.
type FileStamp = Option<(u64, Option<SystemTime>)>;

/// What a file store's metadata says of it (`None` for a database): its journal's, where
/// every append lands first (a hook's append touches nothing else until
/// [`planlog_store::LAZY_LIMIT`] records wait to be indexed), and its index's (a store of
/// the older layout has no journal).
fn stamp(ui: &Ui) -> Option<(FileStamp, FileStamp)> {
    if ui.changes.is_some() {
        return None;
    }
    let of = |path: &std::path::Path| {
        let m = std::fs::metadata(path).ok()?;
        Some((m.len(), m.modified().ok()))
    };
    Some((
        of(&planlog_store::journal_path(&ui.store.path)),
        of(&ui.store.path),
    ))
}

/// The watcher: runs for the viewer's life, sending each change to `tx`.
pub(crate) async fn watch(ui: Arc<Ui>, tx: broadcast::Sender<String>) {
    let mut seen = counts(&ui).await;
    let mut last_stamp = stamp(&ui);
    let mut last_read = Instant::now();
    loop {
        match &ui.changes {
            Some(pg) => {
                let pg = Arc::clone(pg);
                let _ = tokio::task::spawn_blocking(move || pg.wait_for_change(NOTIFY_WAIT)).await;
            }
            None => {
                tokio::time::sleep(POLL).await;
                let now = stamp(&ui);
                if now == last_stamp && last_read.elapsed() < ANYWAY {
                    continue;
                }
                last_stamp = now;
            }
        }
        last_read = Instant::now();
        let Some(now) = counts(&ui).await else {
            continue;
        };
        if let Some(before) = &seen {
            let mut changed: Vec<(&SessionId, &u64)> = now
                .iter()
                .filter(|(id, n)| before.get(*id) != Some(*n))
                .collect();
            let gone = before.keys().any(|id| !now.contains_key(id));
            if !changed.is_empty() || gone {
                ui.indexer.wake();
            }
            changed.sort();
            for (id, n) in changed {
                // No stream open: nobody to tell.
                let _ = tx.send(serde_json::json!({"id": id.as_str(), "events": n}).to_string());
            }
        }
        seen = Some(now);
    }
}

/// The stream.
pub(crate) async fn stream(
    State(ui): State<Arc<Ui>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = ui.changed.subscribe();
    let events = stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(message) => return Some((Ok(Event::default().data(message)), rx)),
                // A slow page missed some: the next change it gets brings it up to date.
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(events).keep_alive(KeepAlive::default())
}
