//! Group commit: appends from many threads share one durable commit (the redb store's
//! transactions, the journal's writes and syncs).
//!
//! The first thread to arrive while no commit runs becomes the leader: it takes every queued
//! append, writes them in one transaction, commits (one fsync), and hands each waiter its own
//! result. Threads arriving meanwhile queue up for the next leader. Nobody returns before the
//! commit holding its event is durable, so "durable when it returns" is unchanged; only the
//! number of fsyncs drops.
//!
//! Waiters sleep until they have something to do (`thread::park`): a leader wakes the
//! first waiter still queued, which leads next, then the waiters of the batch it committed,
//! with the queue's lock let go. Nobody else wakes (with 64 appending threads, waking them
//! all after every commit kept two cores busy with threads that went straight back to
//! sleep).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::Thread;

/// Most events one commit takes, so one leader's latency stays bounded.
const MAX_BATCH: usize = 512;

/// One batch's results, by ticket.
pub(crate) type BatchResults<R> = Vec<(u64, R)>;

/// The queue of appends waiting for a commit; `T` is what one append hands the leader (the
/// event and its encoded bytes, made by the appending thread before it queues), `R` what it
/// gets back.
pub(crate) struct GroupCommit<T, R> {
    state: Mutex<State<T, R>>,
}

impl<T, R> Default for GroupCommit<T, R> {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                queue: Vec::new(),
                done: HashMap::new(),
                leader: false,
                next_ticket: 0,
                commits: 0,
                events: 0,
            }),
        }
    }
}

/// An append waiting for a commit: its ticket, what it hands the leader, and its thread.
struct Waiting<T> {
    ticket: u64,
    item: T,
    thread: Thread,
}

struct State<T, R> {
    queue: Vec<Waiting<T>>,
    done: HashMap<u64, R>,
    leader: bool,
    next_ticket: u64,
    commits: u64,
    events: u64,
}

/// Counters, for tests and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommitStats {
    /// Write transactions committed for appends.
    pub commits: u64,
    /// Append requests handled (stored, duplicate or refused).
    pub appends: u64,
    /// Time leaders spent writing batches' rows inside their write transactions (serial:
    /// one leader at a time).
    pub writing: std::time::Duration,
    /// Time leaders spent committing those transactions (the durable commit itself).
    pub committing: std::time::Duration,
}

