//! `planlog doctor` on machines the tests set up: fake agent folders and settings, a fake
//! `claude` that prints a version, planlog's hooks installed by `planlog install` (or broken
//! by hand). Each problem that stops capture is found and says what to do (exit 1); a machine
//! where capture works says so (exit 0).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// A user's machine: a home, a git project, a folder of programs on the PATH.
struct Machine {
    dir: tempfile::TempDir,
}

/// The result of one command.
struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Machine {
    fn new() -> Self {
        let m = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(m.home()).unwrap();
        std::fs::create_dir_all(m.project().join(".git")).unwrap();
        std::fs::create_dir_all(m.bin()).unwrap();
        m
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("app")
    }

    fn bin(&self) -> PathBuf {
        self.dir.path().join("bin")
    }

    /// A program `name` on the PATH that prints `version` for `--version`.
    fn fake_agent(&self, name: &str, version: &str) {
        let path = self.bin().join(name);
        std::fs::write(&path, format!("#!/bin/sh\necho '{version}'\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// planlog itself on the PATH.
    fn planlog_on_path(&self) {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_planlog"), self.bin().join("planlog"))
            .unwrap();
    }

    /// `planlog ARGS…` in the project, with this machine's HOME and PATH.
    fn planlog(&self, args: &[&str], env: &[(&str, &str)]) -> Ran {
        let mut c = Command::new(env!("CARGO_BIN_EXE_planlog"));
        c.args(args)
            .current_dir(self.project())
            .env("HOME", self.home())
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin().display()))
            .env("NO_COLOR", "1");
        for var in [
            "CLAUDE_CONFIG_DIR",
            "CODEX_HOME",
            "GEMINI_CLI_HOME",
            "CLAUDE_CODE_ENABLE_TODO_TOOLS",
            "PLANLOG_DB",
        ] {
            c.env_remove(var);
        }
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        Ran {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn doctor(&self) -> Ran {
        self.planlog(&["doctor"], &[])
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_machine_without_agents_says_so_and_is_well() {
    let m = Machine::new();
    let r = m.doctor();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("no agent found"), "{}", r.stdout);
}

#[test]
fn claude_codes_gate_its_version_and_the_hooks_are_reported_with_what_to_do() {
    let m = Machine::new();
    m.planlog_on_path();
    m.fake_agent("claude", "2.1.300 (Claude Code)");
    // Found, but planlog records nothing for it yet: said, exit 1 (nothing records at all).
    let r = m.doctor();
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains(&format!(
            "Claude Code 2.1.300 ({})",
            m.bin().join("claude").display()
        )),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("no agent here records into planlog"),
        "{}",
        r.stderr
    );
    // Hooks installed, the plan tools' opt-in left alone: on 2.1.300 nothing would be recorded.
    let installed = m.planlog(&["install", "claude-code", "--leave-todo-tools"], &[]);
    assert_eq!(installed.code, 0, "{}", installed.stderr);
    let r = m.doctor();
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("✘ its plan tools are off") && r.stdout.contains("(since 2.1.233)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("→ `planlog install claude-code` sets it"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!(
            "✔ planlog's hooks in {} run {}",
            m.project().join(".claude/settings.json").display(),
            m.bin().join("planlog").display()
        )),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("write to the store of the project"),
        "{}",
        r.stdout
    );
    // Exported in the environment, or set by install: well.
    let r = m.planlog(&["doctor"], &[("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1")]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(m.planlog(&["install", "claude-code"], &[]).code, 0);
    let r = m.doctor();
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("its plan tools are on: CLAUDE_CODE_ENABLE_TODO_TOOLS=1 in"),
        "{}",
        r.stdout
    );
    // An older Claude Code offers them anyway.
    m.fake_agent("claude", "2.1.100 (Claude Code)");
    assert_eq!(
        m.planlog(&["doctor"], &[]).code,
        0,
        "the gate does not matter before 2.1.233"
    );
    // planlog gone from the PATH: the hooks would not run.
    std::fs::remove_file(m.bin().join("planlog")).unwrap();
    let r = m.doctor();
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("run `planlog`, which is not on the PATH: they record nothing"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("put planlog on the PATH"), "{}", r.stdout);
    // JSON: one object per agent.
    let r = m.planlog(&["doctor", "--json"], &[]);
    let first: Value = serde_json::from_str(r.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["agent"], "Claude Code");
    assert_eq!(first["version"], "2.1.100");
    assert_eq!(first["hooks"], true);
    assert!(
        first["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["level"] == "problem")
    );
}

#[test]
fn codex_and_gemini_gates_and_a_named_store_are_reported() {
    let m = Machine::new();
    m.planlog_on_path();
    let codex_home = m.dir.path().join("codex-home");
    let env = [("CODEX_HOME", codex_home.to_str().unwrap())];
    // Codex's folder only (no binary): its hooks, with a named store; install switched the
    // plan tool on.
    let db = m.dir.path().join("team.redb");
    let r = m.planlog(
        &["--db", db.to_str().unwrap(), "install", "codex", "--user"],
        &env,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = m.planlog(&["doctor"], &env);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("Codex (its folder is here; not on the PATH)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("its plan tool is on"), "{}", r.stdout);
    assert!(
        r.stdout.contains(&format!("write to {}", db.display())),
        "{}",
        r.stdout
    );
    // The switch taken out by hand: a problem, with the fix.
    write(&codex_home.join("config.toml"), "model = \"gpt-5.5\"\n");
    let r = m.planlog(&["doctor"], &env);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("✘ its plan tool (update_plan) is off"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("→ `planlog install codex` adds it"),
        "{}",
        r.stdout
    );

    // Gemini with planlog's hooks, on a Gemini 3 model and then with the tracker on.
    let m = Machine::new();
    m.planlog_on_path();
    m.fake_agent("gemini", "0.61.0");
    assert_eq!(m.planlog(&["install", "gemini"], &[]).code, 0);
    let r = m.doctor();
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("Gemini CLI 0.61.0"), "{}", r.stdout);
    write(
        &m.home().join(".gemini/settings.json"),
        r#"{"model": {"name": "gemini-3-pro-preview"}}"#,
    );
    let r = m.doctor();
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("gemini-3-pro-preview) gets no write_todos"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("→ turn the task tracker on"),
        "{}",
        r.stdout
    );
    // With the tracker on, Gemini 3 plans with tools planlog records.
    write(
        &m.home().join(".gemini/settings.json"),
        r#"{"model": {"name": "gemini-3-pro-preview"}, "experimental": {"taskTracker": true}}"#,
    );
    let r = m.doctor();
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.contains("experimental.taskTracker is on"),
        "{}",
        r.stdout
    );
    // opencode without planlog's plugin: said, stops nothing; with it, its command checked.
    m.fake_agent("opencode", "1.18.33");
    write(&m.home().join(".gemini/settings.json"), "{}");
    let r = m.doctor();
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.contains("opencode 1.18.33")
            && r.stdout
                .contains("`planlog install opencode` records its plans"),
        "{}",
        r.stdout
    );
    assert_eq!(m.planlog(&["install", "opencode"], &[]).code, 0);
    let r = m.doctor();
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.contains(&format!(
            "planlog's hooks in {} run {}",
            m.project().join(".opencode/plugins/planlog.ts").display(),
            m.bin().join("planlog").display()
        )),
        "{}",
        r.stdout
    );
    // Cursor with planlog's flat hooks: read there too, and what is not confirmed said.
    assert_eq!(m.planlog(&["install", "cursor"], &[]).code, 0);
    std::fs::create_dir_all(m.home().join(".cursor")).unwrap();
    let r = m.doctor();
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.contains(&format!(
            "planlog's hooks in {} run {}",
            m.project().join(".cursor/hooks.json").display(),
            m.bin().join("planlog").display()
        )) && r.stdout.contains("is not confirmed"),
        "{}",
        r.stdout
    );
    // Copilot CLI, with no hooks: doctor says how to install them; with planlog's hooks file:
    // read there (Copilot's `bash` handlers), and what is not confirmed said.
    m.fake_agent("copilot", "1.0.102");
    let r = m.doctor();
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("`planlog install copilot` records its plans"),
        "{}",
        r.stdout
    );
    assert_eq!(m.planlog(&["install", "copilot"], &[]).code, 0);
    let r = m.doctor();
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.contains(&format!(
            "planlog's hooks in {} run {}",
            m.project().join(".github/hooks/planlog.json").display(),
            m.bin().join("planlog").display()
        )) && r.stdout.contains("todos table its sql tool edits"),
        "{}",
        r.stdout
    );
}
