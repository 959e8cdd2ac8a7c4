//! Opening a store: the [`OpenOptions`] builder, the database handle (read-write or
//! read-only), retrying while another program holds the file, and reopening after a storage
//! error (redb refuses every operation on a handle after an I/O error).

use std::path::Path;
use std::time::{Duration, Instant};

use planlog_core::{LogError, OperatorError};
use redb::{
    ConcurrencyMode, Database, ReadOnlyDatabase, ReadTransaction, ReadableDatabase,
    WriteTransaction,
};

use super::RedbLog;
use super::errors::{Result, db_error, guard, io, redb_err};

/// How to open a [`RedbLog`]; build it with [`RedbLog::options`].
///
/// ```no_run
/// # fn main() -> Result<(), planlog_core::LogError> {
/// use planlog_store::RedbLog;
/// // An auditor's read-only look at a store copied as evidence:
/// let log = RedbLog::options().read_only(true).open("evidence/planlog.redb")?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct OpenOptions {
    lock_timeout: Duration,
    write_wait: Option<Duration>,
    check_integrity: bool,
    create: bool,
    read_only: bool,
    cache_size: usize,
}

/// redb's page cache by default: room for a long session's hot pages while appending.
const DEFAULT_CACHE: usize = 64 * 1024 * 1024;

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            lock_timeout: Duration::from_secs(5),
            write_wait: None,
            check_integrity: false,
            create: true,
            read_only: false,
            cache_size: DEFAULT_CACHE,
        }
    }
}

impl OpenOptions {
    /// How long to keep retrying while another program holds the file exclusively
    /// (default 5 s).
    pub fn lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// The lock timeout set ([`OpenOptions::lock_timeout`]).
    pub fn timeout(&self) -> Duration {
        self.lock_timeout
    }

    /// How long a write waits for another process's write transaction to end before it
    /// fails with [`OperatorError::Locked`] (default: as long as it takes). Hooks that must
    /// answer within a deadline set this and keep what they could not write for later.
    pub fn write_wait(mut self, wait: Duration) -> Self {
        self.write_wait = Some(wait);
        self
    }

    /// The most memory redb's page cache may take (default 64 MiB). Commands that read a
    /// session once from start to end (history, items, export, verify) need little: a small
    /// cache keeps their memory flat in the store's size.
    pub fn cache_size(mut self, bytes: usize) -> Self {
        self.cache_size = bytes;
        self
    }

    /// Runs redb's full integrity check (reads the whole file) while opening (default off).
    pub fn check_integrity(mut self, check: bool) -> Self {
        self.check_integrity = check;
        self
    }

    /// Creates the store (and its folder, mode 0700) when missing (default on). Off, a
    /// missing store is an error whose [`OperatorError::io_kind`] is `NotFound`.
    pub fn create(mut self, create: bool) -> Self {
        self.create = create;
        self
    }

    /// Opens for reading only (default off): nothing is written, not even recovery after a
    /// crash, so a store one may only read (a copy kept as evidence, a read-only mount,
    /// another user's store) can be audited. Implies `create(false)`; appends fail with
    /// [`OperatorError::ReadOnly`].
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Opens the store at `path`.
    ///
    /// # Errors
    /// [`OperatorError::Locked`] when another program holds the file for longer than the lock
    /// timeout; [`OperatorError::NewerFormat`] / [`OperatorError::OlderFormat`];
    /// [`OperatorError::NotAStore`] for another kind of file; [`OperatorError::Corrupt`] for
    /// a damaged store; [`OperatorError::Io`] otherwise (e.g. `NotFound`,
    /// `PermissionDenied`).
    pub fn open(&self, path: impl AsRef<Path>) -> Result<RedbLog> {
        let path = path.as_ref();
        let handle = self.open_handle(path)?;
        RedbLog::from_handle(handle, path.to_path_buf(), self.clone())
    }

