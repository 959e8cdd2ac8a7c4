//! The index: redb tables saying where each event lies in the journal and what reads need
//! without decoding events (heads, the catalogue, call ids, plan and mode marks), with the
//! journal position they reflect. It holds nothing the journal does not: it can be rebuilt
//! from the journal at any time (`planlog reindex`).
//!
//! | table | key | value |
//! |---|---|---|
//! | `meta` | `index_format`, `journal_position` | the index's format; how far into the journal it reflects (the end of a frame) |
//! | `locations` | (session, seq) | where the event's frame starts in the journal |
//! | `sessions`, `calls`, `plan_marks`, `mode_marks`, `heads`, `deleted`, `tombstones` | as the redb store's (`crate::redb::schema`) | |

use std::collections::HashMap;
use std::ops::RangeInclusive;

use planlog_core::events::{Event, Hash, Head};
use planlog_core::log::Slot;
use planlog_core::{LogError, OperatorError, Seq, SessionId, SessionInfo};
use redb::{ReadTransaction, ReadableTable, Table, TableDefinition, WriteTransaction};

use super::tail::Item;
use crate::codec::{corrupt, decode_info, encode_info, marks_of};
use crate::journal::Record;
use crate::redb::errors::redb_err;
use crate::redb::schema::{
    CALLS, DELETED, FORMAT_KEY, HEADS, META, MODE_MARKS, PLAN_MARKS, SESSIONS, TOMBSTONES,
};

type Result<T> = std::result::Result<T, LogError>;

/// Where each event's frame starts in the journal.
pub(super) const LOCATIONS: TableDefinition<(&str, u64), u64> = TableDefinition::new("locations");
pub(crate) const INDEX_FORMAT_KEY: &str = "index_format";
pub(super) const POSITION_KEY: &str = "journal_position";

/// The index layout this code writes.
pub(crate) const INDEX_FORMAT: u64 = 1;

/// What is being done to which index, for its errors.
#[derive(Clone, Copy)]
struct Ix<'a>(&'a str, &'static str);

impl<'a> Ix<'a> {
    /// A redb error while doing it, as an operator error naming the index.
    fn f<E: Into<redb::Error>>(self) -> impl FnOnce(E) -> LogError + 'a {
        move |e| redb_err(self.0, self.1, e)
    }
}

/// Creates the index's tables in a new file, or checks an existing file is an index.
pub(super) fn init(txn: &WriteTransaction, p: &str) -> Result<()> {
    let doing = "initialising the index";
    let mut meta = txn.open_table(META).map_err(Ix(p, doing).f())?;
    if meta.get(FORMAT_KEY).map_err(Ix(p, doing).f())?.is_some() {
        return Err(OperatorError::NotAStore {
            path: p.to_owned(),
            detail: "a planlog store of the redb layout, not a journal's index".to_owned(),
        }
        .into());
    }
    let found = meta
        .get(INDEX_FORMAT_KEY)
        .map_err(Ix(p, doing).f())?
        .map(|v| v.value());
    match found {
        Some(INDEX_FORMAT) => {}
        Some(other) => {
            return Err(OperatorError::NewerFormat {
                path: p.to_owned(),
                found: other,
                supported: INDEX_FORMAT,
            }
            .into());
        }
        None => {
            meta.insert(INDEX_FORMAT_KEY, INDEX_FORMAT)
                .map_err(Ix(p, doing).f())?;
            meta.insert(POSITION_KEY, 0).map_err(Ix(p, doing).f())?;
        }
    }
    drop(meta);
    txn.open_table(LOCATIONS).map_err(Ix(p, doing).f())?;
    txn.open_table(SESSIONS).map_err(Ix(p, doing).f())?;
    txn.open_table(CALLS).map_err(Ix(p, doing).f())?;
    txn.open_table(PLAN_MARKS).map_err(Ix(p, doing).f())?;
    txn.open_table(MODE_MARKS).map_err(Ix(p, doing).f())?;
    txn.open_table(HEADS).map_err(Ix(p, doing).f())?;
    txn.open_table(DELETED).map_err(Ix(p, doing).f())?;
    txn.open_table(TOMBSTONES).map_err(Ix(p, doing).f())?;
    Ok(())
}

