//! The scenario runner: a scripted model drives a small reference agent loop that uses
//! `PlanSession` exactly as a host would, and the run is written down as a transcript (the
//! views sent to the model, tool results, auto-continue decisions, the final plan and the
//! log) for an insta snapshot.
//!
//! A fixture (`fixtures/scenarios/*.json`) is `{"description", "plan_mode_section"?,
//! "actions": [...]}`; each action is one of:
//!
//! - `{"turn": {"user": TEXT, "steps": [STEP...]}}`: a user message opens a turn; each step is
//!   one model response, preceded by a request boundary and a request (the view is recorded);
//! - `{"compact": "drop_all" | "keep_last:N" | "summarize"}`: the host compacts its history;
//! - `{"crash": {}}`: the process dies (no close) and restarts: history lost, plan restored;
//! - `{"fork": {"at": SEQ}}`: the host continues in a fork of the session at SEQ;
//! - `{"select_mode": BOOL}` / `{"command": "/plan ..."}`: the user, between turns;
//! - `{"cancel": {}}`: the user presses Ctrl+C (auto-continue off).
//!
//! A STEP is `{"text": TEXT}`, `{"calls": [CALL...]}`, `{"select_mode": BOOL}` (the user,
//! mid-turn) or `{"delegate": {"tools": [NAME...], "steps": [STEP...]}}` (a sub-agent run).
//! A CALL is `{"tool": NAME, "id"?: CALL_ID, "args": JSON, "review"?: "approve" |
//! "keep:FEEDBACK" | "dismiss" | "none"}`; tools other than plan_write and exit_plan_mode
//! return a canned "ok".
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test support code

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use planlog_core::auto_continue::{AutoContinue, RunEnd};
use planlog_core::plan_mode::{
    POLICY_SECTION_NAME, PlanModeConfig, PlanReview, ReviewOutcome, parse_plan_command,
};
use planlog_core::{
    EventLog, PlanSession, Seq, SessionBuilder, SessionId, TestEnv,
    events::EventBody,
    render::{Style, render_block},
    tool::PLAN_WRITE,
};
use planlog_store::RedbLog;
use planlog_store::host::PlanFiles;
use serde_json::Value;

/// One message of the host's history or view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    /// `user`, `assistant` or `tool`.
    pub role: &'static str,
    /// Its text.
    pub text: String,
}

fn msg(role: &'static str, text: impl Into<String>) -> Msg {
    Msg {
        role,
        text: text.into(),
    }
}

struct ScriptedReview(ReviewOutcome);

impl PlanReview for ScriptedReview {
    fn review(&mut self, _plan: &str) -> ReviewOutcome {
        self.0.clone()
    }
}

struct Host {
    log: Arc<RedbLog>,
    env: Arc<TestEnv>,
    plan_mode: Option<PlanModeConfig>,
    session: PlanSession,
    history: Vec<Msg>,
    auto: AutoContinue,
    turn: u64,
    out: String,
    plan_files: PlanFiles,
}

/// Runs the scenario file `path` against a fresh store in `dir`; returns the transcript.
pub fn run_scenario(path: &Path, dir: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let fixture: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let store = dir.join("planlog.redb");
    let log = Arc::new(RedbLog::open(&store).unwrap());
    let env = Arc::new(TestEnv::default());
    let plan_files = PlanFiles::beside(&store);
    let plan_mode = fixture["plan_mode_section"]
        .as_str()
        .map(|s| PlanModeConfig::new(s).unwrap());
    let session = builder(&log, &env, &plan_files, &plan_mode)
        .open(&SessionId::new("main").unwrap())
        .unwrap();
    let mut host = Host {
        log,
        env,
        plan_mode,
        session,
        history: Vec::new(),
        auto: AutoContinue::new(),
        turn: 0,
        out: String::new(),
        plan_files,
    };
    writeln!(
        host.out,
        "# {}\n",
        fixture["description"].as_str().unwrap_or("")
    )
    .unwrap();
    for action in fixture["actions"].as_array().unwrap() {
        host.action(action);
    }
    host.finish();
    host.out
}

/// A session builder with the scenario's log, clock, plan file sink and plan-mode config.
fn builder(
    log: &Arc<RedbLog>,
    env: &Arc<TestEnv>,
    files: &PlanFiles,
    plan_mode: &Option<PlanModeConfig>,
) -> SessionBuilder {
    let builder = PlanSession::builder(Arc::clone(log), Arc::clone(env)).sink(files.clone());
    match plan_mode {
        Some(config) => builder.plan_mode(config.clone()),
        None => builder,
    }
}

impl Host {
    fn builder(&self) -> SessionBuilder {
        builder(&self.log, &self.env, &self.plan_files, &self.plan_mode)
    }

    fn say(&mut self, line: impl AsRef<str>) {
        self.out.push_str(line.as_ref());
        self.out.push('\n');
    }

