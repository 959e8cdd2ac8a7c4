//! The tail: the journal's records past what the index reflects, as this process has read
//! them (this process's own appends decoded; another's read as far as their session until
//! something asks about it: [`Lazy`]), at most [`KEEP`] of them. Reads answer from the index
//! and the tail together, so an acknowledged append is seen before any process has indexed
//! it.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use planlog_core::events::{Event, Hash};
use planlog_core::{LogError, OperatorError, SessionId};

use crate::journal::Record;

/// What a record of the tail says (a [`Record`], its event shared).
#[derive(Debug, Clone)]
pub(super) enum Item {
    /// An event appended.
    Event(Arc<Event>),
    /// A session deleted.
    Delete {
        /// The session.
        session: SessionId,
        /// Its first event's hash.
        first: Option<Hash>,
    },
}

impl From<Record> for Item {
    fn from(record: Record) -> Self {
        match record {
            Record::Event(e) => Item::Event(Arc::from(e)),
            Record::Delete { session, first } => Item::Delete { session, first },
        }
    }
}

impl Item {
    /// The session it is about.
    pub(super) fn session(&self) -> &SessionId {
        match self {
            Item::Event(e) => &e.session,
            Item::Delete { session, .. } => session,
        }
    }
}

/// A record of the tail as held: read, or (another process's, whose session is all that
/// was read of it) not yet. Under the journal's lock a writer reads only the records of the
/// sessions it writes; the rest are read when something asks about their sessions.
#[derive(Debug, Clone)]
pub(super) enum Lazy {
    /// Read.
    Read(Item),
    /// Not read yet: its session, and its bytes.
    Unread {
        /// The session it is about.
        session: SessionId,
        /// The record.
        data: Arc<[u8]>,
    },
}

impl Lazy {
    /// The session it is about.
    pub(super) fn session(&self) -> &SessionId {
        match self {
            Lazy::Read(item) => item.session(),
            Lazy::Unread { session, .. } => session,
        }
    }

    /// What it says, read now if it was not; `at` and `path` name it in errors.
    pub(super) fn read(&self, at: u64, path: &str) -> Result<Cow<'_, Item>, LogError> {
        match self {
            Lazy::Read(item) => Ok(Cow::Borrowed(item)),
            Lazy::Unread { session, data } => {
                let record = Record::decode(data).map_err(|why| corrupt_record(path, at, &why))?;
                if record.session() != session {
                    return Err(corrupt_record(
                        path,
                        at,
                        "its session read alone and read whole differ",
                    ));
                }
                Ok(Cow::Owned(Item::from(record)))
            }
        }
    }
}

/// A record of the journal at `path` that is not one planlog wrote: damage.
pub(super) fn corrupt_record(path: &str, at: u64, why: &str) -> LogError {
    OperatorError::Corrupt {
        path: path.to_owned(),
        session: None,
        seq: None,
        detail: format!("the record at byte {at}: {why}"),
    }
    .into()
}

/// One record of the tail.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    /// Where its frame starts in the journal.
    pub(super) at: u64,
    /// Where the frame that committed it ends.
    pub(super) upto: u64,
    /// What it says.
    pub(super) item: Lazy,
}

/// Most records a tail holds.
pub(super) const KEEP: usize = 4096;

/// Every record between `base` and the end of the journal this process has read, in order,
/// and each session's among them: a view about a few sessions visits their records only,
/// however many other sessions' records the tail holds.
///
/// Records are numbered in the order they were added; `by_session` holds, for every session
/// with a record in the tail, the numbers of its records in order. Invariant: every number
/// in `by_session` is that of a record held, `first..first + entries.len()`.
#[derive(Debug, Default)]
pub(super) struct Tail {
    base: u64,
    entries: VecDeque<Entry>,
    /// The number of the first record held.
    first: u64,
    by_session: HashMap<SessionId, VecDeque<u64>>,
}

impl Tail {
    /// An empty tail starting at journal position `base`.
    pub(super) fn new(base: u64) -> Self {
        Self {
            base,
            ..Self::default()
        }
    }

    /// Where the record numbered `n` is in `entries`.
    fn place(&self, n: u64) -> usize {
        usize::try_from(n - self.first).unwrap_or(usize::MAX)
    }

