//! [`BackgroundSink`]: a plan sink that does its work on a thread of its own, so the caller's
//! reply does not wait for it. Made for the markdown plan file (a derived view) in servers
//! whose every call is on a model's reply path: the append is durable before the reply, the
//! file follows a moment later.
//!
//! Only the latest plan of each session is written, and at most one round of writes starts
//! every [`ROUND_GAP`] (20 ms): plans that arrive meanwhile replace each other, so a burst
//! of calls (an agent updating tasks back to back) writes each file once or twice, not once
//! per call, and the thread leaves the two cores to the calls. A file is at most that gap
//! behind its plan. [`PlanSink::flush`] (which `PlanSession::close` calls) and dropping the
//! sink write what is pending and wait for it, so a server that closes its session leaves
//! every file up to date; a process killed meanwhile leaves the previous file whole (the plan
//! file sink writes a temporary file and renames it).

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender, channel, sync_channel};
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use planlog_core::{Plan, PlanSink, SessionId, Timestamp};

/// The least time from one round of writes to the next, unless a flush is waiting.
const ROUND_GAP: Duration = Duration::from_millis(20);

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
        Self::with_gap(inner, ROUND_GAP)
    }

    /// [`BackgroundSink::new`] with another least time between rounds of writes (the tests'
    /// hour-long gap shows what waits for it and what does not).
    fn with_gap(inner: impl PlanSink + 'static, gap: Duration) -> Self {
        let (tx, rx) = channel::<Update>();
        // The sink travels to the thread and comes back if the thread cannot start.
        let handoff = std::sync::Arc::new(Mutex::new(Some(Box::new(inner) as Box<dyn PlanSink>)));
        let theirs = std::sync::Arc::clone(&handoff);
        let started = std::thread::Builder::new()
            .name("planlog-sink".into())
            .spawn(move || {
                let inner = theirs.lock().unwrap_or_else(PoisonError::into_inner).take();
                if let Some(inner) = inner {
                    run(&*inner, &rx, gap);
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

/// What the thread has been sent and not yet written: the latest plan of each session (in
/// the order the sessions first came), and the flushes waiting for them.
#[derive(Default)]
struct Pending {
    latest: HashMap<SessionId, (Plan, Timestamp)>,
    order: Vec<SessionId>,
    waiting: Vec<SyncSender<()>>,
}

impl Pending {
    fn take(&mut self, update: Update) {
        match update {
            Update::Plan(session, plan, at) => {
                if !self.latest.contains_key(&session) {
                    self.order.push(session.clone());
                }
                self.latest.insert(session, (plan, at));
            }
            Update::Flush(done) => self.waiting.push(done),
        }
    }
}

/// The thread: take what is queued (waiting out the rest of the gap since the last round,
/// unless a flush is waiting or the sink is gone), keep the latest plan per session, write,
/// answer the flushes that were waiting for it, repeat.
fn run(inner: &dyn PlanSink, rx: &Receiver<Update>, gap: Duration) {
    let mut last_round: Option<Instant> = None;
    while let Ok(first) = rx.recv() {
        let mut pending = Pending::default();
        pending.take(first);
        if let Some(next_round) = last_round.map(|last| last + gap) {
            while pending.waiting.is_empty() {
                let Some(left) = next_round.checked_duration_since(Instant::now()) else {
                    break;
                };
                match rx.recv_timeout(left) {
                    Ok(update) => pending.take(update),
                    Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
                }
            }
        }
        for update in rx.try_iter() {
            pending.take(update);
        }
        last_round = Some(Instant::now());
        for session in pending.order {
            if let Some((plan, at)) = pending.latest.remove(&session) {
                inner.plan_written(&session, &plan, at);
            }
        }
        inner.flush();
        for done in pending.waiting {
            // The flusher may have stopped waiting; nothing to tell then.
            let _ = done.send(());
        }
    }
}

/// A plan file update the thread will never see (it is gone): said, and skipped.
fn skipped(session: &SessionId) {
    tracing::warn!(session = %session, "the plan file thread is gone; this plan file update is skipped (the plan itself is stored)");
}

impl PlanSink for BackgroundSink {
    fn plan_written(&self, session: &SessionId, plan: &Plan, at: Timestamp) {
        if let Some(inner) = &self.inline {
            return inner.plan_written(session, plan, at);
        }
        let tx = self
            .tx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(tx) = tx else {
            return skipped(session);
        };
        let update = Update::Plan(session.clone(), plan.clone(), at);
        // Sending wakes the thread: once the caller's answer is out (`wake_later`).
        crate::wake_later::wake(move || {
            if let Err(std::sync::mpsc::SendError(Update::Plan(session, ..))) = tx.send(update) {
                skipped(&session);
            }
        });
    }

    fn flush(&self) {
        if let Some(inner) = &self.inline {
            return inner.flush();
        }
        // Plans whose sending waits for the end of the current call go first.
        crate::wake_later::now();
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

    /// Plans sent more often than the gap are written a round per gap, the latest each time; a
    /// flush does not wait out the gap (here an hour), and neither does dropping the sink.
    #[test]
    fn a_burst_is_written_a_round_per_gap_and_a_flush_does_not_wait() {
        let seen = Arc::new(Seen::default());
        let sink = BackgroundSink::with_gap(Recorder(Arc::clone(&seen)), Duration::from_secs(3600));
        let at = Timestamp::from_millis(0);
        let a = SessionId::new("a").unwrap();
        sink.plan_written(&a, &plan_of(1), at);
        // The first round starts at once; wait until it has been written.
        while seen.0.lock().unwrap().is_empty() {
            std::thread::sleep(Duration::from_millis(1));
        }
        // Each a little after the last was written (a write takes the recorder 2 ms): without
        // the gap, each would be a round of its own.
        for n in 2..=40 {
            sink.plan_written(&a, &plan_of(n), at);
            std::thread::sleep(Duration::from_millis(3));
        }
        let started = Instant::now();
        sink.flush();
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the flush waited out the gap"
        );
        assert_eq!(
            *seen.0.lock().unwrap(),
            vec![("a".to_owned(), 1), ("a".to_owned(), 40)],
            "one round for the burst, with its latest plan"
        );
        sink.plan_written(&a, &plan_of(41), at);
        let started = Instant::now();
        drop(sink);
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "dropping waited out the gap"
        );
        assert_eq!(seen.0.lock().unwrap().last(), Some(&("a".to_owned(), 41)));
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