    /// The database at `path`, opened as [`OpenOptions::open`] does (created whole when
    /// missing, retried while another program holds it), with no table read or written.
    pub(crate) fn open_handle(&self, path: &Path) -> Result<Handle> {
        let shown = path.display().to_string();
        // A store is created whole (see `create_whole`), so an empty file at its place is not
        // one planlog is making: a truncated store, or another program's file. Opening it
        // would write a fresh store into it and hide the loss.
        if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) {
            return Err(OperatorError::Corrupt {
                path: shown,
                session: None,
                seq: None,
                detail: "the file is empty (0 bytes): a truncated store, or not a store at all; it was left as it is (restore it from a copy, or move it away to start a new store)".to_owned(),
            }
            .into());
        }
        if self.create && !self.read_only {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                create_private_dir(dir).map_err(|e| io(&shown, "creating the store folder", e))?;
            }
            if !path.exists() {
                self.create_whole(path)?;
            }
        } else if let Err(e) = std::fs::metadata(path) {
            return Err(io(&shown, "opening", e));
        }
        let started = Instant::now();
        let mut delay = Duration::from_millis(5);
        let handle = loop {
            let left = self.lock_timeout.saturating_sub(started.elapsed());
            match self.handle_within(path, left.max(Duration::from_millis(1))) {
                Ok(handle) => break handle,
                Err(LogError::Operator(OperatorError::Locked { .. }))
                    if started.elapsed() < self.lock_timeout =>
                {
                    std::thread::sleep(delay);
                    delay = (delay * 2).min(Duration::from_millis(200));
                }
                Err(LogError::Operator(OperatorError::Locked { path, .. })) => {
                    let waited_ms =
                        u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    return Err(OperatorError::Locked { path, waited_ms }.into());
                }
                Err(e) => return Err(e),
            }
        };
        Ok(handle)
    }

    fn builder(&self) -> redb::Builder {
        let mut builder = Database::builder();
        builder
            .set_concurrency_mode(ConcurrencyMode::MultiWriter)
            .set_cache_size(self.cache_size)
            .set_check_integrity_on_open(self.check_integrity);
        builder
    }

    /// Creates a new store so that it appears whole or not at all: the database is made
    /// under a temporary name beside it, committed, then linked into place (a process
    /// killed while creating leaves no half-written store; two creating at once both end up
    /// with the one that was linked first).
    fn create_whole(&self, path: &Path) -> Result<()> {
        let shown = path.display().to_string();
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map_or_else(|| "store".into(), |n| n.to_string_lossy());
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let temp = dir.join(format!(".{name}.creating-{}-{nanos}", std::process::id()));
        let made = guard(&shown, || {
            let db = self
                .builder()
                .create(&temp)
                .map_err(|e| db_error(&shown, e))?;
            let txn = db
                .begin_write()
                .map_err(|e| redb_err(&shown, "creating the store", e))?;
            txn.commit()
                .map_err(|e| redb_err(&shown, "creating the store", e))?;
            Ok(())
        });
        let linked = made.and_then(|()| match std::fs::hard_link(&temp, path) {
            Ok(()) => Ok(()),
            // Another process created it first: use theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(io(&shown, "creating the store", e)),
        });
        if let Err(e) = std::fs::remove_file(&temp)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(temp = %temp.display(), error = %e, "could not remove the temporary file of a new store; it can be deleted");
        }
        linked?;
        // The new name must survive a crash too.
        if let Err(e) = std::fs::File::open(dir).and_then(|d| d.sync_all()) {
            tracing::warn!(store = %shown, error = %e, "could not sync the store's folder after creating it");
        }
        Ok(())
    }

    /// One attempt at opening the database file, given up after `wait`. In multi-writer mode
    /// redb's open waits, without a timeout, for any other process's write transaction to end
    /// (it takes the writer lock to check the file), so the attempt runs on a thread of its
    /// own: past `wait` it is [`OperatorError::Locked`], and the thread, when the lock frees,
    /// closes what it opened ([`super::settle_abandoned_opens`] waits for it at exit).
    ///
    /// A read-only open takes no writer lock: it waits only on the header's byte-range lock,
    /// which a writer holds while it writes the header and which every later read takes
    /// too, so a thread would guard nothing the reads do not meet anyway. It opens on the
    /// calling thread (a hook opens read-only: the thread cost it ~0.4 ms, BENCHMARKS.md).
    fn handle_within(&self, path: &Path, wait: Duration) -> Result<Handle> {
        if self.read_only {
            return self.handle(path);
        }
        let shown = path.display().to_string();
        let (tx, rx) = std::sync::mpsc::channel();
        let (options, owned) = (self.clone(), path.to_path_buf());
        let thread = std::thread::Builder::new()
            .name("planlog-open".to_owned())
            .spawn(move || {
                // The receiver may have given up: what was opened is closed here.
                let _ = tx.send(options.handle(&owned));
            })
            .map_err(|e| io(&shown, "opening", e))?;
        let started = Instant::now();
        match rx.recv_timeout(wait) {
            Ok(result) => result,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                // It still opens and closes the file: the process waits for it at exit.
                super::abandoned::keep(thread);
                Err(OperatorError::Locked {
                    path: shown,
                    waited_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                }
                .into())
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(OperatorError::Corrupt {
                path: shown,
                session: None,
                seq: None,
                detail: "opening the store stopped without an answer".to_owned(),
            }
            .into()),
        }
    }

    /// One attempt at opening the database file.
    pub(super) fn handle(&self, path: &Path) -> Result<Handle> {
        let shown = path.display().to_string();
        guard(&shown, || {
            let builder = self.builder();
            if self.read_only {
                builder
                    .open_read_only(path)
                    .map(Handle::Read)
                    .map_err(|e| db_error(&shown, e))
            } else {
                builder
                    .create(path)
                    .map(|db| Handle::Write(db, self.write_wait))
                    .map_err(|e| db_error(&shown, e))
            }
        })
    }

    pub(crate) fn is_read_only(&self) -> bool {
        self.read_only
    }
}

