//! Progress of long work on stderr: how far (events or bytes of the total), how fast, and the
//! time left. Drawn only when stderr is a terminal (indicatif hides it otherwise), so pipes and
//! scripts see nothing of it.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar counting `total` events, labelled `what` (`verifying`, `exporting` …).
pub(crate) fn events(what: &str, total: u64) -> ProgressBar {
    bar(
        total,
        &format!("{what} {{bar:30}} {{human_pos}}/{{human_len}} events, {{per_sec}}, {{eta}} left"),
    )
}

/// A bar counting `total` bytes of a source read.
pub(crate) fn bytes(what: &str, total: u64) -> ProgressBar {
    bar(
        total,
        &format!("{what} {{bar:30}} {{bytes}}/{{total_bytes}}, {{bytes_per_sec}}, {{eta}} left"),
    )
}

fn bar(total: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}
