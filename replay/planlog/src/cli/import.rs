//! `planlog import FORMAT FILE`: recorded sessions into the store, all or nothing; prints
//! each created session id (main first) and writes their plan files.

use std::path::PathBuf;

use planlog_replay::import::{self, claude_code, codex};
use planlog_store::{PlanFiles, SystemEnv};

use crate::support::failure::Failure;
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog import`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The source format.
    #[arg(value_enum)]
    source: Source,
    /// The file.
    file: PathBuf,
    /// Import what can be read and report the bad lines instead of refusing.
    #[arg(long)]
    skip_bad_lines: bool,
}

/// Formats `planlog import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Source {
    /// A Claude Code transcript (TodoWrite calls).
    ClaudeCode,
    /// A Codex CLI rollout (update_plan calls).
    Codex,
    /// A planlog jsonl export.
    Planlog,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let shown = args.file.display().to_string();
    let bytes = std::fs::read(&args.file)
        .map_err(|e| Failure::cannot_run(format!("cannot read {shown}: {e}")))?;
    let text = String::from_utf8_lossy(&bytes);
    let log = store.for_writing()?;
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.set_message(format!("importing {shown}"));
    spinner.enable_steady_tick(std::time::Duration::from_millis(100));
    let skip = args.skip_bad_lines;
    let result = match args.source {
        Source::ClaudeCode => import::import_parsed(
            &*log,
            &SystemEnv,
            "claude-code",
            &shown,
            claude_code::parse(&text),
            skip,
        ),
        Source::Codex => import::import_parsed(
            &*log,
            &SystemEnv,
            "codex",
            &shown,
            codex::parse(&text),
            skip,
        ),
        Source::Planlog => import::planlog::import(&*log, &shown, &text, skip),
    };
    spinner.finish_and_clear();
    let imported = result?;
    for bad in &imported.skipped {
        eprintln!("planlog: skipped {shown} line {}: {}", bad.line, bad.why);
    }
    let files = PlanFiles::beside(&store.path);
    let mut out = Out::new();
    for id in &imported.sessions {
        if let Some(last) = log.last(id)? {
            let state = log.state_at(id, last.seq)?;
            files.write_or_warn(id, &state.plan, last.at);
        }
        out.line(id.as_str())?;
    }
    out.finish()?;
    eprintln!(
        "planlog: imported {} plan calls into {} sessions",
        imported.calls,
        imported.sessions.len()
    );
    Ok(())
}
