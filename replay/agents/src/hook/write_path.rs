//! The one way a hook writes: what waits in the spool is stored first, in order; then the
//! hook's own write; on any failure the write joins the spool instead, behind what waits.
//! So the log gets hook writes in the order the hooks ran, whatever failed in between.
//!
//! - A failure that may pass (the store locked, full, unreachable, a lost race, the
//!   deadline) keeps the write in the spool.
//! - A refusal for good (the session id retired by `planlog delete`, or held by another
//!   session; an event the store rejects) moves the write to the dead letters, which
//!   `planlog verify` reports: it never blocks the writes behind it.
//! - Spool lines cut by a failed write are moved to the dead letters too.
//! - Everything waits at most until the deadline; what is not stored by then stays spooled,
//!   in order, for the next hook call or `planlog drain`.

use std::collections::HashSet;
use std::time::Duration;

use planlog_core::{Env, EventLog, LogError};

use super::capture;
use super::deadline::Deadline;
use super::spool::{DeadLetters, Entry, Spool};
use planlog_import::{HistoryCache, ImportError, Record, SourceFormat};

/// How many spooled entries one transaction stores at most.
const BATCH: usize = 256;

/// Time kept back from the store's deadline for spooling the hook's own write.
pub const SPOOL_RESERVE: Duration = Duration::from_millis(150);

/// What became of a hook's write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// Stored in the log.
    Stored,
    /// Nothing to store (not a plan tool call; a fork already begun).
    Nothing,
    /// Kept in the spool, because of `why`.
    Spooled {
        /// Why it could not be stored now.
        why: String,
    },
    /// The store refused it for good: kept in the dead letters.
    Dead {
        /// Why.
        why: String,
    },
    /// Neither stored nor kept anywhere (the spool could not be written either).
    Lost {
        /// Why.
        why: String,
    },
}

/// What a drain did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Drained {
    /// Entries stored.
    pub stored: usize,
    /// Entries (and torn lines) moved to the dead letters.
    pub dead: usize,
    /// Why the drain stopped before the spool was empty (`None`: it is empty).
    pub stopped: Option<String>,
}

/// A write that failed: for now, or for good.
#[derive(Debug)]
enum Failure {
    Passing(String),
    ForGood(String),
}

fn classify(e: &ImportError) -> Failure {
    match e {
        ImportError::Store(LogError::Operator(_) | LogError::Conflict { .. })
        | ImportError::Read { .. } => Failure::Passing(e.to_string()),
        _ => Failure::ForGood(e.to_string()),
    }
}

fn classify_log(e: &LogError) -> Failure {
    match e {
        LogError::Operator(_) | LogError::Conflict { .. } => Failure::Passing(e.to_string()),
        _ => Failure::ForGood(e.to_string()),
    }
}

/// The hooks' view of a store: the log (when it could be opened), its spool and dead letters.
pub struct WritePath<'a> {
    log: Result<&'a dyn EventLog, String>,
    env: &'a dyn Env,
    spool: Spool,
    dead: DeadLetters,
    /// When storing must be done (the spool reserve is kept after it).
    deadline: Deadline,
    /// Where what a write derives from a session's history is kept for the next call.
    history: Option<HistoryCache>,
}

impl<'a> WritePath<'a> {
    /// Writes go to `log` (or, when it could not be opened, `Err(why)`: straight to the
    /// spool), with the spool and dead letters `spool` and `dead`; storing stops at
    /// `deadline` (spooling may use [`SPOOL_RESERVE`] more).
    pub fn new(
        log: Result<&'a dyn EventLog, String>,
        env: &'a dyn Env,
        spool: Spool,
        dead: DeadLetters,
        deadline: Deadline,
    ) -> Self {
        Self {
            log,
            env,
            spool,
            dead,
            deadline,
            history: None,
        }
    }

