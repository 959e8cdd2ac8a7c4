//! [`PlanSession`]: everything an agent loop needs from planlog, in one place.
//!
//! | module | what |
//! |---|---|
//! | `builder` | [`SessionBuilder`]: create, resume, open, fork, open_or_fresh |
//! | `recorder` | the write path: catch up with other writers, decide, append, retry, fail-open |
//! | `outcome` | [`WriteOutcome`]: the model's result and where the call stands in the log |
//! | `handover` | [`UnsavedCall`]: calls storage could not take, handed over at the end to be recorded later |
//! | `mode` | plan mode on a session: selections, the turn, the two-step review, `/plan` |
//! | (this file) | the session itself: plan_write, refresh, injection, delegation, fork_at, close |

mod builder;
mod handover;
mod mode;
mod outcome;
mod recorder;

use std::sync::Arc;

use crate::agent::render::injection_text;
use crate::agent::shared_plan::SharedPlan;
use crate::agent::sink::PlanSink;
use crate::agent::task_tool::{TaskTool, execute_task_tool, parse_task_call};
use crate::agent::tool::{PLAN_WRITE, ToolSpec};
use crate::domain::env::Env;
use crate::domain::error::LogError;
use crate::domain::event::{Event, EventBody, Head, Origin, SessionStarted};
use crate::domain::ids::{CallId, Seq, SessionId};
use crate::domain::log::EventLog;
use crate::domain::memory_log::MemoryLog;
use crate::domain::plan::Plan;
use crate::domain::state::SessionState;
use crate::domain::task::TaskCall;
use crate::domain::write::{ToolResult, execute_plan_write};

pub use builder::{IntoSharedLog, SessionBuilder};
pub use handover::{CallTool, UnsavedCall};
pub use mode::PendingReview;
pub use outcome::{WriteError, WriteOutcome, WriteStatus};
use recorder::{Call, Command, Landing, OnFailure, Recorder};

use crate::agent::plan_mode::{PlanModeConfig, exit_plan_mode_spec};

/// What a session was built with (see [`SessionBuilder`]).
#[derive(Clone, Default)]
pub(crate) struct SessionOptions {
    /// Label recorded when the session is created.
    pub(crate) label: Option<String>,
    /// Origin recorded when `open` creates the session (`None`: `new`).
    pub(crate) origin: Option<crate::domain::event::Origin>,
    /// Fed with the plan after every write, on resume and creation, and when another
    /// writer's events are seen.
    pub(crate) sinks: Vec<Arc<dyn PlanSink>>,
    /// Plan mode guidance.
    pub(crate) plan_mode: Option<PlanModeConfig>,
}

impl std::fmt::Debug for SessionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionOptions")
            .field("label", &self.label)
            .field("sinks", &self.sinks.len())
            .field("plan_mode", &self.plan_mode)
            .finish()
    }
}

/// A delegation that is not allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DelegationError {
    /// Sub-agents cannot start sub-agents.
    #[error("a sub-agent cannot delegate to another sub-agent")]
    Nested,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Main,
    Child { plan_tool: bool },
}

/// What the host does at a request boundary (before each model request).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RequestStart {
    /// A notice to add as a user message before the request, if the mode changed under the
    /// model's feet.
    pub notice: Option<String>,
}

/// A plan-mode selection waiting for the next request boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Selection {
    /// Plan mode on or off.
    active: bool,
    /// Made by the user (so the model deserves a notice), not by an approved exit.
    by_user: bool,
}

/// One agent session's plan: restored from, and checkpointed to, its event log. Start one with
/// [`PlanSession::builder`].
///
/// # Blocking
///
/// A `PlanSession` is synchronous. Every method that reaches the log blocks the calling
/// thread until the log answers: with a durable log (`planlog_store::RedbLog`) a
/// [`plan_write`](PlanSession::plan_write) waits for its fsync (a few milliseconds), opening may
/// wait for another process's lock, and `Drop` tries once more to store anything unsaved.
/// These are marked **Blocks** below. In async code, do not call them on the runtime's
/// threads: use `planlog_store::host::AsyncPlanSession`, which runs the session on a thread of its
/// own and answers with futures.
///
/// # The host loop
///
/// ```text
/// turn_opened()                      a user message starts a turn (optional: see below)
///   before_request()                 before EVERY model request: catch up, apply a pending
///                                    plan-mode selection, maybe a notice for the model
///   inject(view, ..)                 the request's messages + the plan (never stored)
///   plan_write(call_id, turn, args)  the model's plan_write tool calls
///   begin_review / finish_review     the model's exit_plan_mode calls (plan mode)
/// turn_closed()                      the agent answered; the turn is over
/// ```
///
/// `before_request` opens the turn when `turn_opened` was not called, so plan mode never
/// switches in the middle of a turn; `turn_closed` matters only for selections made between
/// turns (recorded at once instead of at the next request).
///
/// # Many writers
///
/// Several sessions (in this process or others) may write the same session id on one log:
/// each call first catches up with what the others appended, and a call that loses the race
/// for the next seq is decided again against the new plan (see [`PlanSession::plan_write`]).
pub struct PlanSession {
    recorder: Recorder,
    env: Arc<dyn Env>,
    id: SessionId,
    store: Arc<SharedPlan>,
    options: SessionOptions,
    kind: Kind,
    restore_error: Option<String>,
    // Plan mode: a selection waiting for the next request boundary, whether it came from the
    // user (and so deserves a notice), whether a turn is open, and what the last request the
    // model saw described.
    pending_mode: Option<Selection>,
    notice_due: bool,
    turn_open: bool,
    last_request_mode: Option<bool>,
}

