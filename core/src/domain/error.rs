//! Errors of the log layer, split by who must act.
//!
//! - the **model**: [`crate::Rejection`] (a plan_write it must correct);
//! - the **user** (whoever named a session or seq): [`UserError`];
//! - the **host** program: [`LogError::Conflict`] and [`LogError::InvalidEvent`] (re-read the
//!   log and retry, or fix the event it built);
//! - the **operator** (disk, permissions, damaged or locked files): [`OperatorError`].

use super::ids::{IdError, Seq, SessionId};

/// A request naming something that is not there. The user must correct the request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UserError {
    /// No session with this id.
    #[error("no session {0} in this store")]
    UnknownSession(SessionId),
    /// The session was deleted; its id is retired and cannot be written again.
    #[error(
        "session {0} was deleted; its id is retired (only the same session, restored from its export, can take it again)"
    )]
    SessionDeleted(SessionId),
    /// The session's log no longer continues from where this writer last saw it (it was
    /// deleted and restored from an older export while the writer had it open).
    #[error(
        "session {session} changed under this writer: its log no longer holds the event this writer saw at seq {seq} (deleted and restored from an older export?); nothing was written, open the session again"
    )]
    SessionReplaced {
        /// The session.
        session: SessionId,
        /// The last seq this writer had seen.
        seq: u64,
    },
    /// A seq past the end of the session.
    #[error("session {session} has {last} events; seq {seq} is out of range (use 1..={last})")]
    SeqOutOfRange {
        /// The session.
        session: SessionId,
        /// The seq asked for.
        seq: u64,
        /// Its last seq.
        last: u64,
    },
    /// An id that does not validate.
    #[error("invalid id: {0}")]
    InvalidId(#[from] IdError),
}

/// Storage trouble. The operator must act (free disk, fix permissions, restore a backup,
/// stop the process holding a lock, upgrade planlog). Messages say what is wrong; the CLI
/// adds which command to type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OperatorError {
    /// Reading or writing the store failed; `source` is the underlying error (an
    /// [`std::io::Error`] when the operating system refused, see [`OperatorError::io_kind`]).
    #[error("store {path}: {action} failed: {source}")]
    Io {
        /// The store file or folder.
        path: String,
        /// What was being done.
        action: String,
        /// The underlying error.
        #[source]
        source: StorageError,
    },
    /// Stored data is damaged; `session`/`seq` say where when known.
    #[error("store {path} is damaged{}: {detail}", location(.session, .seq))]
    Corrupt {
        /// The store file.
        path: String,
        /// The damaged session, when known.
        session: Option<SessionId>,
        /// The damaged seq, when known.
        seq: Option<Seq>,
        /// What is wrong.
        detail: String,
    },
    /// The file is not a planlog store at all (another kind of file).
    #[error("{path} is not a planlog store ({detail})")]
    NotAStore {
        /// The file.
        path: String,
        /// What was found instead.
        detail: String,
    },
    /// Another process holds the store and did not let go in time.
    #[error("store {path} is locked by another process (tried for {waited_ms} ms)")]
    Locked {
        /// The store file.
        path: String,
        /// How long we retried.
        waited_ms: u64,
    },
    /// The store was written by a newer planlog.
    #[error(
        "store {path} has format {found}, newer than this planlog reads (up to {supported}); a newer planlog is needed to open it"
    )]
    NewerFormat {
        /// The store file.
        path: String,
        /// Its format.
        found: u64,
        /// The newest this code reads.
        supported: u64,
    },
    /// The store's file format is older than this planlog reads.
    #[error(
        "store {path} is in an older file format ({found}) than this planlog reads; open it with the planlog version that wrote it and export its sessions"
    )]
    OlderFormat {
        /// The store file.
        path: String,
        /// The format found, as the storage engine names it.
        found: String,
    },
    /// The store was opened for reading only (no write permission, or a read-only command).
    #[error("store {path} is open for reading only; it cannot be written")]
    ReadOnly {
        /// The store file.
        path: String,
    },
    /// Opening the store needs more work than the caller allows (an index to rebuild or
    /// bring up to date over a long journal, a store of an older layout to upgrade); the
    /// open stopped before any of it and changed nothing. A process without such a limit
    /// does the work when it opens the store.
    #[error(
        "store {path} needs {work} before it can be used, more than this process does at once; nothing was changed (a process that may take its time does it on opening the store)"
    )]
    NeedsTime {
        /// The store file.
        path: String,
        /// The work, said for people ("its index rebuilt from 310 MB of journal").
        work: String,
    },
}

impl OperatorError {
    /// The operating system's error kind, when the storage failed because the OS refused
    /// (no space, permission denied, file too large, …).
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            OperatorError::Io { source, .. } => source.io_kind(),
            _ => None,
        }
    }
}