    /// The same, keeping what writes derive from a session's history in `history`, so the
    /// next call that needs it reads only the events after it
    /// ([`ImportOptions::history`](planlog_import::ImportOptions::history)).
    pub fn with_history(self, history: HistoryCache) -> Self {
        Self {
            history: Some(history),
            ..self
        }
    }

    /// The spool.
    pub fn spool(&self) -> &Spool {
        &self.spool
    }

    /// Stores `entry` after everything that waits, or keeps it (see the module docs).
    pub fn write(&self, entry: &Entry) -> Written {
        let log = match self.log {
            Ok(log) => log,
            Err(ref why) => return self.keep(entry, why.clone()),
        };
        let drained = self.drain();
        if let Some(why) = drained.stopped {
            return self.keep(
                entry,
                format!("earlier hook calls wait in the spool ({why})"),
            );
        }
        match self.store(log, std::slice::from_ref(entry)) {
            Ok(0) => Written::Nothing,
            Ok(_) => Written::Stored,
            Err(Failure::Passing(why)) => self.keep(entry, why),
            Err(Failure::ForGood(why)) => self.bury(entry, why),
        }
    }

    /// Stores what waits in the spool, oldest first, until it is empty or the deadline.
    pub fn drain(&self) -> Drained {
        let mut drained = Drained::default();
        let log = match self.log {
            Ok(log) => log,
            Err(ref why) => {
                if !self.spool.looks_empty() {
                    drained.stopped = Some(why.clone());
                }
                return drained;
            }
        };
        while !self.spool.looks_empty() {
            if self.deadline.passed() {
                drained.stopped = Some("out of time".to_owned());
                return drained;
            }
            match self.drain_once(log, &mut drained) {
                Ok(true) => {}
                Ok(false) => return drained,
                Err(why) => {
                    drained.stopped = Some(why);
                    return drained;
                }
            }
        }
        drained
    }

    /// One pass over the spool's first entries; `Ok(false)` when nothing was there.
    fn drain_once(&self, log: &dyn EventLog, drained: &mut Drained) -> Result<bool, String> {
        let pending = self
            .spool
            .pending(BATCH * 4, self.env.now(), &self.deadline)
            .map_err(|e| e.to_string())?;
        if pending.entries.is_empty() && pending.torn.is_empty() {
            return Ok(false);
        }
        let mut done: HashSet<String> = HashSet::new();
        let mut stopped = None;
        for (identity, torn) in &pending.torn {
            match self.dead.add_torn(torn, self.env.now(), &self.deadline) {
                Ok(()) => {
                    tracing::warn!(spool = %self.spool.path().display(), line = torn.line, "a spool line cut by a failed write was moved to the dead letters");
                    done.insert(identity.clone());
                    drained.dead += 1;
                }
                Err(e) => {
                    stopped = Some(format!("the dead letters cannot be written: {e}"));
                    break;
                }
            }
        }
        let entries = &pending.entries;
        let mut start = 0;
        while start < entries.len() && stopped.is_none() {
            if self.deadline.passed() {
                stopped = Some("out of time".to_owned());
                break;
            }
            // A run of entries of one format, at most BATCH long: one transaction.
            let format = entries[start].1.target().format;
            let end = (start..entries.len())
                .take(BATCH)
                .take_while(|&i| entries[i].1.target().format == format)
                .last()
                .map_or(start + 1, |i| i + 1);
            let run: Vec<Entry> = entries[start..end].iter().map(|(_, e)| e.clone()).collect();
            match self.store(log, &run) {
                Ok(_) => {
                    done.extend(entries[start..end].iter().map(|(id, _)| id.clone()));
                    drained.stored += run.len();
                }
                Err(Failure::Passing(why)) => stopped = Some(why),
                // Something in the run will never be stored: find it, one entry at a time.
                Err(Failure::ForGood(_)) => {
                    for (identity, entry) in &entries[start..end] {
                        match self.store(log, std::slice::from_ref(entry)) {
                            Ok(_) => drained.stored += 1,
                            Err(Failure::Passing(why)) => {
                                stopped = Some(why);
                                break;
                            }
                            Err(Failure::ForGood(why)) => {
                                if let Err(e) =
                                    self.dead
                                        .add_entry(entry, &why, self.env.now(), &self.deadline)
                                {
                                    stopped =
                                        Some(format!("the dead letters cannot be written: {e}"));
                                    break;
                                }
                                tracing::warn!(call = %entry.what(), %why, dead = %self.dead.path().display(), "a spooled hook call the store refuses for good was moved to the dead letters");
                                drained.dead += 1;
                            }
                        }
                        done.insert(identity.clone());
                    }
                }
            }
            start = end;
        }
        if !done.is_empty()
            && let Err(e) = self.spool.forget(&done, &self.deadline)
        {
            // Stored but not forgotten: stored again later, which records nothing twice.
            return Err(format!("the spool could not be rewritten: {e}"));
        }
        match stopped {
            Some(why) => Err(why),
            None => Ok(true),
        }
    }

