//! `planlog write SESSION`: one plan_write argument object from stdin, applied exactly as the
//! tool would; stdout is the tool result.

use std::io::Read;

use planlog_core::{LogError, PlanSession, WriteError, WriteStatus};
use planlog_store::host::{PlanFiles, SystemEnv};

use super::session_id;
use crate::support::failure::Failure;
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog write`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session (created by its first write if it does not exist).
    session: String,
    /// The tool call id (a repeated id with the same arguments is applied once).
    #[arg(long)]
    call_id: Option<String>,
    /// The agent turn.
    #[arg(long)]
    turn: Option<u64>,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let id = session_id(&args.session)?;
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).map_err(|e| {
        Failure::cannot_run(format!(
            "cannot read stdin as UTF-8 text ({e}); pipe one plan_write argument object, e.g. '{{\"steps\": [...]}}'"
        ))
    })?;
    match serde_json::from_str::<serde_json::Value>(&input) {
        Ok(serde_json::Value::Object(_)) => {}
        Ok(_) => {
            return Err(Failure::cannot_run(
                "stdin must hold one JSON object (the plan_write arguments), e.g. '{\"steps\": [...]}' or '{}' to read",
            ));
        }
        Err(e) => {
            return Err(Failure::cannot_run(format!(
                "stdin is not JSON ({e}); pipe one plan_write argument object, e.g. '{{\"steps\": [...]}}' or '{{}}' to read"
            )));
        }
    }
    let log = store.for_writing()?;
    // Refuse rather than degrade: the CLI must not quietly start another session.
    let mut plan = PlanSession::builder(log, SystemEnv)
        .sink(PlanFiles::beside(&store.path))
        .open(&id)?;
    let outcome = plan.plan_write(args.call_id.as_deref(), args.turn, &input);
    match outcome.status() {
        WriteStatus::Unsaved(_) => {
            // A process that exits cannot keep it in memory: one more try, then give up.
            plan.close().map_err(|e| {
                let failure = Failure::from(e);
                Failure::cannot_run(format!(
                    "the plan write could not be stored; nothing was written ({})",
                    failure.message
                ))
            })?;
        }
        WriteStatus::NotRecorded(WriteError::CallIdReused(call)) => {
            return Err(Failure::cannot_run(format!(
                "call id {call} was already used in session {id} for a different plan_write call; nothing was written (give this call a new --call-id)"
            )));
        }
        WriteStatus::NotRecorded(WriteError::Log(e)) => {
            return Err(Failure::from(LogError::clone(e)));
        }
        WriteStatus::NotRecorded(e) => return Err(Failure::cannot_run(e.to_string())),
        _ => {}
    }
    let result = outcome.into_result();
    let mut out = Out::new();
    out.line(&result.content)?;
    out.finish()?;
    if result.is_error {
        Err(Failure::no(""))
    } else {
        Ok(())
    }
}