impl std::fmt::Debug for PlanSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanSession")
            .field("id", &self.id)
            .field("state", self.recorder.state())
            .field("unsaved", &self.recorder.unsaved_len())
            .finish_non_exhaustive()
    }
}

impl PlanSession {
    /// How to get a session: on `log`, with the host's clock and id source `env`.
    ///
    /// ```
    /// # use planlog_core::{MemoryLog, PlanSession, SessionId, TestEnv};
    /// let id = SessionId::new("my-project")?;
    /// let mut plan = PlanSession::builder(MemoryLog::new(), TestEnv::default()).open(&id)?;
    /// let outcome = plan.plan_write(Some("call-1"), None, r#"{"steps":[{"id":"1","content":"Write the parser","status":"in_progress"}]}"#);
    /// assert!(outcome.is_durable());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder(log: impl IntoSharedLog, env: impl Env + 'static) -> SessionBuilder {
        SessionBuilder::new(log, env)
    }

    fn with(
        recorder: Recorder,
        env: Arc<dyn Env>,
        id: SessionId,
        options: SessionOptions,
        kind: Kind,
    ) -> Self {
        let store = Arc::new(SharedPlan::new(recorder.state().plan.clone()));
        Self {
            recorder,
            env,
            id,
            store,
            options,
            kind,
            restore_error: None,
            pending_mode: None,
            notice_due: false,
            turn_open: false,
            last_request_mode: None,
        }
    }

    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// Why the log could not be restored, when the session degraded to an empty plan.
    pub fn restore_error(&self) -> Option<&str> {
        self.restore_error.as_deref()
    }

    /// A copy of the current plan.
    pub fn plan(&self) -> Plan {
        self.recorder.state().plan.clone()
    }

    /// The folded state (plan and committed plan mode).
    pub fn state(&self) -> &SessionState {
        self.recorder.state()
    }

    /// A shared handle to the current plan, for UI threads.
    pub fn shared_plan(&self) -> Arc<SharedPlan> {
        Arc::clone(&self.store)
    }

    /// Where the session's log ends (counting events waiting in memory); `None` before the
    /// session's first event is recorded.
    pub fn head(&self) -> Option<Head> {
        self.recorder.head()
    }

    /// The last seq the session knows (0 before its first event).
    pub fn last_seq(&self) -> u64 {
        self.head().map_or(0, |h| h.seq.get())
    }

    /// True once the session's first event is stored.
    pub fn exists(&self) -> bool {
        self.recorder.exists()
    }

    /// Events appended in memory but not yet stored (after a storage failure).
    pub fn unsaved(&self) -> usize {
        self.recorder.unsaved_len()
    }

    /// True for a delegated sub-agent session.
    pub fn is_sub_agent(&self) -> bool {
        matches!(self.kind, Kind::Child { .. })
    }

    fn has_plan_tool(&self) -> bool {
        !matches!(self.kind, Kind::Child { plan_tool: false })
    }

    /// The tools the host should declare now: plan_write (unless this is a sub-agent whose
    /// whitelist left it out), and exit_plan_mode only while plan mode is active.
    pub fn tools(&self) -> Vec<ToolSpec> {
        let mut tools = Vec::new();
        if self.has_plan_tool() {
            tools.push(ToolSpec::plan_write());
        }
        if self.state().plan_mode {
            tools.push(exit_plan_mode_spec());
        }
        tools
    }

    /// **Blocks.** Catches up with events other writers appended (and stores anything a storage failure
    /// left in memory). Returns true when the plan or mode changed. plan_write and
    /// [`PlanSession::before_request`] do this themselves.
    ///
    /// # Errors
    /// Storage errors (the session keeps what it knows), or the session was deleted or
    /// replaced under it.
    pub fn refresh(&mut self) -> Result<bool, LogError> {
        let changed = self.recorder.sync()?;
        if changed {
            self.show_stored_plan();
        }
        Ok(changed)
    }

    /// The plan changed (ours or another writer's): update the shared handle and the sinks.
    fn show_stored_plan(&self) {
        let plan = &self.recorder.state().plan;
        if matches!(self.kind, Kind::Main) && self.recorder.unsaved_len() == 0 {
            let at = self.recorder.stored_at().unwrap_or_else(|| self.env.now());
            for sink in &self.options.sinks {
                sink.plan_written(&self.id, plan, at);
            }
        }
        self.store.replace(plan.clone());
    }

    /// **Blocks.** Runs one plan_write call: catches up with other writers, decides the call against the
    /// current plan, appends the event (the checkpoint) before returning, and returns the
    /// result for the model with where the call stands in the log.
    ///
    /// - A rejected call is recorded as `write_rejected` and returned as an error result.
    /// - If another writer appended first, the same call is decided again against the new
    ///   plan (bounded retries); the result is always the decision that was recorded.
    /// - A call id already recorded (by any writer) with the same arguments returns the
    ///   recorded result and applies nothing; with other arguments it is refused.
    /// - If storage fails the session goes on in memory ([`WriteStatus::Unsaved`]).
    pub fn plan_write(
        &mut self,
        call_id: Option<&str>,
        turn: Option<u64>,
        arguments: &str,
    ) -> WriteOutcome {
        self.write(call_id, turn, Command::Write(arguments.to_owned()))
    }

    /// **Blocks.** Runs one task tool call (`task_create`, `task_update`, `task_get`,
    /// `task_list`, with Claude Code's Tasks schemas; see [`crate::tasks`]) as
    /// [`PlanSession::plan_write`] runs a plan_write call: a write is decided against the
    /// current plan and recorded before the result returns (`upsert` or `remove`, or
    /// `write_rejected` naming the tool), with the same catch-up, retry, idempotence and
    /// fail-open behaviour; a read records nothing. A repeated call id returns the plan as
    /// recorded, not the first call's own result.
    pub fn task_call(
        &mut self,
        call_id: Option<&str>,
        turn: Option<u64>,
        tool: TaskTool,
        arguments: &str,
    ) -> WriteOutcome {
        if !tool.writes() {
            if !self.has_plan_tool() {
                return WriteOutcome::not_recorded(WriteError::NoPlanTool);
            }
            if let Err(error) = self.recorder.update() {
                tracing::warn!(session = %self.id, %error, "could not catch up with the store; reading the tasks this session knows");
            }
            let execution = execute_task_tool(self.recorder.state(), tool, arguments);
            return WriteOutcome::new(execution.result, WriteStatus::Read);
        }
        self.write(call_id, turn, Command::Task(tool, arguments.to_owned()))
    }

    /// The write path of plan_write and the task tools.
    fn write(
        &mut self,
        call_id: Option<&str>,
        turn: Option<u64>,
        command: Command,
    ) -> WriteOutcome {
        if !self.has_plan_tool() {
            return WriteOutcome::not_recorded(WriteError::NoPlanTool);
        }
        let call_id = call_id.and_then(|c| match CallId::new(c) {
            Ok(c) => Some(c),
            Err(error) => {
                tracing::warn!(session = %self.id, %error, "ignoring an unusable tool call id; the call is not idempotent");
                None
            }
        });
        if let Some(call) = &call_id
            && let Some((waiting, error)) = self.recorder.unsaved_call(call)
        {
            let (waiting, error) = (waiting.clone(), error.clone());
            return self.repeated(call, &waiting, &command, WriteStatus::Unsaved(error));
        }
        let before = self.recorder.state().clone();
        let recorded = self.recorder.record(
            Call {
                command: command.clone(),
                turn,
                call_id: call_id.clone(),
            },
            OnFailure::KeepInMemory,
        );
        let outcome = match recorded {
            Err(error) => WriteOutcome::not_recorded(WriteError::Log(error)),
            Ok(None) => {
                // A read: answered from the (caught-up) plan.
                let content = self.recorder.state().plan.to_json();
                WriteOutcome::new(
                    ToolResult {
                        is_error: false,
                        content,
                    },
                    WriteStatus::Read,
                )
            }
            Ok(Some(recorded)) => match recorded.landing {
                Landing::Duplicate => match &call_id {
                    Some(call) => self.repeated(
                        call,
                        &recorded.event,
                        &command,
                        WriteStatus::Repeated(recorded.event.seq),
                    ),
                    None => WriteOutcome::new(
                        result_of(&recorded.event, &self.recorder.state().plan),
                        WriteStatus::Repeated(recorded.event.seq),
                    ),
                },
                Landing::Stored => WriteOutcome::new(
                    recorded
                        .result
                        .unwrap_or_else(|| result_of(&recorded.event, &self.recorder.state().plan)),
                    WriteStatus::Stored(recorded.event.seq),
                ),
                Landing::Unsaved(error) => WriteOutcome::new(
                    recorded
                        .result
                        .unwrap_or_else(|| result_of(&recorded.event, &self.recorder.state().plan)),
                    WriteStatus::Unsaved(error),
                ),
            },
        };
        if *self.recorder.state() != before {
            self.show_stored_plan();
        }
        outcome
    }

    /// A call id that is already recorded (`recorded`, stored or waiting in memory): the
    /// recorded answer with `status` when the arguments are the same, a refusal when they
    /// differ.
    fn repeated(
        &self,
        call: &CallId,
        recorded: &Event,
        command: &Command,
        status: WriteStatus,
    ) -> WriteOutcome {
        let (same, answer) = match command {
            Command::Write(arguments) => {
                let now = execute_plan_write(&self.recorder.state().plan, arguments)
                    .event
                    .and_then(|body| body.submission());
                (now.is_some() && now == recorded.body.submission(), None)
            }
            // The same task call, decided again against the state the recorded one met, makes
            // the same submission, and its result is the first answer, in the tool's shape.
            Command::Task(tool, arguments) => match self.state_before(recorded) {
                Some(before) => {
                    let again = execute_task_tool(&before, *tool, arguments);
                    let same = again.event.as_ref().and_then(EventBody::submission)
                        == recorded.body.submission()
                        && again.event.as_ref().map(std::mem::discriminant)
                            == Some(std::mem::discriminant(&recorded.body));
                    (same, Some(again.result))
                }
                None => (same_task_call(&recorded.body, *tool, arguments), None),
            },
            Command::Start(_) | Command::Mode(_) => (false, None),
        };
        if !same {
            return WriteOutcome::not_recorded(WriteError::CallIdReused(call.clone()));
        }
        let result = answer.unwrap_or_else(|| result_of(recorded, &self.recorder.state().plan));
        WriteOutcome::new(result, status)
    }

    /// The session's state just before `recorded` (from the store), when it can be read.
    fn state_before(&self, recorded: &Event) -> Option<SessionState> {
        let seq = Seq::new(recorded.seq.get().checked_sub(1)?).ok()?;
        self.recorder.log().state_at(&self.id, seq).ok()
    }

    /// The injection text of the current plan (empty when nothing is active).
    pub fn plan_text(&self) -> String {
        injection_text(&self.recorder.state().plan)
    }

    /// `view` with the plan appended as a trailing user message (see [`crate::agent::view::inject_plan`]).
    pub fn inject<M: Clone>(&self, view: &[M], user_message: impl FnOnce(String) -> M) -> Vec<M> {
        crate::agent::view::inject_plan(view, &self.recorder.state().plan, user_message)
    }

    /// Starts a sub-agent session on its own in-memory log. Its plan is empty, invisible to
    /// this session, never stored durably and never written to a plan file; it dies with the
    /// returned value. A whitelist without `plan_write` gives a child with no plan tool.
    ///
    /// # Errors
    /// [`DelegationError::Nested`] when this session is itself a sub-agent.
    pub fn delegate(&self, whitelist: &[&str]) -> Result<PlanSession, DelegationError> {
        if self.is_sub_agent() {
            return Err(DelegationError::Nested);
        }
        let log: Arc<dyn EventLog> = Arc::new(MemoryLog::new());
        let id = SessionId::from_ulid(self.env.new_ulid());
        let kind = Kind::Child {
            plan_tool: whitelist.contains(&PLAN_WRITE),
        };
        let start = SessionStarted {
            origin: Origin::SubAgent {
                parent: self.id.clone(),
            },
            label: None,
            plan: Plan::new(),
            plan_mode: false,
            ids_issued: None,
        };
        let recorder = Recorder::new(log, Arc::clone(&self.env), id.clone(), None, Some(start));
        Ok(Self::with(
            recorder,
            Arc::clone(&self.env),
            id,
            SessionOptions::default(),
            kind,
        ))
    }

    /// **Blocks.** Forks this session at `at` (a seq of its log): a new session, on the same
    /// log, with this session's clock, sinks and plan-mode config, starting from the plan and
    /// mode after `at`. This session is not touched.
    ///
    /// # Errors
    /// Seq out of range (including events still unsaved), or storage errors.
    pub fn fork_at(&self, at: Seq, label: Option<&str>) -> Result<PlanSession, LogError> {
        let mut builder =
            SessionBuilder::with_env(Arc::clone(self.recorder.log()), Arc::clone(&self.env));
        for sink in &self.options.sinks {
            builder = builder.shared_sink(Arc::clone(sink));
        }
        if let Some(config) = &self.options.plan_mode {
            builder = builder.plan_mode(config.clone());
        }
        if let Some(label) = label {
            builder = builder.label(label);
        }
        builder.fork(&self.id, at)
    }

    /// **Blocks.** The plan and mode of this session as they stood after event `at` (time
    /// travel: one lookup on a durable log, whatever the session's length).
    ///
    /// # Errors
    /// Seq out of range, or storage errors.
    pub fn state_at(&self, at: Seq) -> Result<SessionState, LogError> {
        self.recorder.log().state_at(&self.id, at)
    }

    /// **Blocks.** Events `from..=to` of this session's stored log (`to = None`: to the end),
    /// for audit views (see the `planlog-audit` crate).
    ///
    /// # Errors
    /// Storage errors; [`UserError::UnknownSession`](crate::UserError::UnknownSession) before
    /// the session's first event is stored.
    pub fn read(&self, from: Seq, to: Option<Seq>) -> Result<Vec<Event>, LogError> {
        self.recorder.log().read(&self.id, from, to)
    }

    /// **Blocks.** Stores anything a failed append left in memory, then waits until the
    /// sinks have written everything (a plan file written off the reply path is up to date
    /// when `close` returns). Idempotent; the store part is also attempted on drop.
    ///
    /// # Errors
    /// The storage error when unsaved events still cannot be stored (they stay in memory).
    pub fn close(&mut self) -> Result<(), LogError> {
        let stored = if self.recorder.unsaved_len() == 0 {
            Ok(())
        } else {
            self.recorder.flush().map(|()| self.show_stored_plan())
        };
        for sink in &self.options.sinks {
            sink.flush();
        }
        stored
    }
}