    /// Stores `entries` (of one format) in one transaction; how many events it appended.
    fn store(&self, log: &dyn EventLog, entries: &[Entry]) -> Result<usize, Failure> {
        let mut records: Vec<Record> = Vec::new();
        let mut format = SourceFormat::ClaudeCode;
        for entry in entries {
            format = entry.target().format;
            if let Some(r) = capture::records(entry, log).map_err(|e| classify_log(&e))? {
                records.extend(r);
            }
        }
        if records.is_empty() {
            return Ok(0);
        }
        capture::write(log, self.env, format, &records, self.history.as_ref())
            .map(|report| report.calls())
            .map_err(|e| classify(&e))
    }

    /// Keeps `entry` in the spool.
    fn keep(&self, entry: &Entry, why: String) -> Written {
        let deadline = self.deadline_for_spooling();
        match self.spool.push(entry, &deadline) {
            Ok(()) => Written::Spooled { why },
            Err(e) => Written::Lost {
                why: format!("{why}; the spool could not be written either: {e}"),
            },
        }
    }

    /// Keeps `entry` in the dead letters.
    fn bury(&self, entry: &Entry, why: String) -> Written {
        let deadline = self.deadline_for_spooling();
        match self.dead.add_entry(entry, &why, self.env.now(), &deadline) {
            Ok(()) => Written::Dead { why },
            Err(e) => Written::Lost {
                why: format!("{why}; the dead letters could not be written either: {e}"),
            },
        }
    }

