//! The markdown plan file: a human-readable view, overwritten after every successful write.

use super::annotation::{annotation, content_line};
use crate::domain::ids::SessionId;
use crate::domain::plan::{Plan, PlanStatus};
use crate::domain::time::Timestamp;

/// The plan file text: a title, the session id, the update time, then one row per item
/// (`- [ ]` pending, `- [>]` in progress, `- [x]` completed, `- [-]` cancelled). Ends with
/// a newline.
pub fn render_markdown(plan: &Plan, session: &SessionId, updated: Timestamp) -> String {
    let p = plan.progress();
    let mut out = format!(
        "# Plan\n\n- Session: `{session}`\n- Updated: {updated}\n- Progress: {}/{} completed\n\n",
        p.completed,
        p.total()
    );
    if plan.is_empty() {
        out.push_str("_No items._\n");
    }
    for item in plan.items() {
        let mark = match item.status {
            PlanStatus::Pending => "[ ]",
            PlanStatus::InProgress => "[>]",
            PlanStatus::Completed => "[x]",
            PlanStatus::Cancelled => "[-]",
        };
        out.push_str(&format!(
            "- {mark} {}{}\n",
            content_line(&item.content),
            annotation(plan, item)
        ));
    }
    out
}
