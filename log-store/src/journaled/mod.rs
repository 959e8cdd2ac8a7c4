//! [`JournaledLog`]: the durable [`EventLog`] whose record is the journal, with redb as an
//! index any process brings up to date from it (issue 26).
//!
//! - **The record.** Every append is a journal record (the event's canonical bytes; a
//!   deletion is a tombstone record). An append is acknowledged once an `fdatasync` that
//!   began after its write has returned; nothing else is on that path.
//! - **Checks that hold under the lock.** A round of appends is checked (seq, head hash,
//!   call id) against the index plus the journal past the index's position as this process
//!   has read it; then it takes the journal's lock, reads what other processes appended
//!   since, checks the round again only if one of those records is about its sessions,
//!   writes the accepted ones, lets go, then syncs.
//! - **The index** (`index`): redb tables (heads, catalogue, call ids, marks, each event's
//!   place in the journal) and the journal position they reflect. Any writable process brings
//!   it up to date in batches, off the acknowledgement path (a thread of its own by default:
//!   [`Indexing`]). Losing it loses nothing: it is rebuilt from the journal. An open may be
//!   given a limit on that work ([`JournaledOptions::catch_up_limit`], as hooks open):
//!   past it the open changes nothing and says what work is needed.
//! - **Reads** (`view`) take a read transaction of the index and add the records past its
//!   position (`tail`), so what was acknowledged anywhere is read here at once.
//!
//! | module | what |
//! |---|---|
//! | `index` | the redb tables, applying records to them, reading them |
//! | `tail` | the records past the index this process holds |
//! | `past` | the journal's lock (others' appends read into the tail first), and the records past the index, from the tail or the journal |
//! | `view` | the index and the tail read together; an append's checks |
//! | `recent` | the last few events read from the journal, decoded |
//! | `writes` | appends (checked before the lock, written under it), batches, streamed batches and deletions under the journal's lock |
//! | `indexer` | bringing the index up to date, on a thread or on demand |
//! | `index_handle` | the index's redb handle, opened again when redb has failed it |
//! | `room` | room on the disk for an index transaction, asked before one begins |
//! | `upgrade` | a store of the redb layout (formats 1 and 2) made a journaled store, in place |
//! | `compact` | reclaiming space: the journal rewritten without deleted sessions' records while no other process has the store open; the users lock every open handle holds |

mod compact;
pub use compact::{Compacted, users_path};
mod index;
pub(crate) use index::INDEX_FORMAT_KEY;
mod index_handle;
mod indexer;
mod past;
mod recent;
mod room;
mod tail;
mod upgrade;
mod view;
mod writes;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use planlog_core::events::{Event, Head, SealedEvent};
use planlog_core::log::{Appended, Slot};
use planlog_core::{
    CallId, EventLog, LogError, OperatorError, Seq, SessionId, SessionInfo, SessionState,
    UserError, events::ids_issued_after,
};

use crate::codec::corrupt;
use crate::group_commit::GroupCommit;
use crate::journal::{JournalError, Record, SharedJournal};
use crate::redb::{Handle, OpenOptions};
use indexer::Indexer;
use tail::{Entry, Lazy, Tail, corrupt_record};

type Result<T> = std::result::Result<T, LogError>;

/// When a process brings the index up to date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Indexing {
    /// On a thread of its own after each acknowledged write, and once more when the log is
    /// dropped (the default for long-lived processes: an MCP server, the CLI).
    #[default]
    Background,
    /// Only when the records past the index reach [`LAZY_LIMIT`], in the writing call (a
    /// hook's short-lived process: its append costs the journal's write and sync alone),
    /// and not at all while another process writes the index. Its reads share one index
    /// snapshot until it indexes or [`LAZY_LIMIT`] records lie past that snapshot.
    Lazy,
    /// As [`Indexing::Lazy`], but never in the writing call: the owner brings the index up
    /// to date when it has time, through [`JournaledLog::index_when_behind`] (a warm hook
    /// server, after it has answered the call: the catch-up's syncs off the call's path).
    Deferred,
    /// After each acknowledged write, before the call returns (tests, and tools that read
    /// the index file themselves).
    Eager,
}

/// The records past the index at which a [`Indexing::Lazy`] process indexes them. Each call
/// of a short-lived process reads and decodes every record past the index, and a catch-up
/// costs it redb's syncs (a writable handle opened, a commit, closed): at 64 the records'
/// cost led; of 8, 16, 24, 32 and 64, 16 and 24 were fastest (BENCHMARKS.md § "The hook's
/// index limit"). Measured again after hooks got faster (~8–11 µs a record, a catch-up ~2.6
/// ms more than a call), the mean worked out from those is flat from 16 to 32, and a
/// smaller limit lowers the median: 16 stays (§ "The hook's gap taken apart").
pub const LAZY_LIMIT: usize = 16;

