//! Finding and opening the store: `--db PATH|URL`, else `PLANLOG_DB`, else the default location.
//! A `postgres://` URL names a shared database; any other `scheme://` is refused.
//! Commands that write create the store when missing; commands that only read never create
//! anything and open a store this user may only read (a copy kept as evidence, a read-only
//! mount, another user's store) for reading only.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use planlog_core::{EventLog, LogError, OperatorError};
use planlog_store::host::location::{LocationEnv, REPO_DIR, keep_out_of_git, resolve_store_path};
use planlog_store::{JournaledLog, JournaledOptions, OpenOptions, PgLog, RedbLog, StoreAddress};

use super::failure::Failure;

/// The store a command works on, and how it was named.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    /// Where the store is: a file, or a PostgreSQL URL.
    pub(crate) address: StoreAddress,
    /// The local file the sidecars are named after (the plan files' folder, the hook spool):
    /// the store file itself, or, for a database, a name in the default store's folder.
    pub(crate) path: PathBuf,
    /// True when the user named it (`--db` or `PLANLOG_DB`), false for the default location.
    named: bool,
}

impl Store {
    /// Resolves `--db` (given as `flag`), `PLANLOG_DB` and the default location.
    pub(crate) fn resolve(flag: Option<&Path>) -> Result<Self, Failure> {
        let env = LocationEnv::from_process();
        let named = flag.is_some() || env.planlog_db.is_some();
        let given = flag.or(env.planlog_db.as_deref());
        let address = match given {
            Some(text) => StoreAddress::parse(&text.to_string_lossy())
                .map_err(|e| Failure::cannot_run(e.to_string()))?,
            None => StoreAddress::File(
                resolve_store_path(None, &env).map_err(|e| Failure::cannot_run(e.to_string()))?,
            ),
        };
        let path = match &address {
            StoreAddress::File(p) => p.clone(),
            StoreAddress::Postgres(_) => {
                // Sidecars of a shared database live on this machine, beside the default store.
                let default = resolve_store_path(
                    None,
                    &LocationEnv {
                        planlog_db: None,
                        ..env
                    },
                )
                .unwrap_or_else(|_| PathBuf::from(".planlog/planlog.redb"));
                let name: String = address
                    .shown()
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                    .collect();
                default.with_file_name(format!("{name}.redb"))
            }
        };
        Ok(Self {
            address,
            path,
            named,
        })
    }

    /// The file store at `path` (`named`: as the user named it, not the default location): a
    /// warm hook server's, whose hook process resolved it.
    pub(crate) fn file(path: PathBuf, named: bool) -> Self {
        Self {
            address: StoreAddress::File(path.clone()),
            path,
            named,
        }
    }

    /// True when the user named it (`--db` or `PLANLOG_DB`), false for the default location.
    pub(crate) fn is_named(&self) -> bool {
        self.named
    }

    /// How messages name the store (a URL without its password).
    pub(crate) fn shown(&self) -> String {
        self.address.shown()
    }

    /// The store as the user named it (`--db` or `PLANLOG_DB`), for a command line that must
    /// reach the same store (the installed hooks).
    pub(crate) fn named_address(&self) -> Option<&StoreAddress> {
        self.named.then_some(&self.address)
    }

    /// Opens the store for a command that writes, creating it (and its folder) if needed.
    pub(crate) fn for_writing(&self) -> Result<Arc<dyn EventLog>, Failure> {
        self.writing_with(JournaledLog::options().index_options(options()))
    }

    /// [`Store::for_writing`] for a server a model waits on (`planlog mcp`): on a file store,
    /// every call (the open too) waits at most `wait` for another process's lock on the
    /// journal, which a long import or fork holds while it streams, and then fails as
    /// locked instead of waiting as long as it takes; the open does at most `limit` bytes of
    /// work (`JournaledOptions::catch_up_limit`), else fails with
    /// [`OperatorError::NeedsTime`], the store unchanged.
    pub(crate) fn for_serving(
        &self,
        wait: Duration,
        limit: Option<u64>,
    ) -> Result<Arc<dyn EventLog>, LogError> {
        let mut options = JournaledLog::options()
            .index_options(options())
            .lock_wait(wait);
        if let Some(limit) = limit {
            options = options.catch_up_limit(limit);
        }
        let log = self.open_with(options)?;
        self.keep_out_of_git();
        Ok(log)
    }

    fn writing_with(&self, options: JournaledOptions) -> Result<Arc<dyn EventLog>, Failure> {
        let log = self.saying_long_work(options, true)?;
        self.keep_out_of_git();
        Ok(log)
    }

