//! The write side of one append (every table it touches, checked then written in one
//! transaction) and where a session stands ([`slot_from`]), read in a read or a write
//! transaction.

use planlog_core::{
    LogError, Seq, SessionId, SessionInfo,
    events::{Event, Hash, Head},
    log::{Appended, Slot, check_encoded, check_placement},
};
use redb::{ReadTransaction, ReadableTable, Table, WriteTransaction};

use super::errors::{Result, redb_err};
use super::packing::{decode_row, pack};
use super::schema::{CALLS, DELETED, EVENTS, HEADS, MODE_MARKS, PLAN_MARKS, SESSIONS, TOMBSTONES};
use crate::codec::{corrupt, decode_info, encode_info, marks_of};

/// The tables an append touches, open in one write transaction.
pub(super) struct Tables<'t> {
    events: Table<'t, (&'static str, u64), &'static [u8]>,
    sessions: Table<'t, &'static str, &'static [u8]>,
    calls: Table<'t, (&'static str, &'static str), u64>,
    plan_marks: Table<'t, (&'static str, u64), ()>,
    mode_marks: Table<'t, (&'static str, u64), bool>,
    deleted: Table<'t, &'static str, u64>,
    tombstones: Table<'t, &'static str, [u8; 32]>,
    heads: Table<'t, &'static str, (u64, [u8; 32])>,
}

pub(super) fn open_events(
    txn: &WriteTransaction,
) -> std::result::Result<Table<'_, (&'static str, u64), &'static [u8]>, redb::TableError> {
    txn.open_table(EVENTS)
}

pub(super) fn open_plan_marks(
    txn: &WriteTransaction,
) -> std::result::Result<Table<'_, (&'static str, u64), ()>, redb::TableError> {
    txn.open_table(PLAN_MARKS)
}

impl<'t> Tables<'t> {
    pub(super) fn open(txn: &'t WriteTransaction) -> std::result::Result<Self, redb::TableError> {
        Ok(Self {
            events: open_events(txn)?,
            sessions: txn.open_table(SESSIONS)?,
            calls: txn.open_table(CALLS)?,
            plan_marks: open_plan_marks(txn)?,
            mode_marks: txn.open_table(MODE_MARKS)?,
            deleted: txn.open_table(DELETED)?,
            tombstones: txn.open_table(TOMBSTONES)?,
            heads: txn.open_table(HEADS)?,
        })
    }

    /// Validates and inserts one event. Errors other than `LogError::Operator` leave the
    /// transaction untouched (all checks come before the first insert).
    pub(super) fn append(&mut self, event: &Event, p: &str) -> Result<Appended> {
        let row = pack(&check_encoded(event)?);
        self.append_packed(event, &row, p)
    }

    /// [`Tables::append`] for an event whose content `check_encoded` checked and encoded,
    /// and [`pack`] made into `row` (outside the write transaction, on the appending thread).
    pub(super) fn append_packed(&mut self, event: &Event, row: &[u8], p: &str) -> Result<Appended> {
        let s = event.session.as_str();
        let e = |action: &str| {
            let action = action.to_owned();
            move |err: redb::StorageError| redb_err(p, &action, err)
        };
        if let Some(call) = &event.call_id
            && let Some(seq) = self
                .calls
                .get((s, call.as_str()))
                .map_err(e("reading call ids"))?
        {
            let seq = seq.value();
            let stored = self
                .events
                .get((s, seq))
                .map_err(e("reading events"))?
                .ok_or_else(|| {
                    corrupt(
                        p,
                        &event.session,
                        seq,
                        "a call id points at a missing event".into(),
                    )
                })?;
            let recorded = decode_row(p, &event.session, seq, stored.value())?;
            return Ok(Appended::Duplicate(std::sync::Arc::new(recorded)));
        }
        let slot = slot_from(
            &self.heads,
            &self.events,
            &self.deleted,
            Some(&self.tombstones),
            &event.session,
            p,
        )?;
        check_placement(event, slot)?;
        if slot.is_restored_by(event) {
            self.deleted.remove(s).map_err(e("writing deletions"))?;
            self.tombstones.remove(s).map_err(e("writing deletions"))?;
        }
        let last = match slot {
            Slot::Live(head) => Some(head),
            Slot::Free | Slot::Retired { .. } => None,
        };
        let info = match &last {
            None => SessionInfo::from_first(event).ok_or_else(|| LogError::InvalidEvent {
                session: event.session.clone(),
                seq: event.seq.get(),
                reason: "the first event of a session must be session_started".to_owned(),
            })?,
            Some(_) => {
                let bytes = self
                    .sessions
                    .get(s)
                    .map_err(e("reading the catalogue"))?
                    .ok_or_else(|| {
                        corrupt(
                            p,
                            &event.session,
                            event.seq.get(),
                            "events without a catalogue entry".into(),
                        )
                    })?;
                let mut info = decode_info(p, s, bytes.value())?;
                info.observe(event);
                info
            }
        };
        let seq = event.seq.get();
        let info_bytes = encode_info(&info);
        self.events
            .insert((s, seq), row)
            .map_err(e("writing the event"))?;
        self.sessions
            .insert(s, info_bytes.as_slice())
            .map_err(e("writing the catalogue"))?;
        self.heads
            .insert(s, (seq, *event.hash.as_bytes()))
            .map_err(e("writing heads"))?;
        if let Some(call) = &event.call_id {
            self.calls
                .insert((s, call.as_str()), seq)
                .map_err(e("writing call ids"))?;
        }
        let (plan, mode) = marks_of(&event.body);
        if plan {
            self.plan_marks
                .insert((s, seq), ())
                .map_err(e("writing marks"))?;
        }
        if let Some(mode) = mode {
            self.mode_marks
                .insert((s, seq), mode)
                .map_err(e("writing marks"))?;
        }
        Ok(Appended::Stored(std::sync::Arc::new(event.clone())))
    }
}

