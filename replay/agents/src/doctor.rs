//! What `planlog doctor` finds: for each agent on this machine (its binary on the PATH, or its
//! folder), its version, whether its plan tools are offered, whether planlog's hooks are
//! installed and would run (their program found on the PATH), and which store they write to.
//! Each finding that stops capture says what to do.
//!
//! Read only: files are read, `<agent> --version` is run (at most [`VERSION_WAIT`]), nothing is
//! written. The machine is given ([`Machine`]) so that a test can build one.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::hook::Agent;
use crate::settings::{TODO_TOOLS_VAR, is_planlog_command, shell_words};

/// How long `<agent> --version` may take.
pub const VERSION_WAIT: Duration = Duration::from_secs(5);

/// The first Claude Code version whose newest models have no plan tools without
/// [`TODO_TOOLS_VAR`].
pub const CLAUDE_GATE: (u64, u64, u64) = (2, 1, 233);

/// What the doctor looks at.
#[derive(Debug, Clone)]
pub struct Machine {
    /// The user's home folder.
    pub home: PathBuf,
    /// The project: the git root of the current folder, else the folder.
    pub project: PathBuf,
    /// The PATH the agents see (this process's).
    pub path: Option<OsString>,
    /// The environment variables that move agents' folders or open their gates.
    pub env: HashMap<String, String>,
}

impl Machine {
    /// The variables [`Machine::env`] keeps.
    pub const VARS: [&'static str; 4] = [
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
        TODO_TOOLS_VAR,
    ];

    /// `var`, when set and not empty.
    fn var(&self, var: &str) -> Option<&str> {
        self.env
            .get(var)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// `program` as the PATH finds it (a name), or as it is (a path), when it is an
    /// executable file.
    pub fn find(&self, program: &str) -> Option<PathBuf> {
        let runnable = |p: &Path| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        };
        if program.contains('/') {
            let p = PathBuf::from(program);
            return runnable(&p).then_some(p);
        }
        std::env::split_paths(self.path.as_ref()?)
            .map(|dir| dir.join(program))
            .find(|p| runnable(p))
    }
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Capture works as it should here.
    Ok,
    /// Worth knowing; it stops nothing planlog was asked to do (the hooks are not installed for
    /// this agent, so its gate does not matter yet).
    Note,
    /// It stops planlog from recording this agent's plans.
    Problem,
}

/// One thing the doctor says of an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How much it matters.
    pub level: Level,
    /// What was found.
    pub text: String,
    /// What to do about it.
    pub fix: Option<String>,
}

impl Finding {
    fn ok(text: String) -> Self {
        Self {
            level: Level::Ok,
            text,
            fix: None,
        }
    }

    fn note(text: String) -> Self {
        Self {
            level: Level::Note,
            text,
            fix: None,
        }
    }

    fn problem(text: String, fix: String) -> Self {
        Self {
            level: Level::Problem,
            text,
            fix: Some(fix),
        }
    }

    /// Whether it stops capture.
    pub fn is_problem(&self) -> bool {
        self.level == Level::Problem
    }
}

/// What the doctor found of one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The agent, as people know it.
    pub name: &'static str,
    /// Its binary, when on the PATH.
    pub binary: Option<PathBuf>,
    /// What `--version` said (its first version-like word).
    pub version: Option<String>,
    /// Whether planlog's hooks for it are installed anywhere the doctor looks.
    pub hooks: bool,
    /// The findings, in order.
    pub findings: Vec<Finding>,
}

/// An agent the doctor knows: its binary, its folder, and whether planlog captures it.
struct Known {
    name: &'static str,
    binary: &'static str,
    folder: PathBuf,
    captured: Option<Agent>,
}

