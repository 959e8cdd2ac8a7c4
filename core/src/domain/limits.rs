//! Every limit planlog enforces, in one place. Each is refused with a clear message where it
//! is checked; none is ever silently cut (except the stored excerpt of a refused submission,
//! which keeps the full size and hash).

/// Longest accepted session id, in characters.
pub const MAX_SESSION_ID_LEN: usize = 64;
/// Longest accepted item id, in characters.
pub const MAX_ITEM_ID_LEN: usize = 128;
/// Longest accepted tool call id, in characters.
pub const MAX_CALL_ID_LEN: usize = 256;
/// Most items a plan (or one plan_write call) may hold.
pub const MAX_PLAN_ITEMS: usize = 200;
/// Longest item content, in characters.
pub const MAX_CONTENT_LEN: usize = 2000;
/// Largest argument text plan_write reads, in bytes (200 items of 2,000 four-byte characters,
/// JSON-escaped, fit). Larger calls are refused without being parsed.
pub const MAX_ARGUMENTS_BYTES: usize = 4 * 1024 * 1024;
/// Longest refused submission a `write_rejected` event keeps whole, in characters of its JSON
/// text; a longer one is kept as an excerpt of this many characters with its full size and
/// SHA-256.
pub const KEPT_SUBMISSION_CHARS: usize = 4096;
/// Longest item description, in characters.
pub const MAX_DESCRIPTION_LEN: usize = 8000;
/// Longest owner name, in characters.
pub const MAX_OWNER_LEN: usize = 128;
/// Largest item metadata object, in bytes of its JSON text.
pub const MAX_METADATA_BYTES: usize = 16 * 1024;
/// Highest task number planlog counts when numbering tasks (2^53 - 1): the canonical form
/// writes numbers as doubles (RFC 8785), which hold every integer up to it exactly. A
/// numeric id above it (a source may have one) is kept as an id but never numbered from, so
/// a recorded `ids_issued` is always exact, and planlog never gives out a number at or above
/// such an id.
pub const MAX_TASK_NUMBER: u64 = (1 << 53) - 1;
/// Longest text of an imported item (content, description, active form, owner), in
/// characters. Imports keep what the agent recorded, rule breaches flagged; a text past this
/// is kept as an excerpt of this many characters with its full size and SHA-256, and noted,
/// so no recorded call can make an event too large to show or verify in bounded memory.
pub const MAX_IMPORTED_TEXT_CHARS: usize = 64 * 1024;
/// Events a whole-session reader holds at a time ([`EventLog::scan`](crate::EventLog::scan)):
/// verify, export, history, items, copy, fork and the viewer read sessions this many events at
/// a time, so their memory stays flat in a session's length.
pub const SCAN_CHUNK: u64 = 2000;
