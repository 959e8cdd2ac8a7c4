//! Holding a tool call until its result arrives. A call's record depends on its result (the
//! id of a created task exists only there; an error means the list did not change), but the
//! records must leave in call order. Each session has a queue; a record leaves when every
//! call before it in its session is settled. Calls still waiting when their session's next
//! prompt arrives (a result always comes before it) are settled as having no result; calls
//! still waiting when the source ends are left for the next import (the source is still
//! being written). Memory holds one turn's calls, never the file.

use std::collections::{HashMap, VecDeque};

use super::record::Record;
use super::{Emit, Stopped};

// Entries live briefly in a short queue; boxing the common case would only add allocations.
#[allow(clippy::large_enum_variant)]
enum Entry<C> {
    Ready(Record),
    Waiting { tool_id: String, call: C },
}

/// The calls waiting for their results, per session.
pub(crate) struct Pairing<C> {
    queues: HashMap<String, VecDeque<Entry<C>>>,
    /// tool call id -> its session.
    waiting: HashMap<String, String>,
}

impl<C> Default for Pairing<C> {
    fn default() -> Self {
        Self {
            queues: HashMap::new(),
            waiting: HashMap::new(),
        }
    }
}

impl<C> Pairing<C> {
    /// A record that needs no result (a checkpoint): it leaves after the calls before it.
    pub(crate) fn ready(
        &mut self,
        session: &str,
        record: Record,
        emit: &mut Emit<'_>,
    ) -> Result<(), Stopped> {
        match self.queues.get_mut(session) {
            Some(q) if !q.is_empty() => {
                q.push_back(Entry::Ready(record));
                Ok(())
            }
            _ => emit.send(record),
        }
    }

    /// A call that waits for the result of `tool_id`. A second call with the same tool id
    /// while the first waits is settled at once by `settle(call, None)`.
    pub(crate) fn wait(
        &mut self,
        session: &str,
        tool_id: String,
        call: C,
        settle: impl FnOnce(C) -> Option<Record>,
        emit: &mut Emit<'_>,
    ) -> Result<(), Stopped> {
        if self.waiting.contains_key(&tool_id) {
            return match settle(call) {
                Some(r) => self.ready(session, r, emit),
                None => Ok(()),
            };
        }
        self.waiting.insert(tool_id.clone(), session.to_owned());
        self.queues
            .entry(session.to_owned())
            .or_default()
            .push_back(Entry::Waiting { tool_id, call });
        Ok(())
    }

    /// Whether a call with this tool id waits.
    pub(crate) fn is_waiting(&self, tool_id: &str) -> bool {
        self.waiting.contains_key(tool_id)
    }

    /// The result of `tool_id` arrived: `settle` makes the call's record (or none), and every
    /// settled record at the head of its session's queue leaves.
    pub(crate) fn settle(
        &mut self,
        tool_id: &str,
        settle: impl FnOnce(C) -> Option<Record>,
        emit: &mut Emit<'_>,
    ) -> Result<(), Stopped> {
        let Some(session) = self.waiting.remove(tool_id) else {
            return Ok(());
        };
        let Some(queue) = self.queues.get_mut(&session) else {
            return Ok(());
        };
        if let Some(pos) = queue
            .iter()
            .position(|e| matches!(e, Entry::Waiting { tool_id: t, .. } if t == tool_id))
            && let Some(Entry::Waiting { call, .. }) = queue.remove(pos)
            && let Some(record) = settle(call)
        {
            queue.insert(pos, Entry::Ready(record));
        }
        self.drain(&session, emit)
    }

    /// Settles every call of `session` still waiting as having no result (its next prompt
    /// arrived), in order.
    pub(crate) fn settle_session(
        &mut self,
        session: &str,
        mut unanswered: impl FnMut(C) -> Option<Record>,
        emit: &mut Emit<'_>,
    ) -> Result<(), Stopped> {
        let Some(queue) = self.queues.remove(session) else {
            return Ok(());
        };
        for entry in queue {
            let record = match entry {
                Entry::Ready(r) => Some(r),
                Entry::Waiting { tool_id, call } => {
                    self.waiting.remove(&tool_id);
                    unanswered(call)
                }
            };
            if let Some(r) = record {
                emit.send(r)?;
            }
        }
        Ok(())
    }

