//! `planlog install copilot` / `planlog uninstall copilot`: planlog's hooks file
//! (`planlog_agents::copilot::hooks_file`) written into Copilot CLI's hooks folder, the
//! project's `.github/hooks/planlog.json` or, with `--user`, `~/.copilot/hooks/planlog.json`
//! (`$COPILOT_HOME/hooks` when set). Copilot reads every `*.json` there, so planlog's is a
//! file of its own: a file planlog did not write at that path is left alone; uninstall
//! removes only planlog's own.

use std::path::PathBuf;

use planlog_agents::copilot::{HOOKS_FILE, hooks_file, is_planlog_hooks_file};

use super::own_file::{OwnFile, store_words};
use super::{Action, Args, hook_command, project_dir, user_dir};
use crate::support::failure::Failure;
use crate::support::open::Store;

/// The hooks file for `args`.
fn hooks_path(args: &Args) -> Result<PathBuf, Failure> {
    if args.local {
        return Err(Failure::cannot_run(
            "Copilot CLI has no uncommitted hooks folder: install into the project's .github/hooks (the default) or --user",
        ));
    }
    if args.user {
        return Ok(user_dir("COPILOT_HOME", ".copilot")?
            .join("hooks")
            .join(HOOKS_FILE));
    }
    Ok(project_dir(args)?.join(".github/hooks").join(HOOKS_FILE))
}

pub(super) fn run(
    store: &Store,
    args: &Args,
    action: Action,
    program: &str,
) -> Result<(), Failure> {
    let own = OwnFile {
        what: "hooks file",
        agent: "copilot",
        is_ours: is_planlog_hooks_file,
    };
    let said = |shown: &str| {
        let store_words = store_words(args, store);
        vec![
            format!(
                "planlog's hooks are in {shown}: after each sql call on Copilot's todos table, the list as the table holds it is recorded in {store_words}, and compactions are on record"
            ),
            format!("the hooks run {program}: it must be there for Copilot (planlog on the PATH Copilot sees)"),
            "Copilot ignores what its hooks print at a session's start and before a compaction: the plan goes back after a compaction at the next notification (Copilot idle or asking a permission)".to_owned(),
            if args.enforce {
                "a sql call that would complete two todos never started, or a cancelled one, is first run on a copy of Copilot's database and refused before it runs (Copilot gives the model planlog's reason)".to_owned()
            } else {
                "changes planlog's rules would refuse (bulk completions) are recorded and flagged, never blocked; install with --enforce to block them".to_owned()
            },
            "where Copilot keeps its todos table (session-state/<session>/session.db under ~/.copilot) is not confirmed by any source planlog has: after a conversation that planned, `planlog sessions` shows a cp-… session if it is".to_owned(),
        ]
    };
    own.run(
        args,
        action,
        &hooks_path(args)?,
        || hooks_file(&hook_command(store, args, program), args.enforce),
        said,
    )
}
