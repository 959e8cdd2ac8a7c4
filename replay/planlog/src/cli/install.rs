//! `planlog install claude-code` / `planlog uninstall claude-code`: planlog's hooks in a
//! Claude Code settings file (the project's `.claude/settings.json`; `--local` for
//! `.claude/settings.local.json`, `--user` for `~/.claude/settings.json`), merged with what is
//! there. The previous file is kept as `<file>.planlog-backup`; a malformed file is refused
//! with its line and column and left as it is; `--print` shows the result instead.

use std::path::{Path, PathBuf};

use planlog_replay::claude_hooks::settings::{self, HookSet, SettingsError};

use crate::support::failure::Failure;
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog install` and `planlog uninstall`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The agent.
    #[arg(value_enum)]
    agent: crate::hook::Agent,
    /// The user's settings (`~/.claude/settings.json`, or under $CLAUDE_CONFIG_DIR).
    #[arg(long, conflicts_with = "local")]
    user: bool,
    /// The project's own, uncommitted settings (`.claude/settings.local.json`).
    #[arg(long)]
    local: bool,
    /// The project folder (default: the current folder).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Print the resulting settings instead of writing them.
    #[arg(long)]
    print: bool,
    /// Install hooks that record but never block a call.
    #[arg(long)]
    audit_only: bool,
    /// Also put the plan back into the context before every prompt (UserPromptSubmit);
    /// Claude Code shows its own task reminders between compactions, so this is off by
    /// default.
    #[arg(long)]
    every_prompt: bool,
}

/// Which of the two commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Install,
    Uninstall,
}

fn settings_path(args: &Args) -> Result<PathBuf, Failure> {
    if args.user {
        let base = match std::env::var_os("CLAUDE_CONFIG_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(std::env::var_os("HOME").ok_or_else(|| {
                Failure::cannot_run("HOME is not set; give the project with --project instead")
            })?)
            .join(".claude"),
        };
        return Ok(base.join("settings.json"));
    }
    let project = match &args.project {
        Some(p) => p.clone(),
        None => std::env::current_dir()
            .map_err(|e| Failure::cannot_run(format!("cannot read the current folder: {e}")))?,
    };
    let name = if args.local {
        "settings.local.json"
    } else {
        "settings.json"
    };
    Ok(project.join(".claude").join(name))
}

/// The command Claude Code will run: this binary, by its full path (hooks do not always see
/// the user's PATH), with the store when one was named.
fn hook_command(store: &Store, args: &Args) -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok())
        .map_or_else(
            || "planlog".to_owned(),
            |p| shell_word(&p.display().to_string()),
        );
    let mut command = format!("{exe} hook claude-code");
    match store.named_address() {
        Some(planlog_store::StoreAddress::File(db)) => {
            // Absolute: Claude Code runs hooks from the session's folder, not this one.
            let db = db
                .canonicalize()
                .or_else(|_| std::path::absolute(db))
                .unwrap_or_else(|_| db.clone());
            command.push_str(&format!(" --db {}", shell_word(&db.display().to_string())));
        }
        // A database URL without its password: settings files are shared and committed.
        // The hooks find the password as psql does (PGPASSWORD, ~/.pgpass).
        Some(address @ planlog_store::StoreAddress::Postgres(url)) => {
            let shown = address.without_password();
            if shown != *url {
                tracing::warn!(
                    "the database password (if any) is left out of the settings file; give it to the hooks in ~/.pgpass (chmod 600) or PGPASSWORD"
                );
            }
            command.push_str(&format!(" --db {}", shell_word(&shown)));
        }
        None => {}
    }
    if args.audit_only {
        command.push_str(" --audit-only");
    }
    command
}

/// A word for `sh`: quoted when it holds anything but plain path characters.
fn shell_word(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

pub(crate) fn run(store: &Store, args: Args, action: Action) -> Result<(), Failure> {
    let path = settings_path(&args)?;
    let shown = path.display().to_string();
    let before = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Failure::cannot_run(format!("cannot read {shown}: {e}"))),
    };
    let refused = |e: SettingsError| Failure::cannot_run(format!("{shown}: {e}"));
    let after = match action {
        Action::Install => settings::install(
            before.as_deref(),
            &HookSet {
                command: hook_command(store, &args),
                every_prompt: args.every_prompt,
            },
        )
        .map_err(refused)?,
        Action::Uninstall => match &before {
            Some(text) => settings::uninstall(text).map_err(refused)?,
            None => {
                eprintln!("planlog: {shown} does not exist; nothing to remove");
                return Ok(());
            }
        },
    };
    if args.print {
        let mut out = Out::new();
        out.raw(&after)?;
        return Ok(out.finish()?);
    }
    if before.as_deref() == Some(after.as_str()) {
        eprintln!("planlog: {shown} already says this; nothing changed");
        return Ok(());
    }
    write_settings(&path, before.as_deref(), &after).map_err(|e| {
        Failure::cannot_run(format!("cannot write {shown}: {e}; it was left as it was"))
    })?;
    match action {
        Action::Install => eprintln!(
            "planlog: installed planlog's hooks in {shown}; Claude Code sessions in this project now record every plan change in {}",
            store.shown()
        ),
        Action::Uninstall => eprintln!("planlog: removed planlog's hooks from {shown}"),
    }
    Ok(())
}

/// Keeps the previous file as a backup, then replaces the file whole (a new file renamed
/// over it).
fn write_settings(path: &Path, before: Option<&str>, after: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    if let Some(before) = before {
        let mut backup = path.as_os_str().to_owned();
        backup.push(".planlog-backup");
        std::fs::write(PathBuf::from(backup), before)?;
    }
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".planlog-{}", std::process::id()));
    let temp = PathBuf::from(temp);
    std::fs::write(&temp, after)?;
    std::fs::rename(&temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}
