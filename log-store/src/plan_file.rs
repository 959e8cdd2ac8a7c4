//! The markdown plan file sink: after each successful write, `plans/<session>.md` beside the
//! store is overwritten with the plan. A human-readable view, not the record: a failure only
//! logs a warning.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use planlog_core::{Plan, SessionId, Timestamp, render_markdown};

/// Writes plan files into one folder (`<store folder>/plans`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanFiles {
    dir: PathBuf,
}

impl PlanFiles {
    /// Plan files in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// Plan files in the `plans` folder beside the store file `store`.
    pub fn beside(store: &Path) -> Self {
        let base = store
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Self::new(base.join("plans"))
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

    /// Overwrites the plan file of `session` (folder mode 0700, file mode 0600). The new text
    /// is written to a fresh temporary file and renamed over the old one, so a reader never
    /// sees half a file and a planted symlink is replaced, not followed.
    ///
    /// # Errors
    /// The IO error, when the folder or file cannot be written.
    pub fn write(
        &self,
        session: &SessionId,
        plan: &Plan,
        updated: Timestamp,
    ) -> std::io::Result<PathBuf> {
        create_private_dir(&self.dir)?;
        let path = self.path_for(session);
        let tmp = self.dir.join(format!(".{}.md.tmp", session.as_str()));
        let _ = fs::remove_file(&tmp);
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp)?;
        file.write_all(render_markdown(plan, session, updated).as_bytes())?;
        file.sync_data()?;
        drop(file);
        fs::rename(&tmp, &path)?;
        Ok(path)
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

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

impl planlog_core::PlanSink for PlanFiles {
    fn plan_written(&self, session: &SessionId, plan: &Plan, at: Timestamp) {
        self.write_or_warn(session, plan, at);
    }
}
