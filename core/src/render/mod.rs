//! Ways to show a plan: the injection text for the model, the terminal block and status
//! bar for people, and the markdown plan file. All of them show model text through
//! [`one_line`], so an item is always exactly one line.

mod inject;
mod markdown;
mod sanitize;
mod terminal;

pub use inject::{PLAN_HEADER, format_plan};
pub use markdown::render_markdown;
pub use sanitize::{is_unsafe_char, one_line};
pub use terminal::{Style, render_block, status_bar};
