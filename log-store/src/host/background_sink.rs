//! [`BackgroundSink`]: a plan sink that does its work on a thread of its own, so the caller's
//! reply does not wait for it. Made for the markdown plan file (a derived view) in servers
//! whose every call is on a model's reply path: the append is durable before the reply, the
//! file follows a moment later.
//!
//! Only the latest plan of each session is written: plans that arrive while the thread is busy
//! replace each other. [`PlanSink::flush`] (which `PlanSession::close` calls) and dropping the
//! sink write what is pending and wait for it, so a server that closes its session leaves
//! every file up to date; a process killed meanwhile leaves the previous file whole (the plan
//! file sink writes a temporary file and renames it).

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;

use planlog_core::{Plan, PlanSink, SessionId, Timestamp};

/// What the thread is sent.
enum Update {
    /// A session's new plan.
    Plan(SessionId, Plan, Timestamp),
    /// Answer once everything sent before is written.
    Flush(SyncSender<()>),
}

/// Runs another sink's work on a background thread (see the module docs).
pub struct BackgroundSink {
    tx: Mutex<Option<Sender<Update>>>,
    worker: Mutex<Option<JoinHandle<()>>>,
    /// The sink itself, when its thread could not be started: it runs on the caller's thread.
    inline: Option<Box<dyn PlanSink>>,
}

impl std::fmt::Debug for BackgroundSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundSink").finish_non_exhaustive()
    }
}

impl BackgroundSink {
    /// `inner`'s work, on a thread of its own. If the thread cannot be started, `inner` runs
    /// on the caller's thread instead (with a warning).
    pub fn new(inner: impl PlanSink + 'static) -> Self {
        let (tx, rx) = channel::<Update>();
        // The sink travels to the thread and comes back if the thread cannot start.
        let handoff = std::sync::Arc::new(Mutex::new(Some(Box::new(inner) as Box<dyn PlanSink>)));
        let theirs = std::sync::Arc::clone(&handoff);
        let started = std::thread::Builder::new()
            .name("planlog-sink".into())
            .spawn(move || {
                let inner = theirs.lock().unwrap_or_else(PoisonError::into_inner).take();
                if let Some(inner) = inner {
                    run(&*inner, &rx);
                }
            });
        match started {
            Ok(worker) => Self {
                tx: Mutex::new(Some(tx)),
                worker: Mutex::new(Some(worker)),
                inline: None,
            },
            Err(error) => {
                tracing::warn!(%error, "cannot start the plan file thread; writing plan files on the reply path");
                Self {
                    tx: Mutex::new(None),
                    worker: Mutex::new(None),
                    inline: handoff
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .take(),
                }
            }
        }
    }
}

/// The thread: take what is queued, keep the latest plan per session, write, answer the
/// flushes that were waiting for it, repeat.
fn run(inner: &dyn PlanSink, rx: &Receiver<Update>) {
    while let Ok(first) = rx.recv() {
        let mut latest: HashMap<SessionId, (Plan, Timestamp)> = HashMap::new();
        let mut order = Vec::new();
        let mut waiting = Vec::new();
        for update in std::iter::once(first).chain(rx.try_iter()) {
            match update {
                Update::Plan(session, plan, at) => {
                    if !latest.contains_key(&session) {
                        order.push(session.clone());
                    }
                    latest.insert(session, (plan, at));
                }
                Update::Flush(done) => waiting.push(done),
            }
        }
        for session in order {
            if let Some((plan, at)) = latest.remove(&session) {
                inner.plan_written(&session, &plan, at);
            }
        }
        inner.flush();
        for done in waiting {
            // The flusher may have stopped waiting; nothing to tell then.
            let _ = done.send(());
        }
    }
}

impl PlanSink for BackgroundSink {
    fn plan_written(&self, session: &SessionId, plan: &Plan, at: Timestamp) {
        if let Some(inner) = &self.inline {
            return inner.plan_written(session, plan, at);
        }
        let tx = self.tx.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = tx.as_ref()
            && tx
                .send(Update::Plan(session.clone(), plan.clone(), at))
                .is_err()
        {
            tracing::warn!(session = %session, "the plan file thread is gone; this plan file update is skipped (the plan itself is stored)");
        }
    }

    fn flush(&self) {
        if let Some(inner) = &self.inline {
            return inner.flush();
        }
        let (done, wait) = sync_channel(1);
        let sent = self
            .tx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(|tx| tx.send(Update::Flush(done)).is_ok());
        if sent && wait.recv().is_err() {
            tracing::warn!(
                "the plan file thread stopped before writing everything; some plan files may be stale"
            );
        }
    }
}

impl Drop for BackgroundSink {
    fn drop(&mut self) {
        // Closing the channel ends the thread once it has written what is queued.
        self.tx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let worker = self
            .worker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(worker) = worker
            && worker.join().is_err()
        {
            tracing::warn!("the plan file thread panicked; some plan files may be stale");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[derive(Default)]
    struct Seen(Mutex<Vec<(String, usize)>>);

    struct Recorder(Arc<Seen>);

    impl PlanSink for Recorder {
        fn plan_written(&self, session: &SessionId, plan: &Plan, _: Timestamp) {
            std::thread::sleep(std::time::Duration::from_millis(2));
            self.0
                .0
                .lock()
                .unwrap()
                .push((session.to_string(), plan.items().len()));
        }
    }

    /// A plan of `n` pending items.
    fn plan_of(n: usize) -> Plan {
        Plan::from_items(
            (0..n)
                .map(|i| {
                    planlog_core::testkit::item(
                        &i.to_string(),
                        "x",
                        planlog_core::PlanStatus::Pending,
                    )
                })
                .collect(),
        )
    }

    #[test]
    fn flush_waits_until_the_latest_plan_is_written() {
        let seen = Arc::new(Seen::default());
        let sink = BackgroundSink::new(Recorder(Arc::clone(&seen)));
        let at = Timestamp::from_millis(0);
        for n in 1..=20 {
            sink.plan_written(&SessionId::new("a").unwrap(), &plan_of(n), at);
        }
        sink.flush();
        // Written before flush returned, with the sink still alive.
        assert_eq!(seen.0.lock().unwrap().last(), Some(&("a".to_owned(), 20)));
        sink.flush();
        drop(sink);
    }

    #[test]
    fn the_latest_plan_of_each_session_is_written_by_the_time_it_is_dropped() {
        let seen = Arc::new(Seen::default());
        let sink = BackgroundSink::new(Recorder(Arc::clone(&seen)));
        let at = Timestamp::from_millis(0);
        let mut plan = Plan::new();
        for n in 0..50 {
            plan = plan_of(n + 1);
            sink.plan_written(&SessionId::new("a").unwrap(), &plan, at);
            sink.plan_written(&SessionId::new("b").unwrap(), &Plan::new(), at);
        }
        drop(sink);
        let seen = seen.0.lock().unwrap();
        let last_a = seen.iter().rev().find(|(s, _)| s == "a").unwrap();
        assert_eq!(
            last_a.1,
            plan.items().len(),
            "the last plan of a was written"
        );
        assert!(seen.iter().any(|(s, _)| s == "b"));
        assert!(
            seen.len() < 100,
            "updates coalesced: {} writes for 100 updates",
            seen.len()
        );
    }
}
