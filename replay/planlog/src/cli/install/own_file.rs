//! Installing a file of planlog's own into an agent's folder (opencode's plugin, Copilot
//! CLI's hooks file): the agent reads every file there, so planlog's is one it writes whole. A
//! file planlog did not write at that path is left alone; a link to it is followed and its
//! mode kept; install twice is once; uninstall removes only planlog's own.

use std::path::Path;

use super::{Action, Args, read_existing, through_links, write_settings};
use crate::support::failure::Failure;
use crate::support::output::Out;

/// The store an agent's hooks write to, in the user's words (`--user` without a named store:
/// each project's own).
pub(super) fn store_words(args: &Args, store: &crate::support::open::Store) -> String {
    match (args.user, store.named_address()) {
        (true, None) => "the store of the project each session runs in".to_owned(),
        _ => store.shown(),
    }
}

/// What one agent's own file is.
pub(super) struct OwnFile<'a> {
    /// What it is, for messages ("plugin", "hooks file").
    pub(super) what: &'a str,
    /// The agent's word (`opencode`, `copilot`), for the command a message names.
    pub(super) agent: &'a str,
    /// Whether a text is a file planlog wrote.
    pub(super) is_ours: fn(&str) -> bool,
}

impl OwnFile<'_> {
    /// Installs `text` at `path` (or prints it), or uninstalls, saying `said` after an
    /// install that wrote.
    pub(super) fn run(
        &self,
        args: &Args,
        action: Action,
        path: &Path,
        text: impl FnOnce() -> String,
        said: impl FnOnce(&str) -> Vec<String>,
    ) -> Result<(), Failure> {
        let shown = path.display().to_string();
        let target = through_links(path)
            .map_err(|e| Failure::cannot_run(format!("cannot follow {shown}: {e}")))?;
        let (meta, before) = read_existing(&target, &shown)?;
        if let Some(existing) = &before
            && !(self.is_ours)(existing)
        {
            return Err(Failure::cannot_run(format!(
                "{shown} is a file planlog did not write; it was left as it is: move it away, or give planlog's {} another name yourself (`planlog install {} --print` shows it)",
                self.what, self.agent
            )));
        }
        match action {
            Action::Install => {
                let text = text();
                if args.print {
                    let mut out = Out::new();
                    out.raw(&text)?;
                    return Ok(out.finish()?);
                }
                if before.as_deref() == Some(text.as_str()) {
                    eprintln!("planlog: {shown} already says this; nothing changed");
                    return Ok(());
                }
                write_settings(path, &target, meta.as_ref(), before.as_deref(), &text).map_err(
                    |e| {
                        Failure::cannot_run(format!(
                            "cannot write {shown}: {e}; it was left as it was"
                        ))
                    },
                )?;
                for line in said(&shown) {
                    eprintln!("planlog: {line}");
                }
            }
            Action::Uninstall => {
                if before.is_none() {
                    eprintln!("planlog: {shown} does not exist; nothing to remove");
                    return Ok(());
                }
                if args.print {
                    return Ok(());
                }
                std::fs::remove_file(&target)
                    .map_err(|e| Failure::cannot_run(format!("cannot remove {shown}: {e}")))?;
                if target != path {
                    let _ = std::fs::remove_file(path);
                }
                eprintln!("planlog: removed planlog's {} {shown}", self.what);
            }
        }
        Ok(())
    }
}