/// An open database file: writable, or for reading only.
pub(crate) enum Handle {
    /// Writable, with how long a write waits for another process's (`None`: as long as it
    /// takes).
    Write(Database, Option<Duration>),
    Read(ReadOnlyDatabase),
}

impl Handle {
    /// Whether writes may be made through it.
    pub(crate) fn is_writable(&self) -> bool {
        matches!(self, Handle::Write(..))
    }

    /// Whether redb has failed this handle for good: after a write of it did not complete,
    /// every operation answers "previous I/O error" until the handle is closed (a closed
    /// one answers that it is closed).
    pub(crate) fn has_failed(&self) -> bool {
        let began = match self {
            Handle::Write(db, _) => db.begin_read(),
            Handle::Read(db) => db.begin_read(),
        };
        matches!(
            began,
            Err(redb::TransactionError::Storage(
                redb::StorageError::PreviousIo | redb::StorageError::DatabaseClosed
            ))
        )
    }

    pub(crate) fn begin_read(&self, path: &str, action: &str) -> Result<ReadTransaction> {
        match self {
            Handle::Write(db, _) => db.begin_read(),
            Handle::Read(db) => db.begin_read(),
        }
        .map_err(|e| redb_err(path, action, e))
    }

    /// A write transaction if no other is under way (in this process or another), else
    /// `None` at once.
    pub(crate) fn try_begin_write(
        &self,
        path: &str,
        action: &str,
    ) -> Result<Option<WriteTransaction>> {
        match self {
            Handle::Write(db, _) => match db.try_begin_write() {
                Ok(txn) => Ok(Some(txn)),
                Err(redb::TransactionError::WouldBlock) => Ok(None),
                Err(e) => Err(redb_err(path, action, e)),
            },
            Handle::Read(_) => Err(OperatorError::ReadOnly {
                path: path.to_owned(),
            }
            .into()),
        }
    }

    pub(crate) fn begin_write(&self, path: &str, action: &str) -> Result<WriteTransaction> {
        match self {
            Handle::Write(db, None) => db.begin_write().map_err(|e| redb_err(path, action, e)),
            Handle::Write(db, Some(wait)) => {
                let started = Instant::now();
                let mut pause = Duration::from_millis(2);
                loop {
                    match db.try_begin_write() {
                        Ok(txn) => return Ok(txn),
                        Err(redb::TransactionError::WouldBlock) if started.elapsed() < *wait => {
                            std::thread::sleep(pause);
                            pause = (pause * 2).min(Duration::from_millis(50));
                        }
                        Err(redb::TransactionError::WouldBlock) => {
                            return Err(OperatorError::Locked {
                                path: path.to_owned(),
                                waited_ms: u64::try_from(started.elapsed().as_millis())
                                    .unwrap_or(u64::MAX),
                            }
                            .into());
                        }
                        Err(e) => return Err(redb_err(path, action, e)),
                    }
                }
            }
            Handle::Read(_) => Err(OperatorError::ReadOnly {
                path: path.to_owned(),
            }
            .into()),
        }
    }
}

/// Creates `dir` (and parents) readable by the owner only.
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| {
        // A file where the folder (or one above it) goes: say which, not just "exists".
        match dir.ancestors().find(|a| a.exists()) {
            Some(file) if e.kind() == std::io::ErrorKind::AlreadyExists && !file.is_dir() => {
                std::io::Error::new(
                    e.kind(),
                    format!(
                        "{} is a file, not a folder: move it away, or give a store path in a folder",
                        file.display()
                    ),
                )
            }
            _ => e,
        }
    })
}