    /// The default store at a repository's root keeps its folder out of git
    /// (`.planlog/.gitignore`), so a user never commits their plans by accident.
    pub(crate) fn keep_out_of_git(&self) {
        if self.named {
            return;
        }
        if let Some(dir) = self
            .path
            .parent()
            .filter(|d| d.file_name().is_some_and(|n| n == REPO_DIR))
            && let Err(e) = keep_out_of_git(dir)
        {
            tracing::warn!(folder = %dir.display(), error = %e, "could not write .gitignore in the store's folder; add it to your .gitignore");
        }
    }

    /// Opens the store to write with `options` (for a file; a database ignores them): a
    /// file store is journaled (one of the redb layout is upgraded first).
    pub(crate) fn open_with(
        &self,
        options: JournaledOptions,
    ) -> Result<Arc<dyn EventLog>, LogError> {
        match &self.address {
            StoreAddress::File(p) => options.open_any(p, true),
            StoreAddress::Postgres(url) => Ok(Arc::new(PgLog::open(url)?)),
        }
    }

    /// Opens the store as [`Store::open_with`] does (`upgrade`: a store of the older layout
    /// upgraded, as a command that writes does), saying first on stderr when the open has
    /// long work to do before the command can (an index to rebuild or bring up to date over
    /// more than [`SHORT_WORK`] of journal, an upgrade, a repair): a command that is
    /// silent for seconds looks hung.
    fn saying_long_work(
        &self,
        options: JournaledOptions,
        upgrade: bool,
    ) -> Result<Arc<dyn EventLog>, LogError> {
        let StoreAddress::File(path) = &self.address else {
            return self.open_with(options);
        };
        match options
            .clone()
            .catch_up_limit(SHORT_WORK)
            .open_any(path, upgrade)
        {
            Err(LogError::Operator(OperatorError::NeedsTime { work, .. })) => {
                eprintln!(
                    "planlog: the store {} needs {work} first; this can take a while on a long history",
                    path.display()
                );
                options.open_any(path, upgrade)
            }
            other => other,
        }
    }

    /// Opens the store for a command that only reads: a missing store is an error (nothing is
    /// created), and one this user may not write is opened read-only.
    pub(crate) fn for_reading(&self) -> Result<Arc<dyn EventLog>, Failure> {
        self.must_exist()?;
        Ok(self.open_reading(false)?)
    }

    /// For a PostgreSQL store, a second client that hears other writers' appends (LISTEN);
    /// `None` for a file, or when it cannot connect (then the caller polls; a warning says
    /// so). Open and drop it outside an async runtime: the blocking client runs its own.
    pub(crate) fn change_listener(&self) -> Option<Arc<PgLog>> {
        match &self.address {
            StoreAddress::Postgres(url) => match PgLog::open(url) {
                Ok(pg) => Some(Arc::new(pg)),
                Err(error) => {
                    tracing::warn!(%error, "cannot listen for other writers' appends; polling the store instead");
                    None
                }
            },
            StoreAddress::File(_) => None,
        }
    }

    /// The index path of a journaled file store, for a command about its journal (`what`
    /// it would do, for the errors): a PostgreSQL store keeps none, nor does a file store
    /// of the older layout.
    pub(crate) fn journaled_file(&self, what: &str) -> Result<&Path, Failure> {
        let StoreAddress::File(path) = &self.address else {
            return Err(Failure::cannot_run(format!(
                "a PostgreSQL store keeps no journal and no separate index (it reclaims its own space): there is nothing to {what}"
            )));
        };
        self.must_exist()?;
        if !planlog_store::journal_path(path).exists() {
            return Err(Failure::cannot_run(format!(
                "no journal beside {}: this store is of the older layout (every event in the redb file; its deletions free their pages at once): there is nothing to {what}; any command that writes upgrades it",
                path.display()
            )));
        }
        Ok(path)
    }

    /// Fails when there is no store file (a reading command creates nothing). A journal
    /// without its index is a store (the index is rebuilt from it on opening).
    pub(crate) fn must_exist(&self) -> Result<(), Failure> {
        if matches!(self.address, StoreAddress::File(_))
            && !self.path.exists()
            && !planlog_store::journal_path(&self.path).exists()
        {
            return Err(Failure::cannot_run(if self.named {
                format!(
                    "no store at {}; check the path given with --db or PLANLOG_DB",
                    self.path.display()
                )
            } else {
                format!(
                    "no store at {} yet; `planlog new` or `planlog demo` creates one (or pass --db PATH)",
                    self.path.display()
                )
            }));
        }
        Ok(())
    }

