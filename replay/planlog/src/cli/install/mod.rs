//! `planlog install opencode` writes planlog's plugin into opencode's plugin folder
//! (`opencode`).
//!
//! `planlog install codex` merges the same way into Codex's `hooks.json` (the project's
//! `.codex/hooks.json`, `--user` for `$CODEX_HOME/hooks.json`), adding nothing but `hooks`, and
//! switches Codex's plan tool on in the `config.toml` beside it. `planlog install gemini`
//! merges into Gemini CLI's `settings.json` (the project's `.gemini/settings.json`, `--user`
//! for `~/.gemini/settings.json`).
//!
//! `planlog install claude-code` / `planlog uninstall claude-code`: planlog's hooks in a
//! Claude Code settings file (the project's `.claude/settings.json`; `--local` for
//! `.claude/settings.local.json`, `--user` for `~/.claude/settings.json`), merged with what is
//! there, and the plan tools turned on for the newest models (`env.CLAUDE_CODE_ENABLE_TODO_TOOLS`,
//! put back by uninstall).
//!
//! The user's file is treated as theirs: keys keep their order and the file its indentation;
//! a link is written through (the link stays, its target changes); a file with other hard
//! links is rewritten in place so they all see it; the mode and owner are kept (a 0600 file
//! holding an API key stays 0600, and so does its backup, `<file>.planlog-backup`); a
//! read-only file is left alone with a message; a malformed file is refused with its line and
//! column. `--print` shows the result instead of writing it.

mod copilot;
mod opencode;
mod own_file;

use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use planlog_agents::settings::{
    self, HookSet, InstallRecord, Restored, SettingsError, TODO_TOOLS_VAR, TodoTools,
};

use crate::support::failure::Failure;
use crate::support::open::Store;
use crate::support::open::beside;
use crate::support::output::Out;
use planlog_agents::hook::Agent as HookAgent;

/// Arguments of `planlog install` and `planlog uninstall`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The agent.
    #[arg(value_enum)]
    agent: crate::hook::Agent,
    /// The user's settings (`~/.claude/settings.json`, or under $CLAUDE_CONFIG_DIR): every
    /// project of this user.
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
    /// Block plan tool calls planlog's rules refuse (bulk completions), after catching up
    /// from the transcript; without it they are recorded and flagged, never blocked.
    #[arg(long)]
    enforce: bool,
    /// Record, never block (the default; kept for scripts written for older versions).
    #[arg(long, hide = true, conflicts_with = "enforce")]
    audit_only: bool,
    /// Also put the plan back into the context before every prompt (UserPromptSubmit);
    /// Claude Code shows its own task reminders between compactions, so this is off by
    /// default.
    #[arg(long)]
    every_prompt: bool,
    /// Leave CLAUDE_CODE_ENABLE_TODO_TOOLS as it is. By default install sets it to 1: since
    /// Claude Code 2.1.233 the newest models have no TodoWrite or Task tools without it.
    #[arg(long)]
    leave_todo_tools: bool,
}

/// Which of the two commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Install,
    Uninstall,
}

/// Which settings file, and what it reaches.
enum Scope {
    User,
    Project,
    Local,
}

