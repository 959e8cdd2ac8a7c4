//! [`WriteOutcome`]: what a plan_write call returns: the result for the model, and where the
//! call stands in the log.

use crate::domain::error::{LogError, UserError};
use crate::domain::ids::{CallId, Seq};
use crate::domain::write::ToolResult;

/// What happened to one plan_write call: the result for the model, and whether (and where)
/// the log holds it.
///
/// The model always gets [`WriteOutcome::result`]. A host that must know the write is durable
/// checks [`WriteOutcome::status`], or uses [`WriteOutcome::durable`] with `?`.
#[must_use = "a plan_write may be unsaved (storage failed) or not recorded; check status() or call durable()"]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    result: ToolResult,
    status: WriteStatus,
}

/// Where a plan_write call stands in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteStatus {
    /// A read: nothing to record.
    Read,
    /// Recorded durably at this seq (an accepted write, or a refusal the model must correct).
    Stored(Seq),
    /// The same call (same call id, same arguments) was recorded before, at this seq, by this
    /// or another writer; the result is that record's answer and nothing was applied again.
    Repeated(Seq),
    /// Storage failed: the call was decided against the session's state and waits in memory;
    /// it is stored on the next call, on [`PlanSession::refresh`](crate::PlanSession::refresh) or on
    /// [`PlanSession::close`](crate::PlanSession::close).
    Unsaved(LogError),
    /// Not recorded at all; the result tells the model nothing changed.
    NotRecorded(WriteError),
}

/// Why a plan_write call was not (or not yet) recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// Storage failed; the call waits in memory (see [`WriteStatus::Unsaved`]). `result` is
    /// what the model was told.
    #[error("the plan write is kept in memory but not stored yet: {cause}")]
    Unsaved {
        /// The result the model got.
        result: ToolResult,
        /// The storage error.
        cause: LogError,
    },
    /// The call id was recorded before for a call with other arguments (of any tool).
    #[error(
        "call id {0} was already used in this session for a call with other arguments; nothing was written"
    )]
    CallIdReused(CallId),
    /// This sub-agent was not given plan_write.
    #[error("plan_write is not available to this agent")]
    NoPlanTool,
    /// The log refused: the session was deleted or replaced, or other writers kept winning
    /// the race for the next seq.
    #[error(transparent)]
    Log(LogError),
}

impl WriteOutcome {
    pub(super) fn new(result: ToolResult, status: WriteStatus) -> Self {
        Self { result, status }
    }

    pub(super) fn not_recorded(error: WriteError) -> Self {
        let content = match &error {
            WriteError::NoPlanTool => {
                "Unknown tool: plan_write is not available to this agent.".to_owned()
            }
            WriteError::CallIdReused(call) => format!(
                "This tool call id ({call}) was already used for a call with other arguments. Nothing was changed. Send the call again as a new tool call."
            ),
            WriteError::Log(LogError::User(UserError::SessionDeleted(_))) => {
                "The plan could not be recorded: this session was deleted. Nothing was changed; stop updating this plan."
                    .to_owned()
            }
            WriteError::Log(LogError::Conflict { .. }) => {
                "The plan could not be recorded: too many other writers updated it at the same moment. Nothing was changed; call plan_write again."
                    .to_owned()
            }
            WriteError::Log(error) => format!(
                "The plan could not be recorded ({error}). Nothing was changed."
            ),
            WriteError::Unsaved { result, .. } => result.content.clone(),
        };
        Self {
            result: ToolResult {
                is_error: true,
                content,
            },
            status: WriteStatus::NotRecorded(error),
        }
    }

    /// What the model gets back.
    pub fn result(&self) -> &ToolResult {
        &self.result
    }

    /// Consumes the outcome into what the model gets back.
    pub fn into_result(self) -> ToolResult {
        self.result
    }

    /// Where the call stands in the log.
    pub fn status(&self) -> &WriteStatus {
        &self.status
    }

    /// True when the log durably holds the call (or it was a read).
    pub fn is_durable(&self) -> bool {
        matches!(
            self.status,
            WriteStatus::Read | WriteStatus::Stored(_) | WriteStatus::Repeated(_)
        )
    }

    /// The result for the model when the call is durable (or a read).
    ///
    /// # Errors
    /// [`WriteError::Unsaved`] (carrying the model's result) when storage failed, or why the
    /// call was not recorded.
    pub fn durable(self) -> Result<ToolResult, WriteError> {
        match self.status {
            WriteStatus::Read | WriteStatus::Stored(_) | WriteStatus::Repeated(_) => {
                Ok(self.result)
            }
            WriteStatus::Unsaved(cause) => Err(WriteError::Unsaved {
                result: self.result,
                cause,
            }),
            WriteStatus::NotRecorded(error) => Err(error),
        }
    }
}
