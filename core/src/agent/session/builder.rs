//! [`SessionBuilder`]: how a host gets a [`PlanSession`]. One obvious way, with the choices
//! spelled out: `create` a new session, `resume` one that must exist, `open` one that may not
//! exist yet, `fork` one at a seq, or `open_or_fresh` (harness9's fail-open start).

use std::sync::Arc;

use super::recorder::{Call, Command, OnFailure, Recorder};
use super::{Kind, PlanSession, SessionOptions};
use crate::agent::plan_mode::PlanModeConfig;
use crate::agent::sink::PlanSink;
use crate::domain::env::Env;
use crate::domain::error::{LogError, UserError};
use crate::domain::event::{Origin, SessionStarted};
use crate::domain::ids::{Seq, SessionId};
use crate::domain::log::EventLog;
use crate::domain::plan::Plan;
use crate::domain::state::ids_issued_for;

/// Anything a session can keep its log in: an `Arc` of a log (`Arc<RedbLog>`,
/// `Arc<MemoryLog>`, `Arc<dyn EventLog>`), or a log by value.
pub trait IntoSharedLog {
    /// The log, shareable.
    fn into_shared_log(self) -> Arc<dyn EventLog>;
}

impl<L: EventLog + 'static> IntoSharedLog for Arc<L> {
    fn into_shared_log(self) -> Arc<dyn EventLog> {
        self
    }
}

impl IntoSharedLog for Arc<dyn EventLog> {
    fn into_shared_log(self) -> Arc<dyn EventLog> {
        self
    }
}

impl<L: EventLog + 'static> IntoSharedLog for L {
    fn into_shared_log(self) -> Arc<dyn EventLog> {
        Arc::new(self)
    }
}

/// Builds a [`PlanSession`]: the log and the host's clock and id source, then the options,
/// then how to start it. Every way of starting reads the log and may block (see
/// [`PlanSession`]).
///
/// ```
/// # use planlog_core::{MemoryLog, PlanSession, TestEnv};
/// let plan = PlanSession::builder(MemoryLog::new(), TestEnv::default())
///     .label("yaml config")
///     .create()?;
/// assert!(plan.exists());
/// # Ok::<(), planlog_core::LogError>(())
/// ```
#[must_use = "a builder does nothing until create, open, resume, fork or open_or_fresh"]
pub struct SessionBuilder {
    log: Arc<dyn EventLog>,
    env: Arc<dyn Env>,
    options: SessionOptions,
}

