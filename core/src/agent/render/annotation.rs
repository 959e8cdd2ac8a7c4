//! The one-line annotation every view adds after an item's content when it waits for other
//! items or has an owner: ` ⧗ blocked by 2, 3 · owner alice` (or ` ⧗ owner alice`).
//!
//! Model text cannot forge it: every annotation opens with `⧗`, which is removed from content,
//! and `⧗` and `·` are removed from the ids and owners inside it, so an annotation can only
//! come from planlog (on top of [`one_line`]'s guarantees).

use std::borrow::Cow;

use crate::domain::plan::{Plan, PlanItem};
use crate::domain::text::{one_line, shown_id};

/// Marks a dependency annotation; never shown from model text.
const BLOCKED: char = '⧗';
/// Separates annotation parts; never shown from model text inside an annotation.
const SEPARATOR: char = '·';

/// `text` on one line without the annotation mark (for content).
pub(crate) fn content_line(text: &str) -> Cow<'_, str> {
    let line = one_line(text);
    if line.contains(BLOCKED) {
        Cow::Owned(line.replace(BLOCKED, "\u{FFFD}"))
    } else {
        line
    }
}

/// `text` on one line without any annotation character (for ids and owners).
fn part(text: &str) -> String {
    one_line(text).replace([BLOCKED, SEPARATOR], "\u{FFFD}")
}

/// `item` as every view shows it after its status mark: its content on one line (the
/// annotation mark removed), then its annotation. Model text cannot forge a line, a mark or
/// an annotation with it.
pub fn item_line(plan: &Plan, item: &PlanItem) -> String {
    let mut out = content_line(&item.content).into_owned();
    out.push_str(&annotation(plan, item));
    out
}

/// The annotation of `item` in `plan`: its blockers that are not completed, and its owner;
/// empty when there is neither.
pub(crate) fn annotation(plan: &Plan, item: &PlanItem) -> String {
    let mut parts = Vec::new();
    let open = plan.open_blockers(item);
    if !open.is_empty() {
        let ids: Vec<String> = open.iter().map(|id| part(&shown_id(id.as_str()))).collect();
        parts.push(format!("blocked by {}", ids.join(", ")));
    }
    if let Some(owner) = &item.owner {
        parts.push(format!("owner {}", part(owner)));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(" {BLOCKED} {}", parts.join(&format!(" {SEPARATOR} ")))
}
