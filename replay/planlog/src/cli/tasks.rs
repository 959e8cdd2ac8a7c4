//! `planlog tasks SESSION [--ready] [--json]`: the tasks of a session now, with who holds
//! each and what each waits for; `--ready` only the work free to claim (pending, owned by
//! nobody, every task it waits for completed), as `task_list` with `ready` gives it.

use planlog_core::PlanItem;
use planlog_core::tasks::{is_ready, task_json};

use super::{check_seq, last_seq};
use crate::support::failure::{Failure, find_session};
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog tasks`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session: its id, or any unique beginning of it.
    session: String,
    /// Only ready work: pending, owned by nobody, waiting for nothing unfinished.
    #[arg(long)]
    ready: bool,
    /// One JSON array of the tasks, as `task_get` shows each.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let log = store.for_reading()?;
    let id = find_session(&*log, &args.session)?;
    let last = last_seq(&*log, &id)?;
    let plan = log.state_at(&id, check_seq(&id, last, last)?)?.plan;
    let tasks: Vec<&PlanItem> = plan
        .items()
        .iter()
        .filter(|i| !args.ready || is_ready(&plan, i))
        .collect();
    let mut out = Out::new();
    if args.json {
        let list: Vec<serde_json::Value> = tasks.iter().map(|i| task_json(&plan, i)).collect();
        out.line(serde_json::Value::Array(list).to_string())?;
        return Ok(out.finish()?);
    }
    if tasks.is_empty() {
        out.line(if args.ready {
            "no ready task: every open task is held, or waits for another"
        } else {
            "no task"
        })?;
        return Ok(out.finish()?);
    }
    for item in tasks {
        let mut line = format!(
            "#{:<4} {:<11} {}",
            item.id,
            item.status.as_str(),
            item.content
        );
        if let Some(owner) = item.owner.as_deref().filter(|o| !o.is_empty()) {
            line.push_str(&format!("  · held by {owner}"));
        }
        let waiting: Vec<String> = plan
            .open_blockers(item)
            .iter()
            .map(|b| format!("#{b}"))
            .collect();
        if !waiting.is_empty() {
            line.push_str(&format!("  · waits for {}", waiting.join(", ")));
        }
        out.line(line)?;
    }
    Ok(out.finish()?)
}
