//! Reading the log past what is indexed. A session is indexed a chunk of the log's scan at a
//! time, one write transaction per chunk, so the index is consistent at every commit: the
//! progress row, the marks up to it, and every text up to it (an item still in the plan has
//! its `last` at the progress seq; the next catch-up carries it on).

use std::collections::HashMap;

use planlog_audit::{describe_flag, flags_of};
use planlog_core::events::{Event, EventBody};
use planlog_core::{EventLog, Seq, SessionId, SessionInfo, SessionState, apply};
use redb::{ReadableDatabase, ReadableTable};

use crate::query::MarkKind;
use crate::tables::{MARKS, PROGRESS, TEXTS};
use crate::{Index, IndexError};

/// How far a catch-up got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Indexed {
    /// Events indexed in all sessions now.
    pub events: u64,
    /// Events in all sessions of the store.
    pub of: u64,
    /// Events this catch-up read (0 from [`Index::coverage`]).
    pub read: u64,
}

impl Indexed {
    /// Whether the index holds every event of the store.
    pub fn complete(&self) -> bool {
        self.events >= self.of
    }
}

/// An item's text as the plan holds it now: (item id, content) with the seq it appeared.
type Live = HashMap<(String, String), u64>;

impl Index {
    /// How many events of `session` are indexed.
    pub fn indexed(&self, session: &SessionId) -> Result<u64, IndexError> {
        let read = self.db.begin_read().map_err(|e| self.file_err(e))?;
        let t = read.open_table(PROGRESS).map_err(|e| self.file_err(e))?;
        Ok(t.get(session.as_str())
            .map_err(|e| self.file_err(e))?
            .map_or(0, |v| v.value().0))
    }

    /// Brings every session of `sessions` (the store's catalogue) up to the log, and forgets
    /// sessions no longer in it. `stop` is asked between chunks: when it says so, the
    /// catch-up returns where it is (the next one goes on from there).
    pub fn catch_up(
        &self,
        log: &dyn EventLog,
        sessions: &[SessionInfo],
        stop: &dyn Fn() -> bool,
    ) -> Result<Indexed, IndexError> {
        self.forget_missing(sessions)?;
        let mut read = 0;
        for info in sessions {
            let (now, n) = self.catch_up_session(log, info, stop)?;
            read += n;
            if now < info.events {
                break;
            }
        }
        Ok(Indexed {
            read,
            ..self.coverage(sessions)?
        })
    }

    /// How much of `sessions` (the store's catalogue) the index holds now.
    pub fn coverage(&self, sessions: &[SessionInfo]) -> Result<Indexed, IndexError> {
        let read = self.db.begin_read().map_err(|e| self.file_err(e))?;
        let t = read.open_table(PROGRESS).map_err(|e| self.file_err(e))?;
        let mut done = Indexed::default();
        for info in sessions {
            done.of += info.events;
            done.events += t
                .get(info.id.as_str())
                .map_err(|e| self.file_err(e))?
                .map_or(0, |v| v.value().0)
                .min(info.events);
        }
        Ok(done)
    }

    /// Brings one session up to the log; returns (events indexed now, events read).
    pub fn catch_up_session(
        &self,
        log: &dyn EventLog,
        info: &SessionInfo,
        stop: &dyn Fn() -> bool,
    ) -> Result<(u64, u64), IndexError> {
        let id = info.id.as_str();
        let mut from = self.still_valid(log, info)?;
        if from == info.events {
            return Ok((from, 0));
        }
        let mut state = match Seq::new(from) {
            Ok(at) => log.state_at(&info.id, at)?,
            Err(_) => SessionState::default(),
        };
        let mut live = self.live_texts(id, &state, from)?;
        let mut read = 0;
        for chunk in log.scan(
            &info.id,
            Seq::new(from + 1).map_err(planlog_core::LogError::from)?,
        ) {
            let chunk = chunk?;
            let Some(last) = chunk.last() else { break };
            let (last_seq, last_hash) = (last.seq.get(), last.hash.to_string());
            let write = self.db.begin_write().map_err(|e| self.file_err(e))?;
            {
                let mut marks = write.open_table(MARKS).map_err(|e| self.file_err(e))?;
                let mut texts = write.open_table(TEXTS).map_err(|e| self.file_err(e))?;
                let mut put = |key: &(String, String), first: u64, last: u64| {
                    let k = (id, key.0.as_str(), key.1.as_str());
                    let first = match texts.get(k)? {
                        Some(old) => old.value().0.min(first),
                        None => first,
                    };
                    texts.insert(k, (first, last)).map(|_| ())
                };
                for e in &chunk {
                    if let Some((kind, text)) = mark_of(e, &state) {
                        marks
                            .insert((id, e.seq.get()), (kind.byte(), text.as_str()))
                            .map_err(|e| self.file_err(e))?;
                    }
                    if let Some(plan) = e.body.plan() {
                        let now: Live = plan
                            .items()
                            .iter()
                            .map(|i| ((i.id.as_str().to_owned(), i.content.clone()), e.seq.get()))
                            .collect();
                        for (key, first) in &live {
                            if !now.contains_key(key) {
                                put(key, *first, e.seq.get() - 1).map_err(|e| self.file_err(e))?;
                            }
                        }
                        live = now
                            .into_iter()
                            .map(|(key, seq)| {
                                let first = live.get(&key).copied().unwrap_or(seq);
                                (key, first)
                            })
                            .collect();
                    }
                    state = apply(std::mem::take(&mut state), &e.body);
                }
                for (key, first) in &live {
                    put(key, *first, last_seq).map_err(|e| self.file_err(e))?;
                }
                let mut progress = write.open_table(PROGRESS).map_err(|e| self.file_err(e))?;
                progress
                    .insert(id, (last_seq, last_hash.as_str()))
                    .map_err(|e| self.file_err(e))?;
            }
            write.commit().map_err(|e| self.file_err(e))?;
            read += chunk.len() as u64;
            from = last_seq;
            if stop() {
                break;
            }
        }
        Ok((from, read))
    }

