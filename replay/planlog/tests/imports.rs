//! `planlog import`: every format, detection, folders, re-imports, refusals, and the shared
//! real transcripts call for call. Human output is compared with reviewed insta snapshots.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

mod common;
use common::{Planlog, Run};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/imports")
        .join(name)
}

#[test]
fn import_claude_code_with_a_sidechain_derived_ids_and_flags() {
    let p = Planlog::new();
    let r = p.run(
        &[
            "import",
            "claude-code",
            fixture("claude-small.jsonl").to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ids: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(ids.len(), 2, "main session, then the sidechain");
    let history = p.ok(&["history", ids[0]]);
    snapshot!("import_claude_history", history.clone());
    assert!(
        history
            .contains("t1 \"Write the config parser\": edited to \"Write the YAML config parser\""),
        "an edited item keeps its id"
    );
    assert!(history.contains(
        "FLAG bulk completion of 2 items (t4 \"Document the config format\", t5 \"Tag the release\")"
    ));
    let sessions = p.ok(&["sessions"]);
    assert!(sessions.contains(&format!("sub-agent of {}", ids[0])));
    let verify = p.run(&["verify"], None);
    assert_eq!(
        verify.code, 0,
        "recorded as it happened is not damage: {}",
        verify.stdout
    );
    assert!(verify.stdout.contains("note:") && verify.stdout.contains("bulk completion"));
}

#[test]
fn import_both_codex_formats() {
    let p = Planlog::new();
    for (file, first_call) in [
        ("codex-old-crlf.jsonl", "call_old1"),
        ("codex-new.jsonl", "call_new1"),
    ] {
        let r = p.run(&["import", "codex", fixture(file).to_str().unwrap()], None);
        assert_eq!(r.code, 0, "{file}: {}", r.stderr);
        let id = r.stdout.trim();
        let history = p.ok(&["history", id]);
        assert!(
            history.contains(&format!("turn 1 [{first_call}]")),
            "{history}"
        );
        // Its start and its two calls, besides what the rollout says of it.
        let kinds: Vec<&str> = history
            .lines()
            .map(|l| l.split_whitespace().nth(2).unwrap_or(""))
            .filter(|k| *k != "session_described")
            .collect();
        assert_eq!(
            kinds,
            ["session_started", "plan_written", "plan_written"],
            "{history}"
        );
        assert!(history.contains("session_described"), "{history}");
        // The 2025 form has no time per line: each event says so.
        if file.contains("old") {
            assert_eq!(
                history
                    .matches(
                        "the source gives no time for this line; the previous event's time is shown"
                    )
                    .count(),
                2,
                "{history}"
            );
        }
    }
    let old = p.ok(&["sessions", "--json"]);
    assert!(
        old.contains("0197aaaa-bbbb-7ccc-8ddd-eeeeffff0000"),
        "the old header's id is the source session"
    );
}

#[test]
fn a_broken_line_names_its_number_and_imports_nothing_unless_skipped() {
    let p = Planlog::new();
    let file = fixture("claude-bad-line.jsonl");
    let r = p.run(&["import", "claude-code", file.to_str().unwrap()], None);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("line 5") && r.stderr.contains("--skip-bad-lines"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1);
    assert!(p.ok(&["sessions", "--json"]).is_empty(), "nothing written");
    let skipped = p.run(
        &[
            "import",
            "claude-code",
            file.to_str().unwrap(),
            "--skip-bad-lines",
        ],
        None,
    );
    assert_eq!(skipped.code, 0, "{}", skipped.stderr);
    assert!(skipped.stderr.contains("skipped") && skipped.stderr.contains("line 5"));
    assert_eq!(skipped.stdout.lines().count(), 2);
    let missing = p.run(&["import", "codex", "/no/such/file.jsonl"], None);
    assert_eq!(missing.code, 2);
}

/// Every public transcript in `../shared/transcripts/`, imported, is the record of what
/// happened, checked against the file read independently here: each accepted call's plan is
/// the list it set; the call as recorded is the agent's input byte for byte (a slice of its
/// line) and its result is the text the model read; each session carries what the source
/// says it is; no finished item is drawn as reopened and no checkpoint differs; verify
/// finds nothing wrong.
#[test]
fn every_shared_transcript_imports_call_for_call() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/transcripts");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!(
            "SKIPPED: {} is absent; the shared transcripts are not on this machine",
            dir.display()
        );
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for file in files {
        let p = Planlog::new();
        let codex = file.to_string_lossy().contains("codex");
        let r = p.run(
            &[
                "import",
                if codex { "codex" } else { "claude-code" },
                file.to_str().unwrap(),
            ],
            None,
        );
        assert_eq!(r.code, 0, "{}: {}", file.display(), r.stderr);
        let source = source_calls(&file, codex);
        let mut seen = 0;
        for id in r.stdout.lines() {
            let export = p.ok(&["export", id, "--format", "jsonl"]);
            for line in export.lines() {
                let e: Value = serde_json::from_str(line).unwrap();
                if e["kind"] != "plan_written" {
                    continue;
                }
                let call = e["call_id"].as_str().unwrap();
                let plan: Vec<(String, String)> = e["data"]["plan"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| {
                        (
                            i["content"].as_str().unwrap().to_owned(),
                            i["status"].as_str().unwrap().to_owned(),
                        )
                    })
                    .collect();
                let Some(sent) = source.get(call) else {
                    panic!("{}: call {call} is not in the source", file.display());
                };
                assert_eq!(
                    plan,
                    sent.list,
                    "{}: call {call}: the plan is exactly the list the call set",
                    file.display()
                );
                let recorded = &e["data"]["tool_call"];
                assert_eq!(recorded["tool"], sent.tool, "{}: {call}", file.display());
                let arguments = recorded["arguments"].as_str().unwrap();
                assert!(
                    sent.line.contains(arguments),
                    "{}: call {call}: the call as recorded is not the source's text: {arguments}",
                    file.display()
                );
                assert_eq!(
                    serde_json::from_str::<Value>(arguments).unwrap(),
                    sent.input,
                    "{}: {call}",
                    file.display()
                );
                assert_eq!(
                    recorded["result"]["text"].as_str(),
                    sent.result.as_deref(),
                    "{}: call {call}: the result is the text the model read",
                    file.display()
                );
                seen += 1;
            }
            let history = p.ok(&["history", id]);
            for reopened in ["completed -> pending", "completed -> in_progress"] {
                assert!(
                    !history.contains(reopened),
                    "{}: no finished item is reopened in these sessions:\n{history}",
                    file.display()
                );
            }
        }
        assert_eq!(seen, source.len(), "{}: one event per call", file.display());
        // What the source says each main session is.
        let sessions: Vec<Value> = p
            .ok(&["sessions", "--json"])
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for s in sessions.iter().filter(|s| s["origin"]["parent"].is_null()) {
            let d = &s["description"];
            assert_eq!(
                d["agent"],
                if codex { "codex" } else { "claude-code" },
                "{}: {s}",
                file.display()
            );
            assert!(d["project"].is_string(), "{}: {s}", file.display());
            assert!(d["agent_version"].is_string(), "{}: {s}", file.display());
            assert!(d["first_prompt"].is_string(), "{}: {s}", file.display());
        }
        let text = std::fs::read_to_string(&file).unwrap();
        if let Some(summary) = text.lines().find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            (v["type"] == "summary").then(|| v["summary"].as_str().map(str::to_owned))?
        }) {
            assert!(
                sessions
                    .iter()
                    .any(|s| s["description"]["title"] == summary.as_str()),
                "{}: the summary line titles the session",
                file.display()
            );
        }
        let verify = p.run(&["verify"], None);
        assert_eq!(verify.code, 0, "{}: {}", file.display(), verify.stdout);
        assert!(
            !verify.stdout.contains("differs"),
            "{}: {}",
            file.display(),
            verify.stdout
        );
    }
}

