//! PostgreSQL errors as planlog's: each names the store (its URL without the password) and
//! what was being done, and keeps an `io::ErrorKind` for the causes an operator acts on (the
//! server unreachable, a dropped connection, a permission denied, a full disk).

use planlog_core::{LogError, OperatorError, StorageError};
use postgres::error::SqlState;

/// The kind of a failure, for hints and for the session's fail-open path.
fn kind_of(e: &postgres::Error) -> std::io::ErrorKind {
    use std::io::ErrorKind;
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        return if *code == SqlState::INSUFFICIENT_PRIVILEGE
            || *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            ErrorKind::PermissionDenied
        } else if *code == SqlState::DISK_FULL || *code == SqlState::OUT_OF_MEMORY {
            ErrorKind::StorageFull
        } else if code.code().starts_with("57") || code.code().starts_with("08") {
            // Operator intervention (a shutdown, a restart) or a connection exception.
            ErrorKind::ConnectionAborted
        } else {
            ErrorKind::Other
        };
    }
    if e.is_closed() {
        return ErrorKind::ConnectionAborted;
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return io.kind();
        }
        source = s.source();
    }
    ErrorKind::Other
}

/// A PostgreSQL error while `action`.
pub(super) fn pg_err(store: &str, action: &str, e: &postgres::Error) -> LogError {
    let text = match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => {
            // rust-postgres says only "error connecting to server": the cause (refused, timed
            // out, no such host) is in the source chain, and is what the operator acts on.
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                text.push_str(": ");
                text.push_str(&s.to_string());
                source = s.source();
            }
            text
        }
    };
    OperatorError::Io {
        path: store.to_owned(),
        action: action.to_owned(),
        source: StorageError::new(std::io::Error::new(kind_of(e), text)),
    }
    .into()
}

/// Whether a failure means the connection was gone before the statement ran (the server
/// closed it: a restart, an idle timeout, an administrator), so running it again on a fresh
/// connection cannot apply anything twice.
pub(super) fn stale(e: &postgres::Error) -> bool {
    e.is_closed()
        || e.code().is_some_and(|c| {
            let c = c.code();
            c.starts_with("57P") || c.starts_with("08")
        })
        || kind_of(e) == std::io::ErrorKind::ConnectionReset
        || kind_of(e) == std::io::ErrorKind::BrokenPipe
        || kind_of(e) == std::io::ErrorKind::UnexpectedEof
}

/// Whether a failure means another writer won (a unique key taken, a serialization failure
/// or a deadlock): the caller catches up and tries again.
pub(super) fn is_race(e: &postgres::Error) -> bool {
    e.code().is_some_and(|c| {
        *c == SqlState::UNIQUE_VIOLATION
            || *c == SqlState::T_R_SERIALIZATION_FAILURE
            || *c == SqlState::T_R_DEADLOCK_DETECTED
    })
}