/// The records past it at which a process indexed in the [`Indexing::Background`] takes a
/// fresh index snapshot for its writes' checks rather than the one it kept (`past::snapshot`).
/// A view of a kept snapshot visits its scope's records past it (an append's: its own
/// session's), each an event to look at, so the bound is what those may cost. With 8
/// processes appending back to back here, 128 and 1,024 cost the same CPU per append
/// (fewer fresh snapshots against longer visits); the smaller bounds the visit.
const KEPT_LIMIT: usize = 128;

/// How to open a [`JournaledLog`]: [`JournaledLog::options`].
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct JournaledOptions {
    index: OpenOptions,
    indexing: Indexing,
    read_only: bool,
    lock_wait: Option<std::time::Duration>,
    catch_up_limit: Option<u64>,
}

impl JournaledOptions {
    /// When the index is brought up to date (default [`Indexing::Background`]).
    pub fn indexing(mut self, indexing: Indexing) -> Self {
        self.indexing = indexing;
        self
    }

    /// Opens for reading only: nothing is written (not a torn tail's cut, nor the index).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self.index = self.index.read_only(read_only);
        self
    }

    /// How long a write waits for another process's lock on the journal before it fails
    /// with [`OperatorError::Locked`] (default: as long as it takes). Hooks that must answer
    /// within a deadline set this, and keep what they could not write for later.
    pub fn lock_wait(mut self, wait: std::time::Duration) -> Self {
        self.lock_wait = Some(wait);
        self
    }

    /// The most work an open does before it answers (default: all it takes): at most
    /// `bytes` of journal past the index's position read and indexed (a missing or damaged
    /// index: the whole journal), and no upgrade of a store of the redb layout, nor repair
    /// of a redb file left open by a process that ended, whose file is larger. Past it the
    /// open fails with [`OperatorError::NeedsTime`] before any of that work, the store
    /// unchanged (but for the empty users lock every open takes): a hook, which must answer
    /// within its budget whatever the store's history, keeps its call for a process that
    /// may take its time.
    pub fn catch_up_limit(mut self, bytes: u64) -> Self {
        self.catch_up_limit = Some(bytes);
        self
    }

    /// The index's redb options (lock timeout, write wait, cache size).
    pub fn index_options(mut self, options: OpenOptions) -> Self {
        self.index = options.read_only(self.read_only);
        self
    }

    /// Opens the store at `path` whatever its layout: a journaled store; or a store of the
    /// redb layout (formats 1 and 2), upgraded to a journaled store first when `upgrade`
    /// (a command that writes), else opened as it is ([`crate::RedbLog`], as a command that
    /// only reads should: it changes nothing).
    ///
    /// # Errors
    /// As [`JournaledOptions::open`] and [`OpenOptions::open`].
    pub fn open_any(
        &self,
        path: impl AsRef<Path>,
        upgrade: bool,
    ) -> Result<Arc<dyn planlog_core::EventLog>> {
        let path = &resolved(path.as_ref());
        if (!upgrade || self.read_only) && is_legacy(path, &self.index)? {
            return Ok(Arc::new(self.index.open(path)?));
        }
        Ok(Arc::new(self.open(path)?))
    }

    /// Opens the store whose index is at `path` and whose journal is beside it
    /// ([`journal_path`]).
    ///
    /// # Errors
    /// As [`OpenOptions::open`] for the index; [`OperatorError::Io`] or
    /// [`OperatorError::Corrupt`] for the journal (damage before its tail names its byte).
    pub fn open(&self, path: impl AsRef<Path>) -> Result<JournaledLog> {
        JournaledLog::open_with(&resolved(path.as_ref()), self.clone())
    }
}

/// The store's own file when `path` is a symbolic link to it (the journal lies beside the
/// file, so every path to the store finds it), else `path`.
fn resolved(path: &Path) -> PathBuf {
    if path.is_symlink() {
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    } else {
        path.to_path_buf()
    }
}

/// Where the journal of the store whose index is at `index` lies: beside it, its name with
/// `.journal` added; beside the file itself when `index` is a symbolic link (as opening the
/// store resolves it).
pub fn journal_path(index: &Path) -> PathBuf {
    journal_beside(&resolved(index))
}

/// [`journal_path`] of an index path already resolved (no look at the file system).
pub(crate) fn journal_beside(index: &Path) -> PathBuf {
    with_suffix(index, ".journal")
}

/// `path` with `suffix` added to its file name (the files beside a store are named so).
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

/// What a [`JournaledLog`]'s threads share.
pub(crate) struct Inner {
    path: PathBuf,
    shown: String,
    journal: SharedJournal,
    /// The index's handle, and its options (a lazily indexed writer, which reads through a
    /// read-only handle, opens it for writing with them when it must index after all).
    index: index_handle::IndexHandle,
    tail: Mutex<Tail>,
    commits: GroupCommit<writes::Encoded, Result<Appended>>,
    indexing: Indexing,
    read_only: bool,
    /// The shared lock on the store's users file, held while the store is open: no
    /// compaction replaces the journal under this process ([`compact`]).
    _users: Option<std::fs::File>,
    /// When indexing in passing last found the index held by another process as it tried
    /// to open it for writing: it does not try again for [`indexer::GIVE_WAY_PAUSE`] (a hook's
    /// process, shorter than that, not again in its life; a long-lived lazily indexed
    /// handle, a warm hook server's, once that has passed).
    gave_way: Mutex<Option<std::time::Instant>>,
    /// Indexing found too little room on the disk and said so; said again only after it
    /// has found room.
    short_of_room: std::sync::atomic::AtomicBool,
    /// The index snapshot views share while it is kept (`past::snapshot`): a lazily
    /// indexed process's, or the one a process indexed in the background took for its
    /// writes' checks, until its next indexing round.
    snapshot: Mutex<Option<Snapshot>>,
    /// Events read from the journal lately, decoded.
    recent: recent::Recent,
}

