//! The viewer's index (`planlog_index`): where its file is, and the thread that keeps it up
//! to the log. The file is `<store>.index.redb` beside the store (beside the plan files
//! folder); when that cannot be used (another viewer holds it, a read-only folder, a file
//! that is not an index) the viewer indexes into a temporary file of its own and says why.
//!
//! One thread catches up: at start, whenever the watcher sees the store change, and first of
//! all for the session a page asks about ([`Indexer::focus`]). Requests never wait for it:
//! they answer from what is indexed and say how far that is.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use planlog_core::{EventLog, SessionId};
use planlog_index::Index;
use planlog_store::host::PlanFiles;

/// What the indexing thread is asked to do, and where it stands.
#[derive(Default)]
struct Work {
    /// The store changed (or a page asked): catch up.
    wanted: bool,
    /// The session to catch up first.
    focus: Option<SessionId>,
    /// A page asked for another session meanwhile: stop and start again with it.
    refocus: bool,
    /// Why the last catch-up failed.
    error: Option<String>,
}

/// The index and its thread.
pub(crate) struct Indexer {
    index: Option<Index>,
    /// Why there is no index, when there is none.
    missing: Option<String>,
    work: Mutex<Work>,
    wake: Condvar,
    /// A temporary index file, removed with the viewer.
    _temp: Option<tempfile::TempDir>,
}

/// The index file of the store whose sidecars are named after `store_path`: beside the plan
/// files' folder `<stem>.plans`, `<stem>.index.redb`.
pub(crate) fn index_path(store_path: &Path) -> PathBuf {
    PlanFiles::beside(store_path)
        .dir()
        .with_extension("index.redb")
}

impl Indexer {
    /// Opens the index of the store at `address` (its sidecars named after `store_path`) and
    /// starts its thread over `log`.
    pub(crate) fn start(log: Arc<dyn EventLog>, store_path: &Path, address: &str) -> Arc<Self> {
        let path = index_path(store_path);
        let (index, missing, temp) = match Index::open(&path, address) {
            Ok(index) => (Some(index), None, None),
            Err(e) => {
                eprintln!("planlog ui: {e}; indexing into a temporary file instead");
                match tempfile::tempdir()
                    .map_err(|t| t.to_string())
                    .and_then(|dir| {
                        Index::open(&dir.path().join("index.redb"), address)
                            .map(|i| (i, dir))
                            .map_err(|e| e.to_string())
                    }) {
                    Ok((index, dir)) => (Some(index), None, Some(dir)),
                    Err(why) => {
                        eprintln!("planlog ui: no index ({why}): search and the minimap are off");
                        (None, Some(why), None)
                    }
                }
            }
        };
        let me = Arc::new(Self {
            index,
            missing,
            work: Mutex::new(Work {
                wanted: true,
                ..Work::default()
            }),
            wake: Condvar::new(),
            _temp: temp,
        });
        if me.index.is_some() {
            let worker = Arc::clone(&me);
            let spawned = std::thread::Builder::new()
                .name("planlog-index".into())
                .spawn(move || worker.run(&*log));
            if let Err(e) = spawned {
                eprintln!("planlog ui: cannot start the indexing thread: {e}");
            }
        }
        me
    }

    /// The index, or why there is none.
    pub(crate) fn index(&self) -> Result<&Index, String> {
        self.index
            .as_ref()
            .ok_or_else(|| self.missing.clone().unwrap_or_default())
    }

    fn work(&self) -> MutexGuard<'_, Work> {
        self.work.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks for a catch-up (the store changed).
    pub(crate) fn wake(&self) {
        self.work().wanted = true;
        self.wake.notify_one();
    }

    /// Asks for `session` to be caught up before the rest.
    pub(crate) fn focus(&self, session: &SessionId) {
        let mut w = self.work();
        if w.focus.as_ref() != Some(session) {
            w.focus = Some(session.clone());
            w.refocus = true;
        }
        w.wanted = true;
        drop(w);
        self.wake.notify_one();
    }

    /// Why the last catch-up failed, if it did.
    pub(crate) fn error(&self) -> Option<String> {
        self.work().error.clone()
    }

    fn run(&self, log: &dyn EventLog) {
        let Some(index) = &self.index else { return };
        loop {
            let focus = {
                let mut w = self.work();
                while !w.wanted {
                    w = self.wake.wait(w).unwrap_or_else(PoisonError::into_inner);
                }
                w.wanted = false;
                w.refocus = false;
                w.focus.clone()
            };
            let stop = || self.work().refocus;
            let done = log
                .sessions()
                .map_err(planlog_index::IndexError::from)
                .and_then(|sessions| {
                    if let Some(info) = focus
                        .as_ref()
                        .and_then(|f| sessions.iter().find(|s| &s.id == f))
                    {
                        index.catch_up_session(log, info, &stop)?;
                    }
                    index.catch_up(log, &sessions, &stop)
                });
            let mut w = self.work();
            match done {
                Ok(status) => {
                    // Stopped for another session: go on at once.
                    w.wanted |= !status.complete();
                    w.error = None;
                }
                Err(e) => {
                    tracing::warn!("the viewer's index could not catch up: {e}");
                    w.error = Some(e.to_string());
                }
            }
        }
    }
}