    /// The record numbered `n` (one of `by_session`'s: held, by the invariant).
    fn numbered(&self, n: u64) -> &Entry {
        &self.entries[self.place(n)]
    }

    /// Adds the next record: one it holds already, or one before its base, is passed over
    /// (a catch-up read again after an error). Past [`KEEP`] records it forgets them all and
    /// starts again after this one: reads take what the index lacks from the journal, so
    /// memory does not grow with another writer's batch.
    pub(super) fn push(&mut self, entry: Entry) {
        if entry.upto <= self.base || self.entries.back().is_some_and(|l| l.at >= entry.at) {
            return;
        }
        if self.entries.len() >= KEEP {
            self.restart_at(entry.upto);
            return;
        }
        let n = self.first + self.entries.len() as u64;
        let session = entry.item.session();
        match self.by_session.get_mut(session) {
            Some(numbers) => numbers.push_back(n),
            None => {
                self.by_session.insert(session.clone(), VecDeque::from([n]));
            }
        }
        self.entries.push_back(entry);
    }

    /// Forgets the records an index at `position` reflects.
    pub(super) fn indexed_to(&mut self, position: u64) {
        while self.entries.front().is_some_and(|e| e.upto <= position) {
            let Some(entry) = self.entries.pop_front() else {
                break;
            };
            let session = entry.item.session();
            if let Some(numbers) = self.by_session.get_mut(session) {
                numbers.pop_front();
                if numbers.is_empty() {
                    self.by_session.remove(session);
                }
            }
            self.first += 1;
        }
        self.base = self.base.max(position);
    }

    /// Forgets every record, the tail starting again at `end` (after a batch too long to
    /// keep; reads then take what the index lacks from the journal).
    pub(super) fn restart_at(&mut self, end: u64) {
        self.first += self.entries.len() as u64;
        self.entries.clear();
        self.by_session.clear();
        self.base = end;
    }

    /// The records past journal position `position`, or `None` when the tail starts after
    /// it (what lies between is read from the journal).
    pub(super) fn since(&self, position: u64) -> Option<impl Iterator<Item = &Entry>> {
        (position >= self.base).then(|| {
            // Records are in journal order, and so are the ends of the frames that commit them.
            let from = self.entries.partition_point(|e| e.upto <= position);
            self.entries.range(from..)
        })
    }

    /// The numbers of `session`'s records past journal position `position`, in order.
    fn of_since(&self, session: &SessionId, position: u64) -> impl ExactSizeIterator<Item = u64> {
        static NONE: VecDeque<u64> = VecDeque::new();
        let numbers = self.by_session.get(session).unwrap_or(&NONE);
        let from = numbers.partition_point(|&n| self.numbered(n).upto <= position);
        numbers.range(from..).copied()
    }

    /// `session`'s records past journal position `position` (at or after the tail's base),
    /// in order.
    pub(super) fn of_session_since(
        &self,
        session: &SessionId,
        position: u64,
    ) -> impl ExactSizeIterator<Item = &Entry> {
        self.of_since(session, position).map(|n| self.numbered(n))
    }

    /// Reads, in place, the records not read yet of the sessions of `scope` (every
    /// session's for `None`), once: a record read stays read. `path` names the journal in
    /// errors.
    pub(super) fn read_where(
        &mut self,
        scope: Option<&HashSet<SessionId>>,
        path: &str,
    ) -> Result<(), LogError> {
        let read = |entry: &mut Entry| -> Result<(), LogError> {
            if let Lazy::Unread { .. } = &entry.item {
                let item = entry.item.read(entry.at, path)?.into_owned();
                entry.item = Lazy::Read(item);
            }
            Ok(())
        };
        let Some(sessions) = scope else {
            return self.entries.iter_mut().try_for_each(read);
        };
        let unread: Vec<usize> = sessions
            .iter()
            .filter_map(|s| self.by_session.get(s))
            .flatten()
            .map(|&n| self.place(n))
            .filter(|&i| matches!(self.entries[i].item, Lazy::Unread { .. }))
            .collect();
        for i in unread {
            read(&mut self.entries[i])?;
        }
        Ok(())
    }