/// A read transaction of the index and the journal position it reflects.
struct Snapshot {
    txn: Arc<redb::ReadTransaction>,
    position: u64,
}

/// A durable event log whose record is a journal file, indexed by a redb file beside it.
///
/// Processes share it as they share a [`crate::RedbLog`]: appends from several processes
/// and threads are checked under the journal's lock and synced outside it, concurrent
/// appends in a process share one write and one sync. Every method blocks on file IO.
pub struct JournaledLog {
    inner: Arc<Inner>,
    indexer: Option<Indexer>,
}

impl std::fmt::Debug for JournaledLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JournaledLog")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

/// Opens (creating when missing) the index at `path`: the handle, and the journal position
/// it reflects.
fn open_index(path: &Path, options: &JournaledOptions) -> Result<(Handle, u64)> {
    let shown = path.display().to_string();
    // On a disk without room for an index transaction, a writer reads through a read-only
    // handle too: a writable open writes to the file, and one that fails part way leaves
    // it needing a repair no reader can make (`room`). It indexes, when there is room
    // again, through a writable handle opened for that.
    if (matches!(options.indexing, Indexing::Lazy | Indexing::Deferred)
        || room::for_indexing(path, 0).is_err())
        && !options.read_only
        && let Some(ready) = reading_handle(path, options)
    {
        return Ok(ready);
    }
    if let Some(limit) = options.catch_up_limit
        && !options.read_only
    {
        refuse_long_work_on_the_file(path, options, limit)?;
    }
    let index = options.index.open_handle(path)?;
    if let Some(format) = upgrade::legacy_format(&index, &shown)? {
        if options.read_only {
            return Err(OperatorError::OlderFormat {
                path: shown,
                found: format!("planlog store format {format} (every event in redb); open it read-write once to upgrade it, or read it as a RedbLog"),
            }
            .into());
        }
        upgrade::upgrade(path, &index)?;
    }
    // An index made already is only read: a writer that finds it needs no redb write (a
    // hook appends to the journal alone).
    if !options.read_only && !index::is_made(&index, &shown)? {
        let txn = index.begin_write(&shown, "initialising the index")?;
        index::init(&txn, &shown)?;
        txn.commit()
            .map_err(|e| crate::redb::errors::redb_err(&shown, "initialising the index", e))?;
    }
    let position = index::position_of(&index, &shown, "opening")?;
    Ok((index, position))
}

/// Refuses, with [`OperatorError::NeedsTime`], work on a redb file at `path` over `limit`
/// bytes that a writable open would do before answering: the upgrade of a store of the
/// redb layout, or the repair of a file a process did not close (redb checks the whole
/// file: seconds for hundreds of MB), which is why a read-only handle could not open it.
/// Looked at through a read-only handle, so a refused open leaves the file as it was (a
/// writable one records itself in the file).
fn refuse_long_work_on_the_file(path: &Path, options: &JournaledOptions, limit: u64) -> Result<()> {
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    if size <= limit {
        return Ok(());
    }
    let shown = path.display().to_string();
    let needs = |work: String| -> Result<()> {
        Err(OperatorError::NeedsTime {
            path: shown.clone(),
            work,
        }
        .into())
    };
    match options.index.clone().read_only(true).open_handle(path) {
        Ok(handle) => {
            match crate::redb::errors::guard(&shown, || upgrade::legacy_format(&handle, &shown))? {
                None => Ok(()),
                Some(format) => needs(format!(
                    "an upgrade from store format {format} (the events of its {} rewritten as a journal)",
                    said_in_mb(size)
                )),
            }
        }
        // redb refuses a file that needs a repair to a read-only handle (`RepairAborted`,
        // an error of redb's own, not the system's); damage is the same long work.
        Err(LogError::Operator(e @ (OperatorError::Io { .. } | OperatorError::Corrupt { .. })))
            if e.io_kind().is_none() =>
        {
            needs(format!(
                "a check of its {} redb file (not closed cleanly, or damaged)",
                said_in_mb(size)
            ))
        }
        // Locked, refused by the system, not a database: the open below says so.
        Err(_) => Ok(()),
    }
}