/// A plan call as the source holds it, read independently of planlog's importer.
struct SourceCall {
    tool: &'static str,
    /// The list it set: (content, status).
    list: Vec<(String, String)>,
    /// Its input, as JSON.
    input: Value,
    /// The line it is on, as the file has it.
    line: String,
    /// The result text the model read.
    result: Option<String>,
}

fn source_calls(file: &Path, codex: bool) -> std::collections::HashMap<String, SourceCall> {
    let mut calls: std::collections::HashMap<String, SourceCall> = std::collections::HashMap::new();
    let pairs = |list: &Value, text: &str| -> Vec<(String, String)> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t[text].as_str().unwrap().to_owned(),
                    t["status"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    for raw in std::fs::read_to_string(file).unwrap().lines() {
        let line = raw.trim_end_matches('\r');
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if codex {
            let p = if v.get("payload").is_some() {
                &v["payload"]
            } else {
                &v
            };
            if p["type"] == "function_call" && p["name"] == "update_plan" {
                let arguments = p["arguments"].as_str().unwrap();
                let args: Value = serde_json::from_str(arguments).unwrap();
                calls.insert(
                    p["call_id"].as_str().unwrap().to_owned(),
                    SourceCall {
                        tool: "update_plan",
                        list: pairs(&args["plan"], "step"),
                        input: args,
                        // The arguments string is what the source holds.
                        line: arguments.to_owned(),
                        result: None,
                    },
                );
            }
            if p["type"] == "function_call_output"
                && let Some(c) = calls.get_mut(p["call_id"].as_str().unwrap())
            {
                c.result = p["output"].as_str().map(str::to_owned);
            }
        } else if let Some(blocks) = v["message"]["content"].as_array() {
            for b in blocks {
                if b["type"] == "tool_use" && b["name"] == "TodoWrite" {
                    calls.insert(
                        b["id"].as_str().unwrap().to_owned(),
                        SourceCall {
                            tool: "TodoWrite",
                            list: pairs(&b["input"]["todos"], "content"),
                            input: b["input"].clone(),
                            line: line.to_owned(),
                            result: None,
                        },
                    );
                }
                if b["type"] == "tool_result"
                    && let Some(c) = calls.get_mut(b["tool_use_id"].as_str().unwrap_or(""))
                {
                    c.result = b["content"].as_str().map(str::to_owned);
                }
            }
        }
    }
    calls
}

#[test]
fn export_jsonl_imports_back_to_an_identical_session() {
    let p = Planlog::new();
    let id = p.sample();
    let jsonl = p.ok(&["export", &id, "--format", "jsonl"]);
    let json: Value = serde_json::from_str(&p.ok(&["export", &id, "--format", "json"])).unwrap();
    assert_eq!(json["events"].as_array().unwrap().len(), 5);
    assert!(
        p.ok(&["export", &id, "--format", "markdown"])
            .contains("## History")
    );
    let file = p.dir.path().join("export.jsonl");
    std::fs::write(&file, &jsonl).unwrap();
    // The same export again is a no-op: the session is there with the same history.
    let again = p.run(&["import", "planlog", file.to_str().unwrap()], None);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout.trim(), id);
    assert!(
        again.stderr.contains("already imported"),
        "{}",
        again.stderr
    );
    assert_eq!(p.ok(&["export", &id, "--format", "jsonl"]), jsonl);
    let other = Planlog::new();
    assert_eq!(
        other
            .ok(&["import", "planlog", file.to_str().unwrap()])
            .trim(),
        id
    );
    assert_eq!(other.ok(&["export", &id, "--format", "jsonl"]), jsonl);
    assert_eq!(other.run(&["verify"], None).code, 0);
}