/// Every agent found on `machine`, with what the doctor says of it.
pub fn examine(machine: &Machine) -> Vec<Report> {
    let home = |dir: &str| machine.home.join(dir);
    let gemini_home = machine
        .var("GEMINI_CLI_HOME")
        .map_or_else(|| machine.home.clone(), PathBuf::from);
    let known = [
        Known {
            name: "Claude Code",
            binary: "claude",
            folder: claude_dir(machine),
            captured: Some(Agent::ClaudeCode),
        },
        Known {
            name: "Codex",
            binary: "codex",
            folder: codex_dir(machine),
            captured: Some(Agent::Codex),
        },
        Known {
            name: "Gemini CLI",
            binary: "gemini",
            folder: gemini_home.join(".gemini"),
            captured: Some(Agent::Gemini),
        },
        Known {
            name: "opencode",
            binary: "opencode",
            folder: home(".config/opencode"),
            captured: Some(Agent::Opencode),
        },
        Known {
            name: "Copilot CLI",
            binary: "copilot",
            folder: home(".copilot"),
            captured: Some(Agent::Copilot),
        },
        Known {
            name: "Cursor",
            binary: "cursor-agent",
            folder: home(".cursor"),
            captured: Some(Agent::Cursor),
        },
    ];
    known
        .into_iter()
        .filter_map(|k| {
            let binary = machine.find(k.binary);
            if binary.is_none() && !k.folder.is_dir() {
                return None;
            }
            let version = binary.as_deref().and_then(version_of);
            let mut report = Report {
                name: k.name,
                binary,
                version,
                hooks: false,
                findings: Vec::new(),
            };
            match k.captured {
                Some(agent) => examine_agent(machine, agent, &mut report),
                None => report.findings.push(Finding::note(format!(
                    "planlog does not capture {} live yet; `planlog import` reads its recordings where it has a format for them",
                    k.name
                ))),
            }
            Some(report)
        })
        .collect()
}

/// The Claude Code folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn claude_dir(machine: &Machine) -> PathBuf {
    machine
        .var("CLAUDE_CONFIG_DIR")
        .map_or_else(|| machine.home.join(".claude"), PathBuf::from)
}

/// The Codex folder: `$CODEX_HOME`, else `~/.codex`.
fn codex_dir(machine: &Machine) -> PathBuf {
    machine
        .var("CODEX_HOME")
        .map_or_else(|| machine.home.join(".codex"), PathBuf::from)
}

/// Copilot CLI's folder: `$COPILOT_HOME`, else `~/.copilot`.
fn copilot_dir(machine: &Machine) -> PathBuf {
    machine
        .var("COPILOT_HOME")
        .map_or_else(|| machine.home.join(".copilot"), PathBuf::from)
}

/// The files where `agent`'s hooks may be, for the user and for the project.
fn hook_files(machine: &Machine, agent: Agent) -> Vec<PathBuf> {
    let project = &machine.project;
    match agent {
        Agent::ClaudeCode => vec![
            claude_dir(machine).join("settings.json"),
            project.join(".claude/settings.json"),
            project.join(".claude/settings.local.json"),
        ],
        Agent::Codex => vec![
            codex_dir(machine).join("hooks.json"),
            project.join(".codex/hooks.json"),
        ],
        Agent::Gemini => vec![
            machine
                .var("GEMINI_CLI_HOME")
                .map_or_else(|| machine.home.clone(), PathBuf::from)
                .join(".gemini/settings.json"),
            project.join(".gemini/settings.json"),
        ],
        Agent::Cursor => vec![
            machine.home.join(".cursor/hooks.json"),
            project.join(".cursor/hooks.json"),
        ],
        Agent::Copilot => vec![
            copilot_dir(machine)
                .join("hooks")
                .join(crate::copilot::HOOKS_FILE),
            project
                .join(".github/hooks")
                .join(crate::copilot::HOOKS_FILE),
        ],
        Agent::Opencode => vec![
            machine
                .home
                .join(".config/opencode/plugins")
                .join(crate::opencode::PLUGIN_FILE),
            project
                .join(".opencode/plugins")
                .join(crate::opencode::PLUGIN_FILE),
        ],
    }
}