/// Refuses, with [`OperatorError::NeedsTime`], an open whose index would have to take in
/// more of the journal at `jpath` than `options` allow: all past `position` (`work` says
/// what that is, for the message). The file's length counts the zeros kept past the
/// journal's end too ([`crate::journal::PREALLOCATE`] at most 2 x over).
fn within_limit(
    options: &JournaledOptions,
    path: &Path,
    jpath: &Path,
    position: u64,
    work: &str,
) -> Result<()> {
    let Some(limit) = options.catch_up_limit else {
        return Ok(());
    };
    let behind = std::fs::metadata(jpath)
        .map_or(0, |m| m.len())
        .saturating_sub(position);
    if behind <= limit {
        return Ok(());
    }
    Err(OperatorError::NeedsTime {
        path: path.display().to_string(),
        work: format!("{work} from {} of journal", said_in_mb(behind)),
    }
    .into())
}

/// `bytes` for people, in megabytes (one decimal below 10 MB).
fn said_in_mb(bytes: u64) -> String {
    let mb = bytes as f64 / 1e6;
    if mb < 10.0 {
        format!("{mb:.1} MB")
    } else {
        format!("{mb:.0} MB")
    }
}

/// A lazily indexed writer (a hook), or any writer on a disk without room, reads the index
/// through a read-only handle when the index is made already: opening and closing a
/// writable redb handle costs syncs of its own (redb records the handle in the file), and
/// such a writer only appends to the journal. The handle and the index's position, or
/// `None` when a writable handle is needed (no index yet, an older layout).
fn reading_handle(path: &Path, options: &JournaledOptions) -> Option<(Handle, u64)> {
    if !path.is_file() {
        return None;
    }
    let shown = path.display().to_string();
    let handle = options
        .index
        .clone()
        .read_only(true)
        .open_handle(path)
        .ok()?;
    let position = index::ready_position(&handle, &shown).ok()??;
    Some((handle, position))
}

