//! Where the store lives when nobody says: `.planlog/planlog.redb` at the root of the
//! enclosing git repository, else `planlog/planlog.redb` in the platform's data folder.
//! `--db PATH` beats `PLANLOG_DB`, which beats both.

use std::path::{Path, PathBuf};

/// The store file name.
pub const STORE_FILE: &str = "planlog.redb";
/// The folder at a repository root.
pub const REPO_DIR: &str = ".planlog";

/// What the location depends on, read from the process (or given by tests).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocationEnv {
    /// `PLANLOG_DB`.
    pub planlog_db: Option<PathBuf>,
    /// The working directory.
    pub cwd: PathBuf,
    /// `XDG_DATA_HOME`.
    pub xdg_data_home: Option<PathBuf>,
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// `APPDATA` (Windows).
    pub appdata: Option<PathBuf>,
}

impl LocationEnv {
    /// Reads the environment of this process.
    pub fn from_process() -> Self {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Self {
            planlog_db: var("PLANLOG_DB"),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            xdg_data_home: var("XDG_DATA_HOME"),
            home: var("HOME"),
            appdata: var("APPDATA"),
        }
    }
}

/// No location could be worked out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot find a place for the planlog store: not in a git repository and no data folder (HOME is unset); the store must be named explicitly"
)]
pub struct NoLocation;

/// The store path: `flag` (`--db`), else `PLANLOG_DB`, else the repository's `.planlog/`,
/// else the data folder.
///
/// # Errors
/// [`NoLocation`] when none applies.
pub fn resolve_store_path(flag: Option<&Path>, env: &LocationEnv) -> Result<PathBuf, NoLocation> {
    if let Some(p) = flag.or(env.planlog_db.as_deref()) {
        return Ok(p.to_path_buf());
    }
    if let Some(root) = git_root(&env.cwd) {
        return Ok(root.join(REPO_DIR).join(STORE_FILE));
    }
    data_dir(env)
        .map(|d| d.join("planlog").join(STORE_FILE))
        .ok_or(NoLocation)
}

/// Keeps a repository's store folder (`dir`, a [`REPO_DIR`]) out of git: writes
/// `<dir>/.gitignore` holding `*` (the folder ignores itself, so the user's own `.gitignore`
/// is never touched), creating the folder (mode 0700) when needed. `Ok(true)` when it wrote
/// the file; a `.gitignore` already there is left as it is.
///
/// # Errors
/// The folder or file cannot be written.
pub fn keep_out_of_git(dir: &Path) -> std::io::Result<bool> {
    let ignore = dir.join(".gitignore");
    if std::fs::symlink_metadata(&ignore).is_ok() {
        return Ok(false);
    }
    crate::redb::create_private_dir(dir)?;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&ignore)
    {
        Ok(mut f) => {
            std::io::Write::write_all(
                &mut f,
                b"# planlog's store: local to this machine, never committed.\n*\n",
            )?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// The nearest folder at or above `start` that holds `.git` (a folder, or a file for
/// worktrees and submodules).
pub fn git_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

fn data_dir(env: &LocationEnv) -> Option<PathBuf> {
    if cfg!(windows) {
        return env.appdata.clone();
    }
    if cfg!(target_os = "macos") {
        return env
            .home
            .as_ref()
            .map(|h| h.join("Library").join("Application Support"));
    }
    env.xdg_data_home
        .clone()
        .filter(|p| p.is_absolute())
        .or_else(|| env.home.as_ref().map(|h| h.join(".local").join("share")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(cwd: &Path) -> LocationEnv {
        LocationEnv {
            cwd: cwd.to_path_buf(),
            home: Some("/home/u".into()),
            ..LocationEnv::default()
        }
    }

    #[test]
    fn flag_beats_env_beats_repository() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let mut e = env(dir.path());
        e.planlog_db = Some("/env.redb".into());
        assert_eq!(
            resolve_store_path(Some(Path::new("/flag.redb")), &e),
            Ok("/flag.redb".into())
        );
        assert_eq!(resolve_store_path(None, &e), Ok("/env.redb".into()));
    }

    #[test]
    fn inside_a_repository_the_store_is_at_its_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let deep = dir.path().join("a").join("b");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(
            resolve_store_path(None, &env(&deep)),
            Ok(dir.path().join(".planlog").join("planlog.redb"))
        );
    }

    #[test]
    fn outside_a_repository_the_store_is_in_the_data_folder() {
        let dir = tempfile::tempdir().unwrap();
        let got = resolve_store_path(None, &env(dir.path())).unwrap();
        if cfg!(target_os = "linux") {
            assert_eq!(
                got,
                PathBuf::from("/home/u/.local/share/planlog/planlog.redb")
            );
            let mut e = env(dir.path());
            e.xdg_data_home = Some("/xdg".into());
            assert_eq!(
                resolve_store_path(None, &e),
                Ok("/xdg/planlog/planlog.redb".into())
            );
        }
        let mut e = env(dir.path());
        e.home = None;
        e.appdata = None;
        assert!(
            resolve_store_path(None, &e)
                .unwrap_err()
                .to_string()
                .contains("named explicitly")
        );
    }
}
