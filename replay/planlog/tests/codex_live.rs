//! planlog and the real Codex CLI (the npm package `@openai/codex`), run headless against a
//! scripted model on loopback (the Responses API): a session that plans with `update_plan`,
//! resumed with another plan, then its rollout imported as a user imports it. What Codex
//! writes today is what the importer is held to, not only the rollouts we wrote by hand.
//!
//! Codex is found at `PLANLOG_CODEX`, else in `target/agents` (where `.ci/run` installs it).
//! Without it the tests say SKIPPED, unless `PLANLOG_REQUIRE_AGENTS=1` (CI), which makes them
//! fail.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

mod common;
use common::model_server::{ModelServer, Step, last_user_message};

/// Codex, when it is here.
fn codex() -> Option<PathBuf> {
    common::agent("Codex", "PLANLOG_CODEX", "codex", "@openai/codex")
}

/// A user's machine: `CODEX_HOME` pointing at the scripted model, a trusted project.
struct Machine {
    codex: PathBuf,
    dir: tempfile::TempDir,
    model: ModelServer,
}

impl Machine {
    fn new() -> Option<Self> {
        let m = Self {
            codex: codex()?,
            dir: tempfile::tempdir().unwrap(),
            model: ModelServer::start(),
        };
        std::fs::create_dir_all(m.codex_home()).unwrap();
        std::fs::create_dir_all(m.project().join(".git")).unwrap();
        // The plan tool is off unless turned on (Codex 0.152+); the project must be trusted.
        std::fs::write(
            m.codex_home().join("config.toml"),
            format!(
                "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"PLANLOG_TEST_MODEL_KEY\"\n\n[tools.update_plan]\nenabled = true\n\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                m.model.url(),
                m.project().display()
            ),
        )
        .unwrap();
        Some(m)
    }

    fn codex_home(&self) -> PathBuf {
        self.dir.path().join("home/.codex")
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("app")
    }

    /// `codex exec --json ARGS…` in the project: its JSON events.
    fn exec(&self, args: &[&str]) -> Vec<Value> {
        let mut c = Command::new(&self.codex);
        c.arg("exec")
            .args(args)
            .current_dir(self.project())
            .env("CODEX_HOME", self.codex_home())
            .env("HOME", self.dir.path().join("home"))
            .env("PLANLOG_TEST_MODEL_KEY", "test")
            .env_remove("OPENAI_API_KEY");
        common::json_lines_of("codex exec", c)
    }

    /// `planlog install codex --user` into this `CODEX_HOME`, as a user runs it (planlog not
    /// on the PATH); it must succeed.
    fn install(&self) {
        common::planlog_ok(
            self.dir.path().join("planlog.redb").as_os_str(),
            &["install", "codex", "--user"],
            |c| {
                c.env("CODEX_HOME", self.codex_home())
                    .env("PATH", "/usr/bin:/bin");
            },
        );
    }

    /// The rollout Codex wrote for thread `id`.
    fn rollout(&self, id: &str) -> PathBuf {
        let name = format!("-{id}.jsonl");
        common::find_file(&self.codex_home().join("sessions"), &|p| {
            p.to_string_lossy().ends_with(&name)
        })
        .expect("Codex wrote the session's rollout")
    }

    /// `planlog --db STORE ARGS…`: its stdout; it must succeed.
    fn planlog(&self, args: &[&str]) -> String {
        common::planlog_ok(
            self.dir.path().join("planlog.redb").as_os_str(),
            args,
            |_| {},
        )
    }
}

fn plan(steps: &[(&str, &str)]) -> Value {
    json!({"explanation": "tests first", "plan": steps.iter().map(|(s, st)| json!({"step": s, "status": st})).collect::<Vec<_>>()})
}