    fn action(&mut self, action: &Value) {
        let (kind, arg) = action.as_object().and_then(|o| o.iter().next()).unwrap();
        match kind.as_str() {
            "turn" => self.run_turn(arg),
            "compact" => self.compact(arg.as_str().unwrap()),
            "crash" => {
                self.say("== crash: the process dies without closing; it restarts and reopens the session");
                let id = self.session.id().clone();
                // Drop without close: whatever was acknowledged must be in the store.
                let fresh = self.builder().open(&id).unwrap();
                let old = std::mem::replace(&mut self.session, fresh);
                std::mem::forget(old);
                self.history.clear();
                self.auto = AutoContinue::new();
            }
            "fork" => {
                let at = Seq::new(arg["at"].as_u64().unwrap()).unwrap();
                let parent = self.session.id().clone();
                let fork = self.builder().fork(&parent, at).unwrap();
                self.say(format!(
                    "== fork of {parent} at seq {at}; the host continues in the fork"
                ));
                self.session = fork;
                self.history.clear();
            }
            "select_mode" => {
                let outcome = self.session.set_plan_mode(arg.as_bool().unwrap());
                self.say(format!("== user selects plan mode {}: {outcome:?}", arg));
            }
            "command" => {
                let line = arg.as_str().unwrap();
                let reply = self
                    .session
                    .run_plan_command(parse_plan_command(line).unwrap());
                self.say(format!("== user: {line}\n   reply: {}", reply.reply));
                if let Some(steer) = reply.steer {
                    self.run_turn(&serde_json::json!({"user": steer, "steps": action.get("steps").cloned().unwrap_or(Value::Array(vec![]))}));
                }
            }
            "cancel" => {
                self.auto.on_cancel();
                self.say("== user cancels (Ctrl+C): auto-continue off");
            }
            other => panic!("unknown action {other}"),
        }
    }

    fn compact(&mut self, how: &str) {
        let before = self.history.len();
        if how == "drop_all" {
            self.history.clear();
        } else if how == "summarize" {
            self.history = vec![msg(
                "assistant",
                format!("[summary of {before} earlier messages]"),
            )];
        } else if let Some(n) = how.strip_prefix("keep_last:") {
            let n: usize = n.parse().unwrap();
            self.history.drain(..before.saturating_sub(n));
        } else {
            panic!("unknown compaction {how}");
        }
        self.say(format!(
            "== compaction {how}: history {before} -> {} messages",
            self.history.len()
        ));
    }

    fn run_turn(&mut self, turn: &Value) {
        self.turn += 1;
        let user = turn["user"].as_str().unwrap_or("");
        self.say(format!("\n== turn {}: user: {user}", self.turn));
        self.history.push(msg("user", user));
        self.session.turn_opened();
        let steps = turn["steps"].as_array().cloned().unwrap_or_default();
        let mut ended_early = false;
        for step in &steps {
            if let Some(active) = step.get("select_mode") {
                let outcome = self.session.set_plan_mode(active.as_bool().unwrap());
                self.say(format!(
                    "   (user selects plan mode {active} mid-turn: {outcome:?})"
                ));
                continue;
            }
            if let Some(d) = step.get("delegate") {
                self.delegate(d);
                continue;
            }
            if self.model_step(step) {
                ended_early = true;
                break;
            }
        }
        self.session.turn_closed();
        let end = self.auto.on_run_end(&self.session.plan());
        let end = match end {
            RunEnd::Idle => "idle".to_owned(),
            RunEnd::Continue(p) => format!("continue with {p:?}"),
            RunEnd::Stalled(m) => format!("stalled: {m}"),
            RunEnd::Finished => "finished".to_owned(),
        };
        self.say(format!(
            "   run end{}: auto-continue {end}",
            if ended_early {
                " (turn ended by the review)"
            } else {
                ""
            }
        ));
    }

    /// One model request and response. Returns true when the turn must end now.
    fn model_step(&mut self, step: &Value) -> bool {
        let start = self.session.before_request();
        if let Some(notice) = start.notice {
            self.history.push(msg("user", notice));
        }
        let view = self.session.inject(&self.history, |text| msg("user", text));
        let tools: Vec<String> = self.session.tools().into_iter().map(|t| t.name).collect();
        self.say(format!(
            "-- request: tools [{}]{}",
            tools.join(", "),
            match self.session.policy_section() {
                Some(s) => format!(", system section {POLICY_SECTION_NAME}: {s:?}"),
                None => String::new(),
            }
        ));
        for m in &view {
            let text = m.text.replace('\n', "\n      ");
            self.say(format!("   {}: {text}", m.role));
        }
        if let Some(text) = step.get("text").and_then(Value::as_str) {
            self.say(format!("   model says: {text}"));
            self.history.push(msg("assistant", text));
        }
        let mut end_turn = false;
        for call in step
            .get("calls")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
        {
            let tool = call["tool"].as_str().unwrap();
            let args = call["args"].to_string();
            self.history
                .push(msg("assistant", format!("[calls {tool} {args}]")));
            let (is_error, content) = match tool {
                t if t == PLAN_WRITE => {
                    let r = self
                        .session
                        .plan_write(call["id"].as_str(), Some(self.turn), &args)
                        .durable()
                        .unwrap();
                    if !r.is_error {
                        self.auto.on_plan_written(&self.session.plan());
                    }
                    (r.is_error, r.content)
                }
                "exit_plan_mode"
                    if self
                        .session
                        .tools()
                        .iter()
                        .any(|t| t.name == "exit_plan_mode") =>
                {
                    let outcome = match call["review"].as_str().unwrap_or("none") {
                        "approve" => ReviewOutcome::Approve,
                        "dismiss" => ReviewOutcome::Dismissed,
                        "none" => ReviewOutcome::NoChannel,
                        keep => ReviewOutcome::KeepPlanning(
                            keep.strip_prefix("keep:").unwrap().to_owned(),
                        ),
                    };
                    let r = self
                        .session
                        .exit_plan_mode(&args, &mut ScriptedReview(outcome));
                    end_turn |= r.end_turn;
                    (r.result.is_error, r.result.content)
                }
                other
                    if self.session.tools().iter().any(|t| t.name == other)
                        || !["exit_plan_mode", PLAN_WRITE].contains(&other) =>
                {
                    (false, "ok".to_owned())
                }
                other => (true, format!("Unknown tool: {other}")),
            };
            self.say(format!(
                "   {tool}{} -> {}{content}",
                call["id"]
                    .as_str()
                    .map(|i| format!(" [{i}]"))
                    .unwrap_or_default(),
                if is_error { "ERROR " } else { "" }
            ));
            self.history.push(msg("tool", content));
        }
        end_turn
    }

