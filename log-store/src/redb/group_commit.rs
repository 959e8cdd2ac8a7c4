//! Group commit: appends from many threads share one durable commit.
//!
//! The first thread to arrive while no commit runs becomes the leader: it takes every queued
//! append, writes them in one transaction, commits (one fsync), and hands each waiter its own
//! result. Threads arriving meanwhile queue up for the next leader. Nobody returns before the
//! commit holding its event is durable, so "durable when it returns" is unchanged; only the
//! number of fsyncs drops.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use planlog_core::{LogError, OperatorError, log::Appended};

/// Most events one commit takes, so one leader's latency stays bounded.
const MAX_BATCH: usize = 512;

/// One batch's results, by ticket.
pub(crate) type BatchResults = Vec<(u64, Result<Appended, LogError>)>;

/// The queue of appends waiting for a commit; `T` is what one append hands the leader (the
/// event and its encoded bytes, made by the appending thread before it queues).
pub(crate) struct GroupCommit<T> {
    state: Mutex<State<T>>,
    turn: Condvar,
}

impl<T> Default for GroupCommit<T> {
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
            turn: Condvar::new(),
        }
    }
}

struct State<T> {
    queue: Vec<(u64, T)>,
    done: HashMap<u64, Result<Appended, LogError>>,
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
}

impl<T> GroupCommit<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // The state is only mutated in short, panic-free sections; a poisoned lock still holds
        // consistent data.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn stats(&self) -> CommitStats {
        let s = self.lock();
        CommitStats {
            commits: s.commits,
            appends: s.events,
        }
    }

    /// Queues `item`, takes part in group commits until its own result is known, returns it.
    /// `commit` writes one batch in one transaction and must return a result for every ticket.
    pub(crate) fn submit(
        &self,
        item: T,
        path: &str,
        commit: impl Fn(Vec<(u64, T)>) -> BatchResults,
    ) -> Result<Appended, LogError> {
        let mut state = self.lock();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.queue.push((ticket, item));
        loop {
            if let Some(result) = state.done.remove(&ticket) {
                return result;
            }
            if state.leader {
                state = self
                    .turn
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            state.leader = true;
            let take = state.queue.len().min(MAX_BATCH);
            let batch: Vec<(u64, T)> = state.queue.drain(..take).collect();
            let tickets: Vec<u64> = batch.iter().map(|(t, _)| *t).collect();
            drop(state);
            let results = commit(batch);
            state = self.lock();
            state.commits += 1;
            state.events += tickets.len() as u64;
            let mut results: HashMap<u64, Result<Appended, LogError>> =
                results.into_iter().collect();
            for t in tickets {
                let r = results.remove(&t).unwrap_or_else(|| {
                    Err(OperatorError::Io {
                        path: path.to_owned(),
                        action: "group commit".to_owned(),
                        source: planlog_core::StorageError::message(
                            "the commit returned no result for this append",
                        ),
                    }
                    .into())
                });
                state.done.insert(t, r);
            }
            state.leader = false;
            self.turn.notify_all();
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

    #[test]
    fn appends_queued_during_a_commit_share_the_next_one() {
        let gc = Arc::new(GroupCommit::default());
        let event = seal_after(None, &sid("s"), None, started(Origin::New));
        let ok = |batch: Vec<(u64, planlog_core::events::Event)>| -> BatchResults {
            batch
                .into_iter()
                .map(|(t, e)| (t, Ok(Appended::Stored(e))))
                .collect()
        };
        let first = {
            let gc2 = Arc::clone(&gc);
            let event = event.clone();
            std::thread::spawn(move || {
                gc2.submit(event, "test", |batch| {
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
                std::thread::spawn(move || gc.submit(event, "test", ok))
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
                appends: 6
            }
        );
    }

    #[test]
    fn a_missing_result_is_an_error_not_a_hang() {
        let gc = GroupCommit::default();
        let event = seal_after(None, &sid("s"), None, started(Origin::New));
        let r = gc.submit(event, "store.redb", |_| Vec::new());
        assert!(r.unwrap_err().to_string().contains("store.redb"));
    }
}