/// Whether the file at `path` is a store of the redb layout (formats 1 and 2). A missing
/// file, or one that is not a redb database, is not.
fn is_legacy(path: &Path, options: &OpenOptions) -> Result<bool> {
    if !path.is_file() || std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        return Ok(false);
    }
    let shown = path.display().to_string();
    let handle = match options.clone().read_only(true).open_handle(path) {
        Ok(h) => h,
        // Held by another program past the lock timeout: the caller's open would wait the
        // same again for the same answer.
        Err(e @ LogError::Operator(OperatorError::Locked { .. })) => return Err(e),
        // Not a database one can read: the caller's open says what it is.
        Err(_) => return Ok(false),
    };
    // A damaged file can make redb panic: that is damage too, which the caller's open of a
    // journaled store finds again and rebuilds (or, reading only, reports).
    match crate::redb::errors::guard(&shown, || upgrade::legacy_format(&handle, &shown)) {
        Ok(format) => Ok(format.is_some()),
        Err(LogError::Operator(OperatorError::Corrupt { .. })) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Moves the index at `path` aside, to `<name>.replaced-<unix seconds>`: where it went,
/// or `None` when there was none.
fn set_aside(path: &Path) -> Result<Option<PathBuf>> {
    if !path.exists() {
        return Ok(None);
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let aside = with_suffix(path, &format!(".replaced-{secs}"));
    std::fs::rename(path, &aside).map_err(|e| {
        crate::redb::errors::io(&path.display().to_string(), "moving the index aside", e)
    })?;
    tracing::warn!(index = %path.display(), kept = %aside.display(), "the index was moved aside; a new one is built from the journal");
    Ok(Some(aside))
}

/// Puts the index set aside at `aside` back at `path`, over what a failed rebuild left
/// there; a failure is logged (the index set aside stays where it is, named in the log).
fn put_back(path: &Path, aside: &Path) {
    if let Err(error) = std::fs::rename(aside, path) {
        tracing::warn!(index = %path.display(), kept = %aside.display(), %error, "the index set aside could not be put back");
    } else {
        tracing::warn!(index = %path.display(), "the rebuild failed: the index is as it was");
    }
}

/// A record read from the journal at `path` (its name, for errors), for the tail: its
/// session read, the rest when something asks about that session.
fn entry_of(r: crate::journal::Located, path: &str) -> Result<Entry> {
    let session = Record::session_of(&r.data).map_err(|why| corrupt_record(path, r.at, &why))?;
    Ok(Entry {
        at: r.at,
        upto: r.upto,
        item: Lazy::Unread {
            session,
            data: r.data.into(),
        },
    })
}

/// A file where the index goes that does not begin as a redb file does (and is not empty,
/// nor zeros a crash left before redb wrote its header) is refused as another program's,
/// before the users file or anything else is made beside it.
fn refuse_a_foreign_index(path: &Path) -> Result<()> {
    use std::io::Read as _;
    let mut head = [0u8; 4];
    let Ok(n) = std::fs::File::open(path).and_then(|f| f.take(4).read(&mut head)) else {
        // No file (or none to read): the open says what is wrong, if anything.
        return Ok(());
    };
    let head = &head[..n];
    if n == 0 || b"redb".starts_with(head) || head.iter().all(|b| *b == 0) {
        return Ok(());
    }
    Err(OperatorError::NotAStore {
        path: path.display().to_string(),
        detail: "it does not begin as a redb database does: a file planlog did not write, left as it is; give the path of a planlog store with --db or PLANLOG_DB, or move the file away".to_owned(),
    }
    .into())
}

/// An open finding no index beside its journal at `jpath` first asks whether the journal is
/// planlog's, before it creates anything: something other than a file there (a folder) is
/// refused, and so is a file another program wrote ([`JournalError::NotOurs`]), with no index
/// or users file left beside it, and a reader is told that rather than that the index is
/// missing. A journal that begins with a whole frame is planlog's: only one that does not (a
/// foreign file, a first write torn) is read further.
fn refuse_a_foreign_journal(jpath: &Path) -> Result<()> {
    use crate::journal::{FileStorage, Journal, Storage, begins_with_a_frame};
    let shown = jpath.display().to_string();
    match std::fs::metadata(jpath) {
        Err(_) => return Ok(()),
        Ok(m) if !m.is_file() => {
            return Err(crate::redb::errors::io(
                &shown,
                "opening the journal",
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "it is not a file (a folder, or a device): move it away, or give another store path",
                ),
            ));
        }
        Ok(_) => {}
    }
    let failed = |e: std::io::Error| journal_err(&shown, "opening the journal", e.into());
    let storage = FileStorage::open_read_only(jpath).map_err(failed)?;
    let mut head = vec![0u8; 64 * 1024];
    let n = storage.read_at(0, &mut head).map_err(failed)?;
    if begins_with_a_frame(&head[..n]) {
        return Ok(());
    }
    match Journal::open_with(storage, 0, true, &mut |_| Ok(())) {
        Err(e @ JournalError::NotOurs) => Err(journal_err(&shown, "opening the journal", e)),
        _ => Ok(()),
    }
}

/// The scope of a view about one session.
fn one(session: &SessionId) -> view::Scope {
    Some(std::iter::once(session.clone()).collect())
}

/// A journal error as the store's operator error.
fn journal_err(p: &str, action: &str, e: JournalError) -> LogError {
    match e {
        JournalError::Damaged { .. } | JournalError::Unreadable { .. } => OperatorError::Corrupt {
            path: p.to_owned(),
            session: None,
            seq: None,
            detail: e.to_string(),
        }
        .into(),
        // A journal that is nothing but bytes planlog did not write is no store of planlog's.
        JournalError::NotOurs => OperatorError::NotAStore {
            path: p.to_owned(),
            detail: e.to_string(),
        }
        .into(),
        JournalError::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock => {
            OperatorError::Locked {
                path: p.to_owned(),
                waited_ms: 0,
            }
            .into()
        }
        JournalError::Io(io) => OperatorError::Io {
            path: p.to_owned(),
            action: action.to_owned(),
            source: planlog_core::StorageError::new(io),
        }
        .into(),
        JournalError::TooLarge { .. } => OperatorError::Io {
            path: p.to_owned(),
            action: action.to_owned(),
            source: planlog_core::StorageError::message(e.to_string()),
        }
        .into(),
    }
}

impl JournaledLog {
    /// Opens (creating if needed) the store whose index is at `path`, with default options.
    ///
    /// # Errors
    /// As [`JournaledOptions::open`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::options().open(path)
    }

    /// Options to open a store with.
    pub fn options() -> JournaledOptions {
        JournaledOptions::default()
    }

    /// Rebuilds the index of the store at `path` from its journal: the index file is moved
    /// aside (renamed `<name>.replaced-<unix seconds>`; kept, never deleted) and a new one
    /// built. Losing the index loses nothing; this is also what opening does on its own when
    /// the index is damaged.
    ///
    /// # Errors
    /// [`OperatorError::Io`] (`NotFound` when there is no journal), and as
    /// [`JournaledOptions::open`].
    pub fn reindex(path: impl AsRef<Path>, options: JournaledOptions) -> Result<Self> {
        // A symbolic link to the index stays one: the file it points to is rebuilt.
        let path = &resolved(path.as_ref());
        let jpath = journal_beside(path);
        std::fs::metadata(&jpath)
            .map_err(|e| crate::redb::errors::io(&jpath.display().to_string(), "reindexing", e))?;
        let aside = set_aside(path)?;
        Self::open_with(path, options).inspect_err(|_| {
            // The journal could not be read whole (damage before its tail): the index as it
            // was still reads every session the damage does not touch, so it goes back.
            if let Some(aside) = &aside {
                put_back(path, aside);
            }
        })
    }

    /// Reclaims the space of deleted sessions: rewrites the journal of the store at `path`
    /// without their records, then rebuilds the index. Nothing else may have the store open
    /// (every open handle holds the store's users lock; this refuses when it cannot take it
    /// alone). Killed at any point, the store opens whole, with the old journal or the new.
    ///
    /// # Errors
    /// [`OperatorError::Io`] when the store is open elsewhere, a file of it has other hard
    /// links, or the disk refuses (the store is left as it was);
    /// [`OperatorError::Corrupt`] for a damaged journal.
    pub fn compact(path: impl AsRef<Path>) -> Result<Compacted> {
        compact::compact(&resolved(path.as_ref()))
    }

    /// How far into the journal the index reflects (bytes; the journal's length when it is
    /// up to date).
    ///
    /// # Errors
    /// Operator errors.
    pub fn index_position(&self) -> Result<u64> {
        index::position_of(&self.inner.index.get(), &self.inner.shown, "reading")
    }

    /// The journal's length as this handle last read it.
    pub fn journal_end(&self) -> u64 {
        self.inner.journal.end()
    }

    fn open_with(path: &Path, options: JournaledOptions) -> Result<Self> {
        let shown = path.display().to_string();
        let jpath = journal_beside(path);
        if path.exists() {
            // The first writable open of this index (no users file beside it yet): a file
            // that is not redb's is refused before the users file is made. (An open of a
            // store in use looks no further.)
            if !options.read_only && !compact::users_beside(path).exists() {
                refuse_a_foreign_index(path)?;
            }
        } else {
            // An index is made below: what is in the way of the journal is said first.
            refuse_a_foreign_journal(&jpath)?;
            within_limit(&options, path, &jpath, 0, "its index built")?;
            if options.read_only && jpath.is_file() {
                // Reading the journal whole instead would cost memory in its length.
                return Err(crate::redb::errors::io(
                    &shown,
                    "opening the index",
                    std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "it is missing beside its journal, and a store opened for reading only cannot rebuild it; `planlog reindex`, run by a user who may write the store's folder, rebuilds it from the journal",
                    ),
                ));
            }
        }
        let users = compact::hold_shared(path, options.read_only, options.lock_wait)?;
        // A damaged index can make redb panic on its first read: that is damage like any.
        let opened = || crate::redb::errors::guard(&shown, || open_index(path, &options));
        let (index, position) = match opened() {
            Err(LogError::Operator(OperatorError::Corrupt { detail, .. }))
                if !options.read_only && jpath.exists() =>
            {
                within_limit(&options, path, &jpath, 0, "its damaged index rebuilt")?;
                tracing::warn!(index = %shown, %detail, "the index is damaged; rebuilding it from the journal (the damaged file is kept beside it)");
                set_aside(path)?;
                opened()?
            }
            other => other?,
        };
        within_limit(
            &options,
            path,
            &jpath,
            position,
            "its index brought up to date",
        )?;
        let shown_journal = jpath.display().to_string();
        // The records past the index, read under the journal's lock. A long run of them is
        // indexed as it is read (after one sync: only durable records are indexed), so
        // memory stays flat however far behind the index is, and however long a batch.
        let mut tail = Tail::new(position);
        let mut failed = None;
        let mut feed: Option<indexer::Feed<'_>> = None;
        let writable = std::cell::OnceCell::new();
        let opened = SharedJournal::open_with(
            &jpath,
            position,
            options.read_only,
            options.lock_wait,
            &mut |r| {
                let fed = (|| {
                    let entry = entry_of(r, &shown_journal)?;
                    if let Some(feed) = &mut feed {
                        return feed.feed(&entry);
                    }
                    let upto = entry.upto;
                    tail.push(entry);
                    if options.read_only || tail.len() < indexer::INDEX_BATCH {
                        return Ok(());
                    }
                    // Too little room on the disk: the records stay past the index, read
                    // as a reader that may not write reads them (`room`; the indexing
                    // after the open says so).
                    if room::for_indexing(path, upto.saturating_sub(position)).is_err() {
                        return Ok(());
                    }
                    std::fs::File::open(&jpath)
                        .and_then(|f| f.sync_data())
                        .map_err(|e| {
                            journal_err(&shown_journal, "syncing the journal", e.into())
                        })?;
                    // A lazily indexed process reads through a read-only handle: it opens
                    // a writable one for this.
                    let target = if index.is_writable() {
                        &index
                    } else {
                        if writable.get().is_none() {
                            let _ = writable.set(options.index.open_handle(path)?);
                        }
                        writable.get().unwrap_or(&index)
                    };
                    let Some(mut started) = indexer::Feed::begin(target, &shown, true)? else {
                        return Ok(());
                    };
                    for entry in tail.since(tail.base()).into_iter().flatten() {
                        started.feed(entry)?;
                    }
                    tail = Tail::new(position);
                    feed = Some(started);
                    Ok::<(), LogError>(())
                })();
                fed.map_err(|e| {
                    failed = Some(e);
                    JournalError::Io(std::io::Error::other("stopped"))
                })
            },
        );
        let journal = match (opened, failed) {
            (_, Some(e)) => return Err(e),
            (Ok((journal, _)), None) => journal,
            (Err(e), None) => return Err(journal_err(&shown_journal, "opening the journal", e)),
        };
        if let Some(feed) = feed {
            tail = Tail::new(feed.finish()?);
        }
        let inner = Arc::new(Inner {
            path: path.to_path_buf(),
            shown,
            journal,
            index: index_handle::IndexHandle::new(index, path, options.index.clone()),
            tail: Mutex::new(tail),
            commits: GroupCommit::default(),
            indexing: options.indexing,
            read_only: options.read_only,
            _users: users,
            gave_way: Mutex::new(None),
            short_of_room: std::sync::atomic::AtomicBool::new(false),
            snapshot: Mutex::new(None),
            recent: recent::Recent::default(),
        });
        let behind = inner.tail().len();
        if !inner.read_only {
            if options.indexing == Indexing::Eager {
                inner.index_now()?;
            } else if behind >= LAZY_LIMIT {
                inner.index_in_passing();
            }
        }
        let indexer = (!options.read_only && options.indexing == Indexing::Background)
            .then(|| Indexer::start(Arc::clone(&inner)));
        Ok(Self { inner, indexer })
    }

    /// The index file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Brings the index up to date when [`LAZY_LIMIT`] records or more lie past it, as a
    /// lazily indexed write does: giving way (doing nothing) while another process writes
    /// the index, and a failure said as a warning (the journal keeps every record).
    pub fn index_when_behind(&self) {
        if self.inner.tail().len() >= LAZY_LIMIT {
            self.inner.index_in_passing();
        }
    }

    /// Brings the index up to date with the journal now.
    ///
    /// # Errors
    /// Operator errors; [`OperatorError::ReadOnly`] on a read-only log.
    pub fn index_now(&self) -> Result<()> {
        self.inner.index_now()
    }

    /// Runs `f`, a panic inside redb (a damaged index can cause one) turned into an error,
    /// and damage to the index said to be mendable: the journal holds every record.
    fn run<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        // Said once, though one call may run inside another (a state read through a read).
        const MEND: &str = "`planlog reindex` rebuilds the store's index from the journal beside it, which holds every record (a journal damaged itself, it names where and changes nothing)";
        crate::redb::errors::guard(&self.inner.shown, f).map_err(|e| match e {
            LogError::Operator(OperatorError::Corrupt {
                path,
                session,
                seq,
                detail,
            }) if path == self.inner.shown && !detail.contains(MEND) => OperatorError::Corrupt {
                path,
                session,
                seq,
                detail: format!("{detail}; {MEND}"),
            }
            .into(),
            other => other,
        })
    }

    /// Runs the write `f` as [`JournaledLog::run`] does; then, whatever came of it, wakes
    /// the indexing thread of a process indexed in the background: the round indexes what
    /// was written, and lets go of the index snapshot the write's checks kept
    /// (`past::snapshot`), even when nothing was written. Where no indexing thread runs,
    /// the snapshot is let go at once.
    fn write<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let out = self.run(f);
        if self.inner.indexing == Indexing::Background {
            match &self.indexer {
                Some(indexer) => indexer.wake(),
                None => self.inner.forget_snapshot(),
            }
        }
        out
    }

    /// Appends `event`, whose canonical bytes are `canonical`, in a group-commit round.
    fn append_encoded(&self, event: Arc<Event>, canonical: Vec<u8>) -> Result<Appended> {
        let missing = || {
            Err(OperatorError::Io {
                path: self.inner.shown.clone(),
                action: "group commit".to_owned(),
                source: planlog_core::StorageError::message(
                    "the commit returned no result for this append",
                ),
            }
            .into())
        };
        let appended = self
            .inner
            .commits
            .submit((event, canonical), missing, |round| {
                self.inner.commit_round(round)
            })?;
        if matches!(appended, Appended::Stored(_)) {
            self.indexed_after_write()?;
        }
        Ok(appended)
    }

    /// Appends a stream of events with their canonical bytes as one batch, then indexes.
    fn append_stream(
        &self,
        events: &mut dyn Iterator<Item = Result<(Event, Vec<u8>)>>,
    ) -> Result<u64> {
        self.write(|| {
            let stored = self.inner.append_stream(events)?;
            self.indexed_after_write()?;
            Ok(stored)
        })
    }

    /// After a write: the index brought up to date as [`Indexing`] says.
    fn indexed_after_write(&self) -> Result<()> {
        match self.inner.indexing {
            // Woken by every write, whatever its outcome (`JournaledLog::write`).
            Indexing::Background => Ok(()),
            Indexing::Eager => self.inner.index_now(),
            Indexing::Lazy => {
                self.index_when_behind();
                Ok(())
            }
            Indexing::Deferred => Ok(()),
        }
    }
}