impl std::fmt::Debug for SessionBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionBuilder")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl SessionBuilder {
    pub(super) fn new(log: impl IntoSharedLog, env: impl Env + 'static) -> Self {
        Self {
            log: log.into_shared_log(),
            env: Arc::new(env),
            options: SessionOptions::default(),
        }
    }

    /// A builder sharing an already shared clock and id source.
    pub(super) fn with_env(log: Arc<dyn EventLog>, env: Arc<dyn Env>) -> Self {
        Self {
            log,
            env,
            options: SessionOptions::default(),
        }
    }

    /// The label recorded when the session is created (ignored when it exists already).
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.options.label = Some(label.into());
        self
    }

    /// The origin recorded when [`SessionBuilder::open`] creates the session (default
    /// `new`; ignored when it exists already). A host serving a session that another source
    /// also writes creates it as that source would, so both meet in one session: an MCP
    /// server started by Claude Code serves the session Claude Code's hooks record
    /// (`Origin::Import` of `claude-code`, keyed by Claude Code's session id).
    pub fn origin(mut self, origin: Origin) -> Self {
        self.options.origin = Some(origin);
        self
    }

    /// A sink fed with the plan after every write, when the session is resumed or created,
    /// and when another writer's events are seen (the markdown plan file is one). May be
    /// given several times.
    pub fn sink(mut self, sink: impl PlanSink + 'static) -> Self {
        self.options.sinks.push(Arc::new(sink));
        self
    }

    /// A sink already shared with other sessions.
    pub fn shared_sink(mut self, sink: Arc<dyn PlanSink>) -> Self {
        self.options.sinks.push(sink);
        self
    }

    /// Plan mode guidance (the `plan:policy` system-prompt section); without it plan mode
    /// still works but adds no section.
    pub fn plan_mode(mut self, config: PlanModeConfig) -> Self {
        self.options.plan_mode = Some(config);
        self
    }

    /// Creates a new session (a fresh ULID id, origin `new`) and stores its first event now,
    /// so the id exists before it is handed out.
    ///
    /// # Errors
    /// Storage errors (nothing is kept in memory).
    pub fn create(self) -> Result<PlanSession, LogError> {
        let id = SessionId::from_ulid(self.env.new_ulid());
        let start = SessionStarted {
            origin: Origin::New,
            label: self.options.label.clone(),
            plan: Plan::new(),
            plan_mode: false,
            ids_issued: None,
        };
        self.start_now(id, start)
    }

    /// Resumes session `id`, which must exist: its plan and mode come back from the log.
    ///
    /// # Errors
    /// [`UserError::UnknownSession`] when there is no such session (a mistyped id never
    /// starts an empty one); [`UserError::SessionDeleted`] for a deleted (retired) id;
    /// storage errors.
    pub fn resume(self, id: &SessionId) -> Result<PlanSession, LogError> {
        if self.log.head(id)?.is_none() {
            return Err(UserError::UnknownSession(id.clone()).into());
        }
        self.open(id)
    }

    /// Opens session `id`: resumed when it exists, otherwise created (origin `new` unless
    /// [`SessionBuilder::origin`] says otherwise, this id) by its first recorded event, not before: opening and reading write nothing.
    /// Several sessions (here or in other processes) may open the same id; see
    /// [`PlanSession::plan_write`] for how their writes interleave.
    ///
    /// # Errors
    /// [`UserError::SessionDeleted`] for a deleted (retired) id; storage errors.
    pub fn open(self, id: &SessionId) -> Result<PlanSession, LogError> {
        let stored = match self.log.head(id)? {
            Some(head) => Some((head, self.log.state_at(id, head.seq)?)),
            None => None,
        };
        // A resumed session brings its sinks (the plan file) up to date with the log.
        if let Some((head, state)) = &stored
            && !self.options.sinks.is_empty()
        {
            let at = self
                .log
                .read(id, head.seq, Some(head.seq))?
                .first()
                .map_or_else(|| self.env.now(), |e| e.at);
            for sink in &self.options.sinks {
                sink.plan_written(id, &state.plan, at);
            }
        }
        let start = SessionStarted {
            origin: self.options.origin.clone().unwrap_or(Origin::New),
            label: self.options.label.clone(),
            plan: Plan::new(),
            plan_mode: false,
            ids_issued: None,
        };
        let recorder = Recorder::new(
            self.log,
            Arc::clone(&self.env),
            id.clone(),
            stored,
            Some(start),
        );
        Ok(PlanSession::with(
            recorder,
            self.env,
            id.clone(),
            self.options,
            Kind::Main,
        ))
    }

    /// harness9's start: [`SessionBuilder::open`], but a log that cannot be read does not
    /// stop the agent: the session starts empty under a **new** id (the unreadable one is
    /// never written over), a warning is logged, and [`PlanSession::restore_error`] says why.
    /// Never fails. Prefer `open` unless the agent must run on whatever happens to the store.
    pub fn open_or_fresh(self, id: &SessionId) -> PlanSession {
        let (log, env, options) = (
            Arc::clone(&self.log),
            Arc::clone(&self.env),
            self.options.clone(),
        );
        match self.open(id) {
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
                    ids_issued: None,
                };
                let recorder =
                    Recorder::new(log, Arc::clone(&env), fresh.clone(), None, Some(start));
                let mut s = PlanSession::with(recorder, env, fresh, options, Kind::Main);
                s.restore_error = Some(format!(
                    "session {id} could not be read ({error}); this run uses a new, empty session {}",
                    s.id
                ));
                s
            }
        }
    }

    /// Creates a fork of `parent` at `at`: a new session whose first event carries the
    /// parent's plan and mode after `at` and its lineage. The parent is not touched.
    ///
    /// # Errors
    /// Unknown parent, seq out of range, or storage errors.
    pub fn fork(self, parent: &SessionId, at: Seq) -> Result<PlanSession, LogError> {
        let state = self.log.state_at(parent, at)?;
        let id = SessionId::from_ulid(self.env.new_ulid());
        let start = SessionStarted {
            origin: Origin::Fork {
                parent: parent.clone(),
                at,
            },
            label: self.options.label.clone(),
            ids_issued: ids_issued_for(&state, &state.plan),
            plan: state.plan,
            plan_mode: state.plan_mode,
        };
        self.start_now(id, start)
    }

    /// A new session whose first event (`start`) must be stored before it is handed out.
    fn start_now(self, id: SessionId, start: SessionStarted) -> Result<PlanSession, LogError> {
        let recorder = Recorder::new(self.log, Arc::clone(&self.env), id.clone(), None, None);
        let mut session = PlanSession::with(recorder, self.env, id, self.options, Kind::Main);
        session
            .recorder
            .record(Call::new(Command::Start(start)), OnFailure::Refuse)?;
        // The new session's plan (a fork's is its parent's) goes to the sinks at once.
        session.show_stored_plan();
        Ok(session)
    }
}
