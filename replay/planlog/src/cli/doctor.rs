//! `planlog doctor`: for each agent found on this machine (its binary on the PATH, or its
//! folder), its version, whether its plan tools are offered, whether planlog's hooks are
//! installed and would run, and which store they write to (`planlog_agents::doctor`). Exit 0
//! when nothing stops capture, 1 with what to do otherwise (also when no agent records into
//! planlog at all). Reads only.

use std::collections::HashMap;

use planlog_agents::doctor::{Level, Machine, Report, examine};

use crate::support::failure::Failure;
use crate::support::output::Out;

/// Arguments of `planlog doctor`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The project to look at (default: the current folder's git root, else the folder).
    #[arg(long, value_name = "DIR")]
    project: Option<std::path::PathBuf>,
    /// One JSON object per agent.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<(), Failure> {
    let start = match args.project {
        Some(p) => p,
        None => std::env::current_dir()
            .map_err(|e| Failure::cannot_run(format!("cannot read the current folder: {e}")))?,
    };
    let project = planlog_store::host::location::git_root(&start).unwrap_or(start);
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .ok_or_else(|| Failure::cannot_run("HOME is not set: the agents' folders are under it"))?;
    let env: HashMap<String, String> = Machine::VARS
        .iter()
        .filter_map(|v| std::env::var(v).ok().map(|value| ((*v).to_owned(), value)))
        .collect();
    let machine = Machine {
        home,
        project,
        path: std::env::var_os("PATH"),
        env,
    };
    let reports = examine(&machine);
    let mut out = Out::new();
    let problems: usize = reports
        .iter()
        .map(|r| r.findings.iter().filter(|f| f.is_problem()).count())
        .sum();
    let captured = reports.iter().any(|r| r.hooks);
    if args.json {
        for r in &reports {
            out.line(report_json(r).to_string())?;
        }
    } else {
        if reports.is_empty() {
            out.line("no agent found: none of claude, codex, gemini, opencode, copilot, cursor-agent is on the PATH, and none of their folders is in HOME")?;
        }
        for r in &reports {
            out.line(heading(r))?;
            for f in &r.findings {
                let mark = match f.level {
                    Level::Ok => "✔",
                    Level::Note => "·",
                    Level::Problem => "✘",
                };
                out.line(format!("  {mark} {}", f.text))?;
                if let Some(fix) = &f.fix {
                    out.line(format!("    → {fix}"))?;
                }
            }
        }
    }
    out.finish()?;
    if problems > 0 {
        return Err(Failure::no(format!(
            "{problems} problem{} stop{} planlog from recording plans (what to do is under each ✘)",
            if problems == 1 { "" } else { "s" },
            if problems == 1 { "s" } else { "" }
        )));
    }
    if !captured && !reports.is_empty() {
        return Err(Failure::no(
            "no agent here records into planlog: `planlog install claude-code` (or codex, gemini) installs the hooks",
        ));
    }
    Ok(())
}

fn heading(r: &Report) -> String {
    let version = r.version.as_deref().unwrap_or("version unknown");
    match &r.binary {
        Some(b) => format!("{} {version} ({})", r.name, b.display()),
        None => format!("{} (its folder is here; not on the PATH)", r.name),
    }
}

fn report_json(r: &Report) -> serde_json::Value {
    serde_json::json!({
        "agent": r.name,
        "binary": r.binary.as_ref().map(|b| b.display().to_string()),
        "version": r.version,
        "hooks": r.hooks,
        "findings": r.findings.iter().map(|f| serde_json::json!({
            "level": match f.level { Level::Ok => "ok", Level::Note => "note", Level::Problem => "problem" },
            "text": f.text, "fix": f.fix,
        })).collect::<Vec<_>>(),
    })
}