impl Drop for JournaledLog {
    fn drop(&mut self) {
        if let Some(indexer) = self.indexer.take() {
            indexer.stop();
        }
    }
}

impl EventLog for JournaledLog {
    fn append(&self, event: &Event) -> Result<Appended> {
        self.write(|| {
            let canonical = planlog_core::log::check_encoded(event)?;
            self.append_encoded(Arc::new(event.clone()), canonical)
        })
    }

    fn append_sealed(&self, sealed: SealedEvent) -> Result<Appended> {
        self.write(|| {
            // Sealed here with its bytes: checked by construction, not encoded again.
            let (event, canonical) = sealed.into_parts();
            self.append_encoded(Arc::new(event), canonical)
        })
    }

    fn append_all(&self, events: &[Event]) -> Result<Vec<Appended>> {
        self.write(|| {
            let appended = self.inner.append_batch(events)?;
            self.indexed_after_write()?;
            Ok(appended)
        })
    }

    fn append_iter(&self, events: &mut dyn Iterator<Item = Result<Event>>) -> Result<u64> {
        self.append_stream(&mut events.map(|e| {
            e.and_then(|e| {
                let bytes = planlog_core::log::check_encoded(&e)?;
                Ok((e, bytes))
            })
        }))
    }

    fn append_sealed_iter(
        &self,
        events: &mut dyn Iterator<Item = Result<SealedEvent>>,
    ) -> Result<u64> {
        // Sealed with their bytes: checked by construction, not encoded again.
        self.append_stream(&mut events.map(|e| e.map(SealedEvent::into_parts)))
    }