    /// Where the records it holds end (its base when it holds none): under the journal's
    /// lock, the journal's end as this process has read it.
    pub(super) fn end(&self) -> u64 {
        self.entries.back().map_or(self.base, |e| e.upto)
    }

    /// Whether a record past journal position `seen` may be about a session of `sessions`:
    /// one it holds is, or it no longer holds every record past `seen`.
    pub(super) fn touched_since(&self, seen: u64, sessions: &HashSet<SessionId>) -> bool {
        seen < self.base
            || sessions.iter().any(|s| {
                self.by_session
                    .get(s)
                    .and_then(VecDeque::back)
                    .is_some_and(|&n| self.numbered(n).upto > seen)
            })
    }

    /// Where the tail starts.
    pub(super) fn base(&self) -> u64 {
        self.base
    }

    /// How many records it holds.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code

    use super::*;

    /// A record of `session` at `at`, committed by a frame ending at `upto`.
    fn entry(session: &SessionId, at: u64, upto: u64) -> Entry {
        Entry {
            at,
            upto,
            item: Lazy::Read(Item::Delete {
                session: session.clone(),
                first: None,
            }),
        }
    }

    /// Where each record past `position` starts: of the sessions of `scope` as a view
    /// takes them (a session at a time), or of every session.
    fn visited(tail: &Tail, position: u64, scope: Option<&HashSet<SessionId>>) -> Vec<u64> {
        let mut seen: Vec<u64> = match scope {
            Some(sessions) => sessions
                .iter()
                .flat_map(|s| tail.of_session_since(s, position))
                .map(|e| e.at)
                .collect(),
            None => tail.since(position).unwrap().map(|e| e.at).collect(),
        };
        seen.sort_unstable();
        seen
    }

    /// The per-session numbering answers as a scan of every record would, through pushes
    /// (single records and batches sharing a commit frame), indexing that forgets a prefix,
    /// and restarts: a seeded run of random steps against a plain list.
    #[test]
    fn a_sessions_records_are_found_as_a_scan_finds_them() {
        let sessions: Vec<SessionId> = (0..5)
            .map(|i| SessionId::new(format!("s{i}")).unwrap())
            .collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        let mut tail = Tail::new(0);
        // The plain model: the base and every record held, in order.
        let (mut base, mut model): (u64, Vec<(u64, u64, usize)>) = (0, Vec::new());
        let mut end = 0u64;
        for _ in 0..4000 {
            match next(10) {
                0..=5 => {
                    // A batch of 1-3 records committed by one frame.
                    let count = 1 + next(3);
                    let upto = end + 10 * count + 5;
                    for k in 0..count {
                        let s = usize::try_from(next(5)).unwrap();
                        tail.push(entry(&sessions[s], end + 10 * k, upto));
                        model.push((end + 10 * k, upto, s));
                    }
                    end = upto;
                }
                6..=8 => {
                    let position = base + next(end - base + 1);
                    tail.indexed_to(position);
                    model.retain(|&(_, upto, _)| upto > position);
                    base = base.max(position);
                }
                _ => {
                    tail.restart_at(end);
                    model.clear();
                    base = end;
                }
            }
            assert_eq!((tail.base(), tail.len()), (base, model.len()));
            let position = base + next(end - base + 1);
            let scope: HashSet<SessionId> = (0..5)
                .filter(|_| next(2) == 0)
                .map(|s| sessions[s].clone())
                .collect();
            let wanted = |s: usize| scope.contains(&sessions[s]);
            let expected: Vec<u64> = model
                .iter()
                .filter(|&&(_, upto, s)| upto > position && wanted(s))
                .map(|&(at, _, _)| at)
                .collect();
            assert_eq!(visited(&tail, position, Some(&scope)), expected);
            let all: Vec<u64> = model
                .iter()
                .filter(|&&(_, upto, _)| upto > position)
                .map(|&(at, _, _)| at)
                .collect();
            assert_eq!(visited(&tail, position, None), all);
            assert_eq!(
                tail.touched_since(position, &scope),
                !expected.is_empty(),
                "records of {scope:?} past {position}"
            );
        }
        // The numbering forgets sessions whose records are all indexed.
        tail.indexed_to(end);
        assert!(tail.by_session.is_empty());
    }
}
