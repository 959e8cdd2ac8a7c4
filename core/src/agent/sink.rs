//! [`PlanSink`]: something fed after every successful plan write (the markdown plan file is
//! one). Sinks fail open: they log, they never fail the write.

use crate::domain::ids::SessionId;
use crate::domain::plan::Plan;
use crate::domain::time::Timestamp;

/// Receives the plan after each successful write of a durable session. Never called for
/// reads, rejected writes or sub-agent sessions.
pub trait PlanSink: Send + Sync {
    /// The plan of `session` is now `plan` (written at `at`). Must not panic; log failures.
    fn plan_written(&self, session: &SessionId, plan: &Plan, at: Timestamp);

    /// **Blocks** until everything this sink was given is written. A sink that writes on
    /// the caller's thread (the default) has nothing left to do; one that defers its work
    /// finishes it here. [`crate::PlanSession::close`] calls it.
    fn flush(&self) {}
}