    fn find_call(&self, session: &SessionId, call: &CallId) -> Result<Option<Seq>> {
        self.run(|| {
            let view = self.inner.view(one(session))?;
            Ok(view
                .find_call(session, call.as_str())?
                .and_then(|s| Seq::new(s).ok()))
        })
    }

    fn read(&self, session: &SessionId, from: Seq, to: Option<Seq>) -> Result<Vec<Event>> {
        self.run(|| {
            let view = self.inner.view(one(session))?;
            view.read(session, from.get(), to.map_or(u64::MAX, Seq::get))
        })
    }

    fn last(&self, session: &SessionId) -> Result<Option<Event>> {
        self.run(|| {
            let view = self.inner.view(one(session))?;
            match view.last_seq(session)? {
                Some(seq) => view.event(session, seq),
                None => Ok(None),
            }
        })
    }

    fn head(&self, session: &SessionId) -> Result<Option<Head>> {
        self.run(|| match self.inner.view(one(session))?.slot(session)? {
            Slot::Free => Ok(None),
            Slot::Live(head) => Ok(Some(head)),
            Slot::Retired { .. } => Err(UserError::SessionDeleted(session.clone()).into()),
        })
    }

    fn session(&self, session: &SessionId) -> Result<Option<SessionInfo>> {
        self.run(|| self.inner.view(one(session))?.info(session))
    }