    fn delegate(&mut self, d: &Value) {
        let tools: Vec<&str> = d["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        let mut child = self.session.delegate(&tools).unwrap();
        self.say(format!(
            "   >> sub-agent with tools {tools:?} (its tools: [{}])",
            child
                .tools()
                .into_iter()
                .map(|t| t.name)
                .collect::<Vec<_>>()
                .join(", ")
        ));
        let mut child_history = vec![msg("user", "sub-task")];
        for step in d["steps"].as_array().unwrap() {
            let view = child.inject(&child_history, |text| msg("user", text));
            self.say(format!(
                "   >> sub-agent request ({} messages; plan injected: {})",
                view.len(),
                view.last()
                    .is_some_and(|m| m.text.starts_with("## Current"))
            ));
            for call in step["calls"].as_array().cloned().unwrap_or_default() {
                let args = call["args"].to_string();
                let r = match call["tool"].as_str().unwrap() {
                    t if t == PLAN_WRITE => child
                        .plan_write(call["id"].as_str(), None, &args)
                        .into_result(),
                    _ => planlog_core::ToolResult {
                        is_error: false,
                        content: "ok".into(),
                    },
                };
                self.say(format!(
                    "   >> sub-agent {} -> {}{}",
                    call["tool"].as_str().unwrap(),
                    if r.is_error { "ERROR " } else { "" },
                    r.content
                ));
                child_history.push(msg("tool", r.content));
            }
        }
        self.say(format!(
            "   >> sub-agent done; its plan dies with it ({} items); parent plan unchanged: {}",
            child.plan().len(),
            self.session.plan().to_json()
        ));
        match child.delegate(&["plan_write"]) {
            Err(e) => self.say(format!("   >> sub-agent tried to delegate: {e}")),
            Ok(_) => panic!("a sub-agent delegated"),
        }
    }

    fn finish(&mut self) {
        self.say("\n== final plan");
        let block = render_block(&self.session.plan(), Style::Plain);
        self.say(block);
        self.say(format!("injected text: {:?}", self.session.plan_text()));
        self.session.close().unwrap();
        self.say("\n== stored log");
        let sessions = self.log.sessions().unwrap();
        for info in &sessions {
            self.say(format!("session {} ({:?}):", info.id, info.origin));
            for e in self.log.read(&info.id, Seq::FIRST, None).unwrap() {
                let detail = match &e.body {
                    EventBody::PlanWritten(w) => {
                        format!(" -> {}/{} done", w.plan.progress().completed, w.plan.len())
                    }
                    EventBody::WriteRejected(r) => format!(" ({})", r.code.as_str()),
                    EventBody::ModeSelected(m) => format!(" active={}", m.active),
                    EventBody::SessionStarted(s) => {
                        format!(" plan={} items mode={}", s.plan.len(), s.plan_mode)
                    }
                    EventBody::CheckpointSeen(c) => format!(" {} items", c.items.len()),
                    EventBody::SessionDescribed(_)
                    | EventBody::ContextCompacted(_)
                    | EventBody::PlanRestored(_) => String::new(),
                };
                let call = e
                    .call_id
                    .as_ref()
                    .map(|c| format!(" [{c}]"))
                    .unwrap_or_default();
                self.say(format!("  {}: {}{call}{detail}", e.seq, e.body.kind()));
            }
        }
        let mut files: Vec<String> = std::fs::read_dir(self.plan_files.dir())
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        self.say(format!("plan files: {files:?}"));
        for f in &files {
            let id = SessionId::new(f.trim_end_matches(".md")).unwrap();
            assert!(
                sessions.iter().any(|s| s.id == id),
                "a plan file for a session that is not in the store: {f}"
            );
        }
    }
}
