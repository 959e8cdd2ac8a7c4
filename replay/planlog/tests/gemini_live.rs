//! planlog inside the real Gemini CLI (the npm package `@google/gemini-cli`), run headless
//! against a scripted model on loopback (the Gemini API): `planlog install gemini` as a user
//! runs it, a session that plans with `write_todos`, resumed with another plan, then its chat
//! recording imported as a user imports it; and `--enforce` blocking a bulk completion.
//!
//! Gemini CLI is found at `PLANLOG_GEMINI`, else in `target/agents` (where `.ci/run` installs
//! it). Without it the tests say SKIPPED, unless `PLANLOG_REQUIRE_AGENTS=1` (CI), which makes
//! them fail.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

mod common;
use common::model_server::{ModelServer, Step};

/// A model on which Gemini CLI offers `write_todos` (a Gemini 2 model, not a preview).
const MODEL: &str = "gemini-2.5-pro";

/// A user's machine: a home whose Gemini settings point at the scripted model with an API
/// key, a trusted git project.
struct Machine {
    gemini: PathBuf,
    dir: tempfile::TempDir,
    model: ModelServer,
}

impl Machine {
    fn new() -> Option<Self> {
        let m = Self {
            gemini: common::agent(
                "Gemini CLI",
                "PLANLOG_GEMINI",
                "gemini",
                "@google/gemini-cli",
            )?,
            dir: tempfile::tempdir().unwrap(),
            model: ModelServer::start(),
        };
        let dot = m.home().join(".gemini");
        std::fs::create_dir_all(&dot).unwrap();
        std::fs::create_dir_all(m.project().join(".git")).unwrap();
        // The base URL alone selects a gateway auth Gemini 0.61 refuses: say it is an API key.
        std::fs::write(
            dot.join("settings.json"),
            r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}}"#,
        )
        .unwrap();
        // Headless runs refuse an untrusted folder.
        std::fs::write(
            dot.join("trustedFolders.json"),
            json!({m.project().to_str().unwrap(): "TRUST_FOLDER"}).to_string(),
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

    /// `planlog --db STORE ARGS…` in the project: its stdout; it must succeed.
    fn planlog(&self, args: &[&str]) -> String {
        common::planlog_ok(self.db().as_os_str(), args, |c| {
            c.current_dir(self.project()).env("HOME", self.home());
        })
    }

    /// `gemini -p PROMPT` (resuming `resume`) in the project: its stream of JSON events.
    fn gemini(&self, prompt: &str, resume: Option<&str>) -> Vec<Value> {
        let mut c = Command::new(&self.gemini);
        c.args(["-m", MODEL, "--approval-mode", "yolo"]);
        c.args(["--output-format", "stream-json", "-p", prompt]);
        if let Some(id) = resume {
            c.args(["-r", id]);
        }
        c.current_dir(self.project())
            .env("HOME", self.home())
            .env("PWD", self.project())
            .env("GOOGLE_GEMINI_BASE_URL", self.model.url())
            .env("GEMINI_API_KEY", "test")
            .env_remove("GOOGLE_API_KEY")
            .env_remove("GEMINI_CLI_HOME");
        common::json_lines_of("gemini", c)
    }

    /// The chat recording Gemini wrote for session `id` (`session-<minute>-<first 8>.json[l]`;
    /// not a `….unreadable-<time>` copy Gemini 0.61 keeps beside it when it rewrites the file
    /// on a resume, nor a `….tmp-<pid>`): the first of [`Self::recordings`].
    fn recording(&self, id: &str) -> PathBuf {
        self.recordings(id)
            .into_iter()
            .next()
            .expect("Gemini wrote the recording")
    }

    /// Every file named as a recording of session `id`, oldest minute first. Gemini 0.61
    /// starts each run with a recording of its own and a resume then goes on in the session's
    /// first file, so a resume in a later minute leaves a second file (metadata and context)
    /// under the same id: the session's recording is the first.
    fn recordings(&self, id: &str) -> Vec<PathBuf> {
        let tail = format!("-{}", &id[..8]);
        let mut found = Vec::new();
        let mut folders = vec![self.home().join(".gemini/tmp")];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().into_owned();
                if path.is_dir() {
                    folders.push(path);
                } else if name.starts_with("session-")
                    && (name.ends_with(&format!("{tail}.jsonl"))
                        || name.ends_with(&format!("{tail}.json")))
                {
                    found.push(path);
                }
            }
        }
        found.sort_by_key(|p| p.file_name().map(std::ffi::OsStr::to_owned));
        found
    }
}

