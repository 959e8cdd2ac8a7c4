//! Ways to show a plan: the injection text for the model, the terminal block and status
//! bar for people, and the markdown plan file. All of them show model text through
//! [`one_line`](crate::one_line), so an item is always exactly one line.

mod annotation;
mod inject;
mod markdown;
mod terminal;

pub use annotation::item_line;
pub use inject::{PLAN_HEADER, injection_text};
pub use markdown::render_markdown;
pub use terminal::{Style, render_block, status_bar};