fn settings_path(args: &Args) -> Result<(PathBuf, Scope), Failure> {
    if args.agent == crate::hook::Agent::Cursor {
        if args.local {
            return Err(Failure::cannot_run(
                "Cursor has no uncommitted hooks file: install into the project's .cursor/hooks.json (the default) or --user",
            ));
        }
        if args.user {
            return Ok((
                user_dir("HOME", "")?.join(".cursor").join("hooks.json"),
                Scope::User,
            ));
        }
        return Ok((
            project_dir(args)?.join(".cursor").join("hooks.json"),
            Scope::Project,
        ));
    }
    if args.agent == crate::hook::Agent::Gemini {
        if args.local {
            return Err(Failure::cannot_run(
                "Gemini CLI has no uncommitted settings file: install into the project's .gemini/settings.json (the default) or --user",
            ));
        }
        if args.user {
            // Gemini's home is $GEMINI_CLI_HOME when set (its .gemini folder inside), else ~.
            let home = match std::env::var_os("GEMINI_CLI_HOME") {
                Some(home) => PathBuf::from(home),
                None => user_dir("HOME", "")?,
            };
            return Ok((home.join(".gemini").join("settings.json"), Scope::User));
        }
        return Ok((
            project_dir(args)?.join(".gemini").join("settings.json"),
            Scope::Project,
        ));
    }
    if args.agent == crate::hook::Agent::Codex {
        // Codex reads hooks.json beside each config layer: $CODEX_HOME (~/.codex) for the
        // user, a trusted project's .codex/ for one project.
        if args.local {
            return Err(Failure::cannot_run(
                "Codex has no uncommitted settings file: install into the project's .codex/hooks.json (the default) or --user",
            ));
        }
        if args.user {
            return Ok((
                user_dir("CODEX_HOME", ".codex")?.join("hooks.json"),
                Scope::User,
            ));
        }
        return Ok((
            project_dir(args)?.join(".codex").join("hooks.json"),
            Scope::Project,
        ));
    }
    if args.user {
        return Ok((
            user_dir("CLAUDE_CONFIG_DIR", ".claude")?.join("settings.json"),
            Scope::User,
        ));
    }
    let project = project_dir(args)?;
    let (name, scope) = if args.local {
        ("settings.local.json", Scope::Local)
    } else {
        ("settings.json", Scope::Project)
    };
    Ok((project.join(".claude").join(name), scope))
}

/// An agent's folder for the user: the variable `var` names it, else `~/<folder>`.
fn user_dir(var: &str, folder: &str) -> Result<PathBuf, Failure> {
    match std::env::var_os(var) {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => Ok(PathBuf::from(std::env::var_os("HOME").ok_or_else(|| {
            Failure::cannot_run("HOME is not set; give the project with --project instead")
        })?)
        .join(folder)),
    }
}

fn project_dir(args: &Args) -> Result<PathBuf, Failure> {
    match &args.project {
        Some(p) => Ok(p.clone()),
        None => std::env::current_dir()
            .map_err(|e| Failure::cannot_run(format!("cannot read the current folder: {e}"))),
    }
}

/// Where `planlog` is found on the PATH, if it is.
fn on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("planlog"))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0))
}

