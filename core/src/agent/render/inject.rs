//! The injection text: what the model sees of the plan on every request.

use super::annotation::{annotation, content_line};
use crate::domain::plan::{Plan, PlanStatus};

/// The first line of the injection text (harness9's, verbatim).
pub const PLAN_HEADER: &str =
    "## Current Execution Plan (authoritative; continue from it after compaction or recovery)";

/// harness9's `FormatPlan`: the header, then `[ ] content` per pending item and
/// `[>] content` per in-progress item, in plan order, no trailing newline. Completed and
/// cancelled items are left out; with nothing active the result is empty (inject nothing).
/// An item waiting for unfinished items, or with an owner, ends with its annotation
/// (` ⧗ blocked by 2 · owner alice`); without those the lines are harness9's, verbatim.
pub fn injection_text(plan: &Plan) -> String {
    let mut out = String::new();
    for item in plan.items() {
        let mark = match item.status {
            PlanStatus::Pending => "[ ] ",
            PlanStatus::InProgress => "[>] ",
            PlanStatus::Completed | PlanStatus::Cancelled => continue,
        };
        if out.is_empty() {
            out.push_str(PLAN_HEADER);
        }
        out.push('\n');
        out.push_str(mark);
        out.push_str(&content_line(&item.content));
        out.push_str(&annotation(plan, item));
    }
    out
}