/// Copies a fixture folder (or file) into `dir`, returning the copy's path.
fn copy_fixture(name: &str, dir: &Path) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        if from.is_dir() {
            std::fs::create_dir_all(to).unwrap();
            for e in std::fs::read_dir(from).unwrap() {
                let e = e.unwrap();
                copy(&e.path(), &to.join(e.file_name()));
            }
        } else {
            std::fs::copy(from, to).unwrap();
        }
    }
    let to = dir.join(name);
    copy(&fixture(name), &to);
    to
}

impl Planlog {
    fn import(&self, args: &[&str]) -> Run {
        let mut all = vec!["import"];
        all.extend_from_slice(args);
        self.run(&all, None)
    }

    /// `history`, `items` and `show --json` of a session, as reviewed snapshots.
    fn audit_snapshots(&self, name: &str, id: &str) {
        snapshot!(format!("{name}_history"), self.ok(&["history", id]));
        snapshot!(format!("{name}_items"), self.ok(&["items", id]));
        snapshot!(
            format!("{name}_show_json"),
            self.ok(&["show", id, "--json"])
        );
    }

    /// `verify`'s notes (it must find no problems).
    fn verify_notes(&self) -> Vec<String> {
        let v = self.run(&["verify"], None);
        assert_eq!(v.code, 0, "verify found problems: {}", v.stdout);
        v.stdout
            .lines()
            .filter(|l| l.starts_with("note:"))
            .map(str::to_owned)
            .collect()
    }
}

#[test]
fn a_claude_code_tasks_session_keeps_dependencies_refusals_and_checkpoints() {
    let p = Planlog::new();
    let r = p.import(&[
        "claude-code",
        fixture("claude-tasks.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = r.stdout.trim();
    assert_eq!(
        id, "cc-7a1c0de5-0000-4000-8000-00000000c0de",
        "named after the source session"
    );
    p.audit_snapshots("claude_tasks", id);
    let history = p.ok(&["history", id]);
    for needle in [
        "(set items)  1 \"Write the YAML parser\": new pending",
        "2 \"Write the loader tests\": blocked by [] -> [1]",
        "3 \"Wire the loader into main\": blocked by [] -> [2]",
        "rejected: source_refused: Task not found",
        "4 \"Try a TOML fallback\": pending -> dropped",
        "FLAG started while blocked: 3 \"Wire the loader into main\" waits for 2 \"Write the loader tests\"",
        // The call as sent and the text the model read.
        "via TaskCreate: \"Task #1 created successfully: Write the YAML parser\"",
        "via TaskUpdate: \"Updated task #1 status, owner\"",
        "rejected: source_refused: TaskCompleted hook: the loader tests fail",
        "rejected: source_refused: the transcript holds no result for this call",
        "checkpoint_seen turn 2 [reminder:l34] (line 35)  3 items, as imported",
    ] {
        assert!(
            history.contains(needle),
            "history lacks {needle:?}:\n{history}"
        );
    }
    let show: Value = serde_json::from_str(&p.ok(&["show", id, "--json"])).unwrap();
    let items = show.as_array().unwrap();
    let ids: Vec<&str> = items.iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["t1", "1", "2", "3"],
        "one plan: the TodoWrite item, then the tasks"
    );
    assert_eq!(items[2]["blocked_by"], json!(["1"]));
    assert_eq!(items[2]["owner"], "tester");
    assert_eq!(
        items[2]["metadata"],
        json!({"size": "s"}),
        "a null metadata key deletes it"
    );
    assert_eq!(
        items[3]["blocked_by"],
        json!(["2"]),
        "numeric ids and repaired keys read"
    );
    assert_eq!(items[1]["active_form"], "Finishing the parser");
    assert_eq!(
        p.verify_notes(),
        [
            format!(
                "note: session {id} seq 15: started while blocked: 3 \"Wire the loader into main\" waits for 2 \"Write the loader tests\""
            ),
            format!(
                "note: session {id} seq 19: the source's own list at line 38 differs from the imported plan: 2 \"Write the loader tests\": pending -> in_progress"
            ),
        ]
    );
}

#[test]
fn a_claude_code_project_folder_imports_each_session_once_and_grows() {
    let p = Planlog::new();
    let dir = copy_fixture("claude-project", p.dir.path());
    let main = "cc-7a1f01d5-0000-4000-8000-00000000f01d";
    let r = p.import(&[dir.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ids: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(ids.len(), 2, "{}", r.stdout);
    assert_eq!(
        ids[0], main,
        "the transcript comes before its sub-agents' folder"
    );
    assert!(
        r.stderr.contains("skipped") && r.stderr.contains("notes.json"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("out.txt"),
        "only .jsonl and .json files are looked at"
    );
    let sessions = p.ok(&["sessions"]);
    assert!(
        sessions.contains(&format!("sub-agent of {main}")),
        "{sessions}"
    );
    // Again: nothing new, and it says so.
    let again = p.import(&[dir.to_str().unwrap()]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout, r.stdout);
    assert_eq!(
        again
            .stderr
            .matches("already imported; nothing new")
            .count(),
        2,
        "{}",
        again.stderr
    );
    let events = |p: &Planlog| p.ok(&["export", main, "--format", "jsonl"]).lines().count();
    // Its start, what it is, its one call.
    assert_eq!(events(&p), 3);
    // The session grows: only the new calls are appended.
    let transcript = dir.join("7a1f01d5-0000-4000-8000-00000000f01d.jsonl");
    let mut text = std::fs::read_to_string(&transcript).unwrap();
    let sid = "7a1f01d5-0000-4000-8000-00000000f01d";
    text.push_str(&json!({"type":"assistant","uuid":"p4","parentUuid":"p3","sessionId":sid,"timestamp":"2026-10-06T09:00:00.000Z","isSidechain":false,"message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_p2","name":"TaskUpdate","input":{"taskId":"1","status":"completed"}}]}}).to_string());
    text.push('\n');
    text.push_str(&json!({"type":"user","uuid":"p5","parentUuid":"p4","sessionId":sid,"timestamp":"2026-10-06T09:00:01.000Z","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_p2","content":"Updated task #1 status"}]},"toolUseResult":{"success":true,"taskId":"1","updatedFields":["status"]}}).to_string());
    text.push('\n');
    std::fs::write(&transcript, text).unwrap();
    let grown = p.import(&["claude-code", transcript.to_str().unwrap()]);
    assert_eq!(grown.code, 0, "{}", grown.stderr);
    assert!(
        grown
            .stderr
            .contains("1 event appended (1 calls were there already)"),
        "{}",
        grown.stderr
    );
    assert_eq!(events(&p), 4);
    assert!(p.ok(&["show", main]).contains("✔ Find the flaky test"));
    assert!(p.verify_notes().is_empty());
}