    fn deadline_for_spooling(&self) -> Deadline {
        let left = self.deadline.left() + SPOOL_RESERVE;
        Deadline::after(left)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use planlog_core::rules::{Rejection, RejectionCode};
    use planlog_core::testkit::FaultyLog;
    use planlog_core::{EventLog, MemoryLog, Seq, SessionId, TestEnv, Timestamp};
    use serde_json::json;

    use super::*;
    use crate::hook::spool::Kind;

    fn entry(session: &str, call: &str, item: &str, kind: Kind) -> Entry {
        let raw = json!({"hook_event_name": "PostToolUse", "session_id": session, "tool_name": "TodoWrite",
            "tool_use_id": call, "tool_input": {"todos": [{"content": item, "status": "in_progress"}]}, "tool_response": {}});
        // Each call at a time of its own, as hooks run.
        let at = 1_764_583_200_000 + call.bytes().map(i64::from).sum::<i64>() * 1000;
        Entry::new(
            ulid::Ulid::new(),
            raw.clone(),
            serde_json::from_value(raw).unwrap(),
            None,
            Timestamp::from_millis(at),
            kind,
        )
    }

    fn path<'a>(log: &'a dyn EventLog, env: &'a TestEnv, dir: &Path) -> WritePath<'a> {
        let store = dir.join("planlog.redb");
        WritePath::new(
            Ok(log),
            env,
            Spool::beside(&store),
            DeadLetters::beside(&store),
            Deadline::none(),
        )
    }

    /// The call ids of the session's calls (what the hook knows of the session is none).
    fn calls(log: &dyn EventLog, session: &str) -> Vec<String> {
        let id = SessionId::new(format!("cc-{session}")).unwrap();
        log.read(&id, Seq::FIRST, None)
            .unwrap()
            .iter()
            .filter(|e| !matches!(e.body, planlog_core::events::EventBody::SessionDescribed(_)))
            .filter_map(|e| e.call_id.as_ref().map(ToString::to_string))
            .collect()
    }

    #[test]
    fn a_write_the_store_cannot_take_waits_and_later_writes_go_behind_it_refusals_too() {
        let dir = tempfile::tempdir().unwrap();
        let log = FaultyLog::new(MemoryLog::new());
        let env = TestEnv::default();
        let writes = path(&log, &env, dir.path());
        assert_eq!(
            writes.write(&entry("s", "a", "One", Kind::Ran)),
            Written::Stored
        );
        log.fail_next(1, false);
        let second = writes.write(&entry("s", "b", "Two", Kind::Ran));
        assert!(matches!(second, Written::Spooled { .. }), "{second:?}");
        // The store is back: a refusal is stored after what waited, never ahead of it.
        let refusal = Kind::Blocked(Rejection {
            code: RejectionCode::BulkCompletion,
            message: "no".to_owned(),
            position: None,
        });
        assert_eq!(
            writes.write(&entry("s", "c", "Three", refusal)),
            Written::Stored
        );
        assert_eq!(calls(&log, "s"), ["a", "b", "c"]);
        assert!(writes.spool().looks_empty());
    }

    #[test]
    fn a_write_refused_for_good_goes_to_the_dead_letters_and_the_rest_are_stored_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let log = MemoryLog::new();
        let env = TestEnv::default();
        let writes = path(&log, &env, dir.path());
        assert_eq!(
            writes.write(&entry("gone", "a", "One", Kind::Ran)),
            Written::Stored
        );
        log.delete(&SessionId::new("cc-gone").unwrap()).unwrap();
        for e in [
            entry("gone", "b", "Two", Kind::Ran),
            entry("kept", "k1", "One", Kind::Ran),
            entry("kept", "k2", "Two", Kind::Ran),
        ] {
            writes.spool().push(&e, &Deadline::none()).unwrap();
        }
        let drained = writes.drain();
        assert_eq!(
            (drained.stored, drained.dead, drained.stopped),
            (2, 1, None)
        );
        assert_eq!(calls(&log, "kept"), ["k1", "k2"]);
        let letters = DeadLetters::beside(&dir.path().join("planlog.redb"))
            .list()
            .unwrap();
        assert_eq!(letters.len(), 1);
        assert!(letters[0].why.contains("was deleted"), "{}", letters[0].why);
        // A new write for the retired session is refused for good too, and says so.
        let again = writes.write(&entry("gone", "c", "Three", Kind::Ran));
        assert!(matches!(again, Written::Dead { .. }), "{again:?}");
    }

    #[test]
    fn a_store_that_cannot_be_opened_spools_every_write_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let env = TestEnv::default();
        let store = dir.path().join("planlog.redb");
        let closed = WritePath::new(
            Err("locked".to_owned()),
            &env,
            Spool::beside(&store),
            DeadLetters::beside(&store),
            Deadline::none(),
        );
        for call in ["a", "b"] {
            let w = closed.write(&entry("s", call, call, Kind::Ran));
            assert_eq!(
                w,
                Written::Spooled {
                    why: "locked".to_owned()
                }
            );
        }
        let log = MemoryLog::new();
        let open = path(&log, &env, dir.path());
        assert_eq!(
            open.write(&entry("s", "c", "c", Kind::Ran)),
            Written::Stored
        );
        assert_eq!(calls(&log, "s"), ["a", "b", "c"]);
    }
}
