//! `planlog install opencode` / `planlog uninstall opencode`: planlog's plugin
//! (`planlog_agents::opencode`) written into opencode's plugin folder, the project's
//! `.opencode/plugins/planlog.ts` or, with `--user`, `~/.config/opencode/plugins/planlog.ts`
//! (`$XDG_CONFIG_HOME/opencode` when set). A file planlog did not write at that path is left
//! alone; uninstall removes only planlog's own. opencode loads the plugin when it starts.

use std::path::PathBuf;

use planlog_agents::opencode::{PLUGIN_FILE, is_planlog_plugin, plugin};

use super::own_file::{OwnFile, store_words};
use super::{Action, Args, hook_argv, project_dir, user_dir};
use crate::support::failure::Failure;
use crate::support::open::Store;

/// The plugin file for `args`.
fn plugin_path(args: &Args) -> Result<PathBuf, Failure> {
    if args.local {
        return Err(Failure::cannot_run(
            "opencode has no uncommitted plugin folder: install into the project's .opencode/plugins (the default) or --user",
        ));
    }
    if args.user {
        let config = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => user_dir("HOME", "")?.join(".config"),
        };
        return Ok(config.join("opencode/plugins").join(PLUGIN_FILE));
    }
    Ok(project_dir(args)?
        .join(".opencode/plugins")
        .join(PLUGIN_FILE))
}

pub(super) fn run(
    store: &Store,
    args: &Args,
    action: Action,
    program: &str,
) -> Result<(), Failure> {
    let own = OwnFile {
        what: "plugin",
        agent: "opencode",
        is_ours: is_planlog_plugin,
    };
    let said = |shown: &str| {
        let store_words = store_words(args, store);
        vec![
            format!(
                "planlog's plugin is in {shown}: opencode loads it when it starts; every todowrite is recorded in {store_words}, and when opencode compacts a session the plan goes into the compaction's context, so the summary keeps it"
            ),
            format!(
                "the plugin runs {program}: it must be there for opencode (planlog on the PATH opencode sees)"
            ),
            "opencode has no hook when a session starts or resumes (it keeps its todo list itself)"
                .to_owned(),
            opencode_enforce_words(args),
        ]
    };
    own.run(
        args,
        action,
        &plugin_path(args)?,
        || plugin(&hook_argv(store, args, program)),
        said,
    )
}

/// What install says of enforcing in opencode.
fn opencode_enforce_words(args: &Args) -> String {
    if args.enforce {
        "a todowrite planlog's rules refuse (a bulk completion, a cancelled item completed) is refused before it runs, and the model reads why; when planlog's record is not opencode's list as it stands (a call it missed), the call is allowed and recorded".to_owned()
    } else {
        "calls planlog's rules would refuse (bulk completions) are recorded and flagged, never blocked; install with --enforce to block them".to_owned()
    }
}