#[test]
fn a_sub_agent_imported_alone_gets_its_parent_which_its_transcript_fills_later() {
    let p = Planlog::new();
    let dir = copy_fixture("claude-project", p.dir.path());
    let sub = dir.join("7a1f01d5-0000-4000-8000-00000000f01d/subagents/agent-a7f3.jsonl");
    let r = p.import(&[sub.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ids: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(ids.len(), 2);
    assert!(
        r.stderr.contains("created empty as its sub-agent's parent"),
        "{}",
        r.stderr
    );
    let main = p.import(&[dir
        .join("7a1f01d5-0000-4000-8000-00000000f01d.jsonl")
        .to_str()
        .unwrap()]);
    assert_eq!(main.code, 0, "{}", main.stderr);
    assert_eq!(main.stdout.trim(), ids[0]);
    // What it is, and its call.
    assert!(main.stderr.contains("2 events appended"), "{}", main.stderr);
}

#[test]
fn a_task_folder_imported_again_keeps_what_changed_and_only_that() {
    let p = Planlog::new();
    let dir = copy_fixture("claude-task-folder", p.dir.path()).join("session-7a1c0de5");
    let first = p.import(&[dir.to_str().unwrap()]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let id = first.stdout.trim();
    assert_eq!(id, "ct-session-7a1c0de5", "named after the list id");
    assert!(
        first
            .stderr
            .contains("Claude Code task folder (claude-code-tasks)"),
        "{}",
        first.stderr
    );
    let same = p.import(&["claude-code-tasks", dir.to_str().unwrap()]);
    assert_eq!(same.code, 0, "{}", same.stderr);
    assert!(
        same.stderr.contains("already imported; nothing new"),
        "{}",
        same.stderr
    );
    // The tool moves on: task 2 done, task 3 deleted (its file gone), task 4 created.
    let two = dir.join("2.json");
    let mut task: Value = serde_json::from_str(&std::fs::read_to_string(&two).unwrap()).unwrap();
    task["status"] = json!("completed");
    std::fs::write(&two, serde_json::to_string_pretty(&task).unwrap()).unwrap();
    std::fs::remove_file(dir.join("3.json")).unwrap();
    std::fs::write(
        dir.join("4.json"),
        serde_json::to_string_pretty(&json!({"id":"4","subject":"Release","description":"","status":"pending","blocks":[],"blockedBy":["2"]})).unwrap(),
    )
    .unwrap();
    let later = p.import(&[dir.to_str().unwrap()]);
    assert_eq!(later.code, 0, "{}", later.stderr);
    assert!(
        later.stderr.contains("1 event appended"),
        "{}",
        later.stderr
    );
    p.audit_snapshots("task_folder", id);
    let history = p.ok(&["history", id]);
    assert!(
        history.contains("2 \"Write the loader tests\": in_progress -> completed"),
        "{history}"
    );
    assert!(
        history.contains("3 \"Wire the loader into main\": pending -> dropped"),
        "{history}"
    );
    assert!(history.contains("4 \"Release\": new pending"), "{history}");
    // A file that is not a task sits in the folder: refused by name, or skipped on request.
    std::fs::write(dir.join("5.json"), "{ not json").unwrap();
    let bad = p.import(&[dir.to_str().unwrap()]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("5.json: not JSON"), "{}", bad.stderr);
    let skipped = p.import(&[dir.to_str().unwrap(), "--skip-bad-lines"]);
    assert_eq!(skipped.code, 0, "{}", skipped.stderr);
    assert!(
        skipped.stderr.contains("already imported; nothing new"),
        "{}",
        skipped.stderr
    );
    assert!(p.verify_notes().is_empty());
}

#[test]
fn codex_keeps_explanations_and_refusals_and_notes_odd_times() {
    let p = Planlog::new();
    let r = p.import(&["codex", fixture("codex-explain.jsonl").to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = r.stdout.trim();
    p.audit_snapshots("codex_explain", id);
    let history = p.ok(&["history", id]);
    for needle in [
        "explanation: \"Start by pinning the toolchain\"",
        "rejected: source_refused: failed to parse function arguments",
        "unreadable timestamp \"yesterday at noon\"",
        "is earlier than the previous event's",
    ] {
        assert!(
            history.contains(needle),
            "history lacks {needle:?}:\n{history}"
        );
    }
    assert!(p.verify_notes().is_empty());
}

#[test]
fn opencode_exports_keep_priority_and_cancelled() {
    let p = Planlog::new();
    let r = p.import(&[
        "opencode",
        fixture("opencode-export.json").to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = r.stdout.trim();
    assert_eq!(id, "oc-ses_6a1b2c3d4e5fXyZ");
    p.audit_snapshots("opencode", id);
    let show: Value = serde_json::from_str(&p.ok(&["show", id, "--json"])).unwrap();
    assert_eq!(show[0]["metadata"], json!({"priority": "high"}));
    assert_eq!(show[2]["status"], "cancelled");
    let history = p.ok(&["history", id]);
    assert!(
        history.contains("rejected: source_refused: Invalid input"),
        "{history}"
    );
    assert!(history.contains("unknown status \"waiting\""), "{history}");
    assert_eq!(
        history
            .lines()
            .filter(|l| !l.contains("session_described"))
            .count(),
        4,
        "the running call never ran to the end:\n{history}"
    );
    assert!(p.verify_notes().is_empty());
}

#[test]
fn gemini_recordings_in_both_shapes_follow_rewinds() {
    let p = Planlog::new();
    let r = p.import(&["gemini", fixture("gemini-session.jsonl").to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = r.stdout.trim();
    p.audit_snapshots("gemini", id);
    let history = p.ok(&["history", id]);
    assert_eq!(
        history.matches("[wt-1]").count(),
        1,
        "a re-appended message is one call"
    );
    assert!(history.contains("rewound to message \"m5\""), "{history}");
    assert!(
        history.contains(
            "t2 \"Write tests\": completed -> in_progress; t3 \"Wait for review\": new pending"
        ),
        "the list set before the rewind, same ids: {history}"
    );
    assert!(history.contains("rejected: source_refused: the call ended cancelled"));
    let old = p.import(&[fixture("gemini-old.json").to_str().unwrap()]);
    assert_eq!(old.code, 0, "{}", old.stderr);
    assert!(old.stderr.contains("Gemini CLI chat recording (gemini)"));
    let old_history = p.ok(&["history", old.stdout.trim()]);
    assert!(
        old_history
            .contains("t1 \"Tag the release\": new in_progress; t2 \"Publish\": new pending"),
        "{old_history}"
    );
    assert!(p.verify_notes().is_empty());
}

/// A Gemini compression, as Gemini CLI 0.61 records it (its history rewritten as a summary and
/// the kept messages under new ids, in a `$set.messages`): a compaction, with the prompt's size
/// before it, and not a reset: the plan stands (the list was once emptied here, a record of
/// what never happened). A resume listing the new history again is nothing. Imported twice:
/// nothing twice.
#[test]
fn a_gemini_compression_is_a_compaction_not_a_reset() {
    let p = Planlog::new();
    let file = fixture("gemini-compressed.jsonl");
    let r = p.import(&["gemini", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = r.stdout.trim().to_owned();
    let history = p.ok(&["history", &id]);
    let compactions: Vec<&str> = history
        .lines()
        .filter(|l| l.contains("context_compacted"))
        .collect();
    assert_eq!(compactions.len(), 1, "{history}");
    assert!(
        compactions[0].contains("[compact:s1]")
            && compactions[0].contains("610000 tokens before")
            && compactions[0].contains("a compression"),
        "{history}"
    );
    assert!(!history.contains("rewind:"), "{history}");
    assert_eq!(history.matches("plan_written").count(), 2, "{history}");
    let shown = p.ok(&["show", &id]);
    assert!(
        shown.contains("1. ✔ Pin the toolchain") && shown.contains("2. ▶ Fix the warnings"),
        "{shown}"
    );
    let again = p.import(&["gemini", file.to_str().unwrap()]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(p.ok(&["history", &id]), history);
    assert!(p.verify_notes().is_empty());
}

#[test]
fn the_format_may_be_left_out_and_is_named_on_stderr() {
    for (file, word) in [
        ("claude-small.jsonl", "claude-code"),
        ("claude-tasks.jsonl", "claude-code"),
        ("codex-new.jsonl", "codex"),
        ("codex-old-crlf.jsonl", "codex"),
        ("opencode-export.json", "opencode"),
        ("gemini-session.jsonl", "gemini"),
        ("gemini-old.json", "gemini"),
    ] {
        let p = Planlog::new();
        let r = p.import(&[fixture(file).to_str().unwrap()]);
        assert_eq!(r.code, 0, "{file}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("({word})")),
            "{file}: {}",
            r.stderr
        );
        let named = Planlog::new();
        assert_eq!(
            named.ok(&["import", word, fixture(file).to_str().unwrap()]),
            r.stdout,
            "{file}: detected or named, the same sessions"
        );
    }
}

#[test]
fn a_file_of_another_format_is_refused_and_nothing_is_written() {
    let p = Planlog::new();
    let claude = fixture("claude-tasks.jsonl");
    let r = p.import(&["codex", claude.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("is not a Codex CLI rollout")
            && r.stderr.contains("looks like a Claude Code transcript")
            && r.stderr.contains("planlog import claude-code"),
        "{}",
        r.stderr
    );
    for (format, file) in [
        ("gemini", "codex-new.jsonl"),
        ("opencode", "gemini-old.json"),
        ("claude-code-tasks", "claude-small.jsonl"),
        ("planlog", "claude-small.jsonl"),
    ] {
        let r = p.import(&[format, fixture(file).to_str().unwrap()]);
        assert_eq!(r.code, 2, "{format} {file}: {}", r.stderr);
        assert!(r.stderr.contains("is not "), "{}", r.stderr);
    }
    let unknown = p.dir.path().join("notes.jsonl");
    std::fs::write(&unknown, "{\"hello\": 1}\n{\"world\": 2}\n").unwrap();
    let r = p.import(&[unknown.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("cannot tell the format")
            && r.stderr
                .contains("claude-code, claude-code-tasks, codex, opencode, gemini, planlog"),
        "{}",
        r.stderr
    );
    let empty = p.dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let r = p.import(&["claude-code", empty.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("it is empty"), "{}", r.stderr);
    let r = p.import(&["yaml", empty.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("unknown format \"yaml\""), "{}", r.stderr);
    assert!(p.ok(&["sessions", "--json"]).is_empty(), "nothing written");
}

/// Gemini CLI 0.61 starts every run with a recording of its own (`session-<minute>-<id>`:
/// metadata, then a `$set.messages` of the session's context) and a resume goes on in the
/// session's first file, so a resume in a later minute leaves that start behind under the
/// same session id. It is no conversation: imported before the session's recording it wrote
/// the session as started at the resume (after its own calls). Now, beside the session's
/// earlier recording, it writes nothing and says why, and either order gives the recording's
/// history. Alone in its folder it is a session just begun, and still the session.
#[test]
fn a_gemini_resumes_start_up_file_is_no_session() {
    let p = Planlog::new();
    let chats = p.dir.path().join("chats");
    std::fs::create_dir(&chats).unwrap();
    let first = std::fs::read_to_string(fixture("gemini-session.jsonl")).unwrap();
    let recording = chats.join("session-2026-10-08T07-00-3e7d9a10.jsonl");
    std::fs::write(&recording, &first).unwrap();
    let meta: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    let session = meta["sessionId"].as_str().unwrap();
    let start_up_of = |session: &str| {
        [
            json!({"sessionId": session, "projectHash": "app", "startTime": "2026-10-08T07:09:00.000Z", "lastUpdated": "2026-10-08T07:09:00.000Z", "kind": "main"}),
            json!({"$set": {"messages": [{"id": "c1", "timestamp": "2026-10-08T07:09:00.000Z", "type": "user", "content": [{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"}]}], "lastUpdated": "2026-10-08T07:09:00.000Z"}}),
        ]
        .map(|v| v.to_string())
        .join("\n")
            + "\n"
    };
    let start_up = chats.join("session-2026-10-08T07-09-3e7d9a10.jsonl");
    std::fs::write(&start_up, start_up_of(session)).unwrap();
    let id = format!("gm-{session}");

    let r = p.import(&[start_up.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("nothing imported from")
            && r.stderr.contains("no conversation")
            && r.stderr.contains("session-2026-10-08T07-00-3e7d9a10.jsonl"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout.trim(), "", "no session: {}", r.stdout);
    assert!(!p.ok(&["sessions"]).contains(&id));

    let r = p.import(&[recording.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let history = p.ok(&["history", &id]);
    let started = history.lines().next().unwrap();
    assert!(
        started.contains("2026-10-08T07:00:00.000Z  session_started")
            && started.contains("session-2026-10-08T07-00-3e7d9a10.jsonl"),
        "the session starts when its recording says: {history}"
    );
    // The other order: the start-up file adds nothing.
    let r = p.import(&[start_up.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("nothing imported from"), "{}", r.stderr);
    assert_eq!(p.ok(&["history", &id]), history);

    // The same file with no earlier recording beside it: a session just begun.
    let other = "4e7d9a10-5b2c-4d8e-9f01-23456789abcd";
    let begun = chats.join("session-2026-10-08T07-09-4e7d9a10.jsonl");
    std::fs::write(&begun, start_up_of(other)).unwrap();
    let r = p.import(&[begun.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("the agent kept no plan"), "{}", r.stderr);
    assert_eq!(r.stdout.trim(), format!("gm-{other}"));
}

#[test]
fn a_transcript_without_plan_calls_imports_and_says_so() {
    let p = Planlog::new();
    let file = p.dir.path().join("quiet.jsonl");
    std::fs::write(
        &file,
        [
            json!({"type":"user","uuid":"q1","parentUuid":null,"sessionId":"5e55e55e-0000-4000-8000-000000000001","timestamp":"2026-11-01T10:00:00.000Z","message":{"role":"user","content":"What does this repo do?"}}),
            json!({"type":"assistant","uuid":"q2","parentUuid":"q1","sessionId":"5e55e55e-0000-4000-8000-000000000001","timestamp":"2026-11-01T10:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"It keeps plans."}]}}),
        ]
        .map(|v| v.to_string())
        .join("\n"),
    )
    .unwrap();
    let r = p.import(&[file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("the agent kept no plan"), "{}", r.stderr);
    let id = r.stdout.trim();
    // Its start, and what it is (the first prompt): no plan event.
    let history = p.ok(&["history", id]);
    let kinds: Vec<&str> = history
        .lines()
        .map(|l| l.split_whitespace().nth(2).unwrap_or(""))
        .collect();
    assert_eq!(kinds, ["session_started", "session_described"], "{history}");
    assert!(
        history.contains("first prompt \"What does this repo do?\""),
        "{history}"
    );
}

#[test]
fn imported_calls_that_break_the_limits_are_flagged() {
    let p = Planlog::new();
    let file = p.dir.path().join("big.jsonl");
    let sid = "b16b16b1-0000-4000-8000-000000000001";
    let many: Vec<Value> = (0..201)
        .map(|i| json!({"content": format!("item {i}"), "status": "pending"}))
        .collect();
    let odd = vec![
        json!({"content": "x".repeat(2001), "status": "pending"}),
        json!({"content": "", "status": "pending"}),
    ];
    let mut lines: Vec<String> = [(1, many), (2, odd)]
        .into_iter()
        .map(|(n, todos)| json!({"type":"assistant","uuid":format!("a{n}"),"sessionId":sid,"timestamp":"2026-11-01T10:00:00.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":format!("toolu_{n}"),"name":"TodoWrite","input":{"todos":todos}}]}}).to_string())
        .collect();
    // The next prompt: the calls have no results, and the transcript went on without them.
    lines.push(json!({"type":"user","uuid":"u9","sessionId":sid,"timestamp":"2026-11-01T10:00:01.000Z","message":{"role":"user","content":"go on"}}).to_string());
    std::fs::write(&file, lines.join("\n")).unwrap();
    let r = p.import(&[file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let history = p.ok(&["history", r.stdout.trim()]);
    assert!(history.contains("FLAG 201 items"), "{history}");
    assert!(
        history.contains("FLAG") && history.contains("2001 characters"),
        "{history}"
    );
    assert!(history.contains("empty content"), "{history}");
    let notes = p.verify_notes();
    assert_eq!(notes.len(), 3, "{notes:?}");
}

#[test]
fn a_planlog_export_that_was_edited_or_cut_says_what_to_do() {
    let p = Planlog::new();
    let id = p.sample();
    let jsonl = p.ok(&["export", &id, "--format", "jsonl"]);
    let other = Planlog::new();
    // An edited event: the hash no longer matches; skipping cannot help.
    let edited = other.dir.path().join("edited.jsonl");
    std::fs::write(
        &edited,
        jsonl.replacen("Write the parser", "Write the parsers", 1),
    )
    .unwrap();
    let r = other.import(&["planlog", edited.to_str().unwrap(), "--skip-bad-lines"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("line 2") && r.stderr.contains("changed after it was exported"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("--skip-bad-lines does not apply"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("append conflict"), "{}", r.stderr);
    // A cut export: no session_started.
    let cut = other.dir.path().join("cut.jsonl");
    std::fs::write(&cut, jsonl.lines().skip(1).collect::<Vec<_>>().join("\n")).unwrap();
    let r = other.import(&["planlog", cut.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("without its session_started")
            && r.stderr.contains("export the whole session again"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("planlog sessions"), "{}", r.stderr);
    assert!(
        other.ok(&["sessions", "--json"]).is_empty(),
        "nothing written"
    );
}

#[test]
fn a_parent_and_its_fork_in_one_file_are_printed_in_file_order() {
    let p = Planlog::new();
    let id = p.sample();
    let fork = p.ok(&["fork", &id, "--at", "3"]).trim().to_owned();
    let file = p.dir.path().join("both.jsonl");
    let both = p.ok(&["export", &id, "--format", "jsonl"])
        + &p.ok(&["export", &fork, "--format", "jsonl"]);
    std::fs::write(&file, both).unwrap();
    let other = Planlog::new();
    assert_eq!(
        other.ok(&["import", file.to_str().unwrap()]),
        format!("{id}\n{fork}\n")
    );
    assert_eq!(other.run(&["verify"], None).code, 0);
}

#[test]
fn the_round_trip_keeps_the_new_fields_byte_for_byte() {
    let p = Planlog::new();
    let id = p
        .ok(&["import", fixture("claude-tasks.jsonl").to_str().unwrap()])
        .trim()
        .to_owned();
    let jsonl = p.ok(&["export", &id, "--format", "jsonl"]);
    assert!(
        jsonl.contains("\"blocked_by\"")
            && jsonl.contains("\"checkpoint_seen\"")
            && jsonl.contains("\"source\"")
    );
    let file = p.dir.path().join("tasks-export.jsonl");
    std::fs::write(&file, &jsonl).unwrap();
    let other = Planlog::new();
    assert_eq!(
        other
            .ok(&["import", "planlog", file.to_str().unwrap()])
            .trim(),
        id
    );
    assert_eq!(other.ok(&["export", &id, "--format", "jsonl"]), jsonl);
    // The import itself is deterministic: the same file into another store, the same bytes.
    let third = Planlog::new();
    third.ok(&["import", fixture("claude-tasks.jsonl").to_str().unwrap()]);
    assert_eq!(third.ok(&["export", &id, "--format", "jsonl"]), jsonl);
}

#[test]
fn a_deleted_imported_session_comes_back_when_imported_again() {
    let p = Planlog::new();
    let file = fixture("codex-explain.jsonl");
    let id = p.ok(&["import", file.to_str().unwrap()]).trim().to_owned();
    let before = p.ok(&["export", &id, "--format", "jsonl"]);
    p.ok(&["delete", &id, "--yes"]);
    let again = p.import(&[file.to_str().unwrap()]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(p.ok(&["export", &id, "--format", "jsonl"]), before);
}

#[test]
fn two_imports_of_one_source_at_once_record_each_call_once() {
    for _ in 0..3 {
        let p = Planlog::new();
        let file = fixture("claude-tasks.jsonl");
        let spawn = || {
            std::process::Command::new(env!("CARGO_BIN_EXE_planlog"))
                .arg("--db")
                .arg(p.db())
                .args(["import", "claude-code", file.to_str().unwrap()])
                .env("PLANLOG_LOCK_TIMEOUT_MS", "20000")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn(), spawn());
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
        assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
        let id = "cc-7a1c0de5-0000-4000-8000-00000000c0de";
        assert_eq!(
            p.ok(&["export", id, "--format", "jsonl"]).lines().count(),
            20
        );
        assert!(p.verify_notes().len() == 2);
    }
}

/// A Claude Code transcript with `calls` TodoWrite calls (and their results) of `items` items.
fn big_transcript(path: &Path, sid: &str, calls: usize, items: usize) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for c in 0..calls {
        let todos: Vec<Value> = (0..items)
            .map(|i| {
                let status = if i < c % (items + 1) { "completed" } else { "pending" };
                json!({"content": format!("Step {i} of the long task, with enough words to look real"), "status": status, "activeForm": format!("Doing step {i}")})
            })
            .collect();
        let id = format!("toolu_{c:06}");
        writeln!(f, "{}", json!({"type":"assistant","uuid":format!("a{c}"),"sessionId":sid,"timestamp":"2026-11-01T10:00:00.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":id,"name":"TodoWrite","input":{"todos":todos}}]}})).unwrap();
        writeln!(f, "{}", json!({"type":"user","uuid":format!("r{c}"),"sessionId":sid,"timestamp":"2026-11-01T10:00:00.500Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":id,"content":"ok"}]}})).unwrap();
    }
}

#[test]
fn a_disk_that_fills_during_an_import_loses_nothing_and_the_import_succeeds_later() {
    let p = Planlog::new();
    let keep = p.sample();
    let before = p.ok(&["export", &keep, "--format", "jsonl"]);
    let file = p.dir.path().join("big.jsonl");
    big_transcript(&file, "f111f111-0000-4000-8000-000000000001", 3000, 8);
    let size = std::fs::metadata(p.db()).unwrap().len();
    // A file-size limit at the store's size stands in for a full disk (EFBIG), SIGXFSZ ignored.
    let out = p
        .with_file_size_limit(size, &["import", "claude-code", file.to_str().unwrap()])
        .env_remove("PLANLOG_DB")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("free some disk space"), "{stderr}");
    let sessions = p.ok(&["sessions", "--json"]);
    assert!(
        !sessions.contains("f111f111"),
        "nothing of the import was kept: {sessions}"
    );
    assert_eq!(p.ok(&["export", &keep, "--format", "jsonl"]), before);
    assert_eq!(p.run(&["verify"], None).code, 0);
    // The disk frees up.
    let r = p.import(&["claude-code", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("3000 events"), "{}", r.stderr);
}

#[test]
fn a_killed_import_leaves_all_of_a_source_or_none_of_it() {
    let p = Planlog::new();
    let file = p.dir.path().join("big.jsonl");
    let sid = "c111c111-0000-4000-8000-000000000001";
    big_transcript(&file, sid, 10_000, 6);
    let id = format!("cc-{sid}");
    for delay_ms in [1, 3, 10, 60] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_planlog"))
            .arg("--db")
            .arg(p.db())
            .args(["import", "claude-code", file.to_str().unwrap()])
            .env_remove("PLANLOG_DB")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        let events = p.run(&["export", &id, "--format", "jsonl"], None);
        if events.code == 0 {
            assert_eq!(
                events.stdout.lines().count(),
                10_001,
                "all of it, after {delay_ms} ms"
            );
        } else {
            // Killed before it made the store, or before it committed.
            assert!(
                events.stderr.contains("no session") || events.stderr.contains("no store at"),
                "none of it, after {delay_ms} ms: {}",
                events.stderr
            );
        }
        let verify = p.run(&["verify"], None);
        assert!(
            verify.code == 0 || verify.stderr.contains("no store at"),
            "{}{}",
            verify.stdout,
            verify.stderr
        );
    }
    let r = p.import(&["claude-code", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        p.ok(&["export", &id, "--format", "jsonl"]).lines().count(),
        10_001
    );
}

/// A one-call Claude Code transcript whose todo's content is `len` bytes long.
fn one_long_todo(p: &Planlog, name: &str, len: usize) -> PathBuf {
    let sid = "1011b1b1-0000-4000-8000-000000000001";
    let todo = json!({"content": "y".repeat(len), "status": "in_progress", "activeForm": "y"});
    let text = [
        json!({"type": "assistant", "uuid": "a1", "sessionId": sid, "timestamp": "2026-01-01T10:00:00.000Z",
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "TodoWrite", "input": {"todos": [todo]}}]}}),
        json!({"type": "user", "uuid": "r1", "sessionId": sid, "timestamp": "2026-01-01T10:00:01.000Z",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect::<String>();
    let file = p.dir.path().join(name);
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn a_line_over_the_limit_is_refused_with_the_limit_and_an_item_too_long_is_kept_as_an_excerpt() {
    let p = Planlog::new();
    let huge = one_long_todo(&p, "huge.jsonl", 33 * 1024 * 1024);
    let r = p.import(&[huge.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("over planlog's limit of 32 MiB for one line"),
        "{}",
        r.stderr
    );
    assert!(
        !p.db().exists() || !p.ok(&["sessions"]).contains("cc-1011b1b1"),
        "nothing imported"
    );
    let r = p.import(&["--skip-bad-lines", huge.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("skipped"), "{}", r.stderr);
    // Under the line limit but over the text limit: kept as an excerpt, noted and flagged.
    let long = one_long_todo(&p, "long.jsonl", 100_000);
    let long_sid = "cc-1011b1b1-0000-4000-8000-000000000001";
    let r = p.import(&[long.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let plan: Value = serde_json::from_str(&p.ok(&["show", long_sid, "--json"])).unwrap();
    let content = plan[0]["content"].as_str().unwrap();
    assert!(
        content.contains("[cut: 100000 bytes in all, sha256 "),
        "{}",
        &content[content.len() - 120..]
    );
    let history = p.ok(&["history", long_sid]);
    assert!(
        history.contains("kept as an excerpt of 65536 characters with its SHA-256"),
        "{history}"
    );
    assert_eq!(p.run(&["verify"], None).code, 0);
}

#[test]
fn devices_and_fifos_are_refused_or_left_out_never_read_forever() {
    let p = Planlog::new();
    let started = std::time::Instant::now();
    let r = p.import(&["/dev/zero"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
    let r = p.import(&["claude-code", "/dev/zero"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let folder = p.dir.path().join("projects");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(fixture("claude-small.jsonl"), folder.join("a.jsonl")).unwrap();
    let fifo = folder.join("b.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let r = p.import(&[folder.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("cc-11111111-2222-3333-4444-555555555555"),
        "{}",
        r.stdout
    );
    assert!(
        !r.stderr.contains("b.jsonl"),
        "the FIFO is not a source: {}",
        r.stderr
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn a_task_folder_does_not_follow_links() {
    let p = Planlog::new();
    let folder = p.dir.path().join("tasks").join("team");
    std::fs::create_dir_all(&folder).unwrap();
    let source = fixture("claude-task-folder/session-7a1c0de5");
    for entry in std::fs::read_dir(&source).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), folder.join(entry.file_name())).unwrap();
    }
    // A task-shaped file elsewhere, linked into the folder.
    let outside = p.dir.path().join("secret.json");
    std::fs::write(
        &outside,
        r#"{"id": "99", "subject": "read through a link", "status": "pending"}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, folder.join("99.json")).unwrap();
    let r = p.import(&["claude-code-tasks", folder.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let plan = p.ok(&["show", "ct-team", "--json"]);
    assert!(!plan.contains("read through a link"), "{plan}");
    assert!(
        plan.contains("\"id\":\"1\""),
        "the real tasks are there: {plan}"
    );
}
