//! planlog inside the real opencode (the npm package `opencode-ai`), run headless against a
//! scripted model on loopback (an OpenAI-compatible provider): `planlog install opencode` as a
//! user runs it writes planlog's plugin, opencode loads it, and every `todowrite` is recorded
//! by the export's call ids; a session whose context fills up is compacted by opencode with
//! the plan in the compaction's context; the export imported afterwards adds nothing twice.
//!
//! opencode is found at `PLANLOG_OPENCODE`, else in `target/agents` (where `.ci/run` installs
//! it). Without it the test says SKIPPED, unless `PLANLOG_REQUIRE_AGENTS=1` (CI), which makes it
//! fail. opencode fetches its provider package (`@ai-sdk/openai-compatible`) and the plugin
//! types from the npm registry the first time.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

mod common;
use common::model_server::{ModelServer, Step};

/// The model's context, in tokens, as the test's provider declares it.
const CONTEXT: u64 = 4_000;

/// A user's machine: opencode's config naming the scripted model, a git project.
struct Machine {
    opencode: PathBuf,
    dir: tempfile::TempDir,
    model: ModelServer,
}

impl Machine {
    fn new() -> Option<Self> {
        let m = Self {
            opencode: common::agent("opencode", "PLANLOG_OPENCODE", "opencode", "opencode-ai")?,
            dir: tempfile::tempdir().unwrap(),
            model: ModelServer::start(),
        };
        let config = m.home().join(".config/opencode");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::create_dir_all(m.project().join(".git")).unwrap();
        std::fs::write(
            config.join("opencode.json"),
            json!({
                "$schema": "https://opencode.ai/config.json",
                "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                    "options": {"baseURL": format!("{}/v1", m.model.url()), "apiKey": "test"},
                    "models": {"m1": {"name": "M1", "tool_call": true,
                        "limit": {"context": CONTEXT, "output": 100}}}}},
                "model": "mock/m1",
                "small_model": "mock/m1",
                "autoupdate": false,
                "share": "disabled"
            })
            .to_string(),
        )
        .unwrap();
        Some(m)
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("app")
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("planlog.redb")
    }

    /// `opencode ARGS…` in the project (opencode takes its folder from `PWD`), stopped after
    /// two minutes (a session that compacts over and over never ends): its stdout.
    fn opencode(&self, args: &[&str]) -> String {
        let out = Command::new("timeout")
            .arg("120")
            .arg(&self.opencode)
            .args(args)
            .current_dir(self.project())
            .env("PWD", self.project())
            .env("HOME", self.home())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "opencode {args:?} failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// `opencode run --format json PROMPT` (continuing `session`): the session id.
    fn run(&self, prompt: &str, session: Option<&str>) -> String {
        let mut args = vec!["run", "--format", "json"];
        if let Some(s) = session {
            args.extend(["-s", s]);
        }
        args.push(prompt);
        let out = self.opencode(&args);
        out.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|e| e["sessionID"].as_str().map(str::to_owned))
            .expect("opencode names its session")
    }

    /// `planlog --db STORE ARGS…` in the project: its stdout; it must succeed.
    fn planlog(&self, args: &[&str]) -> String {
        common::planlog_ok(self.db().as_os_str(), args, |c| {
            c.current_dir(self.project())
                .env("HOME", self.home())
                .env("PATH", "/usr/bin:/bin");
        })
    }
}

fn todos(list: &[(&str, &str)]) -> Value {
    json!({"todos": list.iter().map(|(c, s)| json!({"content": c, "status": s, "priority": "medium"})).collect::<Vec<_>>()})
}