    fn sessions(&self) -> Result<Vec<SessionInfo>> {
        self.run(|| self.inner.view(None)?.infos())
    }

    fn delete(&self, session: &SessionId) -> Result<()> {
        self.write(|| {
            self.inner.delete(session)?;
            tracing::info!(session = %session, store = %self.inner.shown, "session deleted");
            self.indexed_after_write()
        })
    }

    fn read_checks_hashes(&self) -> bool {
        // Every event read is decoded with `Event::decode`, which refuses a hash mismatch.
        true
    }

    fn state_index(
        &self,
        session: &SessionId,
        from: Seq,
        to: Seq,
    ) -> Result<Option<Vec<planlog_core::IndexEntry>>> {
        self.run(|| {
            let view = self.inner.view(one(session))?;
            let Some(last) = view.last_seq(session)? else {
                return Err(UserError::UnknownSession(session.clone()).into());
            };
            let to = Seq::new(to.get().min(last)).unwrap_or(to);
            if from > to {
                return Ok(Some(Vec::new()));
            }
            let plan_before = view
                .plan_before(session, from.get())?
                .and_then(|s| Seq::new(s).ok());
            let mode_before = view.mode_before(session, from.get())?;
            let (plans, modes) = view.marks(session, from.get() + 1, to.get())?;
            Ok(Some(planlog_core::index_entries(
                from,
                to,
                plan_before,
                mode_before,
                plans.into_iter().filter_map(|s| Seq::new(s).ok()),
                modes
                    .into_iter()
                    .filter_map(|(s, m)| Seq::new(s).ok().map(|s| (s, m))),
            )))
        })
    }

    fn state_at(&self, session: &SessionId, at: Seq) -> Result<SessionState> {
        self.run(|| {
            let view = self.inner.view(one(session))?;
            let p = &self.inner.shown;
            let Some(last) = view.last_seq(session)? else {
                return Err(UserError::UnknownSession(session.clone()).into());
            };
            if at.get() > last {
                return Err(UserError::SeqOutOfRange {
                    session: session.clone(),
                    seq: at.get(),
                    last,
                }
                .into());
            }
            let Some(plan_seq) = view.plan_before(session, at.get())? else {
                return Err(corrupt(
                    p,
                    session,
                    at.get(),
                    "no plan-carrying event at or before this seq".into(),
                ));
            };
            let event = view.event(session, plan_seq)?.ok_or_else(|| {
                corrupt(
                    p,
                    session,
                    plan_seq,
                    "a plan mark points at a missing event".into(),
                )
            })?;
            let plan = event.plan().cloned().ok_or_else(|| {
                corrupt(
                    p,
                    session,
                    plan_seq,
                    "a plan mark points at an event without a plan".into(),
                )
            })?;
            Ok(SessionState {
                plan,
                plan_mode: view.mode_before(session, at.get())?,
                ids_issued: ids_issued_after(&event.body),
            })
        })
    }
}