/// The model's script: "plan the parser" plans two steps, "go on with the parser" finishes the
/// first; each call's output is answered with text.
fn two_plans(model: &ModelServer) {
    model.script([
        Step::tool(
            "plan the parser",
            "call_plan_1",
            "update_plan",
            plan(&[
                ("Write parser tests", "in_progress"),
                ("Implement parser", "pending"),
            ]),
        ),
        Step::text("call_plan_1", "Planned."),
        Step::tool(
            "go on with the parser",
            "call_plan_2",
            "update_plan",
            plan(&[
                ("Write parser tests", "completed"),
                ("Implement parser", "in_progress"),
            ]),
        ),
        Step::text("call_plan_2", "Going on."),
    ]);
}

/// The thread (session) id `codex exec --json` names.
fn thread_of(events: &[Value]) -> String {
    events
        .iter()
        .find(|e| e["type"] == "thread.started")
        .and_then(|e| e["thread_id"].as_str())
        .expect("codex exec --json names its thread")
        .to_owned()
}

#[test]
fn a_real_codex_session_planned_and_resumed_imports_call_for_call() {
    let Some(m) = Machine::new() else { return };
    two_plans(&m.model);
    let first = m.exec(&["--json", "--skip-git-repo-check", "plan the parser"]);
    let thread = thread_of(&first);
    m.exec(&[
        "resume",
        "--json",
        "--skip-git-repo-check",
        &thread,
        "go on with the parser",
    ]);
    m.model.assert_all_answered();

    let rollout = m.rollout(&thread);
    let rollout = rollout.to_str().unwrap();
    m.planlog(&["import", rollout]);
    let session = format!("cx-{thread}");
    let history = m.planlog(&["history", &session]);
    // The two calls, by the ids the model gave them, in order, with their explanation.
    let writes: Vec<&str> = history
        .lines()
        .filter(|l| l.contains("plan_written"))
        .collect();
    assert_eq!(writes.len(), 2, "{history}");
    assert!(
        writes[0].contains("[call_plan_1]") && writes[1].contains("[call_plan_2]"),
        "{history}"
    );
    assert!(
        writes[0].contains("explanation: \"tests first\""),
        "{history}"
    );
    assert!(
        history.contains("\"Plan updated\""),
        "the result the model read: {history}"
    );
    let shown = m.planlog(&["show", &session]);
    assert!(
        shown.contains("1. ✔ Write parser tests") && shown.contains("2. ▶ Implement parser"),
        "{shown}"
    );
    // What Codex says the session is.
    let sessions = m.planlog(&["sessions"]);
    assert!(
        sessions.contains("codex 0.") && sessions.contains("plan the parser"),
        "{sessions}"
    );
    assert!(m.planlog(&["verify"]).contains("0 problems"));
    // Imported again: nothing new.
    m.planlog(&["import", rollout]);
    assert_eq!(m.planlog(&["history", &session]), history);
}

/// `planlog install codex`, then `planlog hook codex` as Codex runs it (the test runs the
/// hooks untrusted, as they run once a user trusted them in the TUI): every
/// `update_plan` recorded as it runs, the plan back in the model's context on resume, and the
/// rollout imported afterwards adding no call twice.
#[test]
fn codex_hooks_capture_every_plan_and_put_it_back_on_resume() {
    let Some(m) = Machine::new() else { return };
    // As a user installs it: `planlog install codex --user` into this CODEX_HOME, on a config
    // whose plan tool is not switched on yet (install does that).
    let config = m.codex_home().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("[tools.update_plan]\nenabled = true\n", ""),
    )
    .unwrap();
    assert!(
        !std::fs::read_to_string(&config)
            .unwrap()
            .contains("update_plan")
    );
    m.install();
    assert!(
        std::fs::read_to_string(&config)
            .unwrap()
            .contains("[tools.update_plan]\nenabled = true")
    );
    two_plans(&m.model);
    let trust = "--dangerously-bypass-hook-trust";
    let first = m.exec(&["--json", trust, "--skip-git-repo-check", "plan the parser"]);
    let thread = thread_of(&first);
    let session = format!("cx-{thread}");
    // Captured while the session ran, in the session an import writes.
    let history = m.planlog(&["history", &session]);
    assert!(
        history.contains("captured live from codex session"),
        "{history}"
    );
    assert!(
        history.contains("[call_plan_1]") && history.contains("explanation: \"tests first\""),
        "{history}"
    );
    let asked_before = m.model.requests().len();
    m.exec(&[
        "resume",
        "--json",
        trust,
        "--skip-git-repo-check",
        &thread,
        "go on with the parser",
    ]);
    m.model.assert_all_answered();
    // The plan went back into the model's first request of the resumed session.
    let resumed = m.model.requests()[asked_before].to_string();
    assert!(
        resumed.contains(r"[>] Write parser tests\n[ ] Implement parser")
            && resumed.contains("update_plan replaces the plan"),
        "the resumed session's first request lacks the plan"
    );
    let history = m.planlog(&["history", &session]);
    assert!(history.contains("plan_restored"), "{history}");
    assert!(history.contains("[call_plan_2]"), "{history}");
    let shown = m.planlog(&["show", &session]);
    assert!(
        shown.contains("1. ✔ Write parser tests") && shown.contains("2. ▶ Implement parser"),
        "{shown}"
    );
    // The rollout imported afterwards: the calls are known by their ids, nothing twice.
    let writes = |h: &str| h.lines().filter(|l| l.contains("plan_written")).count();
    assert_eq!(writes(&history), 2, "{history}");
    m.planlog(&["import", m.rollout(&thread).to_str().unwrap()]);
    let after = m.planlog(&["history", &session]);
    assert_eq!(writes(&after), 2, "{after}");
    assert!(m.planlog(&["verify"]).contains("0 problems"));
}

