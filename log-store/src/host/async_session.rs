//! [`AsyncPlanSession`]: a [`PlanSession`] for async hosts.
//!
//! The session lives on a thread of its own and every call is sent there and answered by a
//! future: the blocking work (an append's fsync, opening the store, catching up) never runs
//! on the async runtime's threads, and the session is never held across an `.await`, so a
//! human taking minutes over a plan review locks nothing. No runtime dependency: the futures
//! are one-shot channels that any executor can await.

use std::sync::Arc;
use std::sync::mpsc;

use futures_channel::oneshot;
use planlog_core::plan_mode::{ExitResult, ModeView, PendingReview, ReviewOutcome, SetOutcome};
use planlog_core::render::inject_plan;
use planlog_core::{
    DelegationError, LogError, Plan, PlanSession, RequestStart, Seq, SessionBuilder, SessionId,
    SessionState, SharedPlan, ToolSpec, WriteOutcome,
};

type Job = Box<dyn FnOnce(&mut PlanSession) + Send>;

/// The session's thread stopped (a call panicked); this handle can do nothing more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the plan session's thread has stopped (a call panicked); open the session again")]
pub struct SessionGone;

/// Why an [`AsyncPlanSession`] could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The log refused (see [`SessionBuilder`]'s methods).
    #[error(transparent)]
    Log(#[from] LogError),
    /// Starting panicked.
    #[error(transparent)]
    Gone(#[from] SessionGone),
}

/// A [`PlanSession`] on a thread of its own, driven with `async` calls. Cheap to clone: all
/// clones drive the same session, one call at a time, in the order they arrive.
///
/// When the last clone is dropped the thread closes the session (storing anything unsaved,
/// with a warning if it cannot) and ends.
///
/// `examples/async_host.rs`, run as a test:
///
/// ```
#[doc = include_str!("../../examples/async_host.rs")]
/// ```
#[derive(Clone)]
pub struct AsyncPlanSession {
    jobs: mpsc::Sender<Job>,
    id: SessionId,
    shared: Arc<SharedPlan>,
}

impl std::fmt::Debug for AsyncPlanSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncPlanSession")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl AsyncPlanSession {
    /// Runs `start` (e.g. `move || builder.open(&id)`) on a new thread and serves the session
    /// there.
    async fn spawn(
        start: impl FnOnce() -> Result<PlanSession, LogError> + Send + 'static,
    ) -> Result<Self, StartError> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (ready, started) = oneshot::channel();
        std::thread::Builder::new()
            .name("planlog-session".to_owned())
            .spawn(move || {
                let mut session = match start() {
                    Ok(session) => session,
                    Err(error) => {
                        let _ = ready.send(Err(error));
                        return;
                    }
                };
                let _ = ready.send(Ok((session.id().clone(), session.shared_plan())));
                while let Ok(job) = inbox.recv() {
                    // A panicking call loses its own answer, not the session.
                    // Helper threads woken by the call wake once its answer is out.
                    let call = std::panic::AssertUnwindSafe(|| {
                        crate::wake_later::after_answer(|| job(&mut session));
                    });
                    if std::panic::catch_unwind(call).is_err() {
                        tracing::warn!(session = %session.id(), "a plan session call panicked; its caller gets SessionGone");
                    }
                }
                if let Err(error) = session.close() {
                    tracing::warn!(session = %session.id(), %error, "closing the plan session could not store everything");
                }
            })
            .map_err(|_| SessionGone)?;
        let (id, shared) = started.await.map_err(|_| SessionGone)??;
        Ok(Self { jobs, id, shared })
    }

    /// Creates a new session (see [`SessionBuilder::create`]).
    ///
    /// # Errors
    /// As `create`, or [`StartError::Gone`].
    pub async fn create(builder: SessionBuilder) -> Result<Self, StartError> {
        Self::spawn(move || builder.create()).await
    }

    /// Opens session `id`, created by its first write if new (see [`SessionBuilder::open`]).
    ///
    /// # Errors
    /// As `open`, or [`StartError::Gone`].
    pub async fn open(builder: SessionBuilder, id: &SessionId) -> Result<Self, StartError> {
        let id = id.clone();
        Self::spawn(move || builder.open(&id)).await
    }

    /// Resumes session `id`, which must exist (see [`SessionBuilder::resume`]).
    ///
    /// # Errors
    /// As `resume`, or [`StartError::Gone`].
    pub async fn resume(builder: SessionBuilder, id: &SessionId) -> Result<Self, StartError> {
        let id = id.clone();
        Self::spawn(move || builder.resume(&id)).await
    }

    /// Forks `parent` at `at` (see [`SessionBuilder::fork`]).
    ///
    /// # Errors
    /// As `fork`, or [`StartError::Gone`].
    pub async fn fork(
        builder: SessionBuilder,
        parent: &SessionId,
        at: Seq,
    ) -> Result<Self, StartError> {
        let parent = parent.clone();
        Self::spawn(move || builder.fork(&parent, at)).await
    }

    /// Serves an already started session on a thread of its own.
    ///
    /// # Errors
    /// [`StartError::Gone`] when the thread cannot be started.
    pub async fn serve(session: PlanSession) -> Result<Self, StartError> {
        Self::spawn(move || Ok(session)).await
    }

    /// Runs `f` on the session's thread and returns its answer.
    ///
    /// # Errors
    /// [`SessionGone`] when the thread has stopped or `f` panicked.
    pub async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut PlanSession) -> R + Send + 'static,
    ) -> Result<R, SessionGone> {
        let (answer, answered) = oneshot::channel();
        self.jobs
            .send(Box::new(move |session: &mut PlanSession| {
                let _ = answer.send(f(session));
            }))
            .map_err(|_| SessionGone)?;
        answered.await.map_err(|_| SessionGone)
    }

    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// A copy of the current plan (no round trip to the session's thread).
    pub fn plan(&self) -> Plan {
        self.shared.read()
    }

    /// The injection text of the current plan (empty when nothing is active).
    pub fn plan_text(&self) -> String {
        self.shared.injection_text()
    }

    /// `view` with the plan appended as a trailing user message (see
    /// [`PlanSession::inject`]); no round trip to the session's thread.
    pub fn inject<M: Clone>(&self, view: &[M], user_message: impl FnOnce(String) -> M) -> Vec<M> {
        inject_plan(view, &self.shared.read(), user_message)
    }

    /// See [`PlanSession::plan_write`].
    ///
    /// # Errors
    /// [`SessionGone`].
    pub async fn plan_write(
        &self,
        call_id: Option<&str>,
        turn: Option<u64>,
        arguments: &str,
    ) -> Result<WriteOutcome, SessionGone> {
        let (call_id, arguments) = (call_id.map(str::to_owned), arguments.to_owned());
        self.call(move |s| s.plan_write(call_id.as_deref(), turn, &arguments))
            .await
    }

    /// See [`PlanSession::task_call`].
    ///
    /// # Errors
    /// [`SessionGone`].
    pub async fn task_call(
        &self,
        call_id: Option<&str>,
        turn: Option<u64>,
        tool: planlog_core::tasks::TaskTool,
        arguments: &str,
    ) -> Result<WriteOutcome, SessionGone> {
        let (call_id, arguments) = (call_id.map(str::to_owned), arguments.to_owned());
        self.call(move |s| s.task_call(call_id.as_deref(), turn, tool, &arguments))
            .await
    }

    /// See [`PlanSession::tools`].
    ///
    /// # Errors
    /// [`SessionGone`].
    pub async fn tools(&self) -> Result<Vec<ToolSpec>, SessionGone> {
        self.call(|s| s.tools()).await
    }

    /// See [`PlanSession::refresh`].
    ///
    /// # Errors
    /// [`SessionGone`]; the inner result as `refresh`.
    pub async fn refresh(&self) -> Result<Result<bool, LogError>, SessionGone> {
        self.call(PlanSession::refresh).await
    }

    /// See [`PlanSession::before_request`].
    ///
    /// # Errors
    /// [`SessionGone`].
    pub async fn before_request(&self) -> Result<RequestStart, SessionGone> {
        self.call(PlanSession::before_request).await
    }

    /// See [`PlanSession::turn_opened`].
    ///
    /// # Errors
    /// [`SessionGone`].
    pub async fn turn_opened(&self) -> Result<(), SessionGone> {
        self.call(PlanSession::turn_opened).await
    }

    /// See [`PlanSession::turn_closed`].
    ///
    /// # Errors
    /// [`SessionGone`].
    pub async fn turn_closed(&self) -> Result<(), SessionGone> {
        self.call(PlanSession::turn_closed).await
    }

    /// See [`PlanSession::plan_mode`].
    ///
    /// # Errors
    /// [`SessionGone`].
    pub async fn plan_mode(&self) -> Result<ModeView, SessionGone> {
        self.call(|s| s.plan_mode()).await
    }

    /// See [`PlanSession::set_plan_mode`].
    ///
    /// # Errors
    /// [`SessionGone`].
    pub async fn set_plan_mode(&self, active: bool) -> Result<SetOutcome, SessionGone> {
        self.call(move |s| s.set_plan_mode(active)).await
    }

    /// See [`PlanSession::begin_review`]. Nothing is held while the user decides:
    /// `examples/fork_and_review.rs`, run as a test:
    ///
    /// ```
    #[doc = include_str!("../../examples/fork_and_review.rs")]
    /// ```
    ///
    /// # Errors
    /// [`SessionGone`]; the inner result as `begin_review`.
    pub async fn begin_review(
        &self,
        arguments: &str,
    ) -> Result<Result<PendingReview, ExitResult>, SessionGone> {
        let arguments = arguments.to_owned();
        self.call(move |s| s.begin_review(&arguments)).await
    }

    /// See [`PlanSession::finish_review`].
    ///
    /// # Errors
    /// [`SessionGone`].
    pub async fn finish_review(
        &self,
        review: PendingReview,
        outcome: ReviewOutcome,
    ) -> Result<ExitResult, SessionGone> {
        self.call(move |s| s.finish_review(review, outcome)).await
    }

    /// See [`PlanSession::delegate`]: the sub-agent's session plans in memory only, so it
    /// never blocks and can be driven directly from async code.
    ///
    /// # Errors
    /// [`SessionGone`]; the inner result as `delegate`.
    pub async fn delegate(
        &self,
        whitelist: &[&str],
    ) -> Result<Result<PlanSession, DelegationError>, SessionGone> {
        let whitelist: Vec<String> = whitelist.iter().map(|s| (*s).to_owned()).collect();
        self.call(move |s| {
            let names: Vec<&str> = whitelist.iter().map(String::as_str).collect();
            s.delegate(&names)
        })
        .await
    }

    /// See [`PlanSession::fork_at`]; the fork gets a thread of its own.
    ///
    /// # Errors
    /// [`StartError::Gone`], or the log's error.
    pub async fn fork_at(&self, at: Seq, label: Option<&str>) -> Result<Self, StartError> {
        let label = label.map(str::to_owned);
        let fork = self
            .call(move |s| s.fork_at(at, label.as_deref()))
            .await??;
        Self::serve(fork).await
    }

    /// See [`PlanSession::state_at`].
    ///
    /// # Errors
    /// [`SessionGone`]; the inner result as `state_at`.
    pub async fn state_at(&self, at: Seq) -> Result<Result<SessionState, LogError>, SessionGone> {
        self.call(move |s| s.state_at(at)).await
    }

    /// See [`PlanSession::close`]: stores anything unsaved now (the session stays usable).
    ///
    /// # Errors
    /// [`SessionGone`]; the inner result as `close`.
    pub async fn close(&self) -> Result<Result<(), LogError>, SessionGone> {
        self.call(PlanSession::close).await
    }
}