/// The commands of planlog's hooks for `agent` in each of its files.
fn installed(machine: &Machine, agent: Agent) -> Vec<(PathBuf, Vec<String>)> {
    hook_files(machine, agent)
        .into_iter()
        .filter_map(|file| {
            let commands = if agent == Agent::Opencode {
                let text = planlog_import::read_regular(&file).ok()?;
                crate::opencode::is_planlog_plugin(&text)
                    .then(|| plugin_command(&text))
                    .flatten()
                    .into_iter()
                    .collect()
            } else {
                planlog_commands(&json_file(&file)?, agent)
            };
            Some((file, commands))
        })
        .collect()
}

/// The command planlog's opencode plugin runs (its `COMMAND` argv), as a command line.
fn plugin_command(text: &str) -> Option<String> {
    let line = text
        .lines()
        .find(|l| l.starts_with("const COMMAND: string[] = "))?;
    let argv: Vec<String> =
        serde_json::from_str(line.trim_start_matches("const COMMAND: string[] = ")).ok()?;
    Some(
        argv.iter()
            .map(|w| {
                if !w.is_empty()
                    && w.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
                {
                    w.clone()
                } else {
                    format!("'{}'", w.replace('\'', "'\\''"))
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// A file's JSON, when it is there and reads.
fn json_file(path: &Path) -> Option<Value> {
    serde_json::from_str(&planlog_import::read_regular(path).ok()?).ok()
}

/// The commands of planlog's hooks for `agent` in `settings`.
fn planlog_commands(settings: &Value, agent: Agent) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let Some(events) = settings.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for groups in events.values() {
        for group in groups.as_array().into_iter().flatten() {
            // Matcher groups hold handlers; a flat file (Cursor's) holds them directly.
            let handlers: Vec<&Value> = match group.get("hooks").and_then(Value::as_array) {
                Some(list) => list.iter().collect(),
                None => vec![group],
            };
            for handler in handlers {
                // Copilot names the shell: `bash` (and `powershell`).
                let Some(command) = handler
                    .get("command")
                    .or_else(|| handler.get("bash"))
                    .and_then(Value::as_str)
                else {
                    continue;
                };
                let words = shell_words(command).unwrap_or_default();
                if is_planlog_command(command)
                    && words.get(2).map(String::as_str) == Some(agent.word())
                    && !out.iter().any(|c| c == command)
                {
                    out.push(command.to_owned());
                }
            }
        }
    }
    out
}

fn examine_agent(machine: &Machine, agent: Agent, report: &mut Report) {
    let files: Vec<(PathBuf, Value)> = hook_files(machine, agent)
        .into_iter()
        .filter_map(|f| json_file(&f).map(|v| (f, v)))
        .collect();
    let tools = plan_tools(machine, agent, report.version.as_deref(), &files);
    let install = format!("planlog install {}", agent.word());
    let install = install.as_str();
    for (file, commands) in installed(machine, agent) {
        for command in commands {
            let file = &file;
            report.hooks = true;
            report
                .findings
                .push(hook_finding(machine, file, &command, install));
        }
    }
    // A gate matters once planlog's hooks are there to record what the tools do.
    report.findings.insert(
        0,
        match tools.level {
            Level::Problem if !report.hooks => Finding {
                level: Level::Note,
                ..tools
            },
            _ => tools,
        },
    );
    if !report.hooks {
        report.findings.push(Finding::note(format!(
            "planlog's hooks are not installed for it (looked in {}); `{install}` records its plans",
            hook_files(machine, agent)
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
}

/// A store address as it may be shown: a URL's password (`user:secret@`) as `***`.
fn without_password(db: &str) -> String {
    let Some((scheme, rest)) = db.split_once("://") else {
        return db.to_owned();
    };
    match rest.split_once('@') {
        Some((auth, host)) if auth.contains(':') => {
            let user = auth.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}")
        }
        _ => db.to_owned(),
    }
}

/// Whether the hook `command` in `file` would run, and where it writes.
fn hook_finding(machine: &Machine, file: &Path, command: &str, install: &str) -> Finding {
    let words = shell_words(command).unwrap_or_default();
    let program = words.first().cloned().unwrap_or_default();
    let store = words
        .iter()
        .position(|w| w == "--db")
        .and_then(|i| words.get(i + 1))
        .map_or_else(
            || "the store of the project each session runs in (.planlog/planlog.redb at its git root, else the user's data folder)".to_owned(),
            |db| without_password(db),
        );
    let enforcing = if words.iter().any(|w| w == "--enforce") {
        ", blocking what the rules refuse"
    } else {
        ""
    };
    match machine.find(&program) {
        Some(found) => Finding::ok(format!(
            "planlog's hooks in {} run {} and write to {store}{enforcing}",
            file.display(),
            found.display()
        )),
        None => Finding::problem(
            format!(
                "planlog's hooks in {} run `{program}`, which {}: they record nothing",
                file.display(),
                if program.contains('/') {
                    "is not there"
                } else {
                    "is not on the PATH"
                }
            ),
            format!(
                "put planlog on the PATH (`cargo install --locked --path replay/planlog`), then run `{install}` again{}",
                if file.starts_with(&machine.project) {
                    ""
                } else {
                    " --user"
                }
            ),
        ),
    }
}

/// Whether `agent` offers its plan tools here.
fn plan_tools(
    machine: &Machine,
    agent: Agent,
    version: Option<&str>,
    files: &[(PathBuf, Value)],
) -> Finding {
    match agent {
        Agent::ClaudeCode => {
            let gated = version.and_then(triple).is_none_or(|v| v >= CLAUDE_GATE);
            let set_in = files.iter().find_map(|(f, v)| {
                (v.get("env")
                    .and_then(|e| e.get(TODO_TOOLS_VAR))
                    .and_then(Value::as_str)
                    == Some("1"))
                .then(|| f.display().to_string())
            });
            match (gated, set_in, machine.var(TODO_TOOLS_VAR) == Some("1")) {
                (false, _, _) => Finding::ok(
                    "its plan tools (TodoWrite, the Task tools) are offered on every model of this version".to_owned(),
                ),
                (true, Some(file), _) => Finding::ok(format!(
                    "its plan tools are on: {TODO_TOOLS_VAR}=1 in {file}"
                )),
                (true, None, true) => Finding::ok(format!(
                    "its plan tools are on: {TODO_TOOLS_VAR}=1 in this environment"
                )),
                (true, None, false) => Finding::problem(
                    format!(
                        "its plan tools are off on Opus 4.8, Sonnet 5 and later models{}: {TODO_TOOLS_VAR} is not 1, so there is nothing to record",
                        if version.is_some() {
                            " (since 2.1.233)"
                        } else {
                            " (its version is unknown; 2.1.233 and later)"
                        }
                    ),
                    "`planlog install claude-code` sets it in the settings beside its hooks (or export CLAUDE_CODE_ENABLE_TODO_TOOLS=1)".to_owned(),
                ),
            }
        }
        Agent::Codex => {
            let configs = [
                codex_dir(machine).join("config.toml"),
                machine.project.join(".codex/config.toml"),
            ];
            match configs.iter().find(|c| update_plan_enabled(c)) {
                Some(c) => Finding::ok(format!(
                    "its plan tool is on ([tools.update_plan] enabled = true in {})",
                    c.display()
                )),
                None => Finding::problem(
                    "its plan tool (update_plan) is off: Codex offers it only with [tools.update_plan] enabled = true in config.toml (off by default since 0.152)".to_owned(),
                    "`planlog install codex` adds it (or add it to config.toml yourself)".to_owned(),
                ),
            }
        }
        Agent::Opencode => {
            Finding::ok("its plan tool (todowrite) is offered by default".to_owned())
        }
        Agent::Copilot => Finding::note(
            "Copilot plans in a todos table its sql tool edits; where that table lives (session-state/<session>/session.db under Copilot's folder) is not confirmed by any source planlog has: check `planlog sessions` for a cp-… session after a conversation that planned".to_owned(),
        ),
        Agent::Cursor => Finding::note(
            "whether Cursor runs its hooks for its todo tool (TodoWrite), and under that name, is not confirmed by any source planlog has: check `planlog sessions` for a cu-… session after a conversation that planned".to_owned(),
        ),
        Agent::Gemini => {
            let setting = |path: &[&str]| {
                files.iter().rev().find_map(|(_, v)| {
                    path.iter()
                        .try_fold(v, |v, k| v.get(k))
                        .filter(|v| !v.is_null())
                        .cloned()
                })
            };
            if setting(&["experimental", "taskTracker"]) == Some(Value::Bool(true)) {
                return Finding::ok(
                    "experimental.taskTracker is on: it plans with the task tracker's tools, which planlog records as tasks".to_owned(),
                );
            }
            let model = setting(&["model", "name"]);
            match model.as_ref().and_then(Value::as_str) {
                Some(m) if m.starts_with("gemini-3") || m.contains("preview") => {
                    Finding::problem(
                        format!(
                            "the model in its settings ({m}) gets no write_todos (Gemini offers it only on Gemini 2 models that are not previews), and the task tracker is off: nothing to record"
                        ),
                        "turn the task tracker on (experimental.taskTracker: true in settings.json), or choose a Gemini 2 model".to_owned(),
                    )
                }
                _ => Finding::ok(
                    "write_todos is offered on Gemini 2 models that are not previews; on Gemini 3 and preview models it plans only with the task tracker (experimental.taskTracker)".to_owned(),
                ),
            }
        }
    }
}

/// Whether `config` (a Codex `config.toml`) says `[tools.update_plan]` `enabled = true`.
fn update_plan_enabled(config: &Path) -> bool {
    let Ok(text) = planlog_import::read_regular(config) else {
        return false;
    };
    let mut in_table = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_table = line == "[tools.update_plan]";
            continue;
        }
        let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        if (in_table && compact == "enabled=true") || compact == "tools.update_plan.enabled=true" {
            return true;
        }
    }
    false
}

/// `2.1.233` in a version text.
fn triple(version: &str) -> Option<(u64, u64, u64)> {
    let mut parts = version.split('.').map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??, parts.next()??))
}

/// The first version-like word `binary --version` prints, within [`VERSION_WAIT`].
fn version_of(binary: &Path) -> Option<String> {
    use std::io::Read;
    let spawn = || {
        std::process::Command::new(binary)
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
    };
    // A program being written (an agent updating itself) cannot run for a moment.
    let mut child = (0..3)
        .find_map(|attempt| match spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempt < 2 => {
                std::thread::sleep(Duration::from_millis(100));
                None
            }
            other => Some(other),
        })?
        .ok()?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < VERSION_WAIT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut text = String::new();
    child
        .stdout
        .take()?
        .take(64 * 1024)
        .read_to_string(&mut text)
        .ok()?;
    text.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
        .map(|w| w.trim_start_matches('v'))
        .find(|w| triple(w).is_some())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_the_codex_switch_are_read_as_written() {
        assert_eq!(triple("2.1.233"), Some((2, 1, 233)));
        assert_eq!(triple("2.1.233-beta"), None);
        assert!(triple("2.1.300").unwrap() >= CLAUDE_GATE);
        assert!(triple("2.1.100").unwrap() < CLAUDE_GATE);
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        for (text, on) in [
            ("[tools.update_plan]\nenabled = true\n", true),
            ("[tools.update_plan]\nenabled = false\n", false),
            ("[tools.other]\nenabled = true\n", false),
            ("tools.update_plan.enabled = true\n", true),
            ("[tools.update_plan]\n\n[x]\nenabled = true\n", false),
        ] {
            std::fs::write(&config, text).unwrap();
            assert_eq!(update_plan_enabled(&config), on, "{text}");
        }
    }
}