/// Whether the index was made already (its format this code's; anything else goes through
/// [`init`], which says what it is).
pub(super) fn is_made(handle: &crate::redb::Handle, p: &str) -> Result<bool> {
    let txn = handle.begin_read(p, "reading the index")?;
    let meta = match txn.open_table(META) {
        Ok(t) => t,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(false),
        Err(e) => return Err(redb_err(p, "reading the index", e)),
    };
    made_in(&meta, p)
}

/// Whether the meta table says this layout's index is made.
fn made_in(meta: &impl ReadableTable<&'static str, u64>, p: &str) -> Result<bool> {
    let format = meta
        .get(INDEX_FORMAT_KEY)
        .map_err(Ix(p, "reading the index").f())?
        .map(|v| v.value());
    Ok(format == Some(INDEX_FORMAT))
}

/// Where a made index of this layout stands, in one read transaction: its journal position,
/// or `None` when a writer must open it writable first (no index yet, an older index, or a
/// store of the old layout to upgrade). What [`super::upgrade::legacy_format`],
/// [`is_made`] and [`position_of`] say one transaction each, for a hook's open.
pub(super) fn ready_position(handle: &crate::redb::Handle, p: &str) -> Result<Option<u64>> {
    let txn = handle.begin_read(p, "reading the index")?;
    let meta = match txn.open_table(META) {
        Ok(t) => t,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
        Err(e) => return Err(redb_err(p, "reading the index", e)),
    };
    // A store of the old layout (its format key set) is upgraded through a writable handle.
    let legacy = meta
        .get(FORMAT_KEY)
        .map_err(Ix(p, "reading the index").f())?
        .is_some();
    if legacy || !made_in(&meta, p)? {
        return Ok(None);
    }
    IndexRead { txn: &txn, p }.position().map(Some)
}

/// How far into the journal the index reflects, read in a write transaction.
pub(super) fn position_in_write(txn: &WriteTransaction, p: &str) -> Result<u64> {
    let meta = txn
        .open_table(META)
        .map_err(Ix(p, "reading the index").f())?;
    let got = meta
        .get(POSITION_KEY)
        .map_err(Ix(p, "reading the index").f())?
        .map(|v| v.value());
    got.ok_or_else(|| not_an_index(p))
}

fn not_an_index(p: &str) -> LogError {
    OperatorError::NotAStore {
        path: p.to_owned(),
        detail: "a redb file without a journal position: not a journal's index".to_owned(),
    }
    .into()
}

/// The journal position the index behind `handle` reflects, read in a read transaction
/// (`action` names the work in errors).
pub(super) fn position_of(handle: &crate::redb::Handle, p: &str, action: &str) -> Result<u64> {
    let txn = handle.begin_read(p, action)?;
    IndexRead { txn: &txn, p }.position()
}

/// Records that the index reflects the journal up to `upto`.
pub(super) fn set_position(txn: &WriteTransaction, upto: u64, p: &str) -> Result<()> {
    txn.open_table(META)
        .map_err(Ix(p, "indexing").f())?
        .insert(POSITION_KEY, upto)
        .map_err(Ix(p, "indexing").f())?;
    Ok(())
}

