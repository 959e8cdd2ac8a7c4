//! The terminal block and the status bar text (harness9's TUI rendering).

use super::annotation::{annotation, content_line};
use crate::domain::plan::{Plan, PlanStatus};

/// Whether to colour the output. The caller decides (core does not look at terminals):
/// colour only when writing to a terminal and `NO_COLOR` is unset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// ANSI colours: yellow in-progress, green completed icon with dimmed text, dimmed cancelled.
    Color,
    /// No escape sequences at all.
    Plain,
}

const YELLOW: &str = "\x1b[33m";
const GREEN: &str = "\x1b[32m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// The plan block:
///
/// ```text
/// ☰ Tasks · 1/3 · 1 active
/// ────────────────────────
///  1. ✔ Write the parser
///  2. ▶ Implement load
///  3. ○ Run the tests
/// ```
///
/// The title counts completed of all items, plus `· N active` when N items are in progress.
/// Content is shown on one line (escape sequences neutralised), followed by the item's
/// annotation when it waits for unfinished items or has an owner (`⧗ blocked by 2, 3 · owner
/// alice`).
pub fn render_block(plan: &Plan, style: Style) -> String {
    let p = plan.progress();
    let mut title = format!("☰ Tasks · {}/{}", p.completed, p.total());
    if p.in_progress > 0 {
        title.push_str(&format!(" · {} active", p.in_progress));
    }
    let mut out = title.clone();
    out.push('\n');
    out.push_str(&"─".repeat(title.chars().count()));
    if plan.is_empty() {
        out.push_str("\n    (no tasks)");
    }
    for (i, item) in plan.items().iter().enumerate() {
        let text = format!("{}{}", content_line(&item.content), annotation(plan, item));
        let n = i + 1;
        out.push('\n');
        let row = match (item.status, style) {
            (PlanStatus::InProgress, Style::Plain) => format!("{n:2}. ▶ {text}"),
            (PlanStatus::Completed, Style::Plain) => format!("{n:2}. ✔ {text}"),
            (PlanStatus::Cancelled, Style::Plain) => format!("{n:2}. ⊘ {text}"),
            (PlanStatus::Pending, Style::Plain) => format!("{n:2}. ○ {text}"),
            (PlanStatus::InProgress, Style::Color) => format!("{n:2}. {YELLOW}▶ {text}{RESET}"),
            (PlanStatus::Completed, Style::Color) => {
                format!("{n:2}. {GREEN}✔{RESET} {DIM}{text}{RESET}")
            }
            (PlanStatus::Cancelled, Style::Color) => format!("{n:2}. {DIM}⊘ {text}{RESET}"),
            (PlanStatus::Pending, Style::Color) => format!("{n:2}. ○ {text}"),
        };
        out.push_str(&row);
    }
    out
}

/// The status bar text: `N/M tasks` (completed / all).
pub fn status_bar(plan: &Plan) -> String {
    let p = plan.progress();
    format!("{}/{} tasks", p.completed, p.total())
}
