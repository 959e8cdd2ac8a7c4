//! [`PlanSession`]: everything an agent loop needs from planlog, in one place.
//!
//! - `open` restores by replay (degrading to an empty plan, flagged, when the log cannot be
//!   read); `plan_write` catches up with other writers, decides, appends (the checkpoint)
//!   *before* returning, decides again after a lost race, feeds sinks; `close` stores
//!   anything a storage failure left in memory.
//! - `inject` adds the plan to the outbound view; `delegate` gives a sub-agent its own
//!   in-memory session; plan mode is selected, applied at request boundaries and left through
//!   `exit_plan_mode`.
//!
//! Submodules: `recorder` (the write path: catch-up, retries, fail-open), `view`
//! (injection), `auto_continue`, `plan_mode`.

mod outcome;
mod recorder;

use std::sync::Arc;

use crate::agent::render::injection_text;
use crate::agent::shared_plan::SharedPlan;
use crate::agent::sink::PlanSink;
use crate::agent::tool::{PLAN_WRITE, ToolSpec};
use crate::domain::env::Env;
use crate::domain::error::LogError;
use crate::domain::event::{Event, EventBody, Head, Origin, SessionStarted};
use crate::domain::ids::{CallId, Seq, SessionId};
use crate::domain::log::EventLog;
use crate::domain::memory_log::MemoryLog;
use crate::domain::plan::Plan;
use crate::domain::state::SessionState;
use crate::domain::write::{ToolResult, execute_plan_write};

pub use outcome::{WriteError, WriteOutcome, WriteStatus};
use recorder::{Call, Command, Landing, OnFailure, Recorder};

use crate::agent::plan_mode::{
    CommandReply, ExitResult, ModeView, NOTICE_ENTERED, NOTICE_LEFT, PlanCommand, PlanModeConfig,
    PlanReview, ReviewOutcome, SetOutcome, exit_plan_mode_spec, parse_exit_arguments, reply_for,
};

/// How to open a session.
#[derive(Clone, Default)]
pub struct SessionOptions {
    /// Label recorded when the session is created.
    pub label: Option<String>,
    /// Fed with the plan after every successful write, when a session is resumed or created
    /// (a fork starts with its parent's plan), and when another writer's events are seen
    /// (the markdown plan file).
    pub sinks: Vec<Arc<dyn PlanSink>>,
    /// Plan mode guidance; without it plan mode still works but adds no prompt section.
    pub plan_mode: Option<PlanModeConfig>,
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

/// One agent session's plan: restored from, and checkpointed to, its event log.
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
    /// Opens session `id` on `log` like [`PlanSession::open`], but reports a log that cannot
    /// be read instead of degrading (for hosts that must not quietly start another session,
    /// such as the CLI and the MCP server). A session that does not exist yet is created
    /// (origin `new`) when its first event is recorded, not before.
    ///
    /// # Errors
    /// The storage error of reading the session's log; [`UserError::SessionDeleted`] for a
    /// deleted (retired) id.
    pub fn try_open(
        log: Arc<dyn EventLog>,
        id: SessionId,
        env: Arc<dyn Env>,
        options: SessionOptions,
    ) -> Result<Self, LogError> {
        let stored = match log.head(&id)? {
            Some(head) => Some((head, log.state_at(&id, head.seq)?)),
            None => None,
        };
        let start = SessionStarted {
            origin: Origin::New,
            label: options.label.clone(),
            plan: Plan::new(),
            plan_mode: false,
        };
        // A resumed session brings its sinks (the plan file) up to date with the log.
        if let Some((head, state)) = &stored
            && !options.sinks.is_empty()
        {
            let at = log
                .read(&id, head.seq, Some(head.seq))?
                .first()
                .map_or_else(|| env.now(), |e| e.at);
            for sink in &options.sinks {
                sink.plan_written(&id, &state.plan, at);
            }
        }
        let recorder = Recorder::new(log, Arc::clone(&env), id.clone(), stored, Some(start));
        Ok(Self::with(recorder, env, id, options, Kind::Main))
    }