/// The tool part of call `id` in `opencode export`'s output (JSON after a header line).
fn tool_part(export: &str, id: &str) -> Value {
    let at = export
        .find('{')
        .expect("the export is JSON after its header");
    let recording: Value = serde_json::from_str(&export[at..]).unwrap();
    recording["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
        .find(|p| p["callID"] == id)
        .unwrap_or_else(|| panic!("call {id} is in the export"))
}

fn writes(history: &str) -> usize {
    history
        .lines()
        .filter(|l| l.contains("plan_written"))
        .count()
}

#[test]
fn opencode_with_planlogs_plugin_records_every_todowrite_and_keeps_the_plan_through_compaction() {
    let Some(m) = Machine::new() else { return };
    m.planlog(&["install", "opencode"]);
    let plugin = std::fs::read_to_string(m.project().join(".opencode/plugins/planlog.ts")).unwrap();
    assert!(
        plugin.contains("\"hook\",\"opencode\",\"--db\""),
        "{plugin}"
    );
    m.model.script([
        Step::tool(
            "plan the parser",
            "call_plan_1",
            "todowrite",
            todos(&[
                ("Write parser tests", "in_progress"),
                ("Implement parser", "pending"),
            ]),
        ),
        Step::text("call_plan_1", "Planned."),
        Step::tool(
            "go on with the parser",
            "call_plan_2",
            "todowrite",
            todos(&[
                ("Write parser tests", "completed"),
                ("Implement parser", "in_progress"),
            ]),
        ),
        Step::text("call_plan_2", "Going on."),
    ]);
    let id = m.run("plan the parser", None);
    let session = format!("oc-{id}");
    let history = m.planlog(&["history", &session]);
    assert!(
        history.contains("captured live from opencode session")
            && history.contains("[call_plan_1]"),
        "{history}"
    );
    m.run("go on with the parser", Some(&id));
    m.model.assert_all_answered();
    let history = m.planlog(&["history", &session]);
    assert_eq!(writes(&history), 2, "{history}");
    assert!(history.contains("[call_plan_2]"), "{history}");

    // The context fills up: opencode compacts the session, and the compaction's request
    // carries the plan.
    m.model.report_prompt_tokens_once(CONTEXT - 10);
    let asked_before = m.model.requests().len();
    m.run("how far are we", Some(&id));
    let compaction = m.model.requests()[asked_before..]
        .iter()
        .map(Value::to_string)
        .find(|r| r.contains("Current Execution Plan"))
        .expect("a request after the context filled up carries the plan");
    assert!(
        compaction.contains(r"[x] Write parser tests\n[>] Implement parser")
            && compaction.contains("todowrite replaces the list"),
        "{compaction}"
    );
    let history = m.planlog(&["history", &session]);
    assert!(
        history.contains("context_compacted") && history.contains("plan_restored"),
        "{history}"
    );

    // The export imported afterwards: both calls known by their call ids, nothing twice.
    let export = m.dir.path().join("export.json");
    std::fs::write(&export, m.opencode(&["export", &id])).unwrap();
    m.planlog(&["import", export.to_str().unwrap()]);
    let after = m.planlog(&["history", &session]);
    assert_eq!(writes(&after), 2, "{after}");
    let shown = m.planlog(&["show", &session]);
    assert!(
        shown.contains("1. ✔ Write parser tests") && shown.contains("2. ▶ Implement parser"),
        "{shown}"
    );
    assert!(m.planlog(&["verify"]).contains("0 problems"));

    // Uninstalled: the plugin is gone.
    m.planlog(&["uninstall", "opencode"]);
    assert!(!m.project().join(".opencode/plugins/planlog.ts").exists());
}

/// Installed with `--enforce`: a todowrite that completes two items never started is refused
/// by planlog's plugin before it runs (opencode gives the model planlog's reason as the tool's
/// error), the refusal is on record, and opencode's own list stays as it was; the next call,
/// a step at a time, runs and is recorded.
#[test]
fn opencode_with_enforce_refuses_a_bulk_completion_before_it_runs() {
    let Some(m) = Machine::new() else { return };
    m.planlog(&["install", "opencode", "--enforce"]);
    m.model.script([
        Step::tool(
            "plan the parser",
            "call_plan_1",
            "todowrite",
            todos(&[
                ("Write parser tests", "in_progress"),
                ("Implement parser", "pending"),
                ("Ship the parser", "pending"),
            ]),
        ),
        Step::text("call_plan_1", "Planned."),
        Step::tool(
            "finish everything",
            "call_bulk",
            "todowrite",
            todos(&[
                ("Write parser tests", "in_progress"),
                ("Implement parser", "completed"),
                ("Ship the parser", "completed"),
            ]),
        ),
        Step::tool(
            "call_bulk",
            "call_step",
            "todowrite",
            todos(&[
                ("Write parser tests", "completed"),
                ("Implement parser", "pending"),
                ("Ship the parser", "pending"),
            ]),
        ),
        Step::text("call_step", "One at a time, then."),
    ]);
    let id = m.run("plan the parser", None);
    m.run("finish everything", Some(&id));
    m.model.assert_all_answered();
    let session = format!("oc-{id}");
    // The model read planlog's reason as the refused call's result.
    let refused = m
        .model
        .requests()
        .iter()
        .map(Value::to_string)
        .find(|r| r.contains("call_step") || r.contains("Rejected as a bulk completion"))
        .expect("a request after the refused call");
    assert!(
        refused.contains("Rejected as a bulk completion")
            && refused.contains("Implement parser")
            && refused.contains("Ship the parser"),
        "{refused}"
    );
    let history = m.planlog(&["history", &session]);
    assert_eq!(history.matches("write_rejected").count(), 1, "{history}");
    assert_eq!(writes(&history), 2, "{history}");
    assert!(history.contains("[call_step]"), "{history}");
    let shown = m.planlog(&["show", &session]);
    assert!(
        shown.contains("1. ✔ Write parser tests") && shown.contains("2. ○ Implement parser"),
        "{shown}"
    );
    // opencode's own record agrees: the refused call is an error there, with planlog's reason.
    let export = m.opencode(&["export", &id]);
    let bulk = tool_part(&export, "call_bulk");
    assert_eq!(bulk["state"]["status"], "error", "{bulk}");
    assert!(
        bulk["state"]["error"]
            .as_str()
            .unwrap()
            .contains("Rejected as a bulk completion"),
        "{bulk}"
    );
    // Imported afterwards: the same history, nothing twice.
    let file = m.dir.path().join("export.json");
    std::fs::write(&file, &export).unwrap();
    m.planlog(&["import", file.to_str().unwrap()]);
    let after = m.planlog(&["history", &session]);
    assert_eq!(after.matches("write_rejected").count(), 1, "{after}");
    assert_eq!(writes(&after), 2, "{after}");
    assert!(m.planlog(&["verify"]).contains("0 problems"));
}

/// planlog's plugin never breaks opencode: when what it runs hangs (here a command that
/// sleeps past the plugin's 10 s), the plugin gives up on it and the todowrite runs as if the
/// plugin were not there.
#[test]
fn a_hung_planlog_does_not_stop_opencodes_todowrite() {
    let Some(m) = Machine::new() else { return };
    m.planlog(&["install", "opencode", "--enforce"]);
    let path = m.project().join(".opencode/plugins/planlog.ts");
    let plugin = std::fs::read_to_string(&path).unwrap();
    let start = plugin.find("const COMMAND: string[] = ").unwrap();
    let end = start + plugin[start..].find('\n').unwrap();
    let hung = format!(
        "{}const COMMAND: string[] = [\"sh\", \"-c\", \"sleep 60\", \"sh\", \"--enforce\"]{}",
        &plugin[..start],
        &plugin[end..]
    );
    std::fs::write(&path, hung).unwrap();
    m.model.script([
        Step::tool(
            "plan the parser",
            "call_plan_1",
            "todowrite",
            todos(&[("Write parser tests", "in_progress")]),
        ),
        Step::text("call_plan_1", "Planned."),
    ]);
    let id = m.run("plan the parser", None);
    m.model.assert_all_answered();
    let export = m.opencode(&["export", &id]);
    let call = tool_part(&export, "call_plan_1");
    assert_eq!(call["state"]["status"], "completed", "{call}");
}