impl Drop for PlanSession {
    fn drop(&mut self) {
        if self.recorder.unsaved_len() > 0
            && let Err(error) = self.recorder.flush()
        {
            tracing::warn!(
                session = %self.id, unsaved = self.recorder.unsaved_len(), %error,
                "session dropped with events that storage could not take; they are lost (call close() and handle its error to keep them)"
            );
        }
    }
}

/// The tool result a recorded event stands for (a retried call gets the first answer).
/// Whether `recorded` records this task call: the same arguments refused, or a write of the
/// same task (a create of the same subject; an update of the same task id).
fn same_task_call(recorded: &EventBody, tool: TaskTool, arguments: &str) -> bool {
    let Ok(args) = serde_json::from_str::<serde_json::Value>(arguments) else {
        return matches!(recorded, EventBody::WriteRejected(r) if r.submitted == serde_json::Value::String(arguments.to_owned()));
    };
    match recorded {
        EventBody::WriteRejected(r) => r.submitted == args,
        EventBody::PlanWritten(w) => match parse_task_call(tool, &args) {
            Ok(TaskCall::Create(new)) => {
                matches!(&w.submitted[..], [item] if item.content == new.subject)
            }
            Ok(TaskCall::Update { id, .. }) => w.submitted.first().is_some_and(|i| i.id == id),
            _ => false,
        },
        _ => false,
    }
}

fn result_of(recorded: &Event, current: &Plan) -> ToolResult {
    // The answer as the model got it, when the event keeps it (format 4).
    if let Some(result) = recorded.body.tool_call().and_then(|c| c.result.as_ref())
        && let Some(text) = &result.text
    {
        return ToolResult {
            is_error: result.is_error,
            content: text.clone(),
        };
    }
    match &recorded.body {
        EventBody::PlanWritten(w) => ToolResult {
            is_error: false,
            content: w.plan.to_json(),
        },
        EventBody::WriteRejected(r) => ToolResult {
            is_error: true,
            content: r.message.clone(),
        },
        EventBody::SessionStarted(_)
        | EventBody::ModeSelected(_)
        | EventBody::CheckpointSeen(_)
        | EventBody::SessionDescribed(_)
        | EventBody::ContextCompacted(_)
        | EventBody::PlanRestored(_) => ToolResult {
            is_error: false,
            content: current.to_json(),
        },
    }
}
