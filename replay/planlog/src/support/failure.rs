//! [`Failure`]: why a command stopped, as an exit code and one line on stderr. The library
//! says what is wrong; this adds what to type next.

use planlog_core::{LogError, OperatorError, SessionId, UserError};
use planlog_import::ImportError;

use super::output::OutputError;

/// A command's failure: the exit code and the one-line message for stderr.
#[derive(Debug)]
pub(crate) struct Failure {
    /// 0 (a reader went away: nothing to say), 1 ("no") or 2 (could not run).
    pub(crate) code: u8,
    /// What went wrong and what to do (empty when already reported).
    pub(crate) message: String,
}

impl Failure {
    /// Exit 2: the command could not run (usage, IO, store, bad input). Nothing was written.
    pub(crate) fn cannot_run(message: impl Into<String>) -> Self {
        Self {
            code: 2,
            message: message.into(),
        }
    }

    /// Exit 1: the answer is "no" (a refused write, problems found).
    pub(crate) fn no(message: impl Into<String>) -> Self {
        Self {
            code: 1,
            message: message.into(),
        }
    }
}

impl From<LogError> for Failure {
    fn from(e: LogError) -> Self {
        let hint = match &e {
            LogError::User(UserError::UnknownSession(_)) => {
                "; run `planlog sessions` to list the sessions in this store"
            }
            LogError::User(UserError::SessionDeleted(_)) => {
                "; use another session id, or restore the deleted session from its export with `planlog import planlog FILE`"
            }
            LogError::Operator(OperatorError::Corrupt { .. }) => {
                "; run `planlog verify` to list the damage, then restore from a backup or an export"
            }
            LogError::Operator(OperatorError::Locked { .. }) => {
                "; wait for it to finish or stop it, then retry (PLANLOG_LOCK_TIMEOUT_MS waits longer)"
            }
            LogError::Operator(OperatorError::NotAStore { .. }) => {
                "; give the path of a planlog store with --db or PLANLOG_DB"
            }
            LogError::Operator(OperatorError::NewerFormat { .. }) => "; upgrade planlog",
            LogError::Operator(OperatorError::OlderFormat { .. }) => {
                " (`planlog export SESSION --format jsonl` there, then `planlog import planlog` here)"
            }
            LogError::Operator(op)
                if matches!(
                    op.io_kind(),
                    Some(std::io::ErrorKind::StorageFull | std::io::ErrorKind::FileTooLarge)
                ) =>
            {
                "; free some disk space (or raise the file-size limit) and run the command again"
            }
            LogError::Operator(op)
                if op.io_kind() == Some(std::io::ErrorKind::PermissionDenied) =>
            {
                "; check the store's permissions (reading commands can use a store you may only read)"
            }
            _ => "",
        };
        Self::cannot_run(format!("{e}{hint}"))
    }
}

impl From<OutputError> for Failure {
    fn from(e: OutputError) -> Self {
        match e {
            // The reader went away (`| head`): not an error worth a message.
            OutputError::Closed => Self {
                code: 0,
                message: String::new(),
            },
            OutputError::Failed(e) => Self::cannot_run(format!(
                "could not write the output to stdout: {e}; nothing more was written"
            )),
        }
    }
}

impl From<ImportError> for Failure {
    fn from(e: ImportError) -> Self {
        let e = match e {
            ImportError::Store(inner) => return Self::from(inner),
            other => other,
        };
        let hint = match &e {
            ImportError::BadLine {
                skippable: true, ..
            } => " (fix the file, or pass --skip-bad-lines to import the rest)".to_owned(),
            ImportError::BadLine { .. } => String::new(),
            ImportError::WrongFormat {
                file,
                looks_like: Some(f),
                ..
            } => format!(
                "; run `planlog import {f} {file}`, or leave the format out to have it detected"
            ),
            ImportError::WrongFormat { .. } => {
                format!(
                    "; planlog imports {}",
                    planlog_import::SourceFormat::all_words()
                )
            }
            ImportError::Exists(_) => {
                "; nothing was imported (delete it first, or import into another store with --db)"
                    .to_owned()
            }
            ImportError::Clash { .. } => " (import into another store with --db)".to_owned(),
            _ => String::new(),
        };
        Self::cannot_run(format!("{e}{hint}"))
    }
}

/// A session id typed by the user.
pub(crate) fn session_id(text: &str) -> Result<SessionId, Failure> {
    SessionId::new(text)
        .map_err(|e| Failure::cannot_run(format!("{text:?} is not a session id: {e}")))
}

/// The session a user named by its id or by any unique beginning of it (`cc-0c18`): the
/// session with exactly that id first, else the only one whose id starts so.
///
/// # Errors
/// No session, or several, start so (they are named, at most 5); store errors.
pub(crate) fn find_session(
    log: &dyn planlog_core::EventLog,
    text: &str,
) -> Result<SessionId, Failure> {
    if let Ok(id) = SessionId::new(text)
        && log.session(&id)?.is_some()
    {
        return Ok(id);
    }
    let mut matches: Vec<SessionId> = log
        .sessions()?
        .into_iter()
        .map(|s| s.id)
        .filter(|id| !text.is_empty() && id.as_str().starts_with(text))
        .collect();
    matches.sort();
    match matches.len() {
        1 => Ok(matches.remove(0)),
        0 => Err(Failure::from(planlog_core::LogError::from(
            planlog_core::UserError::UnknownSession(session_id(text)?),
        ))),
        n => {
            let shown: Vec<&str> = matches.iter().take(5).map(SessionId::as_str).collect();
            Err(Failure::cannot_run(format!(
                "{text:?} names {n} sessions ({}{}); give more of the id",
                shown.join(", "),
                if n > 5 { ", …" } else { "" }
            )))
        }
    }
}
