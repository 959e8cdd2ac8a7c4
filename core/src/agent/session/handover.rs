//! Calls storage could not take, handed over to be kept outside the process (a spool file)
//! when the session ends, and recorded later by another session on the same log.
//!
//! A session that still holds unsaved calls when its process must end (a store locked past
//! the process's patience, a full disk) loses them with the process. [`PlanSession::take_unsaved`]
//! hands them over instead, as the model sent them; [`PlanSession::record_handed_over`]
//! records one later, decided again against the plan then (as a queued call is when another
//! writer took its place), with the same call id, so recording one twice records it once.

use crate::agent::task_tool::TaskTool;
use crate::domain::event::SessionStarted;
use crate::domain::ids::SessionId;
use crate::domain::time::Timestamp;

use super::recorder::Command;
use super::{PlanSession, WriteOutcome};

/// The tool an unsaved call was made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallTool {
    /// `plan_write`.
    PlanWrite,
    /// A task tool that writes (`task_create`, `task_update`, `task_claim`, `task_release`).
    Task(TaskTool),
}

impl CallTool {
    /// Its name (`plan_write`, `task_create`, …).
    pub fn name(self) -> &'static str {
        match self {
            CallTool::PlanWrite => crate::agent::tool::PLAN_WRITE,
            CallTool::Task(t) => t.name(),
        }
    }

    /// The tool named `name` (`None`: no tool whose calls are kept unsaved).
    pub fn from_name(name: &str) -> Option<CallTool> {
        if name == crate::agent::tool::PLAN_WRITE {
            return Some(CallTool::PlanWrite);
        }
        TaskTool::from_name(name)
            .filter(|t| t.writes())
            .map(CallTool::Task)
    }
}

/// A call storage has not taken, as the model sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsavedCall {
    /// The session it belongs to.
    pub session: SessionId,
    /// How to create the session, when the log did not have it yet.
    pub start: Option<SessionStarted>,
    /// The tool.
    pub tool: CallTool,
    /// Its arguments, byte for byte.
    pub arguments: String,
    /// Its call id (what makes recording it twice record it once).
    pub call_id: Option<String>,
    /// The turn it was made in.
    pub turn: Option<u64>,
    /// When it was made (the time its unsaved event was sealed with).
    pub at: Timestamp,
}

impl PlanSession {
    /// Takes the calls storage could not take out of the session, oldest first: the session
    /// then shows its stored plan, and nothing is left for `close` or drop to store. Keep
    /// them (a spool) and record them with [`PlanSession::record_handed_over`] later.
    /// Creating the session, when that is all that waits, is not a call: it is handed over
    /// as each call's [`UnsavedCall::start`].
    pub fn take_unsaved(&mut self) -> Vec<UnsavedCall> {
        let start = self.recorder.pending_start();
        self.recorder
            .take_unsaved()
            .into_iter()
            .filter_map(|(call, at)| {
                let (tool, arguments) = match call.command {
                    Command::Write(arguments) => (CallTool::PlanWrite, arguments),
                    Command::Task(tool, arguments) => (CallTool::Task(tool), arguments),
                    Command::Start(_) | Command::Mode(_) => return None,
                };
                Some(UnsavedCall {
                    session: self.id.clone(),
                    start: start.clone(),
                    tool,
                    arguments,
                    call_id: call.call_id.map(|c| c.as_str().to_owned()),
                    turn: call.turn,
                    at,
                })
            })
            .collect()
    }

    /// **Blocks.** Records a call handed over by [`PlanSession::take_unsaved`] (of this
    /// session), as [`PlanSession::plan_write`] or [`PlanSession::task_call`] would.
    pub fn record_handed_over(&mut self, call: &UnsavedCall) -> WriteOutcome {
        let command = match call.tool {
            CallTool::PlanWrite => Command::Write(call.arguments.clone()),
            CallTool::Task(tool) => Command::Task(tool, call.arguments.clone()),
        };
        self.write(call.call_id.as_deref(), call.turn, command)
    }
}
