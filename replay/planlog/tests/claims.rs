//! Agent teams: claims that cannot be taken twice. Sixteen `planlog mcp --tools tasks`
//! processes (one per agent, over stdio, as agents start them) on one task list claim the same
//! task at the same moment, fifty times over: each time exactly one wins, every other is
//! refused with who holds the task, and every refusal is on record. On a redb file and on
//! PostgreSQL (`.ci/with-postgres`; without it that test says SKIPPED).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Barrier};

use planlog_tests::TempPg;
use serde_json::{Value, json};

mod common;

/// Agents racing for each task.
const AGENTS: usize = 16;

/// Tasks raced for.
const ROUNDS: usize = 50;

/// One agent's MCP server, spoken to line by line.
struct Agent {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Agent {
    /// `planlog --db STORE mcp --session SESSION --tools tasks`, initialized.
    fn start(store: &str, session: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_planlog"))
            .args([
                "--db",
                store,
                "mcp",
                "--session",
                session,
                "--tools",
                "tasks",
            ])
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut agent = Self {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        agent.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "claims-test", "version": "0"}}),
        );
        writeln!(
            agent.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        agent
    }

    /// Sends one request and waits for its answer.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server ended"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }

    /// Calls `tool`: (whether it failed, its text).
    fn call(&mut self, tool: &str, arguments: Value) -> (bool, String) {
        let v = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &v["result"];
        (
            result["isError"] == true,
            result["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        )
    }

    fn stop(mut self) {
        drop(self.stdin);
        assert!(self.child.wait().unwrap().success());
    }
}

/// `planlog --db STORE ARGS…`: its stdout; it must succeed.
fn planlog(store: &str, args: &[&str]) -> String {
    common::planlog_ok(store.as_ref(), args, |_| {})
}

/// The race on `store`.
fn sixteen_agents_race_for_each_task(store: &str) {
    let session = "team";
    let mut agents: Vec<Agent> = (0..AGENTS).map(|_| Agent::start(store, session)).collect();
    for round in 0..ROUNDS {
        let (failed, created) = agents[round % AGENTS].call(
            "task_create",
            json!({"subject": format!("task of round {round}")}),
        );
        assert!(!failed, "{created}");
        let id = (round + 1).to_string();
        let barrier = Arc::new(Barrier::new(AGENTS));
        let handles: Vec<_> = agents
            .drain(..)
            .enumerate()
            .map(|(i, mut agent)| {
                let barrier = Arc::clone(&barrier);
                let id = id.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    let answer = agent.call(
                        "task_claim",
                        json!({"taskId": id, "owner": format!("agent-{i}")}),
                    );
                    (agent, answer)
                })
            })
            .collect();
        let mut winners = Vec::new();
        for (i, handle) in handles.into_iter().enumerate() {
            let (agent, (failed, text)) = handle.join().unwrap();
            agents.push(agent);
            if failed {
                assert!(
                    text.contains(&format!("task #{id} is held by \"agent-")),
                    "a refused claim names the holder: {text}"
                );
            } else {
                assert!(text.contains("Claimed task"), "{text}");
                winners.push(i);
            }
        }
        assert_eq!(winners.len(), 1, "round {round}: winners {winners:?}");
        // The plan says the one winner holds it, in progress.
        let (_, got) = agents[0].call("task_get", json!({"taskId": id}));
        let got: Value = serde_json::from_str(&got).unwrap();
        assert_eq!(
            (
                got["task"]["owner"].as_str(),
                got["task"]["status"].as_str()
            ),
            (
                Some(format!("agent-{}", winners[0]).as_str()),
                Some("in_progress")
            ),
            "round {round}"
        );
    }
    for agent in agents {
        agent.stop();
    }
    // Every refused claim is on record: fifteen a round.
    let history = planlog(store, &["history", session]);
    let refused = history
        .lines()
        .filter(|l| l.contains("rejected: task_held"))
        .count();
    assert_eq!(refused, ROUNDS * (AGENTS - 1), "{history}");
    let claimed = planlog(store, &["tasks", session, "--json"]);
    let tasks: Value = serde_json::from_str(&claimed).unwrap();
    assert_eq!(tasks.as_array().unwrap().len(), ROUNDS);
    assert!(
        tasks
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["status"] == "in_progress" && t["owner"].is_string())
    );
    assert_eq!(
        planlog(store, &["tasks", session, "--ready", "--json"]).trim(),
        "[]"
    );
    assert!(planlog(store, &["verify"]).contains("0 problems"));
}

#[test]
fn sixteen_agents_claiming_one_task_at_once_on_a_file_exactly_one_wins_each_time() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    sixteen_agents_race_for_each_task(db.to_str().unwrap());
}

#[test]
fn sixteen_agents_claiming_one_task_at_once_on_postgres_exactly_one_wins_each_time() {
    let Some(db) = TempPg::new() else {
        return;
    };
    sixteen_agents_race_for_each_task(&db.url);
}

/// `planlog tasks`: every task with its holder and what it waits for; `--ready` only the work
/// free to claim, and a line saying when there is none.
#[test]
fn planlog_tasks_shows_holders_waits_and_ready_work() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let store = db.to_str().unwrap();
    let mut agent = Agent::start(store, "list");
    for subject in ["Parse", "Test"] {
        assert!(!agent.call("task_create", json!({"subject": subject})).0);
    }
    assert!(
        !agent
            .call("task_update", json!({"taskId": "2", "addBlockedBy": ["1"]}))
            .0
    );
    let ready = planlog(store, &["tasks", "list", "--ready"]);
    assert!(ready.contains("#1") && !ready.contains("#2"), "{ready}");
    assert!(
        !agent
            .call("task_claim", json!({"taskId": "1", "owner": "alice"}))
            .0
    );
    agent.stop();
    let all = planlog(store, &["tasks", "list"]);
    let lines: Vec<&str> = all.lines().collect();
    assert!(
        lines[0].contains("#1")
            && lines[0].contains("in_progress")
            && lines[0].contains("held by alice"),
        "{all}"
    );
    assert!(
        lines[1].contains("#2") && lines[1].contains("waits for #1"),
        "{all}"
    );
    assert!(
        planlog(store, &["tasks", "list", "--ready"]).contains("no ready task"),
        "nothing free: 1 is held, 2 waits"
    );
}
