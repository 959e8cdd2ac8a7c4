//! `planlog sessions`: every session, oldest first, with lineage and progress.

use planlog_core::{events::Origin, render::one_line};

use super::json_line;
use crate::support::failure::Failure;
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog sessions`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let log = store.for_reading()?;
    let mut sessions = log.sessions()?;
    sessions.sort_by(|a, b| a.created.cmp(&b.created).then_with(|| a.id.cmp(&b.id)));
    let mut out = Out::new();
    if args.json {
        for info in &sessions {
            out.line(json_line(info)?)?;
        }
        return Ok(out.finish()?);
    }
    if sessions.is_empty() {
        out.line("(no sessions; `planlog new` or `planlog demo` creates one)")?;
        return Ok(out.finish()?);
    }
    out.line(format!(
        "{:<26}  {:<24}  {:>6}  {:>9}  {:<4}  LINEAGE / LABEL",
        "ID", "CREATED", "EVENTS", "DONE", "MODE"
    ))?;
    for info in sessions {
        let lineage = match (&info.origin, info.origin.parent()) {
            (Origin::Fork { parent, at }, _) => format!("fork of {parent} at {at}"),
            (Origin::Import { source, .. }, Some(p)) => {
                format!("{source} import, sub-agent of {p}")
            }
            (Origin::Import { source, .. }, None) => format!("{source} import"),
            (_, _) => String::new(),
        };
        let label = info
            .label
            .as_deref()
            .map(|l| format!("\"{}\"", one_line(l)));
        let described = [Some(lineage).filter(|l| !l.is_empty()), label]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        out.line(format!(
            "{:<26}  {:<24}  {:>6}  {:>9}  {:<4}  {described}",
            info.id,
            info.created,
            info.events,
            format!("{}/{}", info.progress.completed, info.progress.total()),
            if info.plan_mode { "plan" } else { "-" },
        ))?;
    }
    Ok(out.finish()?)
}