    /// Opens an existing store for reading (with redb's full integrity check when `check`).
    ///
    /// A reader reads through a read-only handle whenever one serves: it writes nothing
    /// (a writable redb handle records itself in the file, with syncs, on opening and on
    /// closing, and a process that ends while one is open leaves the file needing a repair),
    /// and it waits on no other process's index write. It opens read-write only for work a
    /// read-only handle cannot do, when this user may write the store: an index to rebuild
    /// (lost beside its journal), recover (a crashed writer's) or upgrade (the older layout),
    /// more than [`SHORT_WORK`] of journal past the index to take in, or redb's full
    /// check (`check`). Read-only again when that open finds another process writing the
    /// index, or the store not writable here.
    pub(crate) fn open_reading(&self, check: bool) -> Result<Arc<dyn EventLog>, LogError> {
        if let StoreAddress::Postgres(url) = &self.address {
            return Ok(Arc::new(PgLog::open(url)?));
        }
        let options = options().check_integrity(check).cache_size(READING_CACHE);
        // A journal whose index is gone (deleted, lost with a copy) is a store all the same:
        // a reader that may write rebuilds the index from it, as a writer would.
        let rebuild = !self.path.exists() && planlog_store::journal_path(&self.path).is_file();
        let writing_within = |wait: Duration| {
            self.saying_long_work(
                JournaledLog::options()
                    .index_options(options.clone().create(rebuild).lock_timeout(wait)),
                false,
            )
        };
        let reading = || {
            JournaledLog::options()
                .index_options(options.clone())
                .read_only(true)
                .open_any(&self.path, false)
        };
        if !check && !rebuild {
            let first = JournaledLog::options()
                .index_options(options.clone())
                .read_only(true)
                .catch_up_limit(SHORT_WORK)
                .open_any(&self.path, false);
            match first {
                Ok(log) => return Ok(log),
                // Held past the lock timeout by another program: a writable open waits on
                // the same, so waiting again for one only lengthens the wait for the error.
                Err(e @ LogError::Operator(OperatorError::Locked { .. })) => return Err(e),
                Err(error) => {
                    tracing::debug!(store = %self.path.display(), %error, "a read-only handle does not serve; opening the store read-write");
                }
            }
        }
        // Opening the index for writing waits while another process writes it (a viewer's
        // or a server's indexing, during a long sync): a reader waits a moment, then reads
        // without writing (the journal past the index included), and waits its full time
        // for writing only when that cannot be done either (a store to recover or upgrade).
        let first = match writing_within(options.timeout().min(READER_WAIT)) {
            Err(LogError::Operator(OperatorError::Locked { .. })) => match reading() {
                Ok(log) => {
                    tracing::info!(store = %self.path.display(), "another process is writing the index; reading the store read-only");
                    return Ok(log);
                }
                Err(_) => writing_within(options.timeout()),
            },
            other => other,
        };
        match first {
            Ok(log) => Ok(log),
            Err(LogError::Operator(e))
                if matches!(
                    e.io_kind(),
                    Some(
                        std::io::ErrorKind::PermissionDenied
                            | std::io::ErrorKind::ReadOnlyFilesystem
                    )
                ) || matches!(e, OperatorError::ReadOnly { .. }) =>
            {
                tracing::info!(store = %self.path.display(), "the store is not writable here; reading it read-only");
                reading()
            }
            Err(e) => Err(e),
        }
    }
}

/// `<path><suffix>` beside `path` (a store's own files: `<store>.catch-up.lock`; a settings
/// file's backup).
pub(crate) fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// How long a command that only reads waits to open the index for writing before it reads
/// it read-only instead.
const READER_WAIT: Duration = Duration::from_millis(100);

/// The most store work an open does where a wait would be noticed
/// (`JournaledOptions::catch_up_limit`): at most this many bytes of journal past the index
/// read and indexed, and no upgrade or repair of a larger redb file. A rebuild went through
/// ~50 MB of journal a second here (200,000 events, 107 MB, in 2.05 s): 4 MiB is ~0.1 s,
/// with room for a machine several times slower. Past it, a hook leaves the work to a
/// background `planlog drain` (`hook::catch_up`), a starting MCP server answers while a
/// thread does it (`mcp::opening`), a command says on stderr that it will take a while
/// ([`Store::saying_long_work`]), and a reader opens read-write rather than hold the
/// records in memory (writers keep the index within [`planlog_store::LAZY_LIMIT`] records
/// of the journal's end, so a reader rarely goes past it).
pub(crate) const SHORT_WORK: u64 = 4 * 1024 * 1024;

/// redb's page cache for commands that only read: they scan a session once, so a small
/// cache costs nothing and keeps their memory flat in the store's size (BENCHMARKS.md).
const READING_CACHE: usize = 8 * 1024 * 1024;

/// The index's open options, with the lock timeout from `PLANLOG_LOCK_TIMEOUT_MS` (default
/// 5000).
pub(crate) fn options() -> OpenOptions {
    let mut options = RedbLog::options();
    if let Some(ms) = std::env::var("PLANLOG_LOCK_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options = options.lock_timeout(Duration::from_millis(ms));
    }
    options
}
