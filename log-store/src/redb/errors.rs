//! Turning redb's errors (and panics) into planlog's operator errors, each naming the store,
//! what was being done, and keeping the underlying error as its source.

use std::panic::{AssertUnwindSafe, catch_unwind};

use planlog_core::{LogError, OperatorError, StorageError};
use redb::DatabaseError;

pub(crate) type Result<T> = std::result::Result<T, LogError>;

/// Runs `f`, turning a panic inside redb (a damaged file can cause one) into an error.
pub(crate) fn guard<T>(path: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(panic) => {
            let detail = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "the storage engine panicked".to_owned());
            tracing::warn!(store = path, %detail, "storage engine panicked; reporting the store as damaged");
            Err(OperatorError::Corrupt {
                path: path.to_owned(),
                session: None,
                seq: None,
                detail,
            }
            .into())
        }
    }
}

/// An OS error while `action` on the store at `path`.
pub(crate) fn io(path: &str, action: &str, e: std::io::Error) -> LogError {
    OperatorError::Io {
        path: path.to_owned(),
        action: action.to_owned(),
        source: StorageError::new(e),
    }
    .into()
}

/// Maps an error of opening the database.
pub(crate) fn db_error(path: &str, e: DatabaseError) -> LogError {
    match e {
        DatabaseError::DatabaseAlreadyOpen | DatabaseError::LockProtocolMismatch => {
            OperatorError::Locked {
                path: path.to_owned(),
                waited_ms: 0,
            }
            .into()
        }
        DatabaseError::UpgradeRequired(v) => OperatorError::OlderFormat {
            path: path.to_owned(),
            found: format!("redb file format {v}"),
        }
        .into(),
        other => redb_err(path, "opening", other),
    }
}

/// Maps any redb error to an operator error naming the file and the action.
pub(crate) fn redb_err(path: &str, action: &str, e: impl Into<redb::Error>) -> LogError {
    let e: redb::Error = e.into();
    match e {
        redb::Error::Corrupted(detail) => OperatorError::Corrupt {
            path: path.to_owned(),
            session: None,
            seq: None,
            detail,
        }
        .into(),
        // redb reports a file that is not a redb database as invalid data.
        redb::Error::Io(io_err) if io_err.kind() == std::io::ErrorKind::InvalidData => {
            OperatorError::NotAStore {
                path: path.to_owned(),
                detail: io_err.to_string(),
            }
            .into()
        }
        redb::Error::Io(io_err) => io(path, action, io_err),
        other => OperatorError::Io {
            path: path.to_owned(),
            action: action.to_owned(),
            source: StorageError::new(other),
        }
        .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_file_format_has_its_own_error() {
        let e = db_error("old.redb", DatabaseError::UpgradeRequired(1));
        assert!(
            matches!(&e, LogError::Operator(OperatorError::OlderFormat { found, .. }) if found.contains('1')),
            "{e}"
        );
        assert!(e.to_string().contains("older file format"), "{e}");
    }

    #[test]
    fn an_os_error_keeps_its_kind() {
        let e = redb_err(
            "s.redb",
            "committing",
            redb::StorageError::Io(std::io::Error::from(std::io::ErrorKind::PermissionDenied)),
        );
        let LogError::Operator(op) = e else {
            unreachable!()
        };
        assert_eq!(op.io_kind(), Some(std::io::ErrorKind::PermissionDenied));
    }
}
