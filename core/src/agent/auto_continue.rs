//! [`AutoContinue`]: harness9's autoExecuting state machine, pure, for any UI.
//!
//! A successful plan_write turns it on. When a run ends with active items it yields the
//! continue prompt; three ends in a row without the completed count rising stop it with a
//! stall message; a cancel or an error turns it off; nothing active ends it.

use crate::domain::plan::Plan;

/// Ends in a row without progress after which auto-continue stops.
pub const STALL_LIMIT: u32 = 3;

/// The prompt sent to continue the plan.
pub const CONTINUE_PROMPT: &str = "Continue with the plan: take the next unfinished item, mark it in_progress before you start and completed as soon as it is done.";

/// What to do when a run ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// Auto-continue is off: wait for the user.
    Idle,
    /// Send this prompt as the next user message.
    Continue(String),
    /// Stopped: tell the user this.
    Stalled(String),
    /// Every item is completed or cancelled: auto-continue ends.
    Finished,
}

/// The auto-continue state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AutoContinue {
    active: bool,
    baseline: usize,
    stalls: u32,
}

impl AutoContinue {
    /// Off.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether it is on.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// A plan_write succeeded and left `plan`: turns auto-continue on (keeping its progress
    /// baseline if it was already on).
    pub fn on_plan_written(&mut self, plan: &Plan) {
        if !self.active {
            self.active = true;
            self.baseline = plan.progress().completed;
            self.stalls = 0;
        }
    }

    /// The user cancelled (Ctrl+C, Esc): off.
    pub fn on_cancel(&mut self) {
        self.active = false;
    }

    /// The run failed: off.
    pub fn on_error(&mut self) {
        self.active = false;
    }

    /// A run ended with the plan as `plan`.
    pub fn on_run_end(&mut self, plan: &Plan) -> RunEnd {
        if !self.active {
            return RunEnd::Idle;
        }
        let p = plan.progress();
        if p.active() == 0 {
            self.active = false;
            return RunEnd::Finished;
        }
        if p.completed > self.baseline {
            self.baseline = p.completed;
            self.stalls = 0;
        } else {
            self.stalls += 1;
        }
        if self.stalls >= STALL_LIMIT {
            self.active = false;
            return RunEnd::Stalled(format!(
                "Auto-continue stopped: {STALL_LIMIT} runs in a row ended without completing a plan item \
                 ({} of {} done, {} still active). Tell the agent how to proceed.",
                p.completed,
                p.total(),
                p.active()
            ));
        }
        RunEnd::Continue(CONTINUE_PROMPT.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ItemId, PlanItem, PlanStatus};

    fn plan_of(statuses: &[&str]) -> Plan {
        Plan::from_items(
            statuses
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    PlanItem::new(
                        ItemId::new(i.to_string()).unwrap(),
                        "x",
                        PlanStatus::from_wire(s).unwrap(),
                    )
                })
                .collect(),
        )
    }

    #[test]
    fn off_until_a_successful_plan_write() {
        let mut ac = AutoContinue::new();
        assert_eq!(ac.on_run_end(&plan_of(&["pending"])), RunEnd::Idle);
        ac.on_plan_written(&plan_of(&["pending"]));
        assert!(matches!(
            ac.on_run_end(&plan_of(&["pending"])),
            RunEnd::Continue(_)
        ));
    }

    #[test]
    fn progress_resets_the_stall_count() {
        let mut ac = AutoContinue::new();
        ac.on_plan_written(&plan_of(&["pending", "pending", "pending"]));
        assert!(matches!(
            ac.on_run_end(&plan_of(&["in_progress", "pending", "pending"])),
            RunEnd::Continue(_)
        ));
        assert!(matches!(
            ac.on_run_end(&plan_of(&["in_progress", "pending", "pending"])),
            RunEnd::Continue(_)
        ));
        // A completion: the count starts again.
        assert!(matches!(
            ac.on_run_end(&plan_of(&["completed", "in_progress", "pending"])),
            RunEnd::Continue(_)
        ));
        assert!(matches!(
            ac.on_run_end(&plan_of(&["completed", "in_progress", "pending"])),
            RunEnd::Continue(_)
        ));
        assert!(matches!(
            ac.on_run_end(&plan_of(&["completed", "in_progress", "pending"])),
            RunEnd::Continue(_)
        ));
        match ac.on_run_end(&plan_of(&["completed", "in_progress", "pending"])) {
            RunEnd::Stalled(msg) => assert!(msg.contains("1 of 3 done, 2 still active"), "{msg}"),
            other => panic!("{other:?}"),
        }
        assert!(!ac.is_active());
        assert_eq!(ac.on_run_end(&plan_of(&["pending"])), RunEnd::Idle);
    }

    #[test]
    fn three_ends_without_progress_stall() {
        let mut ac = AutoContinue::new();
        let p = plan_of(&["completed", "pending"]);
        ac.on_plan_written(&p);
        assert!(matches!(ac.on_run_end(&p), RunEnd::Continue(_)));
        assert!(matches!(ac.on_run_end(&p), RunEnd::Continue(_)));
        assert!(matches!(ac.on_run_end(&p), RunEnd::Stalled(_)));
    }

    #[test]
    fn nothing_active_finishes() {
        let mut ac = AutoContinue::new();
        ac.on_plan_written(&plan_of(&["in_progress"]));
        assert_eq!(
            ac.on_run_end(&plan_of(&["completed", "cancelled"])),
            RunEnd::Finished
        );
        assert!(!ac.is_active());
    }

    #[test]
    fn cancel_and_error_turn_it_off() {
        for stop in [AutoContinue::on_cancel, AutoContinue::on_error] {
            let mut ac = AutoContinue::new();
            ac.on_plan_written(&plan_of(&["pending"]));
            stop(&mut ac);
            assert_eq!(ac.on_run_end(&plan_of(&["pending"])), RunEnd::Idle);
        }
    }
}
