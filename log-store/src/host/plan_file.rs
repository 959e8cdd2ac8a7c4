//! The markdown plan file sink: after each write, `<store>.plans/<session>.md` beside the
//! store file is rewritten with the plan. A human-readable view, not the record: a failure
//! only logs a warning.
//!
//! Ownership: each store has a folder of its own (`planlog.redb` -> `planlog.plans/`), and
//! every file planlog writes there starts with an ownership line naming its session. A file
//! that is not planlog's (no such line, a symlink, a folder) is never overwritten or deleted:
//! the write is skipped with a warning naming the file. An empty file is the exception: it
//! holds nothing to lose, and a plan file written just before a power loss can come back
//! empty (the file is written without a sync), so it is replaced (or removed with its
//! session).
//!
//! Replacing: on Linux the new file and the old are exchanged (`renameat2` with
//! `RENAME_EXCHANGE`) and the old one removed, instead of a rename over it. A rename over an
//! existing file makes ext4 (`auto_da_alloc`, its default) start writing the new file's
//! data out inside the rename: ~0.3 ms of a hook call's CPU here (BENCHMARKS.md § "The plan
//! file exchanged"). Exchanged, it is written out by the kernel's flusher later, and a plan
//! replaced again before then is never written at all. Readers see the old file or the new
//! one whole either way.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use planlog_core::{Plan, SessionId, Timestamp, render::render_markdown};

/// Writes plan files into one folder (by default `<store stem>.plans` beside the store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanFiles {
    dir: PathBuf,
}

/// Why a plan file was not written or removed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanFileError {
    /// A file planlog did not write is where the plan file would go; it is left alone.
    #[error("{0} was not written by planlog; it is left alone")]
    NotOurs(PathBuf),
    /// The file system refused.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl PlanFiles {
    /// Plan files in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// Plan files of the store file `store`: the folder `<store stem>.plans` beside it, so two
    /// stores in one folder never share (or delete) each other's files.
    pub fn beside(store: &Path) -> Self {
        let base = store
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let stem = store
            .file_stem()
            .map_or_else(|| "planlog".into(), |s| s.to_string_lossy().into_owned());
        Self::new(base.join(format!("{stem}.plans")))
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `session`. A [`SessionId`] holds only `A-Z a-z 0-9 _ -`, so this path is
    /// always directly inside [`PlanFiles::dir`].
    pub fn path_for(&self, session: &SessionId) -> PathBuf {
        self.dir.join(format!("{}.md", session.as_str()))
    }

    /// The first line of every plan file: it says the file is planlog's and whose plan it is.
    fn owner_line(session: &SessionId) -> String {
        format!(
            "<!-- planlog plan file of session {session}: rewritten after every write, edits are lost -->\n"
        )
    }

    /// True when nothing is at `path`, or planlog's plan file of `session` is.
    fn is_ours_or_free(path: &Path, session: &SessionId) -> Result<bool, PlanFileError> {
        let io = |source| PlanFileError::Io {
            path: path.to_path_buf(),
            source,
        };
        let meta = match fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
            Err(e) => return Err(io(e)),
        };
        if !meta.is_file() {
            return Ok(false);
        }
        if meta.len() == 0 {
            return Ok(true);
        }
        let mut head = vec![0u8; Self::owner_line(session).len()];
        let read = fs::File::open(path)
            .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
            .map_err(io)?;
        Ok(head[..read] == *Self::owner_line(session).as_bytes())
    }

    /// Rewrites the plan file of `session` (folder mode 0700, file mode 0600): the ownership
    /// line, then the markdown. The text goes to a fresh temporary file put in the old one's
    /// place (exchanged with it, or renamed over it), so a reader never sees half a file and
    /// a planted symlink is replaced, not followed.
    ///
    /// # Errors
    /// [`PlanFileError::NotOurs`] when a file planlog did not write is in the way (it is left
    /// alone); the IO error when the folder or file cannot be written.
    pub fn write(
        &self,
        session: &SessionId,
        plan: &Plan,
        updated: Timestamp,
    ) -> Result<PathBuf, PlanFileError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| PlanFileError::Io { path, source }
        };
        if let Err(e) = crate::redb::create_private_dir(&self.dir) {
            // Something planlog did not make, where its folder goes: named as such.
            return Err(if self.dir.exists() && !self.dir.is_dir() {
                PlanFileError::NotOurs(self.dir.clone())
            } else {
                io(&self.dir)(e)
            });
        }
        let path = self.path_for(session);
        if !Self::is_ours_or_free(&path, session)? {
            return Err(PlanFileError::NotOurs(path));
        }
        // A temporary file of a name no other writer has (two writers of one session each
        // publish a whole file), mode 0600, removed if anything fails before the rename.
        let mut file = tempfile::Builder::new()
            .prefix(&format!(".{}.", session.as_str()))
            .suffix(".md.tmp")
            .tempfile_in(&self.dir)
            .map_err(io(&self.dir))?;
        let text = Self::owner_line(session) + &render_markdown(plan, session, updated);
        file.write_all(text.as_bytes()).map_err(io(file.path()))?;
        if exchanged(file.path(), &path) {
            // The old file is at the temporary name now; dropping `file` removes it.
            return Ok(path);
        }
        file.persist(&path).map_err(|e| PlanFileError::Io {
            path: path.clone(),
            source: e.error,
        })?;
        Ok(path)
    }

    /// Removes the plan file of a deleted session, if it is planlog's.
    ///
    /// # Errors
    /// [`PlanFileError::NotOurs`] when the file there is not planlog's (it is left alone); the
    /// IO error when it cannot be removed.
    pub fn remove(&self, session: &SessionId) -> Result<(), PlanFileError> {
        let path = self.path_for(session);
        if !Self::is_ours_or_free(&path, session)? {
            return Err(PlanFileError::NotOurs(path));
        }
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(PlanFileError::Io { path, source }),
        }
    }

    /// [`PlanFiles::write`], failing open: an error is logged as a warning and swallowed.
    pub fn write_or_warn(&self, session: &SessionId, plan: &Plan, updated: Timestamp) {
        if let Err(error) = self.write(session, plan, updated) {
            tracing::warn!(
                session = %session,
                file = %self.path_for(session).display(),
                %error,
                "could not write the markdown plan file; the plan itself is stored, only this view is stale"
            );
        }
    }
}

/// Exchanges the files at `new` and `old` (both in one folder), true when done. False when
/// there is nothing at `old` or the file system cannot exchange (then the caller renames).
#[cfg(target_os = "linux")]
fn exchanged(new: &Path, old: &Path) -> bool {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    match renameat_with(CWD, new, CWD, old, RenameFlags::EXCHANGE) {
        Ok(()) => true,
        Err(e) => {
            if e != rustix::io::Errno::NOENT {
                tracing::debug!(error = %e, "could not exchange the plan files; renaming instead");
            }
            false
        }
    }
}

/// Elsewhere the caller renames.
#[cfg(not(target_os = "linux"))]
fn exchanged(_new: &Path, _old: &Path) -> bool {
    false
}

impl planlog_core::PlanSink for PlanFiles {
    fn plan_written(&self, session: &SessionId, plan: &Plan, at: Timestamp) {
        self.write_or_warn(session, plan, at);
    }
}
