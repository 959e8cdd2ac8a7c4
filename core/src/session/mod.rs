//! [`PlanSession`]: everything an agent loop needs from planlog, in one place.
//!
//! - `open` restores by replay (degrading to an empty plan, flagged, when the log cannot be
//!   read); `plan_write` decides, appends (the checkpoint) *before* returning, applies, feeds
//!   sinks; `close` flushes anything a failed append left in memory.
//! - `inject` adds the plan to the outbound view; `delegate` gives a sub-agent its own
//!   in-memory session; plan mode is selected, applied at step boundaries and left through
//!   `exit_plan_mode`.
//!
//! Submodules: `view` (injection), `auto_continue`, `plan_mode`.

pub mod auto_continue;
pub mod plan_mode;
pub mod view;

use std::sync::Arc;

use crate::env::Env;
use crate::error::LogError;
use crate::event::{Event, EventBody, EventDraft, ModeSelected, Origin, Placement, SessionStarted};
use crate::ids::{CallId, Seq, SessionId};
use crate::log::{Appended, EventLog};
use crate::memory_log::MemoryLog;
use crate::outbox::Outbox;
use crate::plan::Plan;
use crate::render::format_plan;
use crate::sink::PlanSink;
use crate::state::{SessionState, apply};
use crate::store::PlanStore;
use crate::tool::{PLAN_WRITE, ToolResult, ToolSpec, execute_plan_write};

use plan_mode::{
    CommandReply, ExitResult, ModeView, NOTICE_ENTERED, NOTICE_LEFT, PlanCommand, PlanModeConfig,
    PlanReview, ReviewOutcome, SetOutcome, exit_plan_mode_spec, parse_exit_arguments, reply_for,
};

/// How to open a session.
#[derive(Clone, Default)]
pub struct SessionOptions {
    /// Label recorded when the session is created.
    pub label: Option<String>,
    /// Fed after every successful write (the markdown plan file).
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

/// What the host does at a step boundary (before each model request).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StepStart {
    /// A notice to add as a user message before the request, if the mode changed under the
    /// model's feet.
    pub notice: Option<String>,
}

/// One agent session's plan: restored from, and checkpointed to, its event log.
pub struct PlanSession {
    log: Arc<dyn EventLog>,
    env: Arc<dyn Env>,
    id: SessionId,
    state: SessionState,
    store: Arc<PlanStore>,
    head: Option<Event>,
    outbox: Outbox,
    options: SessionOptions,
    kind: Kind,
    restore_error: Option<String>,
    // Plan mode: a selection waiting for the next step boundary, whether it came from the
    // user (and so deserves a notice), whether a turn is open, and what the last request the
    // model saw described.
    pending_mode: Option<(bool, bool)>,
    notice_due: bool,
    turn_open: bool,
    last_request_mode: Option<bool>,
}

impl std::fmt::Debug for PlanSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanSession")
            .field("id", &self.id)
            .field("state", &self.state)
            .field("unsaved", &self.outbox.len())
            .finish_non_exhaustive()
    }
}

impl PlanSession {
    /// Opens session `id` on `log` like [`PlanSession::open`], but reports a log that cannot
    /// be read instead of degrading (for hosts that must not quietly start another session,
    /// such as the CLI and the MCP server).
    ///
    /// # Errors
    /// The storage error of reading the session's log.
    pub fn try_open(
        log: Arc<dyn EventLog>,
        id: SessionId,
        env: Arc<dyn Env>,
        options: SessionOptions,
    ) -> Result<Self, LogError> {
        let Some(last) = log.last(&id)? else {
            let state = SessionState::default();
            return Ok(Self::start(
                log,
                env,
                id,
                options,
                Kind::Main,
                Origin::New,
                state,
            ));
        };
        let state = log.state_at(&id, last.seq)?;
        let mut session = Self::new(log, env, id, options, Kind::Main);
        session.store.replace(state.plan.clone());
        session.state = state;
        session.head = Some(last);
        Ok(session)
    }