    /// The source ended with calls still waiting for results it does not hold yet (it is
    /// still being written): each session's waiting calls, and every record queued behind
    /// them, are left out (one [`Record::Deferred`] per session, in the order the keys sort),
    /// so a later import of the grown source records them, in order. `line` gives a call's
    /// line.
    pub(crate) fn leave_all(
        &mut self,
        line: impl Fn(&C) -> u64,
        emit: &mut Emit<'_>,
    ) -> Result<(), Stopped> {
        let mut sessions: Vec<String> = self.queues.keys().cloned().collect();
        sessions.sort();
        for session in sessions {
            let Some(queue) = self.queues.remove(&session) else {
                continue;
            };
            let first = queue.iter().find_map(|e| match e {
                Entry::Waiting { call, .. } => Some(line(call)),
                Entry::Ready(_) => None,
            });
            for entry in &queue {
                if let Entry::Waiting { tool_id, .. } = entry {
                    self.waiting.remove(tool_id);
                }
            }
            if !queue.is_empty() {
                emit.send(Record::Deferred {
                    session,
                    records: queue.len(),
                    line: first.unwrap_or(0),
                })?;
            }
        }
        Ok(())
    }

    fn drain(&mut self, session: &str, emit: &mut Emit<'_>) -> Result<(), Stopped> {
        let Some(queue) = self.queues.get_mut(session) else {
            return Ok(());
        };
        while matches!(queue.front(), Some(Entry::Ready(_))) {
            if let Some(Entry::Ready(r)) = queue.pop_front() {
                emit.send(r)?;
            }
        }
        if queue.is_empty() {
            self.queues.remove(session);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::BadLine;

    fn rec(n: u64) -> Record {
        Record::Bad(BadLine {
            line: n,
            why: String::new(),
        })
    }

    fn lines(out: &[Record]) -> Vec<u64> {
        out.iter()
            .map(|r| match r {
                Record::Bad(b) => b.line,
                _ => 0,
            })
            .collect()
    }

    #[test]
    fn records_leave_in_call_order_whatever_order_results_come_in() {
        let mut out = Vec::new();
        let mut sink = |r| {
            out.push(r);
            true
        };
        let mut emit = Emit(&mut sink);
        let mut p: Pairing<u64> = Pairing::default();
        p.wait("s", "a".into(), 1, |n| Some(rec(n)), &mut emit)
            .unwrap();
        p.wait("s", "b".into(), 2, |n| Some(rec(n)), &mut emit)
            .unwrap();
        p.ready("s", rec(3), &mut emit).unwrap();
        p.wait("other", "c".into(), 10, |n| Some(rec(n)), &mut emit)
            .unwrap();
        p.settle("b", |n| Some(rec(n)), &mut emit).unwrap();
        p.settle("c", |n| Some(rec(n)), &mut emit).unwrap();
        p.settle("a", |n| Some(rec(n + 100)), &mut emit).unwrap();
        p.settle("a", |n| Some(rec(n)), &mut emit).unwrap();
        assert_eq!(lines(&out), [10, 101, 2, 3]);
    }

    #[test]
    fn unanswered_calls_are_settled_at_the_next_prompt_and_left_at_the_end() {
        let mut out = Vec::new();
        let mut sink = |r| {
            out.push(r);
            true
        };
        let mut emit = Emit(&mut sink);
        let mut p: Pairing<u64> = Pairing::default();
        p.wait("s", "a".into(), 1, |n| Some(rec(n)), &mut emit)
            .unwrap();
        p.wait("t", "b".into(), 2, |n| Some(rec(n)), &mut emit)
            .unwrap();
        p.settle_session("s", |n| Some(rec(n + 50)), &mut emit)
            .unwrap();
        assert!(!p.is_waiting("a") && p.is_waiting("b"));
        p.ready("t", rec(3), &mut emit).unwrap();
        p.leave_all(|n| *n, &mut emit).unwrap();
        assert!(!p.is_waiting("b"));
        assert_eq!(lines(&out)[..1], [51]);
        assert!(
            matches!(&out[1], Record::Deferred { session, records: 2, line: 2 } if session == "t"),
            "{:?}",
            out[1]
        );
    }
}