/// The index's tables in one write transaction, opened once for a run of records: opening
/// six tables for each record cost more than applying it.
struct Tables<'t> {
    sessions: Table<'t, &'static str, &'static [u8]>,
    locations: Table<'t, (&'static str, u64), u64>,
    heads: Table<'t, &'static str, (u64, [u8; 32])>,
    calls: Table<'t, (&'static str, &'static str), u64>,
    plan_marks: Table<'t, (&'static str, u64), ()>,
    mode_marks: Table<'t, (&'static str, u64), bool>,
    deleted: Table<'t, &'static str, u64>,
    tombstones: Table<'t, &'static str, [u8; 32]>,
    /// Catalogue entries and heads this run changed, written once at its end: an entry is
    /// JSON with a digest, and decoding and encoding it for every record cost more than the
    /// record's own inserts.
    changed: HashMap<String, (SessionInfo, (u64, [u8; 32]))>,
}

/// Applies records (each with where its frame starts) to the index, in order.
pub(super) fn apply_all(txn: &WriteTransaction, records: &[(u64, Item)], p: &str) -> Result<()> {
    if records.is_empty() {
        return Ok(());
    }
    let e = Ix(p, "indexing");
    let mut tables = Tables {
        sessions: txn.open_table(SESSIONS).map_err(e.f())?,
        locations: txn.open_table(LOCATIONS).map_err(e.f())?,
        heads: txn.open_table(HEADS).map_err(e.f())?,
        calls: txn.open_table(CALLS).map_err(e.f())?,
        plan_marks: txn.open_table(PLAN_MARKS).map_err(e.f())?,
        mode_marks: txn.open_table(MODE_MARKS).map_err(e.f())?,
        deleted: txn.open_table(DELETED).map_err(e.f())?,
        tombstones: txn.open_table(TOMBSTONES).map_err(e.f())?,
        changed: HashMap::new(),
    };
    for (at, item) in records {
        tables.apply(*at, item, p)?;
    }
    for (s, (info, head)) in &tables.changed {
        tables
            .sessions
            .insert(s.as_str(), encode_info(info).as_slice())
            .map_err(e.f())?;
        tables.heads.insert(s.as_str(), *head).map_err(e.f())?;
    }
    Ok(())
}

impl Tables<'_> {
    /// Applies one record, whose frame starts at `at`.
    fn apply(&mut self, at: u64, item: &Item, p: &str) -> Result<()> {
        let e = Ix(p, "indexing");
        match item {
            Item::Event(event) => {
                let s = event.session.as_str();
                let seq = event.seq.get();
                let head = (seq, *event.hash.as_bytes());
                if seq == 1 {
                    // A new session, or a deleted one restored: its id is live again.
                    self.deleted.remove(s).map_err(e.f())?;
                    self.tombstones.remove(s).map_err(e.f())?;
                    let info = SessionInfo::from_first(event).ok_or_else(|| {
                        corrupt(
                            p,
                            &event.session,
                            seq,
                            "a first event that does not start a session".into(),
                        )
                    })?;
                    self.changed.insert(s.to_owned(), (info, head));
                } else if let Some((info, last)) = self.changed.get_mut(s) {
                    info.observe(event);
                    *last = head;
                } else {
                    let found = self
                        .sessions
                        .get(s)
                        .map_err(e.f())?
                        .map(|b| b.value().to_vec());
                    let bytes = found.ok_or_else(|| {
                        corrupt(
                            p,
                            &event.session,
                            seq,
                            "an event of a session the index does not know".into(),
                        )
                    })?;
                    let mut info = decode_info(p, s, &bytes)?;
                    info.observe(event);
                    self.changed.insert(s.to_owned(), (info, head));
                }
                self.locations.insert((s, seq), at).map_err(e.f())?;
                if let Some(call) = &event.call_id {
                    self.calls.insert((s, call.as_str()), seq).map_err(e.f())?;
                }
                let (plan, mode) = marks_of(&event.body);
                if plan {
                    self.plan_marks.insert((s, seq), ()).map_err(e.f())?;
                }
                if let Some(mode) = mode {
                    self.mode_marks.insert((s, seq), mode).map_err(e.f())?;
                }
            }
            Item::Delete { session, first } => {
                let s = session.as_str();
                let range = (s, 0)..=(s, u64::MAX);
                self.changed.remove(s);
                self.sessions.remove(s).map_err(e.f())?;
                self.locations
                    .retain_in(range.clone(), |_, _| false)
                    .map_err(e.f())?;
                self.plan_marks
                    .retain_in(range.clone(), |_, _| false)
                    .map_err(e.f())?;
                self.mode_marks
                    .retain_in(range, |_, _| false)
                    .map_err(e.f())?;
                self.calls
                    .retain_in((s, "")..(s, "\u{10FFFF}\u{10FFFF}"), |_, _| false)
                    .map_err(e.f())?;
                self.heads.remove(s).map_err(e.f())?;
                self.deleted.insert(s, 0).map_err(e.f())?;
                if let Some(first) = first {
                    self.tombstones
                        .insert(s, *first.as_bytes())
                        .map_err(e.f())?;
                }
            }
        }
        Ok(())
    }
}