/// The command Claude Code will run: `planlog` by name when it is on the PATH (a committed
/// file must work for teammates whose planlog lives elsewhere), else this binary's full path;
/// with the store when one was named, and `--enforce` when asked.
fn hook_command(store: &Store, args: &Args, program: &str) -> String {
    hook_argv(store, args, program)
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words of [`hook_command`], unquoted (opencode's plugin runs them as argv).
fn hook_argv(store: &Store, args: &Args, program: &str) -> Vec<String> {
    let mut command = vec![
        program.to_owned(),
        "hook".to_owned(),
        args.agent.hooks().word().to_owned(),
    ];
    match store.named_address() {
        Some(planlog_store::StoreAddress::File(db)) => {
            // Absolute: Claude Code runs hooks from the session's folder, not this one.
            let db = db
                .canonicalize()
                .or_else(|_| std::path::absolute(db))
                .unwrap_or_else(|_| db.clone());
            command.extend(["--db".to_owned(), db.display().to_string()]);
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
            command.extend(["--db".to_owned(), shown]);
        }
        None => {}
    }
    if args.enforce {
        command.push("--enforce".to_owned());
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

/// `path` with every link followed (the file a write through the link changes); a link to a
/// file that does not exist yet gives that file's path.
fn through_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(std::io::Error::other("too many links"))
}

/// The file at `target` (shown as `shown`) as it is: its metadata and text, both `None` when
/// there is no file.
fn read_existing(
    target: &Path,
    shown: &str,
) -> Result<(Option<std::fs::Metadata>, Option<String>), Failure> {
    let meta = std::fs::metadata(target).ok();
    match planlog_import::read_regular(target) {
        Ok(t) => Ok((meta, Some(t))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((meta, None)),
        Err(e) => Err(Failure::cannot_run(format!("cannot read {shown}: {e}"))),
    }
}

pub(crate) fn run(store: &Store, args: Args, action: Action) -> Result<(), Failure> {
    let agent = args.agent.hooks();
    let codex = agent == HookAgent::Codex;
    let claude = agent == HookAgent::ClaudeCode;
    let program = on_path().map_or_else(
        || {
            std::env::current_exe()
                .ok()
                .and_then(|p| p.canonicalize().ok())
                .map_or_else(|| "planlog".to_owned(), |p| p.display().to_string())
        },
        |_| "planlog".to_owned(),
    );
    if agent == HookAgent::Opencode {
        return opencode::run(store, &args, action, &program);
    }
    if agent == HookAgent::Copilot {
        return copilot::run(store, &args, action, &program);
    }
    let (path, scope) = settings_path(&args)?;
    let shown = path.display().to_string();
    let target = through_links(&path)
        .map_err(|e| Failure::cannot_run(format!("cannot follow {shown}: {e}")))?;
    let (meta, before) = read_existing(&target, &shown)?;
    let refused = |e: SettingsError| Failure::cannot_run(format!("{shown}: {e}"));
    let record_path = beside(&path, ".planlog-install");
    let cursor = agent == HookAgent::Cursor;
    let (after, said) = match action {
        Action::Install if cursor => {
            if args.enforce {
                return Err(Failure::cannot_run(
                    "enforcing is not offered for Cursor (planlog could not bring the plan up to date from Cursor's own record within a hook's time): install without --enforce",
                ));
            }
            let text = settings::install_flat(
                before.as_deref(),
                agent,
                &hook_command(store, &args, &program),
            )
            .map_err(refused)?;
            (
                settings::Installed {
                    text,
                    todo_tools: TodoTools::AlreadyOn,
                },
                Said::Installed(cursor_words(store, &scope, &shown), None),
            )
        }
        Action::Uninstall if cursor => {
            let Some(text) = &before else {
                eprintln!("planlog: {shown} does not exist; nothing to remove");
                return Ok(());
            };
            (
                settings::Installed {
                    text: settings::uninstall_flat(text).map_err(refused)?,
                    todo_tools: TodoTools::AlreadyOn,
                },
                Said::Uninstalled(Restored::Untouched),
            )
        }
        Action::Install => {
            let installed = settings::install(
                before.as_deref(),
                &HookSet {
                    agent,
                    command: hook_command(store, &args, &program),
                    enforce: args.enforce,
                    every_prompt: args.every_prompt && claude,
                    todo_tools: !args.leave_todo_tools && claude,
                },
            )
            .map_err(refused)?;
            let said = if codex {
                codex_words(store, &args, &scope, &shown, &path)
            } else if !claude {
                gemini_words(store, &args, &scope, &shown)
            } else {
                install_words(
                    store,
                    &args,
                    &scope,
                    &shown,
                    &program,
                    &installed.todo_tools,
                )
            };
            (
                installed.clone(),
                Said::Installed(said, settings::record(&installed)),
            )
        }
        Action::Uninstall => {
            let Some(text) = &before else {
                eprintln!("planlog: {shown} does not exist; nothing to remove");
                return Ok(());
            };
            let record: Option<InstallRecord> = planlog_import::read_regular(&record_path)
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok());
            let (text, restored) = settings::uninstall(text, record.as_ref()).map_err(refused)?;
            (
                settings::Installed {
                    text,
                    todo_tools: TodoTools::AlreadyOn,
                },
                Said::Uninstalled(restored),
            )
        }
    };
    if args.print {
        let mut out = Out::new();
        out.raw(&after.text)?;
        return Ok(out.finish()?);
    }
    if before.as_deref() == Some(after.text.as_str()) {
        eprintln!("planlog: {shown} already says this; nothing changed");
        return Ok(());
    }
    if let Some(m) = &meta
        && m.mode() & 0o222 == 0
    {
        return Err(Failure::cannot_run(format!(
            "{shown} is read-only (mode {:o}); planlog left it alone: make it writable (chmod u+w), or add the hooks yourself (`planlog install claude-code --print` shows the whole file)",
            m.mode() & 0o7777
        )));
    }
    write_settings(
        &path,
        &target,
        meta.as_ref(),
        before.as_deref(),
        &after.text,
    )
    .map_err(|e| {
        Failure::cannot_run(format!("cannot write {shown}: {e}; it was left as it was"))
    })?;
    match said {
        Said::Installed(words, record) => {
            // The first install's record is kept: it knows what the setting was originally.
            if let Some(record) = record
                && !record_path.exists()
                && let Err(e) = write_record(&record_path, &record, meta.as_ref())
            {
                eprintln!(
                    "planlog: could not keep {} ({e}): uninstall will not know what {TODO_TOOLS_VAR} was before",
                    record_path.display()
                );
            }
            for line in words {
                eprintln!("planlog: {line}");
            }
            if matches!(scope, Scope::Project | Scope::Local) {
                keep_store_out_of_git(store, &project_dir(&args)?);
            }
        }
        Said::Uninstalled(restored) => {
            let _ = std::fs::remove_file(&record_path);
            eprintln!("planlog: removed planlog's hooks from {shown}");
            if codex {
                eprintln!(
                    "planlog: left Codex's plan tool switch ([tools.update_plan] in {}) as it is",
                    path.with_file_name("config.toml").display()
                );
            }
            match restored {
                Restored::Untouched => {}
                Restored::PutBack(None) => {
                    eprintln!("planlog: removed {TODO_TOOLS_VAR}, which install had added")
                }
                Restored::PutBack(Some(v)) => {
                    eprintln!("planlog: put {TODO_TOOLS_VAR} back to {v}, as it was before install")
                }
                Restored::ChangedSince(v) => eprintln!(
                    "planlog: left {TODO_TOOLS_VAR} as it is now ({v}): it was changed after install"
                ),
            }
        }
    }
    Ok(())
}

/// What a command has to say once the file is written.
enum Said {
    Installed(Vec<String>, Option<InstallRecord>),
    Uninstalled(Restored),
}

/// What install did, in the user's words: where, for whom, into which store, the plan tools,
/// blocking, and how the hooks find planlog.
fn install_words(
    store: &Store,
    args: &Args,
    scope: &Scope,
    shown: &str,
    program: &str,
    todo_tools: &TodoTools,
) -> Vec<String> {
    let mut out = Vec::new();
    let store_words = match (scope, store.named_address()) {
        (Scope::User, None) => "the store of the project each session runs in (.planlog/planlog.redb at its git root, or the data folder outside a repository)".to_owned(),
        _ => store.shown(),
    };
    out.push(match scope {
        Scope::User => format!(
            "installed planlog's hooks in {shown}, for every Claude Code session of this user in any project: each records its plan changes in {store_words} and gets its plan back after /compact, --resume, /clear and forks"
        ),
        Scope::Project => format!(
            "installed planlog's hooks in {shown} (this project; commit it to share them): Claude Code sessions here record every plan change in {store_words} and get their plan back after /compact, --resume, /clear and forks"
        ),
        Scope::Local => format!(
            "installed planlog's hooks in {shown} (this project, on this machine only): Claude Code sessions here record every plan change in {store_words} and get their plan back after /compact, --resume, /clear and forks"
        ),
    });
    let was = |v: &Option<planlog_agents::claude_code::Json>| {
        v.as_ref()
            .map_or_else(|| "not set".to_owned(), |v| v.render(""))
    };
    match todo_tools {
        TodoTools::Set { before, .. } => out.push(format!(
            "set {TODO_TOOLS_VAR}=1 in its env (it was {}): since Claude Code 2.1.233, Opus 4.8, Sonnet 5 and later models have no TodoWrite or Task tools without it, and there would be nothing to record. `planlog uninstall claude-code` puts it back; --leave-todo-tools leaves it alone",
            was(before)
        )),
        TodoTools::AlreadyOn => {}
        TodoTools::Left(v) => out.push(format!(
            "left {TODO_TOOLS_VAR} as it is ({}): unless it is 1, Opus 4.8, Sonnet 5 and later models have no TodoWrite or Task tools, and these hooks record nothing; planlog's own task tools over MCP are the other way (`planlog mcp --tools tasks`, README)",
            was(v)
        )),
    }
    out.push(enforce_words(args));
    out.push(match on_path() {
        Some(p) if program == "planlog" => {
            format!("the hooks run `planlog` from the PATH (here {})", p.display())
        }
        _ => format!(
            "planlog is not on the PATH: the hooks run {program}{}",
            if matches!(scope, Scope::Project) {
                ", a path other machines may not have; put planlog on the PATH (`cargo install --locked --path replay/planlog`) and install again"
            } else {
                ""
            }
        ),
    });
    out
}

/// Keeps a project's default store folder out of git: `.planlog/.gitignore` holding `*`.
fn keep_store_out_of_git(store: &Store, project: &Path) {
    if store.named_address().is_some() {
        return;
    }
    let Some(root) = planlog_store::host::location::git_root(project) else {
        return;
    };
    match planlog_store::host::location::keep_out_of_git(
        &root.join(planlog_store::host::location::REPO_DIR),
    ) {
        Ok(true) => eprintln!(
            "planlog: {}/ keeps itself out of git ({}/.gitignore)",
            planlog_store::host::location::REPO_DIR,
            planlog_store::host::location::REPO_DIR
        ),
        Ok(false) => {}
        Err(e) => eprintln!(
            "planlog: could not write {}/.gitignore ({e}); add `{}/` to your .gitignore",
            planlog_store::host::location::REPO_DIR,
            planlog_store::host::location::REPO_DIR
        ),
    }
}

/// Keeps the previous file as a backup (with its mode), then writes the new text: into the
/// link's target, keeping the mode and owner; in place when other hard links share the file,
/// else as a new file renamed over it.
fn write_settings(
    path: &Path,
    target: &Path,
    meta: Option<&std::fs::Metadata>,
    before: Option<&str>,
    after: &str,
) -> std::io::Result<()> {
    let dir = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mode = meta.map_or(0o644, |m| m.mode() & 0o7777);
    if let Some(before) = before {
        let backup = beside(path, ".planlog-backup");
        let _ = std::fs::remove_file(&backup);
        write_new(&backup, before.as_bytes(), mode, meta)?;
    }
    if let Some(m) = meta
        && m.nlink() > 1
    {
        // Other names share this file: a new file would split them. Rewrite it in place.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(target)?;
        std::io::Write::write_all(&mut f, after.as_bytes())?;
        return f.sync_all();
    }
    // A temporary file of a fresh name beside the target (removed if anything fails before
    // the rename), with the target's mode and owner, then renamed over it.
    let name = target
        .file_name()
        .map_or_else(|| "settings".into(), |n| n.to_string_lossy());
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}.planlog-"))
        .tempfile_in(dir)?;
    fill(temp.as_file_mut(), after.as_bytes(), mode, meta)?;
    temp.persist(target).map_err(|e| e.error)?;
    std::fs::File::open(dir)?.sync_all()
}

/// Writes a new file with `mode` (and `like`'s owner, when there is one), durably.
fn write_new(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    like: Option<&std::fs::Metadata>,
) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?;
    fill(&mut f, bytes, mode, like)
}

/// Gives the new file `f` `mode` (and `like`'s owner, when there is one), then `bytes`,
/// durably.
fn fill(
    f: &mut std::fs::File,
    bytes: &[u8],
    mode: u32,
    like: Option<&std::fs::Metadata>,
) -> std::io::Result<()> {
    // The umask may have taken bits away: set the mode itself.
    f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))?;
    if let Some(m) = like {
        // Only root may give a file away; anyone else already owns what they write.
        let _ = std::os::unix::fs::fchown(&*f, Some(m.uid()), Some(m.gid()));
    }
    std::io::Write::write_all(f, bytes)?;
    f.sync_all()
}