    /// How much of the session's index still describes the log: all of it, or nothing when
    /// the session shrank or its event at the indexed seq is not the one indexed (a store
    /// put back from elsewhere). What is not valid is removed.
    fn still_valid(&self, log: &dyn EventLog, info: &SessionInfo) -> Result<u64, IndexError> {
        let id = info.id.as_str();
        let (n, hash) = {
            let read = self.db.begin_read().map_err(|e| self.file_err(e))?;
            let t = read.open_table(PROGRESS).map_err(|e| self.file_err(e))?;
            match t.get(id).map_err(|e| self.file_err(e))? {
                None => return Ok(0),
                Some(v) => (v.value().0, v.value().1.to_owned()),
            }
        };
        let same = n <= info.events
            && match Seq::new(n) {
                Ok(at) => log
                    .read(&info.id, at, Some(at))?
                    .first()
                    .is_some_and(|e| e.hash.to_string() == hash),
                Err(_) => true,
            };
        if same {
            return Ok(n);
        }
        tracing::info!(
            session = id,
            "the index of this session no longer matches the log; indexing it again"
        );
        self.forget(&info.id)?;
        Ok(0)
    }

    /// The texts of the plan at `at` (seq `at` indexed), with the seq each appeared.
    fn live_texts(&self, id: &str, state: &SessionState, at: u64) -> Result<Live, IndexError> {
        let read = self.db.begin_read().map_err(|e| self.file_err(e))?;
        let t = read.open_table(TEXTS).map_err(|e| self.file_err(e))?;
        let mut live = Live::new();
        for i in state.plan.items() {
            let first = t
                .get((id, i.id.as_str(), i.content.as_str()))
                .map_err(|e| self.file_err(e))?
                .map_or(at, |v| v.value().0);
            live.insert((i.id.as_str().to_owned(), i.content.clone()), first);
        }
        Ok(live)
    }

    /// Removes everything indexed of `session`.
    pub fn forget(&self, session: &SessionId) -> Result<(), IndexError> {
        let id = session.as_str();
        let write = self.db.begin_write().map_err(|e| self.file_err(e))?;
        {
            let mut p = write.open_table(PROGRESS).map_err(|e| self.file_err(e))?;
            p.remove(id).map_err(|e| self.file_err(e))?;
            let mut m = write.open_table(MARKS).map_err(|e| self.file_err(e))?;
            m.retain_in((id, 0)..=(id, u64::MAX), |_, _| false)
                .map_err(|e| self.file_err(e))?;
            let mut t = write.open_table(TEXTS).map_err(|e| self.file_err(e))?;
            t.retain_in((id, "", "")..(id, "\u{10FFFF}", ""), |_, _| false)
                .map_err(|e| self.file_err(e))?;
        }
        write.commit().map_err(|e| self.file_err(e))
    }

    /// Forgets the sessions the catalogue no longer lists (deleted).
    fn forget_missing(&self, sessions: &[SessionInfo]) -> Result<(), IndexError> {
        let known: std::collections::HashSet<&str> =
            sessions.iter().map(|s| s.id.as_str()).collect();
        let gone: Vec<String> = {
            let read = self.db.begin_read().map_err(|e| self.file_err(e))?;
            let t = read.open_table(PROGRESS).map_err(|e| self.file_err(e))?;
            let mut gone = Vec::new();
            for row in t.iter().map_err(|e| self.file_err(e))? {
                let (k, _) = row.map_err(|e| self.file_err(e))?;
                if !known.contains(k.value()) {
                    gone.push(k.value().to_owned());
                }
            }
            gone
        };
        for id in gone {
            if let Ok(id) = SessionId::new(id) {
                self.forget(&id)?;
            }
        }
        Ok(())
    }

    pub(crate) fn file_err(&self, e: impl std::fmt::Display) -> IndexError {
        IndexError::file(&self.path, e)
    }
}

/// The mark an event leaves, given the state before it.
fn mark_of(e: &Event, before: &SessionState) -> Option<(MarkKind, String)> {
    match &e.body {
        EventBody::WriteRejected(r) => Some((
            MarkKind::Refusal,
            format!("{}: {}", r.code.as_str(), r.message),
        )),
        EventBody::PlanWritten(_) => {
            let flags = flags_of(&before.plan, &e.body);
            (!flags.is_empty()).then(|| {
                let text: Vec<String> = flags
                    .iter()
                    .map(|b| describe_flag(b, &before.plan, &e.body))
                    .collect();
                (MarkKind::Flag, text.join("; "))
            })
        }
        EventBody::ContextCompacted(c) => Some((
            MarkKind::Compaction,
            format!(
                "context compacted ({})",
                c.trigger.as_deref().unwrap_or("trigger not said")
            ),
        )),
        EventBody::PlanRestored(r) => Some((
            MarkKind::Restore,
            format!("plan put back after {}", r.after),
        )),
        _ => None,
    }
}