    /// Opens session `id` on `log`: restores it by replay when it exists; when it does not,
    /// it is created (origin `new`) with its first recorded event. If the log cannot be read,
    /// the session degrades: it starts a fresh session with an empty plan (so the unreadable
    /// one is never written over), logs a warning, and reports the cause through
    /// [`PlanSession::restore_error`]. Never fails.
    pub fn open(
        log: Arc<dyn EventLog>,
        id: SessionId,
        env: Arc<dyn Env>,
        options: SessionOptions,
    ) -> Self {
        match Self::try_open(
            Arc::clone(&log),
            id.clone(),
            Arc::clone(&env),
            options.clone(),
        ) {
            Ok(session) => session,
            Err(error) => {
                let fresh = SessionId::from_ulid(env.new_ulid());
                tracing::warn!(
                    session = %id, new_session = %fresh, %error,
                    "cannot read the session's log; going on with an empty plan in a new session"
                );
                let start = SessionStarted {
                    origin: Origin::New,
                    label: Some(format!("started empty: session {id} could not be read")),
                    plan: Plan::new(),
                    plan_mode: false,
                };
                let recorder =
                    Recorder::new(log, Arc::clone(&env), fresh.clone(), None, Some(start));
                let mut s = Self::with(recorder, env, fresh, options, Kind::Main);
                s.restore_error = Some(format!(
                    "session {id} could not be read ({error}); this run uses a new, empty session {}",
                    s.id
                ));
                s
            }
        }
    }

    /// Creates a new session (fresh id, origin `new`) and stores its first event now, so the
    /// id exists before it is handed out.
    ///
    /// # Errors
    /// Storage errors (nothing is kept in memory).
    pub fn create(
        log: Arc<dyn EventLog>,
        env: Arc<dyn Env>,
        options: SessionOptions,
    ) -> Result<Self, LogError> {
        let id = SessionId::from_ulid(env.new_ulid());
        let start = SessionStarted {
            origin: Origin::New,
            label: options.label.clone(),
            plan: Plan::new(),
            plan_mode: false,
        };
        Self::start_now(log, env, id, options, Kind::Main, start)
    }

    /// Creates a fork of `parent` at `at`: a new session whose first event carries the
    /// parent's state after `at` and its lineage. The parent is not touched.
    ///
    /// # Errors
    /// Unknown parent, seq out of range, or storage errors.
    pub fn fork(
        log: Arc<dyn EventLog>,
        parent: &SessionId,
        at: Seq,
        env: Arc<dyn Env>,
        options: SessionOptions,
    ) -> Result<Self, LogError> {
        let state = log.state_at(parent, at)?;
        let id = SessionId::from_ulid(env.new_ulid());
        let start = SessionStarted {
            origin: Origin::Fork {
                parent: parent.clone(),
                at,
            },
            label: options.label.clone(),
            plan: state.plan,
            plan_mode: state.plan_mode,
        };
        Self::start_now(log, env, id, options, Kind::Main, start)
    }