fn write_record(
    path: &Path,
    record: &InstallRecord,
    like: Option<&std::fs::Metadata>,
) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(record).map_err(std::io::Error::other)?;
    let mode = like.map_or(0o644, |m| m.mode() & 0o7777);
    write_new(path, format!("{text}\n").as_bytes(), mode, like)
}

/// What `install codex` did, in the user's words, after switching Codex's plan tool on in the
/// `config.toml` beside the hooks (unless `print`): the hooks, the store, the switch, and the
/// trust step Codex needs before it runs them.
fn codex_words(
    store: &Store,
    args: &Args,
    scope: &Scope,
    shown: &str,
    hooks: &Path,
) -> Vec<String> {
    let print = args.print;
    let mut out = vec![format!(
        "planlog's hooks are in {shown}: every update_plan recorded in {}, the plan put back after a resume, a clear or a compaction",
        match (scope, store.named_address()) {
            (Scope::User, None) => "the store of the project each session runs in".to_owned(),
            _ => store.shown(),
        }
    )];
    let config = hooks.with_file_name("config.toml");
    if !print {
        out.push(match switch_update_plan_on(&config) {
            Ok(Switch::Added) => format!(
                "turned Codex's plan tool on in {} ([tools.update_plan] enabled = true; off by default since Codex 0.152)",
                config.display()
            ),
            Ok(Switch::There) => format!(
                "{} already names update_plan: left as it is; [tools.update_plan] must say enabled = true, or Codex never offers the plan tool",
                config.display()
            ),
            Err(e) => format!(
                "could not write {} ({e}): add [tools.update_plan] with enabled = true yourself, or Codex never offers the plan tool",
                config.display()
            ),
        });
    }
    out.push(enforce_words(args));
    out.push(
        "now start `codex` once and trust the new hooks (/hooks, or the \"Hooks need review\" screen): Codex skips untrusted hooks without a word".to_owned(),
    );
    out
}

