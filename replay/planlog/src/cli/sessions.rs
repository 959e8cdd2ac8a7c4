//! `planlog sessions`: every session, the most recently updated first (`--oldest-first`:
//! in the order they were created), with what it is (its name, agent and project), its
//! progress and its lineage.

use planlog_core::SessionInfo;
use planlog_core::events::Origin;
use planlog_core::render::{one_line, shortened};

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
    /// In the order they were created, the oldest first.
    #[arg(long)]
    oldest_first: bool,
}

/// How many characters of a session's name a line shows.
const NAME_CHARS: usize = 60;

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let log = store.for_reading()?;
    let mut sessions = log.sessions()?;
    if args.oldest_first {
        sessions.sort_by(|a, b| a.created.cmp(&b.created).then_with(|| a.id.cmp(&b.id)));
    } else {
        sessions.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.id.cmp(&b.id)));
    }
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
    let width = sessions
        .iter()
        .map(|s| s.id.as_str().chars().count())
        .max()
        .unwrap_or(2)
        .max(2);
    let agents: Vec<String> = sessions.iter().map(agent).collect();
    let agent_width = agents
        .iter()
        .map(|a| a.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let projects: Vec<String> = sessions.iter().map(project).collect();
    let project_width = projects
        .iter()
        .map(|p| p.chars().count())
        .max()
        .unwrap_or(7)
        .max(7);
    out.line(format!(
        "{:<width$}  {:<16}  {:>6}  {:>7}  {:<agent_width$}  {:<project_width$}  NAME / LINEAGE",
        "ID", "UPDATED", "EVENTS", "DONE", "AGENT", "PROJECT"
    ))?;
    for ((info, agent), project) in sessions.iter().zip(&agents).zip(&projects) {
        let done = format!(
            "{}/{}{}",
            info.progress.completed,
            info.progress.total(),
            if info.plan_mode { " P" } else { "" }
        );
        let name = info
            .name()
            .map(|n| format!("\"{}\"", shortened(n, NAME_CHARS)))
            .unwrap_or_default();
        let lineage = lineage(info);
        let tail = [name, lineage]
            .into_iter()
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("  ");
        out.line(format!(
            "{:<width$}  {:<16}  {:>6}  {done:>7}  {agent:<agent_width$}  {project:<project_width$}  {tail}",
            info.id,
            minutes(&info.updated.to_string()),
            info.events,
        ))?;
    }
    Ok(out.finish()?)
}

/// `2026-10-06T08:00:00.000Z` as `2026-10-06 08:00` (UTC).
fn minutes(at: &str) -> String {
    at.get(..16)
        .map_or_else(|| at.to_owned(), |t| t.replacen('T', " ", 1))
}

/// The agent (and its version), as the source says, else the origin's source.
fn agent(info: &SessionInfo) -> String {
    let described = info.description.as_ref();
    let name = described
        .and_then(|d| d.agent.clone())
        .or_else(|| match &info.origin {
            Origin::Import { source, .. } => Some(source.clone()),
            _ => None,
        });
    match (name, described.and_then(|d| d.agent_version.as_deref())) {
        (Some(n), Some(v)) => one_line(&format!("{n} {v}")).into_owned(),
        (Some(n), None) => one_line(&n).into_owned(),
        (None, _) => "-".to_owned(),
    }
}

/// The project folder's name (its whole path is in `--json`).
fn project(info: &SessionInfo) -> String {
    let path = info.description.as_ref().and_then(|d| d.project.as_deref());
    match path {
        None => "-".to_owned(),
        Some(p) => {
            let name = p
                .trim_end_matches(['/', '\\'])
                .rsplit(['/', '\\'])
                .next()
                .filter(|n| !n.is_empty())
                .unwrap_or(p);
            shortened(name, 24).into_owned()
        }
    }
}

/// Where the session comes from, when that is another session.
fn lineage(info: &SessionInfo) -> String {
    match (&info.origin, info.origin.parent()) {
        (Origin::Fork { parent, at }, _) => format!("(fork of {parent} at {at})"),
        (_, Some(p)) => format!("(sub-agent of {p})"),
        (_, None) => String::new(),
    }
}
