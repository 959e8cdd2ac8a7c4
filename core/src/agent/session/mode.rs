//! Plan mode on a [`PlanSession`]: selections (applied at request boundaries), the turn, the
//! `exit_plan_mode` review in two steps, and the `/plan` command.

use super::{PlanSession, RequestStart, Selection};
use crate::agent::plan_mode::{
    CommandReply, ExitResult, ModeView, NOTICE_ENTERED, NOTICE_LEFT, PlanCommand, PlanReview,
    ReviewOutcome, SetOutcome, parse_exit_arguments, reply_for,
};
use crate::domain::write::ToolResult;

use super::recorder::{Call, Command, OnFailure};

/// An `exit_plan_mode` call waiting for the user's answer (see
/// [`PlanSession::begin_review`]). Show [`PendingReview::plan`] to the user, then hand the
/// answer to [`PlanSession::finish_review`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "answer the review with PlanSession::finish_review"]
pub struct PendingReview {
    plan: String,
}

impl PendingReview {
    /// The plan (markdown) to show the user.
    pub fn plan(&self) -> &str {
        &self.plan
    }
}

fn exit_error(content: String) -> ExitResult {
    ExitResult {
        result: ToolResult {
            is_error: true,
            content,
        },
        end_turn: false,
    }
}

impl PlanSession {
    /// The committed plan mode and any selection waiting for the next request boundary.
    pub fn plan_mode(&self) -> ModeView {
        ModeView {
            active: self.state().plan_mode,
            pending: self.pending_mode.map(|p| p.active),
        }
    }

    /// The host reports that a turn opened (a user message started the agent). Optional:
    /// [`PlanSession::before_request`] opens the turn too. While a turn is open, plan-mode
    /// selections wait for the next request boundary.
    pub fn turn_opened(&mut self) {
        self.turn_open = true;
    }

    /// The host reports that the turn ended (the agent answered the user); selections made
    /// from now until the next request are recorded at once.
    pub fn turn_closed(&mut self) {
        self.turn_open = false;
    }

    /// **Blocks** (between turns it appends). Selects plan mode on or off (a user action). Between turns it is appended now; during
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

    /// **Blocks** (it catches up with the log). The host reports a request boundary: the next
    /// model request is about to be built. The
    /// session catches up with other writers (a failure is logged; the session goes on with
    /// what it knows), a pending selection is appended (kept pending if that fails), and a
    /// notice is returned when the model's last request described the other mode.
    ///
    /// A request boundary happens inside a turn, so this also opens the turn when the host
    /// did not call [`PlanSession::turn_opened`].
    pub fn before_request(&mut self) -> RequestStart {
        self.turn_open = true;
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

    /// Starts an `exit_plan_mode` call: checks it (plan mode must be on; the plan must be
    /// markdown starting with a `# ` heading) and returns the plan to show the user. The
    /// session is not held while the user decides: keep the [`PendingReview`], answer it
    /// later with [`PlanSession::finish_review`].
    ///
    /// # Errors
    /// The [`ExitResult`] to return to the model at once (an error result it can correct).
    pub fn begin_review(&mut self, arguments: &str) -> Result<PendingReview, ExitResult> {
        if !self.state().plan_mode {
            return Err(exit_error(
                "Unknown tool: exit_plan_mode is only available in plan mode.".to_owned(),
            ));
        }
        let plan = parse_exit_arguments(arguments).map_err(exit_error)?;
        Ok(PendingReview { plan })
    }

    /// Finishes an `exit_plan_mode` call with the user's answer. Approve leaves plan mode at
    /// the next request boundary (silently); keep-planning fails the call with the feedback;
    /// a dismissed review returns `{"approved": false}` and ends the turn; no channel fails
    /// the call.
    pub fn finish_review(&mut self, review: PendingReview, outcome: ReviewOutcome) -> ExitResult {
        let _plan = review.plan;
        match outcome {
            ReviewOutcome::Approve => {
                if self.state().plan_mode {
                    self.pending_mode = Some(Selection {
                        active: false,
                        by_user: false,
                    });
                }
                ExitResult {
                    result: ToolResult { is_error: false, content: r#"{"approved":true}"#.to_owned() },
                    end_turn: false,
                }
            }
            ReviewOutcome::KeepPlanning(feedback) => exit_error(format!(
                "The user wants you to keep planning. Their feedback: {feedback}\nRevise the plan and present it again with exit_plan_mode."
            )),
            ReviewOutcome::Dismissed => ExitResult {
                result: ToolResult { is_error: false, content: r#"{"approved":false}"#.to_owned() },
                end_turn: true,
            },
            ReviewOutcome::NoChannel => exit_error(
                "There is no way to show the plan to the user for review, so plan mode stays on. Tell the user the plan is ready in your reply instead."
                    .to_owned(),
            ),
        }
    }

    /// Runs an `exit_plan_mode` call with a reviewer that answers at once (both steps of
    /// [`PlanSession::begin_review`] and [`PlanSession::finish_review`]). A reviewer that asks
    /// a person should use those two steps instead, so the session is free meanwhile.
    pub fn exit_plan_mode(&mut self, arguments: &str, review: &mut dyn PlanReview) -> ExitResult {
        match self.begin_review(arguments) {
            Ok(pending) => {
                let outcome = review.review(pending.plan());
                self.finish_review(pending, outcome)
            }
            Err(result) => result,
        }
    }

    /// **Blocks** (as [`PlanSession::set_plan_mode`]). Runs a `/plan` command.
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