/// What `install gemini` did, in the user's words: the hooks, the store, when the plan comes
/// back, the plan tool's availability and Gemini's own trust steps.
fn gemini_words(store: &Store, args: &Args, scope: &Scope, shown: &str) -> Vec<String> {
    vec![
        format!(
            "planlog's hooks are in {shown}: every write_todos recorded in {}, the plan put back after a resume or a clear, and with the next prompt after a /compress (Gemini runs no hook after compressing; its automatic compression cannot be told apart from its false alarms, so after one the plan comes back at the next resume)",
            match (scope, store.named_address()) {
                (Scope::User, None) => "the store of the project each session runs in".to_owned(),
                _ => store.shown(),
            }
        ),
        "Gemini offers write_todos only on Gemini 2 models that are not previews, with experimental.taskTracker off; with the tracker on (the way Gemini 3 and preview models plan) its tasks are recorded with their ids and dependencies".to_owned(),
        enforce_words(args),
        "hooks run only in a trusted folder (Gemini asks on first start in a folder; headless runs need it in ~/.gemini/trustedFolders.json), and Gemini warns once about new project hooks, then runs them".to_owned(),
    ]
}

/// What `install cursor` did, in the user's words: the hooks, the store, and what is not
/// confirmed about Cursor.
fn cursor_words(store: &Store, scope: &Scope, shown: &str) -> Vec<String> {
    vec![
        format!(
            "planlog's hooks are in {shown}: each todo list change (TodoWrite) recorded in {}, the plan put back when a conversation starts again, compactions on record",
            match (scope, store.named_address()) {
                (Scope::User, None) => "the store of the project each session runs in".to_owned(),
                _ => store.shown(),
            }
        ),
        "no source planlog has confirms that Cursor runs hooks for its todo tool, nor its name there (TodoWrite, older todo_write): after a conversation that planned, `planlog sessions` shows a cu-… session if it does".to_owned(),
        "Cursor also runs the hooks in ~/.claude/settings.json: planlog's Claude Code hooks there skip Cursor's payloads, so nothing is recorded twice".to_owned(),
    ]
}