fn todos(list: &[(&str, &str)]) -> Value {
    json!({"todos": list.iter().map(|(d, s)| json!({"description": d, "status": s})).collect::<Vec<_>>()})
}

/// The session id of a `stream-json` run.
fn session_of(events: &[Value]) -> String {
    events
        .iter()
        .find(|e| e["type"] == "init")
        .and_then(|e| e["session_id"].as_str())
        .expect("gemini names its session")
        .to_owned()
}

/// A recording a line each (its kind, message id and type, its calls and their status), for
/// a failure to show what Gemini wrote.
fn summary(recording: &Path) -> String {
    std::fs::read_to_string(recording)
        .unwrap_or_default()
        .lines()
        .map(|l| match serde_json::from_str::<Value>(l) {
            Ok(v) if v.get("$set").is_some() => {
                let set = &v["$set"];
                match set["messages"].as_array() {
                    Some(m) => format!(
                        "$set.messages {:?}",
                        m.iter()
                            .map(|m| m["id"]
                                .as_str()
                                .unwrap_or("?")
                                .chars()
                                .take(8)
                                .collect::<String>())
                            .collect::<Vec<_>>()
                    ),
                    None => format!(
                        "$set {:?}",
                        set.as_object()
                            .map(|o| o.keys().cloned().collect::<Vec<_>>())
                    ),
                }
            }
            Ok(v) => format!(
                "{} {} {:?}",
                v["id"]
                    .as_str()
                    .unwrap_or("-")
                    .chars()
                    .take(8)
                    .collect::<String>(),
                v["type"].as_str().unwrap_or("meta"),
                v["toolCalls"]
                    .as_array()
                    .map(|c| c
                        .iter()
                        .map(|c| format!("{}:{}", c["name"], c["status"]))
                        .collect::<Vec<_>>())
                    .unwrap_or_default()
            ),
            Err(_) => format!("not JSON: {} bytes", l.len()),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines of `history` that are plan writes.
fn writes(history: &str) -> Vec<&str> {
    history
        .lines()
        .filter(|l| l.contains("plan_written"))
        .collect()
}

/// `planlog install gemini` in the project (as a user runs it, planlog not on the PATH), with
/// `flags`; its stderr.
fn install(m: &Machine, flags: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_planlog"))
        .arg("--db")
        .arg(m.db())
        .args(["install", "gemini"])
        .args(flags)
        .current_dir(m.project())
        .env("HOME", m.home())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{said}");
    said
}

#[test]
fn gemini_hooks_capture_every_plan_put_it_back_on_resume_and_an_import_adds_nothing_twice() {
    let Some(m) = Machine::new() else { return };
    let said = install(&m, &[]);
    assert!(
        said.contains("write_todos") && said.contains("trusted folder"),
        "{said}"
    );
    m.model.script([
        Step::tool(
            "plan the parser",
            "unused",
            "write_todos",
            todos(&[
                ("Write parser tests", "in_progress"),
                ("Implement parser", "pending"),
            ]),
        ),
        Step::text("functionResponse", "Planned."),
        Step::tool(
            "go on with the parser",
            "unused",
            "write_todos",
            todos(&[
                ("Write parser tests", "completed"),
                ("Implement parser", "in_progress"),
            ]),
        ),
        Step::text("functionResponse", "Going on."),
    ]);
    let id = session_of(&m.gemini("plan the parser", None));
    let session = format!("gm-{id}");
    // Captured while the session ran, in the session an import writes.
    let history = m.planlog(&["history", &session]);
    assert!(
        history.contains("captured live from gemini session"),
        "{history}"
    );
    assert_eq!(writes(&history).len(), 1, "{history}");
    assert!(
        history.contains("first prompt \"plan the parser\""),
        "Gemini's own session context is no prompt: {history}"
    );

    let asked_before = m.model.requests().len();
    m.gemini("go on with the parser", Some(&id));
    m.model.assert_all_answered();
    // The plan went back into the resumed session's first request, in write_todos's words
    // (Gemini would escape harness9's `[>]`).
    let resumed = m.model.requests()[asked_before].to_string();
    assert!(
        resumed.contains(r"[in_progress] Write parser tests\n[pending] Implement parser")
            && resumed.contains("write_todos replaces the list"),
        "the resumed session's first request lacks the plan: {resumed}"
    );
    let history = m.planlog(&["history", &session]);
    assert!(history.contains("plan_restored"), "{history}");
    assert_eq!(writes(&history).len(), 2, "{history}");
    let shown = m.planlog(&["show", &session]);
    assert!(
        shown.contains("1. ✔ Write parser tests") && shown.contains("2. ▶ Implement parser"),
        "{shown}"
    );

    // The recording imported afterwards: the hooks' calls are found by their arguments and
    // time (Gemini gives hooks no call id), nothing twice, and the resume drops nothing.
    let recording = m.recording(&id);
    m.planlog(&["import", recording.to_str().unwrap()]);
    let after = m.planlog(&["history", &session]);
    assert_eq!(writes(&after).len(), 2, "{after}");
    assert!(!after.contains("rewind:"), "{after}");
    assert!(m.planlog(&["verify"]).contains("0 problems"));
    // And the recording alone, into a store of its own, gives the same plan.
    let alone = tempfile::tempdir().unwrap();
    let db = alone.path().join("p.redb");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_planlog"))
            .arg("--db")
            .arg(&db)
            .args(args)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let imported = run(&["import", recording.to_str().unwrap()]);
    let alone_history = run(&["history", &session]);
    assert_eq!(
        writes(&alone_history).len(),
        2,
        "the recording {} alone (import said {imported:?}): {alone_history}\nthe recording, a line each:\n{}",
        recording.display(),
        summary(&recording)
    );
    assert_eq!(run(&["show", &session]), shown);
    // A resume in a later minute than the session began leaves Gemini's start of that run
    // in a file of its own: it adds nothing, in either store.
    for start_up in &m.recordings(&id)[1..] {
        run(&["import", start_up.to_str().unwrap()]);
        m.planlog(&["import", start_up.to_str().unwrap()]);
    }
    assert_eq!(run(&["history", &session]), alone_history);
    assert_eq!(writes(&m.planlog(&["history", &session])).len(), 2);

    // Uninstalled: planlog's hooks are gone, the file is the user's again.
    m.planlog(&["uninstall", "gemini"]);
    let settings = std::fs::read_to_string(m.project().join(".gemini/settings.json")).unwrap();
    assert!(!settings.contains("planlog"), "{settings}");
}

/// Gemini compresses a session on its own once a prompt passes half the model's context, and
/// runs no hook after it. Here, in the session's second prompt, the answer that plans reports
/// a prompt of 600,000 tokens, so Gemini compresses before its next request (asking the model
/// for a `<state_snapshot>`) and rewrites its recording's history. At the next prompt planlog
/// reads that from the recording and records the compaction, and the plan stands (the
/// importer once read the rewrite as the list emptied); the plan goes back once (the resume
/// puts it back already); the recording imported afterwards adds nothing twice.
#[test]
fn gemini_compressing_on_its_own_is_on_record_and_the_plan_goes_back_once() {
    let Some(m) = Machine::new() else { return };
    install(&m, &[]);
    m.model.script([
        Step::tool(
            "plan the port",
            "unused",
            "write_todos",
            todos(&[
                ("Pin the toolchain", "in_progress"),
                ("Fix the warnings", "pending"),
            ]),
        ),
        Step::text("functionResponse", "Planned."),
    ]);
    let id = session_of(&m.gemini("plan the port", None));
    let session = format!("gm-{id}");
    m.model.script([
        Step::tool(
            "go on",
            "unused",
            "write_todos",
            todos(&[
                ("Pin the toolchain", "completed"),
                ("Fix the warnings", "in_progress"),
            ]),
        ),
        Step::text("functionResponse", "Going on."),
    ]);
    m.model.report_prompt_tokens_once(600_000);
    m.gemini("go on", Some(&id));
    m.model.assert_all_answered();
    assert!(
        m.model
            .requests()
            .iter()
            .any(|r| r.to_string().contains("<state_snapshot>")),
        "Gemini compressed the session (it asked the model for a summary)"
    );
    let restored = |h: &str| h.matches("plan_restored").count();
    let before = restored(&m.planlog(&["history", &session]));
    let asked_before = m.model.requests().len();
    m.gemini("how far are we", Some(&id));
    let history = m.planlog(&["history", &session]);
    let compactions: Vec<&str> = history
        .lines()
        .filter(|l| l.contains("context_compacted"))
        .collect();
    assert_eq!(compactions.len(), 1, "{history}");
    assert!(
        compactions[0].contains("600000 tokens before") && compactions[0].contains("a compression"),
        "{history}"
    );
    assert_eq!(restored(&history), before + 1, "{history}");
    assert!(!history.contains("rewind:"), "{history}");
    let shown = m.planlog(&["show", &session]);
    assert!(
        shown.contains("1. ✔ Pin the toolchain") && shown.contains("2. ▶ Fix the warnings"),
        "the plan stands through the compression: {shown}"
    );
    let resumed = m.model.requests()[asked_before].to_string();
    assert_eq!(
        resumed.matches("write_todos replaces the list").count(),
        1,
        "the plan goes back once: {resumed}"
    );
    assert!(
        resumed.contains(r"[completed] Pin the toolchain\n[in_progress] Fix the warnings"),
        "{resumed}"
    );
    // The recording imported afterwards: nothing twice.
    m.planlog(&["import", m.recording(&id).to_str().unwrap()]);
    assert_eq!(m.planlog(&["history", &session]), history);
    assert!(m.planlog(&["verify"]).contains("0 problems"));
}

#[test]
fn gemini_enforcing_blocks_a_bulk_completion_with_planlogs_message() {
    let Some(m) = Machine::new() else { return };
    install(&m, &["--enforce"]);
    m.model.script([
        Step::tool(
            "plan the parser",
            "unused",
            "write_todos",
            todos(&[
                ("Write parser tests", "in_progress"),
                ("Implement parser", "pending"),
                ("Document parser", "pending"),
            ]),
        ),
        Step::text("functionResponse", "Planned."),
        Step::tool(
            "finish everything",
            "unused",
            "write_todos",
            todos(&[
                ("Write parser tests", "completed"),
                ("Implement parser", "completed"),
                ("Document parser", "completed"),
            ]),
        ),
        Step::text("functionResponse", "Blocked, going one at a time."),
    ]);
    let id = session_of(&m.gemini("plan the parser", None));
    let asked_before = m.model.requests().len();
    m.gemini("finish everything", Some(&id));
    // The model read planlog's refusal as the tool's error.
    let answered: String = m.model.requests()[asked_before..]
        .iter()
        .map(Value::to_string)
        .collect();
    assert!(
        answered.contains("bulk"),
        "the model never read planlog's refusal"
    );
    let session = format!("gm-{id}");
    let history = m.planlog(&["history", &session]);
    assert_eq!(writes(&history).len(), 1, "{history}");
    assert!(history.contains("write_rejected"), "{history}");
    let shown = m.planlog(&["show", &session]);
    assert!(shown.contains("1. ▶ Write parser tests"), "{shown}");
    // The recording, imported, knows the call failed: nothing applied twice.
    m.planlog(&["import", m.recording(&id).to_str().unwrap()]);
    let after = m.planlog(&["show", &session]);
    assert_eq!(after, shown);
    assert!(m.planlog(&["verify"]).contains("0 problems"));
}

/// Gemini 3 models plan with the task tracker (`experimental.taskTracker`), not `write_todos`:
/// each task the model creates is captured as a task with the tracker's id (which only its
/// result names) and its dependencies, and the recording imported afterwards adds nothing twice.
#[test]
fn gemini_tracker_tasks_are_captured_with_the_trackers_ids() {
    let Some(m) = Machine::new() else { return };
    let settings = m.home().join(".gemini/settings.json");
    std::fs::write(
        &settings,
        r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}, "experimental": {"taskTracker": true}}"#,
    )
    .unwrap();
    install(&m, &[]);
    m.model.script([
        Step::tool(
            "track the parser",
            "unused",
            "tracker_create_task",
            json!({"title": "Write parser tests", "description": "cover every rule", "type": "task"}),
        ),
        Step::text("Created task", "Tracked."),
    ]);
    let id = session_of(&m.gemini("track the parser", None));
    m.model.assert_all_answered();
    let session = format!("gm-{id}");
    let tasks: Value = serde_json::from_str(&m.planlog(&["show", &session, "--json"])).unwrap();
    let task = &tasks[0];
    let task_id = task["id"].as_str().unwrap();
    assert!(
        task_id.len() == 6 && task_id.chars().all(|c| c.is_ascii_hexdigit()),
        "the tracker's own id: {tasks}"
    );
    assert_eq!(task["content"], "Write parser tests");
    assert_eq!(task["status"], "pending");
    // The tracker's own file agrees.
    let tracker_file = walk_for(&m.home().join(".gemini/tmp"), &format!("{task_id}.json"))
        .expect("Gemini's tracker wrote the task");
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(tracker_file).unwrap()).unwrap();
    assert_eq!(stored["title"], "Write parser tests");
    let history = m.planlog(&["history", &session]);
    m.planlog(&["import", m.recording(&id).to_str().unwrap()]);
    assert_eq!(
        writes(&m.planlog(&["history", &session])).len(),
        writes(&history).len(),
        "the import adds nothing the hook recorded"
    );
    assert!(m.planlog(&["verify"]).contains("0 problems"));
}

/// The first file named `name` under `dir`.
fn walk_for(dir: &Path, name: &str) -> Option<PathBuf> {
    common::find_file(dir, &|p| p.file_name().is_some_and(|n| n == name))
}
