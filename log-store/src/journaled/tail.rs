//! The tail: the journal's records past what the index reflects, as this process has read
//! them (this process's own appends decoded; another's read as far as their session until
//! something asks about it: [`Lazy`]), at most [`KEEP`] of them. Reads answer from the index
//! and the tail together, so an acknowledged append is seen before any process has indexed
//! it.

use std::borrow::Cow;
use std::collections::{HashSet, VecDeque};
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

/// Every record between `base` and the end of the journal this process has read, in order.
#[derive(Debug, Default)]
pub(super) struct Tail {
    base: u64,
    entries: VecDeque<Entry>,
}

impl Tail {
    /// An empty tail starting at journal position `base`.
    pub(super) fn new(base: u64) -> Self {
        Self {
            base,
            entries: VecDeque::new(),
        }
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
        self.entries.push_back(entry);
    }

    /// Forgets the records an index at `position` reflects.
    pub(super) fn indexed_to(&mut self, position: u64) {
        while self.entries.front().is_some_and(|e| e.upto <= position) {
            self.entries.pop_front();
        }
        self.base = self.base.max(position);
    }

    /// Forgets every record, the tail starting again at `end` (after a batch too long to
    /// keep; reads then take what the index lacks from the journal).
    pub(super) fn restart_at(&mut self, end: u64) {
        self.entries.clear();
        self.base = end;
    }

    /// The records past journal position `position`, or `None` when the tail starts after
    /// it (what lies between is read from the journal).
    pub(super) fn since(&self, position: u64) -> Option<impl Iterator<Item = &Entry>> {
        (position >= self.base).then(|| self.entries.iter().filter(move |e| e.upto > position))
    }

    /// Reads, in place, the records not read yet whose sessions `wanted` says (once: a
    /// record read stays read); `path` names the journal in errors.
    pub(super) fn read_where(
        &mut self,
        wanted: &dyn Fn(&SessionId) -> bool,
        path: &str,
    ) -> Result<(), LogError> {
        for entry in &mut self.entries {
            if let Lazy::Unread { session, .. } = &entry.item
                && wanted(session)
            {
                let item = entry.item.read(entry.at, path)?.into_owned();
                entry.item = Lazy::Read(item);
            }
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
        match self.since(seen) {
            Some(mut after) => after.any(|e| sessions.contains(e.item.session())),
            None => true,
        }
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
