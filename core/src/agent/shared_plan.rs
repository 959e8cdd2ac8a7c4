//! [`SharedPlan`]: the current plan, shared between threads (copy in, copy out).

use std::sync::{PoisonError, RwLock};

use crate::agent::render::injection_text;
use crate::domain::plan::Plan;

/// The thread-safe current plan of one session. Readers get copies; writers replace the
/// whole plan, so no caller can ever hold a reference into shared state.
#[derive(Debug, Default)]
pub struct SharedPlan {
    plan: RwLock<Plan>,
}

impl SharedPlan {
    /// A shared plan holding `plan`.
    pub fn new(plan: Plan) -> Self {
        Self {
            plan: RwLock::new(plan),
        }
    }

    /// A copy of the current plan.
    pub fn read(&self) -> Plan {
        // A poisoned lock only means a panic happened while a writer held it; the plan
        // inside is still a whole value (assignment is the only write), so keep serving it.
        self.plan
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the plan.
    pub fn replace(&self, plan: Plan) {
        *self.plan.write().unwrap_or_else(PoisonError::into_inner) = plan;
    }

    /// The injection text of the current plan (empty when nothing is active).
    pub fn injection_text(&self) -> String {
        injection_text(&self.plan.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// (pending + in_progress, total).
    pub fn active_count(&self) -> (usize, usize) {
        self.plan
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .active_count()
    }
}