impl<T, R> GroupCommit<T, R> {
    fn lock(&self) -> MutexGuard<'_, State<T, R>> {
        // The state is only mutated in short, panic-free sections; a poisoned lock still holds
        // consistent data.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn stats(&self) -> CommitStats {
        let s = self.lock();
        CommitStats {
            commits: s.commits,
            appends: s.events,
            ..CommitStats::default()
        }
    }

    /// Queues `item`, takes part in group commits until its own result is known, returns it.
    /// `commit` writes one batch in one transaction and must return a result for every
    /// ticket; `missing` is the result of one it left out.
    pub(crate) fn submit(
        &self,
        item: T,
        missing: impl Fn() -> R,
        commit: impl Fn(Vec<(u64, T)>) -> BatchResults<R>,
    ) -> R {
        let mut state = self.lock();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.queue.push(Waiting {
            ticket,
            item,
            thread: std::thread::current(),
        });
        loop {
            if let Some(result) = state.done.remove(&ticket) {
                return result;
            }
            if state.leader {
                // Woken when the batch holding this append has committed, or to lead the
                // next one. An unpark that came before this park is not lost (park returns at
                // once), and a wake-up for nothing only loops once more.
                drop(state);
                std::thread::park();
                state = self.lock();
                continue;
            }
            // No leader and no result: this append is still queued. Lead.
            state.leader = true;
            let take = state.queue.len().min(MAX_BATCH);
            let (batch, threads): (Vec<(u64, T)>, Vec<Thread>) = state
                .queue
                .drain(..take)
                .map(|w| ((w.ticket, w.item), w.thread))
                .unzip();
            let tickets: Vec<u64> = batch.iter().map(|(t, _)| *t).collect();
            drop(state);
            let results = commit(batch);
            state = self.lock();
            state.commits += 1;
            state.events += tickets.len() as u64;
            let mut results: HashMap<u64, R> = results.into_iter().collect();
            for t in tickets {
                let r = results.remove(&t).unwrap_or_else(&missing);
                state.done.insert(t, r);
            }
            state.leader = false;
            let next = state.queue.first().map(|w| w.thread.clone());
            // The leader's own result, when its append was in this batch (not when more
            // than `MAX_BATCH` were queued before it: it then leads again).
            let mine = state.done.remove(&ticket);
            // Wake-ups outside the lock, the next leader's first: each is a system call,
            // and with 64 appending threads the next round waited for a batch's worth of
            // them, and each woken waiter for the lock they were made under.
            drop(state);
            if let Some(next) = next {
                next.unpark();
            }
            let me = std::thread::current().id();
            for thread in threads.iter().filter(|t| t.id() != me) {
                thread.unpark();
            }
            if let Some(result) = mine {
                return result;
            }
            state = self.lock();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use planlog_core::testkit::{seal_after, sid, started};
    use planlog_core::{events::Origin, log::Appended};

    use super::*;
    use planlog_core::LogError;

    type Result = std::result::Result<Appended, LogError>;

    /// The result of an append a test's commit left out.
    fn missing() -> Result {
        Err(LogError::Operator(planlog_core::OperatorError::Io {
            path: "store.redb".to_owned(),
            action: "group commit".to_owned(),
            source: planlog_core::StorageError::message("no result for this append"),
        }))
    }

    #[test]
    fn appends_queued_during_a_commit_share_the_next_one() {
        let gc = Arc::new(GroupCommit::default());
        let event = seal_after(None, &sid("s"), None, started(Origin::New));
        let ok = |batch: Vec<(u64, planlog_core::events::Event)>| -> BatchResults<Result> {
            batch
                .into_iter()
                .map(|(t, e)| (t, Ok(Appended::Stored(Arc::new(e)))))
                .collect()
        };
        let first = {
            let gc2 = Arc::clone(&gc);
            let event = event.clone();
            std::thread::spawn(move || {
                gc2.submit(event, missing, |batch| {
                    // Hold the first commit open until five more appends have queued.
                    while gc2.lock().queue.len() < 5 {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    ok(batch)
                })
            })
        };
        while !gc.lock().leader {
            std::thread::sleep(Duration::from_millis(1));
        }
        let others: Vec<_> = (0..5)
            .map(|_| {
                let gc = Arc::clone(&gc);
                let event = event.clone();
                std::thread::spawn(move || gc.submit(event, missing, ok))
            })
            .collect();
        assert!(first.join().unwrap().is_ok());
        for h in others {
            assert!(h.join().unwrap().is_ok());
        }
        assert_eq!(
            gc.stats(),
            CommitStats {
                commits: 2,
                appends: 6,
                ..CommitStats::default()
            }
        );
    }

    #[test]
    fn many_threads_each_get_their_own_result_and_none_is_left_asleep() {
        const THREADS: usize = 64;
        const EACH: usize = 40;
        let gc = Arc::new(GroupCommit::<u64, Result>::default());
        let (finished, all_done) = std::sync::mpsc::channel();
        for k in 0..THREADS {
            let gc = Arc::clone(&gc);
            let finished = finished.clone();
            std::thread::spawn(move || {
                for n in 0..EACH {
                    let mine = (k * EACH + n) as u64;
                    let got = gc.submit(mine, missing, |batch| {
                        std::thread::sleep(Duration::from_micros(200));
                        // Each append's result names its own item (the seq carries it).
                        batch
                            .into_iter()
                            .map(|(t, item)| {
                                let e = seal_after(
                                    None,
                                    &sid(&format!("s{item}")),
                                    None,
                                    started(Origin::New),
                                );
                                (t, Ok(Appended::Stored(Arc::new(e))))
                            })
                            .collect()
                    });
                    match got {
                        Ok(Appended::Stored(e)) => {
                            assert_eq!(e.session.as_str(), format!("s{mine}"))
                        }
                        other => panic!("{other:?}"),
                    }
                }
                finished.send(k).unwrap();
            });
        }
        for _ in 0..THREADS {
            // A thread left asleep would never report: fail instead of hanging.
            all_done
                .recv_timeout(Duration::from_secs(60))
                .expect("every appending thread finishes");
        }
        let stats = gc.stats();
        assert_eq!(stats.appends, (THREADS * EACH) as u64);
        assert!(
            stats.commits < stats.appends,
            "{stats:?}: appends shared commits"
        );
    }

    /// More appends queued than one batch takes: they are committed in batches of at most
    /// `MAX_BATCH`, and every thread gets its own result (each leader returns its own from
    /// the batch it led, or leads again when its append was past it).
    #[test]
    fn a_queue_longer_than_a_batch_is_committed_in_batches_each_its_own_result() {
        let gc = Arc::new(GroupCommit::<u64, std::result::Result<u64, ()>>::default());
        let echo = |batch: Vec<(u64, u64)>| -> BatchResults<std::result::Result<u64, ()>> {
            batch.into_iter().map(|(t, item)| (t, Ok(item))).collect()
        };
        let (release, released) = std::sync::mpsc::channel::<()>();
        let released = std::sync::Mutex::new(released);
        let first = {
            let gc = Arc::clone(&gc);
            std::thread::spawn(move || {
                gc.submit(
                    0,
                    || Err(()),
                    |batch| {
                        // Hold the first commit open until the test has queued the rest.
                        released.lock().unwrap().recv().unwrap();
                        echo(batch)
                    },
                )
            })
        };
        while !gc.lock().leader {
            std::thread::sleep(Duration::from_millis(1));
        }
        let queued = MAX_BATCH + 20;
        let others: Vec<_> = (1..=queued as u64)
            .map(|k| {
                let gc = Arc::clone(&gc);
                std::thread::spawn(move || gc.submit(k, || Err(()), echo))
            })
            .collect();
        while gc.lock().queue.len() < queued {
            std::thread::sleep(Duration::from_millis(1));
        }
        release.send(()).unwrap();
        assert_eq!(first.join().unwrap(), Ok(0));
        for (k, h) in others.into_iter().enumerate() {
            assert_eq!(h.join().unwrap(), Ok(k as u64 + 1), "each its own result");
        }
        let stats = gc.stats();
        assert_eq!(stats.appends, queued as u64 + 1);
        assert!(stats.commits >= 3, "{stats:?}: the queue took two batches");
    }

    #[test]
    fn a_missing_result_is_an_error_not_a_hang() {
        let gc = GroupCommit::default();
        let event = seal_after(None, &sid("s"), None, started(Origin::New));
        let r = gc.submit(event, missing, |_| Vec::new());
        assert!(r.unwrap_err().to_string().contains("store.redb"));
    }
}