/// The underlying error of a storage failure, kept whole (with its own source chain) and
/// shareable, so that [`LogError`] stays `Clone`. Two are equal when they say the same.
#[derive(Clone)]
pub struct StorageError(std::sync::Arc<dyn std::error::Error + Send + Sync>);

impl StorageError {
    /// Wraps an error.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(error))
    }

    /// An error known only by its message.
    pub fn message(text: impl Into<String>) -> Self {
        #[derive(Debug)]
        struct Message(String);
        impl std::fmt::Display for Message {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
        impl std::error::Error for Message {}
        Self::new(Message(text.into()))
    }

    /// The OS error kind, when this is (or wraps) an [`std::io::Error`].
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        let mut error: Option<&(dyn std::error::Error + 'static)> = Some(&*self.0);
        while let Some(e) = error {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                return Some(io.kind());
            }
            error = e.source();
        }
        None
    }
}

impl std::fmt::Debug for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::fmt::Display for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&*self.0, f)
    }
}

impl std::error::Error for StorageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

impl PartialEq for StorageError {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string() && self.io_kind() == other.io_kind()
    }
}

impl Eq for StorageError {}

fn location(session: &Option<SessionId>, seq: &Option<Seq>) -> String {
    match (session, seq) {
        (Some(s), Some(q)) => format!(" at session {s} seq {q}"),
        (Some(s), None) => format!(" in session {s}"),
        _ => String::new(),
    }
}

/// Any error of an [`crate::EventLog`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    /// The request was wrong (see [`UserError`]).
    #[error(transparent)]
    User(#[from] UserError),
    /// The storage failed (see [`OperatorError`]).
    #[error(transparent)]
    Operator(#[from] OperatorError),
    /// The append was not at the end of the log: another writer got there first, or the host
    /// lost track. Nothing was written; re-read the last event and retry.
    #[error(
        "append conflict in session {session}: expected seq {expected}, got {found}; nothing was written, re-read the log and retry"
    )]
    Conflict {
        /// The session.
        session: SessionId,
        /// The seq the log would accept next.
        expected: u64,
        /// The seq offered.
        found: u64,
    },
    /// The host built an event the log cannot accept (bad hash, wrong first event, …).
    /// Nothing was written.
    #[error("invalid event for session {session} seq {seq}: {reason}")]
    InvalidEvent {
        /// The session.
        session: SessionId,
        /// Its seq.
        seq: u64,
        /// What is wrong.
        reason: String,
    },
}

impl From<IdError> for LogError {
    fn from(e: IdError) -> Self {
        LogError::User(UserError::InvalidId(e))
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error;

    use super::*;

    fn sid() -> SessionId {
        SessionId::new("s1").unwrap()
    }

    #[test]
    fn an_io_failure_keeps_its_source_and_kind() {
        let e = LogError::from(OperatorError::Io {
            path: "store.redb".into(),
            action: "appending".into(),
            source: StorageError::new(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "No space left on device",
            )),
        });
        let LogError::Operator(op) = &e else {
            unreachable!()
        };
        assert_eq!(op.io_kind(), Some(std::io::ErrorKind::StorageFull));
        let source = op.source().unwrap();
        assert_eq!(source.to_string(), "No space left on device");
        assert!(
            source.source().is_some(),
            "the io::Error itself is reachable"
        );
        assert!(e.to_string().contains("store.redb: appending failed"));
    }

    #[test]
    fn library_messages_say_what_is_wrong_not_which_command_to_type() {
        let errors: Vec<LogError> = vec![
            UserError::UnknownSession(sid()).into(),
            UserError::SessionDeleted(sid()).into(),
            UserError::SessionReplaced {
                session: sid(),
                seq: 3,
            }
            .into(),
            UserError::SeqOutOfRange {
                session: sid(),
                seq: 9,
                last: 2,
            }
            .into(),
            OperatorError::Corrupt {
                path: "p".into(),
                session: Some(sid()),
                seq: None,
                detail: "bad".into(),
            }
            .into(),
            OperatorError::NotAStore {
                path: "p".into(),
                detail: "d".into(),
            }
            .into(),
            OperatorError::Locked {
                path: "p".into(),
                waited_ms: 5,
            }
            .into(),
            OperatorError::NewerFormat {
                path: "p".into(),
                found: 9,
                supported: 1,
            }
            .into(),
            OperatorError::OlderFormat {
                path: "p".into(),
                found: "redb file format 1".into(),
            }
            .into(),
            OperatorError::ReadOnly { path: "p".into() }.into(),
            OperatorError::NeedsTime {
                path: "p".into(),
                work: "w".into(),
            }
            .into(),
        ];
        for e in errors {
            let text = e.to_string();
            assert!(
                !text.contains("`planlog") && !text.contains(" --"),
                "a library message names a CLI command or flag: {text}"
            );
        }
    }
}
