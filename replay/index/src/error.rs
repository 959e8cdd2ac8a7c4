//! What can go wrong, split by who must act.

use std::path::{Path, PathBuf};

use planlog_core::LogError;

/// Why the index could not answer or catch up.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// Reading the store failed (its own error says who must act).
    #[error(transparent)]
    Store(#[from] LogError),
    /// The index file cannot be used: the operator removes it (it holds nothing the store
    /// does not) or frees the disk.
    #[error(
        "the viewer's index at {} cannot be used: {message} (it holds only what the store holds: remove it and it is rebuilt)",
        path.display()
    )]
    File {
        /// The index file.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
}

impl IndexError {
    pub(crate) fn file(path: &Path, e: impl std::fmt::Display) -> Self {
        IndexError::File {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }
}