    /// A new session whose first event (`start`) must be stored before it is handed out.
    fn start_now(
        log: Arc<dyn EventLog>,
        env: Arc<dyn Env>,
        id: SessionId,
        options: SessionOptions,
        kind: Kind,
        start: SessionStarted,
    ) -> Result<Self, LogError> {
        let recorder = Recorder::new(log, Arc::clone(&env), id.clone(), None, None);
        let mut session = Self::with(recorder, env, id, options, kind);
        session
            .recorder
            .record(Call::new(Command::Start(start)), OnFailure::Refuse)?;
        // The new session's plan (a fork's is its parent's) goes to the sinks at once.
        session.show_stored_plan();
        Ok(session)
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
    pub fn plan_store(&self) -> Arc<SharedPlan> {
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

    /// Catches up with events other writers appended (and stores anything a storage failure
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
        let plan = self.recorder.state().plan.clone();
        self.store.replace(plan.clone());
        if matches!(self.kind, Kind::Main) && self.recorder.unsaved_len() == 0 {
            let at = self.recorder.stored_at().unwrap_or_else(|| self.env.now());
            for sink in &self.options.sinks {
                sink.plan_written(&self.id, &plan, at);
            }
        }
    }

    /// Runs one plan_write call: catches up with other writers, decides the call against the
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
            return self.repeated(call, &waiting, arguments, WriteStatus::Unsaved(error));
        }
        let before = self.recorder.state().clone();
        let recorded = self.recorder.record(
            Call {
                command: Command::Write(arguments.to_owned()),
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
                        arguments,
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
        arguments: &str,
        status: WriteStatus,
    ) -> WriteOutcome {
        let now = execute_plan_write(&self.recorder.state().plan, arguments)
            .event
            .and_then(|body| body.submission());
        if now.is_none() || now != recorded.body.submission() {
            return WriteOutcome::not_recorded(WriteError::CallIdReused(call.clone()));
        }
        WriteOutcome::new(result_of(recorded, &self.recorder.state().plan), status)
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

    /// Stores anything a failed append left in memory. Idempotent; also attempted on drop.
    ///
    /// # Errors
    /// The storage error when unsaved events still cannot be stored (they stay in memory).
    pub fn close(&mut self) -> Result<(), LogError> {
        if self.recorder.unsaved_len() == 0 {
            return Ok(());
        }
        self.recorder.flush()?;
        self.show_stored_plan();
        Ok(())
    }

    // ---- plan mode ----------------------------------------------------------------------

    /// The committed plan mode and any selection waiting for the next request boundary.
    pub fn plan_mode(&self) -> ModeView {
        ModeView {
            active: self.state().plan_mode,
            pending: self.pending_mode.map(|p| p.active),
        }
    }

    /// The host reports that a turn opened (a user message started the agent).
    pub fn turn_opened(&mut self) {
        self.turn_open = true;
    }

    /// The host reports that the turn ended.
    pub fn turn_closed(&mut self) {
        self.turn_open = false;
    }

    /// Selects plan mode on or off (a user action). Between turns it is appended now; during
    /// a turn it waits for the next request boundary.
    pub fn set_plan_mode(&mut self, active: bool) -> SetOutcome {
        let effective = self
            .pending_mode
            .map_or(self.state().plan_mode, |p| p.active);
        if effective == active {
            return SetOutcome::Noop;
        }
        if self.pending_mode.is_some() {
            // The pending selection is the opposite of `active`, and the logged state already
            // equals `active`: withdraw it.
            self.pending_mode = None;
            return SetOutcome::Cancelled;
        }
        if self.turn_open {
            self.pending_mode = Some(Selection {
                active,
                by_user: true,
            });
            return SetOutcome::Queued;
        }
        if self.append_mode(active) {
            self.notice_due = true;
            SetOutcome::Committed
        } else {
            // The store is failing: keep the selection for the next request boundary.
            self.pending_mode = Some(Selection {
                active,
                by_user: true,
            });
            SetOutcome::Queued
        }
    }

    /// Appends `mode_selected` now (after anything unsaved), never keeping it in memory: on
    /// failure the selection stays pending instead (deepseek-harness semantics).
    fn append_mode(&mut self, active: bool) -> bool {
        match self
            .recorder
            .record(Call::new(Command::Mode(active)), OnFailure::Refuse)
        {
            Ok(_) => {
                self.store.replace(self.recorder.state().plan.clone());
                true
            }
            Err(error) => {
                tracing::warn!(session = %self.id, %error, "could not record the plan mode selection; it stays pending");
                false
            }
        }
    }

    /// The host reports a request boundary: the next model request is about to be built. The
    /// session catches up with other writers (a failure is logged; the session goes on with
    /// what it knows), a pending selection is appended (kept pending if that fails), and a
    /// notice is returned when the model's last request described the other mode.
    pub fn before_request(&mut self) -> RequestStart {
        if let Err(error) = self.refresh() {
            tracing::warn!(session = %self.id, %error, "could not catch up with the log at a request boundary; the plan shown may be stale");
        }
        if let Some(Selection { active, by_user }) = self.pending_mode
            && self.append_mode(active)
        {
            self.pending_mode = None;
            self.notice_due |= by_user;
        }
        let mode = self.state().plan_mode;
        let notice = (self.notice_due && self.last_request_mode == Some(!mode))
            .then(|| if mode { NOTICE_ENTERED } else { NOTICE_LEFT }.to_owned());
        self.notice_due = false;
        self.last_request_mode = Some(mode);
        RequestStart { notice }
    }

    /// The `plan:policy` system-prompt section while plan mode is active.
    pub fn policy_section(&self) -> Option<&str> {
        match (&self.options.plan_mode, self.state().plan_mode) {
            (Some(config), true) => Some(config.section()),
            _ => None,
        }
    }

    /// Runs an `exit_plan_mode` call: only while plan mode is active; checks the markdown
    /// heading; asks the user through `review`. Approve leaves plan mode at the next step
    /// boundary (silently); keep-planning fails the call with the feedback; a dismissed review
    /// returns `{"approved": false}` and ends the turn; no channel fails the call.
    pub fn exit_plan_mode(&mut self, arguments: &str, review: &mut dyn PlanReview) -> ExitResult {
        let error = |content: String| ExitResult {
            result: ToolResult {
                is_error: true,
                content,
            },
            end_turn: false,
        };
        if !self.state().plan_mode {
            return error(
                "Unknown tool: exit_plan_mode is only available in plan mode.".to_owned(),
            );
        }
        let plan = match parse_exit_arguments(arguments) {
            Ok(plan) => plan,
            Err(message) => return error(message),
        };
        match review.review(&plan) {
            ReviewOutcome::Approve => {
                self.pending_mode = Some(Selection {
                    active: false,
                    by_user: false,
                });
                ExitResult {
                    result: ToolResult { is_error: false, content: r#"{"approved":true}"#.to_owned() },
                    end_turn: false,
                }
            }
            ReviewOutcome::KeepPlanning(feedback) => error(format!(
                "The user wants you to keep planning. Their feedback: {feedback}\nRevise the plan and present it again with exit_plan_mode."
            )),
            ReviewOutcome::Dismissed => ExitResult {
                result: ToolResult { is_error: false, content: r#"{"approved":false}"#.to_owned() },
                end_turn: true,
            },
            ReviewOutcome::NoChannel => error(
                "There is no way to show the plan to the user for review, so plan mode stays on. Tell the user the plan is ready in your reply instead."
                    .to_owned(),
            ),
        }
    }

    /// Runs a `/plan` command.
    pub fn run_plan_command(&mut self, command: PlanCommand) -> CommandReply {
        match command {
            PlanCommand::Enter => CommandReply {
                reply: reply_for(true, self.set_plan_mode(true)),
                steer: None,
            },
            PlanCommand::Off => CommandReply {
                reply: reply_for(false, self.set_plan_mode(false)),
                steer: None,
            },
            PlanCommand::EnterWith(message) => CommandReply {
                reply: reply_for(true, self.set_plan_mode(true)),
                steer: Some(message),
            },
        }
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
fn result_of(recorded: &Event, current: &Plan) -> ToolResult {
    match &recorded.body {
        EventBody::PlanWritten(w) => ToolResult {
            is_error: false,
            content: w.plan.to_json(),
        },
        EventBody::WriteRejected(r) => ToolResult {
            is_error: true,
            content: r.message.clone(),
        },
        EventBody::SessionStarted(_) | EventBody::ModeSelected(_) => ToolResult {
            is_error: false,
            content: current.to_json(),
        },
    }
}