/// Whether refused calls are blocked, in the user's words.
fn enforce_words(args: &Args) -> String {
    if args.enforce {
        "calls planlog's rules refuse (a bulk completion, a cancelled item completed) are blocked with planlog's message, once the plan is brought up to date from the agent's own recording".to_owned()
    } else {
        "calls planlog's rules would refuse (bulk completions) are recorded and flagged, never blocked; install with --enforce to block them".to_owned()
    }
}

/// What became of Codex's plan tool switch.
enum Switch {
    /// The table was added (the file made when there was none).
    Added,
    /// The file names update_plan already; it was left alone.
    There,
}

/// Turns Codex's plan tool on in `config`: `[tools.update_plan]` with `enabled = true`
/// appended when the file does not name `update_plan` (written in place, so the file keeps
/// its mode, owner and links; made 0600 when there was none); a file that names it already is
/// left as it is (its TOML is the user's: planlog does not rewrite it).
fn switch_update_plan_on(config: &Path) -> std::io::Result<Switch> {
    let text = match planlog_import::read_regular(config) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if text.as_deref().is_some_and(|t| t.contains("update_plan")) {
        return Ok(Switch::There);
    }
    let mut block = String::new();
    if let Some(t) = text.as_deref().filter(|t| !t.is_empty()) {
        if !t.ends_with('\n') {
            block.push('\n');
        }
        block.push('\n');
    }
    block.push_str("# Added by planlog install codex: Codex's plan tool (update_plan), off by default.\n[tools.update_plan]\nenabled = true\n");
    if let Some(dir) = config.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(config)?;
    std::io::Write::write_all(&mut file, block.as_bytes())?;
    file.sync_all()?;
    Ok(Switch::Added)
}
