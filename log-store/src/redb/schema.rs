//! The redb tables of a store and its format version.
//!
//! | table | key | value |
//! |---|---|---|
//! | `meta` | name | number (`store_format`) |
//! | `events` | (session, seq) | the event's canonical JSON, LZ4-compressed when smaller (see `packing`) |
//! | `sessions` | session | its `SessionInfo` as JSON (the catalogue) |
//! | `calls` | (session, call id) | seq (idempotency) |
//! | `plan_marks` | (session, seq) | () for every event that carries a plan |
//! | `mode_marks` | (session, seq) | plan mode, for every event that sets it |
//! | `heads` | session | (last seq, last event hash): what an append is checked against |
//! | `deleted` | session | 0; a deleted (retired) id is never reused for other content |
//! | `tombstones` | session | hash of the deleted session's first event: only that session, restored from its export, may take the id again (added 2026-11-30; older stores lack it) |
//!
//! The two mark tables make the state at any seq two reverse range lookups plus one event
//! read, whatever the session's length.

use redb::TableDefinition;

/// The store layout this code writes. Older layouts are upgraded on open; newer ones refused.
///
/// - 1: event rows are canonical JSON.
/// - 2: event rows may be LZ4-compressed (`packing`). A format 1 store is upgraded on its
///   first read-write open by recording 2; its rows are read as they are.
pub const STORE_FORMAT: u64 = 2;

pub(crate) const FORMAT_KEY: &str = "store_format";

pub(crate) const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
pub(crate) const EVENTS: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("events");
pub(crate) const SESSIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("sessions");
pub(crate) const CALLS: TableDefinition<(&str, &str), u64> = TableDefinition::new("calls");
pub(crate) const PLAN_MARKS: TableDefinition<(&str, u64), ()> = TableDefinition::new("plan_marks");
pub(crate) const MODE_MARKS: TableDefinition<(&str, u64), bool> =
    TableDefinition::new("mode_marks");
pub(crate) const HEADS: TableDefinition<&str, (u64, [u8; 32])> = TableDefinition::new("heads");
pub(crate) const DELETED: TableDefinition<&str, u64> = TableDefinition::new("deleted");
pub(crate) const TOMBSTONES: TableDefinition<&str, [u8; 32]> = TableDefinition::new("tombstones");