/// A Codex session whose context fills up is compacted by Codex (its automatic compaction,
/// `model_auto_compact_token_limit`): planlog's `SessionStart` hook (source `compact`) records
/// the compaction and puts the plan back, and the request Codex sends after compacting carries
/// it.
#[test]
fn codex_compacting_a_session_gets_the_plan_back_in_its_next_request() {
    let Some(m) = Machine::new() else { return };
    let config = m.codex_home().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("model_auto_compact_token_limit = 1000\n{text}"),
    )
    .unwrap();
    m.install();
    two_plans(&m.model);
    let trust = "--dangerously-bypass-hook-trust";
    let first = m.exec(&["--json", trust, "--skip-git-repo-check", "plan the parser"]);
    let thread = thread_of(&first);
    let session = format!("cx-{thread}");
    // The next answer says the context is nearly full: Codex compacts before going on.
    m.model.report_prompt_tokens_once(5_000);
    let asked_before = m.model.requests().len();
    m.exec(&[
        "resume",
        "--json",
        trust,
        "--skip-git-repo-check",
        &thread,
        "go on with the parser",
    ]);
    let history = m.planlog(&["history", &session]);
    assert!(
        history.contains("context_compacted"),
        "Codex compacted (planlog's SessionStart compact hook ran): {history}"
    );
    let restored_after_compact = history
        .lines()
        .any(|l| l.contains("plan_restored") && l.contains("after compact"));
    assert!(restored_after_compact, "{history}");
    // The request Codex sends after its compaction request carries the plan as it is after
    // call_plan_2, which ran just before: no text put back before the compaction shows it.
    let requests = m.model.requests();
    let compaction = requests[asked_before..]
        .iter()
        .position(|r| last_user_message(r).contains("CONTEXT CHECKPOINT COMPACTION"))
        .expect("Codex asked the model for a compaction summary");
    let after = requests[asked_before + compaction + 1..]
        .first()
        .expect("Codex went on after compacting")
        .to_string();
    assert!(
        after.contains(r"[x] Write parser tests\n[>] Implement parser")
            && after.contains("update_plan replaces the plan"),
        "the request after the compaction lacks the plan: {after}"
    );
    // The rollout imported afterwards: one compaction, each call once.
    m.planlog(&["import", m.rollout(&thread).to_str().unwrap()]);
    let history = m.planlog(&["history", &session]);
    assert_eq!(history.matches("context_compacted").count(), 1, "{history}");
    assert_eq!(history.matches("plan_written").count(), 2, "{history}");
    assert!(m.planlog(&["verify"]).contains("0 problems"));
}