/// Where `session` stands, from the heads, events, deletions and tombstones tables (of a
/// read or a write transaction; `tombstones` is `None` in stores that predate it).
pub(super) fn slot_from<H, E, D, T>(
    heads: &H,
    events: &E,
    deleted: &D,
    tombstones: Option<&T>,
    session: &SessionId,
    p: &str,
) -> Result<Slot>
where
    H: ReadableTable<&'static str, (u64, [u8; 32])>,
    E: ReadableTable<(&'static str, u64), &'static [u8]>,
    D: ReadableTable<&'static str, u64>,
    T: ReadableTable<&'static str, [u8; 32]>,
{
    let s = session.as_str();
    let e = |action: &'static str| move |err: redb::StorageError| redb_err(p, action, err);
    if deleted.get(s).map_err(e("reading deletions"))?.is_some() {
        let first = match tombstones {
            Some(t) => t
                .get(s)
                .map_err(e("reading deletions"))?
                .map(|h| Hash::from_bytes(h.value())),
            None => None,
        };
        return Ok(Slot::Retired { first });
    }
    if let Some(h) = heads.get(s).map_err(e("reading heads"))? {
        let (seq, hash) = h.value();
        let seq = Seq::new(seq).map_err(|_| corrupt(p, session, 0, "a head with seq 0".into()))?;
        return Ok(Slot::Live(Head {
            seq,
            hash: Hash::from_bytes(hash),
        }));
    }
    // No head: a new session, or a store written before heads were kept (read the last
    // event instead; the next append records the head).
    let mut range = events
        .range((s, 0)..=(s, u64::MAX))
        .map_err(e("reading events"))?;
    match range.next_back() {
        Some(entry) => {
            let (key, bytes) = entry.map_err(e("reading events"))?;
            let last = decode_row(p, session, key.value().1, bytes.value())?;
            Ok(Slot::Live(Head::of(&last)))
        }
        None => Ok(Slot::Free),
    }
}

/// Where `session` stands, read in a read transaction.
pub(super) fn slot_in(txn: &ReadTransaction, session: &SessionId, p: &str) -> Result<Slot> {
    let open_err = |e: redb::TableError| redb_err(p, "reading heads", e);
    let heads = txn.open_table(HEADS).map_err(open_err)?;
    let events = txn.open_table(EVENTS).map_err(open_err)?;
    let deleted = txn.open_table(DELETED).map_err(open_err)?;
    let tombstones = match txn.open_table(TOMBSTONES) {
        Ok(t) => Some(t),
        Err(redb::TableError::TableDoesNotExist(_)) => None,
        Err(e) => return Err(open_err(e)),
    };
    slot_from(&heads, &events, &deleted, tombstones.as_ref(), session, p)
}