/// The index as one read transaction saw it.
pub(super) struct IndexRead<'t> {
    pub(super) txn: &'t ReadTransaction,
    pub(super) p: &'t str,
}

impl IndexRead<'_> {
    /// How far into the journal this snapshot reflects.
    pub(super) fn position(&self) -> Result<u64> {
        let meta = self
            .txn
            .open_table(META)
            .map_err(Ix(self.p, "reading the index").f())?;
        let got = meta
            .get(POSITION_KEY)
            .map_err(Ix(self.p, "reading the index").f())?
            .map(|v| v.value());
        got.ok_or_else(|| not_an_index(self.p))
    }

    /// Where `session` stands.
    pub(super) fn slot(&self, session: &SessionId) -> Result<Slot> {
        let e = Ix(self.p, "reading heads");
        let s = session.as_str();
        if self
            .txn
            .open_table(DELETED)
            .map_err(e.f())?
            .get(s)
            .map_err(e.f())?
            .is_some()
        {
            let first = self
                .txn
                .open_table(TOMBSTONES)
                .map_err(e.f())?
                .get(s)
                .map_err(e.f())?
                .map(|h| Hash::from_bytes(h.value()));
            return Ok(Slot::Retired { first });
        }
        let head = self
            .txn
            .open_table(HEADS)
            .map_err(e.f())?
            .get(s)
            .map_err(e.f())?
            .map(|h| h.value());
        match head {
            Some((seq, hash)) => Ok(Slot::Live(Head {
                seq: Seq::new(seq)
                    .map_err(|_| corrupt(self.p, session, 0, "a head with seq 0".into()))?,
                hash: Hash::from_bytes(hash),
            })),
            None => Ok(Slot::Free),
        }
    }

    /// The seq recording `call` in `session`.
    pub(super) fn find_call(&self, session: &SessionId, call: &str) -> Result<Option<u64>> {
        let e = Ix(self.p, "reading call ids");
        Ok(self
            .txn
            .open_table(CALLS)
            .map_err(e.f())?
            .get((session.as_str(), call))
            .map_err(e.f())?
            .map(|v| v.value()))
    }

    /// Where the frames of `session`'s events in `seqs` start, in seq order.
    pub(super) fn locations(
        &self,
        session: &SessionId,
        seqs: RangeInclusive<u64>,
    ) -> Result<Vec<(u64, u64)>> {
        let e = Ix(self.p, "reading event locations");
        let s = session.as_str();
        let table = self.txn.open_table(LOCATIONS).map_err(e.f())?;
        let mut out = Vec::new();
        for entry in table
            .range((s, *seqs.start())..=(s, *seqs.end()))
            .map_err(e.f())?
        {
            let (k, v) = entry.map_err(e.f())?;
            out.push((k.value().1, v.value()));
        }
        Ok(out)
    }

    /// The catalogue entry of `session`.
    pub(super) fn info(&self, session: &SessionId) -> Result<Option<SessionInfo>> {
        let e = Ix(self.p, "reading the catalogue");
        let table = self.txn.open_table(SESSIONS).map_err(e.f())?;
        let got = table.get(session.as_str()).map_err(e.f())?;
        got.map(|b| decode_info(self.p, session.as_str(), b.value()))
            .transpose()
    }

    /// Every catalogue entry, by id.
    pub(super) fn infos(&self) -> Result<Vec<SessionInfo>> {
        let e = Ix(self.p, "reading the catalogue");
        let table = self.txn.open_table(SESSIONS).map_err(e.f())?;
        let mut out = Vec::new();
        for entry in table.iter().map_err(e.f())? {
            let (k, v) = entry.map_err(e.f())?;
            out.push(decode_info(self.p, k.value(), v.value())?);
        }
        Ok(out)
    }

    /// The last plan-carrying seq at or before `seq`.
    pub(super) fn plan_before(&self, session: &SessionId, seq: u64) -> Result<Option<u64>> {
        let e = Ix(self.p, "reading plan marks");
        let s = session.as_str();
        let table = self.txn.open_table(PLAN_MARKS).map_err(e.f())?;
        let last = table.range((s, 1)..=(s, seq)).map_err(e.f())?.next_back();
        match last {
            Some(entry) => Ok(Some(entry.map_err(e.f())?.0.value().1)),
            None => Ok(None),
        }
    }

    /// The plan mode last set at or before `seq`, if any event set it.
    pub(super) fn mode_before(&self, session: &SessionId, seq: u64) -> Result<Option<bool>> {
        let e = Ix(self.p, "reading mode marks");
        let s = session.as_str();
        let table = self.txn.open_table(MODE_MARKS).map_err(e.f())?;
        let last = table.range((s, 1)..=(s, seq)).map_err(e.f())?.next_back();
        match last {
            Some(entry) => Ok(Some(entry.map_err(e.f())?.1.value())),
            None => Ok(None),
        }
    }

    /// The plan-carrying seqs in `seqs`.
    pub(super) fn plan_marks(
        &self,
        session: &SessionId,
        seqs: RangeInclusive<u64>,
    ) -> Result<Vec<u64>> {
        let e = Ix(self.p, "reading plan marks");
        let s = session.as_str();
        let table = self.txn.open_table(PLAN_MARKS).map_err(e.f())?;
        let mut out = Vec::new();
        for entry in table
            .range((s, *seqs.start())..=(s, *seqs.end()))
            .map_err(e.f())?
        {
            out.push(entry.map_err(e.f())?.0.value().1);
        }
        Ok(out)
    }

    /// The mode-setting seqs in `seqs`, with the mode each set.
    pub(super) fn mode_marks(
        &self,
        session: &SessionId,
        seqs: RangeInclusive<u64>,
    ) -> Result<Vec<(u64, bool)>> {
        let e = Ix(self.p, "reading mode marks");
        let s = session.as_str();
        let table = self.txn.open_table(MODE_MARKS).map_err(e.f())?;
        let mut out = Vec::new();
        for entry in table
            .range((s, *seqs.start())..=(s, *seqs.end()))
            .map_err(e.f())?
        {
            let (k, v) = entry.map_err(e.f())?;
            out.push((k.value().1, v.value()));
        }
        Ok(out)
    }
}

/// Checks a decoded record is the event the index names.
pub(super) fn expect_event(
    p: &str,
    session: &SessionId,
    seq: u64,
    record: Record,
) -> Result<Event> {
    match record {
        Record::Event(e) if &e.session == session && e.seq.get() == seq => Ok(*e),
        Record::Event(e) => Err(corrupt(
            p,
            session,
            seq,
            format!(
                "the index points at ({}, {}) in the journal for this event",
                e.session, e.seq
            ),
        )),
        Record::Delete { .. } => Err(corrupt(
            p,
            session,
            seq,
            "the index points at a tombstone for this event".into(),
        )),
    }
}
