//! Injection into the outbound view: the plan text appended as one trailing user message.

use crate::agent::render::injection_text;
use crate::domain::plan::Plan;

/// Returns a copy of `view` (the messages about to be sent to the model, after any
/// compaction) with the plan's injection text appended as one separate trailing user message,
/// built by `user_message`. When no item is active the view is returned unchanged. The host's
/// stored history is never touched: call this on every request, after compaction and nudges.
pub fn inject_plan<M: Clone>(
    view: &[M],
    plan: &Plan,
    user_message: impl FnOnce(String) -> M,
) -> Vec<M> {
    let text = injection_text(plan);
    let mut out = Vec::with_capacity(view.len() + 1);
    out.extend_from_slice(view);
    if !text.is_empty() {
        out.push(user_message(text));
    }
    out
}