    /// Opens session `id` on `log`: restores it by replay when it exists, creates it (origin
    /// `new`) when it does not. If the log cannot be read, the session degrades: it starts a
    /// fresh session with an empty plan (so the unreadable one is never written over), logs a
    /// warning, and reports the cause through [`PlanSession::restore_error`]. Never fails.
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
                let mut options = options;
                options.label = Some(format!("started empty: session {id} could not be read"));
                let mut s = Self::start(
                    log,
                    env,
                    fresh,
                    options,
                    Kind::Main,
                    Origin::New,
                    SessionState::default(),
                );
                s.restore_error = Some(format!(
                    "session {id} could not be read ({error}); this run uses a new, empty session {}",
                    s.id
                ));
                s
            }
        }
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
        let origin = Origin::Fork {
            parent: parent.clone(),
            at,
        };
        let mut session = Self::start(log, env, id, options, Kind::Main, origin, state);
        // A fork must exist before its id is handed out: no fail-open here.
        session.outbox.flush(&*session.log)?;
        Ok(session)
    }

    fn new(
        log: Arc<dyn EventLog>,
        env: Arc<dyn Env>,
        id: SessionId,
        options: SessionOptions,
        kind: Kind,
    ) -> Self {
        Self {
            log,
            env,
            id,
            state: SessionState::default(),
            store: Arc::new(PlanStore::default()),
            head: None,
            outbox: Outbox::new(),
            options,
            kind,
            restore_error: None,
            pending_mode: None,
            notice_due: false,
            turn_open: false,
            last_request_mode: None,
        }
    }

    fn start(
        log: Arc<dyn EventLog>,
        env: Arc<dyn Env>,
        id: SessionId,
        options: SessionOptions,
        kind: Kind,
        origin: Origin,
        state: SessionState,
    ) -> Self {
        let body = EventBody::SessionStarted(SessionStarted {
            origin,
            label: options.label.clone(),
            plan: state.plan.clone(),
            plan_mode: state.plan_mode,
        });
        let mut session = Self::new(log, env, id, options, kind);
        session.record(EventDraft::new(body));
        session
    }

    /// Seals `draft` after the head and appends it through the outbox (fail-open), then
    /// applies it. Returns the recorded event when the log already had this call.
    fn record(&mut self, draft: EventDraft) -> Option<Event> {
        let event = self.seal(draft);
        if let Ok(Appended::Duplicate(recorded)) = self.outbox.append(&*self.log, event.clone()) {
            return Some(recorded);
        }
        self.accept(event);
        None
    }

    fn seal(&self, draft: EventDraft) -> Event {
        let placement = Placement::after(
            self.head.as_ref(),
            self.id.clone(),
            self.env.new_ulid(),
            self.env.now(),
        );
        Event::seal(placement, draft)
    }

    fn accept(&mut self, event: Event) {
        self.state = apply(std::mem::take(&mut self.state), &event.body);
        self.store.replace(self.state.plan.clone());
        self.head = Some(event);
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
        self.state.plan.clone()
    }

    /// The folded state (plan and committed plan mode).
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// A shared handle to the current plan, for UI threads.
    pub fn plan_store(&self) -> Arc<PlanStore> {
        Arc::clone(&self.store)
    }

    /// The last event (stored or waiting in memory).
    pub fn head(&self) -> Option<&Event> {
        self.head.as_ref()
    }

    /// Events appended in memory but not yet stored (after a storage failure).
    pub fn unsaved(&self) -> usize {
        self.outbox.len()
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
        if self.state.plan_mode {
            tools.push(exit_plan_mode_spec());
        }
        tools
    }

    /// Runs one plan_write call: decides it against the current plan, appends the event (the
    /// checkpoint) before returning, applies it, feeds the sinks, and returns the tool result
    /// for the model. A rejected call is recorded as `write_rejected` and returned as an
    /// error result. A call id already recorded returns the recorded result, applying nothing.
    /// If storage fails the session goes on in memory (see [`PlanSession::unsaved`]).
    pub fn plan_write(
        &mut self,
        call_id: Option<&str>,
        turn: Option<u64>,
        arguments: &str,
    ) -> ToolResult {
        if !self.has_plan_tool() {
            return ToolResult {
                is_error: true,
                content: "Unknown tool: plan_write is not available to this agent.".to_owned(),
            };
        }
        let call_id = call_id.and_then(|c| match CallId::new(c) {
            Ok(c) => Some(c),
            Err(error) => {
                tracing::warn!(session = %self.id, %error, "ignoring an unusable tool call id; the call is not idempotent");
                None
            }
        });
        if let Some(call) = &call_id
            && let Some(recorded) = self
                .outbox
                .pending()
                .find(|e| e.call_id.as_ref() == Some(call))
        {
            return result_of(recorded, &self.state.plan);
        }
        let execution = execute_plan_write(&self.state.plan, arguments);
        let Some(body) = execution.event else {
            return execution.result;
        };
        let wrote = matches!(body, EventBody::PlanWritten(_));
        if let Some(recorded) = self.record(EventDraft {
            turn,
            call_id,
            body,
        }) {
            return result_of(&recorded, &self.state.plan);
        }
        if wrote && matches!(self.kind, Kind::Main) {
            let at = self.head.as_ref().map_or_else(|| self.env.now(), |e| e.at);
            for sink in &self.options.sinks {
                sink.plan_written(&self.id, &self.state.plan, at);
            }
        }
        execution.result
    }

    /// The injection text of the current plan (empty when nothing is active).
    pub fn plan_text(&self) -> String {
        format_plan(&self.state.plan)
    }

    /// `view` with the plan appended as a trailing user message (see [`view::inject_plan`]).
    pub fn inject<M: Clone>(&self, view: &[M], user_message: impl FnOnce(String) -> M) -> Vec<M> {
        view::inject_plan(view, &self.state.plan, user_message)
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
        let options = SessionOptions {
            label: None,
            sinks: Vec::new(),
            plan_mode: None,
        };
        let origin = Origin::SubAgent {
            parent: self.id.clone(),
        };
        Ok(Self::start(
            log,
            Arc::clone(&self.env),
            id,
            options,
            kind,
            origin,
            SessionState::default(),
        ))
    }

    /// Stores anything a failed append left in memory. Idempotent; also attempted on drop.
    ///
    /// # Errors
    /// The storage error when unsaved events still cannot be stored (they stay in memory).
    pub fn close(&mut self) -> Result<(), LogError> {
        self.outbox.flush(&*self.log)
    }

    // ---- plan mode ----------------------------------------------------------------------

    /// The committed plan mode and any selection waiting for the next step boundary.
    pub fn plan_mode(&self) -> ModeView {
        ModeView {
            active: self.state.plan_mode,
            pending: self.pending_mode.map(|(m, _)| m),
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
    /// a turn it waits for the next step boundary.
    pub fn set_plan_mode(&mut self, active: bool) -> SetOutcome {
        let effective = self.pending_mode.map_or(self.state.plan_mode, |(m, _)| m);
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
            self.pending_mode = Some((active, true));
            return SetOutcome::Queued;
        }
        if self.append_mode(active) {
            self.notice_due = true;
            SetOutcome::Committed
        } else {
            // The store is failing: keep the selection for the next step boundary.
            self.pending_mode = Some((active, true));
            SetOutcome::Queued
        }
    }

    /// Appends `mode_selected` now, without queueing it in the outbox: on failure the
    /// selection stays pending instead (deepseek-harness semantics).
    fn append_mode(&mut self, active: bool) -> bool {
        if self.outbox.flush(&*self.log).is_err() {
            return false;
        }
        let event = self.seal(EventDraft::new(EventBody::ModeSelected(ModeSelected {
            active,
        })));
        match self.outbox.store_now(&*self.log, &event) {
            Ok(_) => {
                self.accept(event);
                true
            }
            Err(error) => {
                tracing::warn!(session = %self.id, %error, "could not record the plan mode selection; it stays pending");
                false
            }
        }
    }

    /// The host reports a step boundary: the next model request is about to be built. A
    /// pending selection is appended first (kept pending if that fails), and a notice is
    /// returned when the model's last request described the other mode.
    pub fn step_boundary(&mut self) -> StepStart {
        if let Some((active, from_user)) = self.pending_mode
            && self.append_mode(active)
        {
            self.pending_mode = None;
            self.notice_due |= from_user;
        }
        let mode = self.state.plan_mode;
        let notice = (self.notice_due && self.last_request_mode == Some(!mode))
            .then(|| if mode { NOTICE_ENTERED } else { NOTICE_LEFT }.to_owned());
        self.notice_due = false;
        self.last_request_mode = Some(mode);
        StepStart { notice }
    }

    /// The `plan:policy` system-prompt section while plan mode is active.
    pub fn policy_section(&self) -> Option<&str> {
        match (&self.options.plan_mode, self.state.plan_mode) {
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
        if !self.state.plan_mode {
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
                self.pending_mode = Some((false, false));
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
        if !self.outbox.is_empty()
            && let Err(error) = self.outbox.flush(&*self.log)
        {
            tracing::warn!(
                session = %self.id, unsaved = self.outbox.len(), %error,
                "session dropped with events that could not be stored; they are lost"
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
