//! planlog inside the real Claude Code (the npm package `@anthropic-ai/claude-code`), run
//! headless against a scripted model on loopback: `planlog install claude-code` as a user runs
//! it, then sessions whose model turns the test decides, with every hook firing as Claude Code
//! fires it. Covers capture on the newest model family with exactly what install wrote (and
//! nothing without the plan tools' opt-in), the plan restored on `--resume` and after
//! `/compact`, enforcement off by default and on with `--enforce`, a locked store (spooled,
//! then drained), a store whose index must be rebuilt (left to a background process), planlog's MCP task tools landing in the session the hooks restore, and the
//! plugin installed from the repository's marketplace.
//!
//! Claude Code is found at `PLANLOG_CLAUDE_CODE`, else in `target/agents` (where `.ci/run`
//! installs it). Without it the tests say SKIPPED, unless `PLANLOG_REQUIRE_AGENTS=1` (CI),
//! which makes them fail.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

mod common;
use common::model_server::{ModelServer, Step, last_user_message, tool_names};

/// The newest model family, on which the plan tools are off unless turned on (2.1.233+).
const MODEL: &str = "claude-opus-4-8";

/// Claude Code, when it is here.
fn claude() -> Option<PathBuf> {
    common::agent(
        "Claude Code",
        "PLANLOG_CLAUDE_CODE",
        "claude",
        "@anthropic-ai/claude-code",
    )
}

/// A user's machine: a home folder, a git project in it, planlog on the PATH, a model.
struct Machine {
    claude: PathBuf,
    dir: tempfile::TempDir,
    model: ModelServer,
}

impl Machine {
    fn new() -> Option<Self> {
        Some(Self {
            claude: claude()?,
            dir: tempfile::tempdir().unwrap(),
            model: ModelServer::start(),
        })
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// A git project folder named `name`.
    fn project(&self, name: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::create_dir_all(p.join(".git")).unwrap();
        p
    }

    fn path_var(&self) -> String {
        let bin = Path::new(env!("CARGO_BIN_EXE_planlog")).parent().unwrap();
        format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display())
    }

    /// A command run as on this machine: its home, its PATH, its model, nothing of the
    /// test's own environment that Claude Code or planlog would read.
    fn command(&self, program: &Path, project: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(project).env_clear();
        for (k, v) in [
            ("HOME", self.home().display().to_string()),
            ("PATH", self.path_var()),
            ("ANTHROPIC_BASE_URL", self.model.url().to_owned()),
            ("ANTHROPIC_API_KEY", "sk-ant-test".to_owned()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
            ("DISABLE_AUTOUPDATER", "1".to_owned()),
            ("LANG", "C.UTF-8".to_owned()),
        ] {
            c.env(k, v);
        }
        c
    }

    fn planlog(&self, project: &Path, args: &[&str]) -> Output {
        self.command(Path::new(env!("CARGO_BIN_EXE_planlog")), project)
            .args(args)
            .output()
            .unwrap()
    }

    fn planlog_ok(&self, project: &Path, args: &[&str]) -> String {
        let out = self.planlog(project, args);
        assert!(
            out.status.success(),
            "planlog {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// One headless Claude Code run (`-p`), its prompt on stdin as stream-json user messages.
    fn run(&self, project: &Path, prompts: &[&str], extra: &[&str], env: &[(&str, &str)]) -> Run {
        let mut c = self.command(&self.claude, project);
        c.args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            MODEL,
        ])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().unwrap();
        {
            let mut stdin = child.stdin.take().unwrap();
            for p in prompts {
                let line = json!({"type": "user", "message": {"role": "user", "content": p}});
                std::io::Write::write_all(&mut stdin, format!("{line}\n").as_bytes()).unwrap();
            }
        }
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let session = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v["session_id"].as_str().map(str::to_owned))
            .unwrap_or_default();
        Run {
            ok: out.status.success(),
            session,
            stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The store of `project` (the default one, at its git root).
    fn store(project: &Path) -> String {
        project.join(".planlog/planlog.redb").display().to_string()
    }

    /// The three task calls of [`task_steps`] tagged `tag` are in `session`'s history, in
    /// the order the model made them, and `verify` finds nothing wrong.
    fn stored_in_order(&self, project: &Path, session: &str, tag: &str) {
        let history = self.history(project, session);
        let at: Vec<usize> = ["c1", "c2", "u1"]
            .iter()
            .map(|c| {
                let c = format!("[toolu_{tag}_{c}]");
                history
                    .find(&c)
                    .unwrap_or_else(|| panic!("{c} missing: {history}"))
            })
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{history}");
        let verify = self.planlog(project, &["--db", &Self::store(project), "verify"]);
        assert!(
            verify.status.success(),
            "{}",
            String::from_utf8_lossy(&verify.stdout)
        );
    }

    fn history(&self, project: &Path, session: &str) -> String {
        self.planlog_ok(
            project,
            &[
                "--db",
                &Self::store(project),
                "history",
                &format!("cc-{session}"),
            ],
        )
    }

    fn plan(&self, project: &Path, session: &str) -> Vec<(String, String, String)> {
        common::plan_rows(&self.planlog_ok(
            project,
            &[
                "--db",
                &Self::store(project),
                "show",
                &format!("cc-{session}"),
                "--json",
            ],
        ))
    }

    /// The newest request whose last user message holds `text`, as text.
    fn request_after(&self, text: &str) -> String {
        self.model
            .requests()
            .into_iter()
            .rev()
            .find(|r| last_user_message(r).contains(text))
            .unwrap_or_else(|| panic!("no request after {text:?}"))
            .to_string()
    }
}

struct Run {
    ok: bool,
    session: String,
    stdout: String,
    stderr: String,
}

impl Run {
    fn check(self) -> Self {
        assert!(self.ok, "claude failed: {}\n{}", self.stderr, self.stdout);
        assert!(
            !self.session.is_empty(),
            "no session id in: {}",
            self.stdout
        );
        self
    }
}

/// The model's turns for a plan kept with the Task tools: load them, create two, start one.
fn task_steps(prompt: &str, tag: &str) -> Vec<Step> {
    let id = |n: &str| format!("toolu_{tag}_{n}");
    vec![
        Step::tool(
            prompt,
            &id("search"),
            "ToolSearch",
            json!({"query": "select:TaskCreate,TaskUpdate,TodoWrite", "max_results": 3}),
        ),
        Step::tool(
            &id("search"),
            &id("c1"),
            "TaskCreate",
            json!({"subject": "Read the code", "description": "all of it", "activeForm": "Reading the code"}),
        ),
        Step::tool(
            &id("c1"),
            &id("c2"),
            "TaskCreate",
            json!({"subject": "Fix the bug", "description": "the one in the parser", "activeForm": "Fixing the bug"}),
        ),
        Step::tool(
            &id("c2"),
            &id("u1"),
            "TaskUpdate",
            json!({"taskId": "1", "status": "in_progress"}),
        ),
        Step::text(&id("u1"), "planned"),
    ]
}

fn install(m: &Machine, project: &Path, extra: &[&str]) -> String {
    let mut args = vec!["install", "claude-code"];
    args.extend_from_slice(extra);
    let out = m.planlog(project, &args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

/// A project with planlog installed and its store made by a first session: the project
/// and the store's path.
fn installed_with_a_store(m: &Machine) -> (PathBuf, PathBuf) {
    let project = m.project("app");
    install(m, &project, &[]);
    m.model.script(vec![Step::text("hello", "hi")]);
    m.run(&project, &["hello"], &[], &[]).check();
    let db = project.join(".planlog/planlog.redb");
    (project, db)
}

#[test]
fn on_the_newest_models_what_install_wrote_captures_every_task_and_restores_it() {
    let Some(m) = Machine::new() else { return };
    let project = m.project("app");
    let said = install(&m, &project, &[]);
    assert!(
        said.contains("set CLAUDE_CODE_ENABLE_TODO_TOOLS=1"),
        "{said}"
    );
    let settings = std::fs::read_to_string(project.join(".claude/settings.json")).unwrap();
    assert!(
        settings.contains("\"command\": \"planlog hook claude-code\""),
        "{settings}"
    );

    m.model.script(task_steps("make a plan", "a"));
    let run = m.run(&project, &["make a plan"], &[], &[]).check();
    assert!(
        m.model.unused().is_empty(),
        "the model's turns all ran: {:?}",
        m.model.unused()
    );
    let loaded = m
        .model
        .requests()
        .into_iter()
        .find(|r| last_user_message(r).contains("toolu_a_search"))
        .unwrap();
    assert!(
        tool_names(&loaded).contains(&"TaskCreate".to_owned()),
        "the opt-in offered the Task tools"
    );
    assert_eq!(
        m.plan(&project, &run.session),
        [
            (
                "1".to_owned(),
                "Read the code".to_owned(),
                "in_progress".to_owned()
            ),
            (
                "2".to_owned(),
                "Fix the bug".to_owned(),
                "pending".to_owned()
            ),
        ]
    );
    let history = m.history(&project, &run.session);
    for call in ["toolu_a_c1", "toolu_a_c2", "toolu_a_u1"] {
        assert!(history.contains(&format!("[{call}]")), "{history}");
    }

    // --resume: the first request of the resumed session carries the plan, ids and progress.
    m.model.script([Step::text("go on", "going on")]);
    m.run(&project, &["go on"], &["--resume", &run.session], &[])
        .check();
    let resumed = m.request_after("go on");
    assert!(resumed.contains("Progress: 0 of 2 done"), "{resumed}");
    assert!(resumed.contains("[>] #1 Read the code"), "{resumed}");

    // /compact, then a prompt: the request after the compaction carries it too.
    m.model
        .script([Step::text("carry on after compacting", "carrying on")]);
    m.run(
        &project,
        &["/compact", "carry on after compacting"],
        &["--resume", &run.session],
        &[],
    )
    .check();
    let after = m.request_after("carry on after compacting");
    assert!(after.contains("[ ] #2 Fix the bug"), "{after}");
    let verify = m.planlog(&project, &["--db", &Machine::store(&project), "verify"]);
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}

#[test]
fn without_the_opt_in_the_newest_models_have_no_plan_tools_and_there_is_nothing_to_record() {
    let Some(m) = Machine::new() else { return };
    let project = m.project("app");
    let said = install(&m, &project, &["--leave-todo-tools"]);
    assert!(said.contains("these hooks record nothing"), "{said}");
    m.model.script(task_steps("make a plan", "g"));
    let run = m.run(&project, &["make a plan"], &[], &[]).check();
    let loaded = m
        .model
        .requests()
        .into_iter()
        .find(|r| last_user_message(r).contains("toolu_g_search"))
        .unwrap();
    assert!(
        !tool_names(&loaded).contains(&"TaskCreate".to_owned()),
        "gated off"
    );
    // The model's TaskCreate met no such tool: no hook fired, nothing was recorded.
    let sessions = m.planlog(&project, &["--db", &Machine::store(&project), "sessions"]);
    let listed = String::from_utf8_lossy(&sessions.stdout);
    assert!(!listed.contains(&format!("cc-{}", run.session)), "{listed}");
}

/// The model's turns for a TodoWrite that completes two new items at once.
fn bulk_steps(prompt: &str, tag: &str) -> Vec<Step> {
    let id = |n: &str| format!("toolu_{tag}_{n}");
    vec![
        Step::tool(
            prompt,
            &id("search"),
            "ToolSearch",
            json!({"query": "select:TodoWrite", "max_results": 1}),
        ),
        Step::tool(
            &id("search"),
            &id("bulk"),
            "TodoWrite",
            json!({"todos": [
            {"content": "Write the parser", "status": "completed", "activeForm": "Writing the parser"},
            {"content": "Write the tests", "status": "completed", "activeForm": "Writing the tests"}]}),
        ),
        Step::text(&id("bulk"), "done"),
    ]
}

/// The lines of claude's `--verbose` stream-json output or of its transcript that hold what
/// planlog's hooks printed (the transcript keeps each hook's stderr, so why one allowed a
/// call), for a failure to show.
fn hook_lines(text: &str) -> String {
    text.lines()
        .filter(|l| l.contains("planlog hook"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// TodoWrite instead of the Task tools (what the VS Code extension picks).
const TODO_WRITE: (&str, &str) = ("CLAUDE_CODE_ENABLE_TASKS", "0");

#[test]
fn a_bulk_completion_runs_and_is_flagged_by_default_and_is_blocked_with_enforce() {
    let Some(m) = Machine::new() else { return };
    let open = m.project("open");
    install(&m, &open, &[]);
    m.model.script(bulk_steps("finish both", "d"));
    let run = m.run(&open, &["finish both"], &[], &[TODO_WRITE]).check();
    let answered = m
        .model
        .requests()
        .into_iter()
        .find(|r| last_user_message(r).contains("toolu_d_bulk"))
        .unwrap();
    assert!(
        !last_user_message(&answered).contains("Rejected as a bulk completion"),
        "not blocked"
    );
    let history = m.history(&open, &run.session);
    assert!(history.contains("FLAG bulk completion"), "{history}");

    let strict = m.project("strict");
    install(&m, &strict, &["--enforce"]);
    m.model.script(bulk_steps("finish both now", "e"));
    let run = m
        .run(&strict, &["finish both now"], &[], &[TODO_WRITE])
        .check();
    let answered = last_user_message(
        &m.model
            .requests()
            .into_iter()
            .find(|r| last_user_message(r).contains("toolu_e_bulk"))
            .unwrap(),
    );
    let transcript = common::find_file(&m.home().join(".claude"), &|p| {
        p.file_name() == Some(std::ffi::OsStr::new(&format!("{}.jsonl", run.session)))
    })
    .and_then(|p| std::fs::read_to_string(p).ok())
    .unwrap_or_default();
    assert!(
        answered.contains("Rejected as a bulk completion"),
        "{answered}\nwhat claude and its transcript said of the hooks:\n{}\n{}\n{}",
        hook_lines(&run.stdout),
        hook_lines(&transcript),
        run.stderr
    );
    assert!(
        answered.contains("item 1 (\\\"Write the parser\\\")"),
        "named by text: {answered}"
    );
    let history = m.history(&strict, &run.session);
    assert!(
        history.contains("write_rejected  [toolu_e_bulk]  rejected: bulk_completion"),
        "{history}"
    );
}

#[test]
fn a_store_locked_during_a_session_spools_every_call_and_a_drain_stores_them_in_order() {
    let Some(m) = Machine::new() else { return };
    // The store exists (a first session), then another process holds its write lock.
    let (project, db) = installed_with_a_store(&m);
    let lock = common::hold_write_lock(&db);
    m.model.script(task_steps("plan while locked", "l"));
    let started = std::time::Instant::now();
    let run = m.run(&project, &["plan while locked"], &[], &[]).check();
    let took = started.elapsed();
    drop(lock);
    assert!(m.model.unused().is_empty(), "{:?}", m.model.unused());
    let verify = m.planlog(&project, &["--db", &Machine::store(&project), "verify"]);
    assert_eq!(
        verify.status.code(),
        Some(1),
        "calls wait, and verify says so"
    );
    assert!(String::from_utf8_lossy(&verify.stdout).contains("hook calls wait in"));
    m.planlog_ok(&project, &["--db", &Machine::store(&project), "drain"]);
    m.stored_in_order(&project, &run.session, "l");
    eprintln!("the locked session took {took:?} (three hooks spooled)");
}

/// A store with a long history whose index is lost (deleted, or set aside as damaged):
/// building it again takes longer than a hook may take, so each hook answers at once with its
/// call in the spool and starts the work in the background. The journal is held locked for
/// the whole session (as a long import in another process would), so every call of the real
/// session goes that way; once it is let go, the background process rebuilds the index and
/// stores the calls, in order.
#[test]
fn a_store_whose_index_must_be_rebuilt_captures_every_call_through_the_background() {
    let Some(m) = Machine::new() else { return };
    let (project, db) = installed_with_a_store(&m);
    {
        let log = planlog_store::JournaledLog::open(&db).unwrap();
        planlog_core::EventLog::append_all(&log, &common::catch_up::long_history()).unwrap();
    }
    std::fs::remove_file(&db).unwrap();
    let journal = std::fs::File::options()
        .read(true)
        .write(true)
        .open(planlog_store::journal_path(&db))
        .unwrap();
    journal.lock().unwrap();
    m.model.script(task_steps("plan after the loss", "r"));
    let started = std::time::Instant::now();
    let run = m.run(&project, &["plan after the loss"], &[], &[]).check();
    let took = started.elapsed();
    assert!(m.model.unused().is_empty(), "{:?}", m.model.unused());
    assert!(
        !planlog_agents::hook::Spool::beside(&db).looks_empty(),
        "the calls were not kept while the journal was locked"
    );
    journal.unlock().unwrap();
    common::catch_up::until_drained(&db);
    m.stored_in_order(&project, &run.session, "r");
    eprintln!("the session on a store without its index took {took:?}");
}

#[test]
fn planlogs_own_task_tools_land_in_the_session_the_hooks_restore() {
    let Some(m) = Machine::new() else { return };
    let project = m.project("app");
    // Claude Code's own plan tools stay off (the newest model, no opt-in): planlog's MCP
    // task tools are the plan tool.
    install(&m, &project, &["--leave-todo-tools"]);
    std::fs::write(
        project.join(".mcp.json"),
        json!({"mcpServers": {"planlog": {"command": "planlog", "args": ["mcp", "--claude-code", "--tools", "tasks"]}}}).to_string(),
    )
    .unwrap();
    m.model.script(vec![
        Step::tool("plan with planlog", "toolu_m_search", "ToolSearch", json!({"query": "select:mcp__planlog__task_create,mcp__planlog__task_update", "max_results": 2})),
        Step::tool("toolu_m_search", "toolu_m_c1", "mcp__planlog__task_create", json!({"subject": "Fetch the data", "description": "from the API"})),
        Step::tool("toolu_m_c1", "toolu_m_u1", "mcp__planlog__task_update", json!({"taskId": "1", "status": "in_progress"})),
        Step::text("toolu_m_u1", "planned"),
    ]);
    let allowed = "mcp__planlog__task_create,mcp__planlog__task_update";
    let run = m
        .run(
            &project,
            &["plan with planlog"],
            &["--allowedTools", allowed, "--mcp-config", ".mcp.json"],
            &[],
        )
        .check();
    assert!(
        m.model.unused().is_empty(),
        "{:?}\n{}",
        m.model.unused(),
        run.stdout
    );
    assert_eq!(
        m.plan(&project, &run.session),
        [(
            "1".to_owned(),
            "Fetch the data".to_owned(),
            "in_progress".to_owned()
        )]
    );
    m.model.script([Step::text("after the compaction", "ok")]);
    m.run(
        &project,
        &["/compact", "after the compaction"],
        &[
            "--resume",
            &run.session,
            "--allowedTools",
            allowed,
            "--mcp-config",
            ".mcp.json",
        ],
        &[],
    )
    .check();
    let after = m.request_after("after the compaction");
    assert!(after.contains("[>] #1 Fetch the data"), "{after}");
}

#[test]
fn the_plugin_installs_from_the_repositorys_marketplace_and_records() {
    let Some(m) = Machine::new() else { return };
    let project = m.project("app");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    for args in [
        vec!["plugin", "marketplace", "add", root.to_str().unwrap()],
        vec!["plugin", "install", "planlog@planlog"],
    ] {
        let out = m.command(&m.claude, &project).args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "claude {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A plugin cannot set the environment: the opt-in goes into a settings file.
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(
        project.join(".claude/settings.json"),
        r#"{"env": {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}}"#,
    )
    .unwrap();
    m.model.script(task_steps("plan through the plugin", "p"));
    let run = m
        .run(&project, &["plan through the plugin"], &[], &[])
        .check();
    assert_eq!(
        m.plan(&project, &run.session).len(),
        2,
        "{}",
        m.history(&project, &run.session)
    );
}

/// The README's workflow on the real Claude Code: hooks record a session live (the calls as
/// Claude Code sent them, a `/compact` and what planlog put back after it), then the user
/// imports the session's transcript. One coherent record: the transcript's calls and its
/// compaction are known already (the compaction by its time: Claude Code writes the
/// boundary line after the hook ran), its checkpoints belong with the plan where they stand,
/// nothing is called out of order or different, and the session is named by what its
/// transcript says (Claude Code's version, the project, the model, the first prompt).
#[test]
fn hooks_then_the_transcript_give_one_record_of_a_real_session() {
    let Some(m) = Machine::new() else { return };
    let project = m.project("shop");
    install(&m, &project, &[]);
    m.model.script(task_steps("plan the shop", "h"));
    let run = m.run(&project, &["plan the shop"], &[], &[]).check();
    m.model
        .script([Step::text("carry on after compacting", "carrying on")]);
    m.run(
        &project,
        &["/compact", "carry on after compacting"],
        &["--resume", &run.session],
        &[],
    )
    .check();
    let db = Machine::store(&project);
    let id = format!("cc-{}", run.session);
    let entries = || -> Vec<Value> {
        m.planlog_ok(&project, &["--db", &db, "history", &id, "--json"])
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let live = entries();
    // The calls as Claude Code sent them, and what the hook saw come back.
    let created = live.iter().find(|e| e["call_id"] == "toolu_h_c1").unwrap();
    assert_eq!(created["tool_call"]["tool"], "TaskCreate");
    let sent: Value =
        serde_json::from_str(created["tool_call"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(sent["subject"], "Read the code", "{created}");
    assert_eq!(
        created["tool_call"]["result"]["structured"]["task"]["id"], "1",
        "{created}"
    );
    // The compaction, as the transcript's boundary line says it, and what was put back.
    let compacted: Vec<&Value> = live
        .iter()
        .filter(|e| e["kind"] == "context_compacted")
        .collect();
    assert_eq!(compacted.len(), 1, "{live:#?}");
    // Claude Code writes the boundary line after its SessionStart hooks ran: the hook records
    // the compaction by its own id, and the import knows it by its time.
    let call = compacted[0]["call_id"].as_str().unwrap();
    assert!(call.starts_with("compact:hook-"), "{call}");
    let restored = live
        .iter()
        .find(|e| {
            e["kind"] == "plan_restored" && e["note"].as_str().unwrap().contains("after compact")
        })
        .unwrap();
    let text = restored["text"].as_str().unwrap();
    assert!(text.contains("[ ] #2 Fix the bug"), "{text}");
    let after = m.request_after("carry on after compacting");
    assert!(
        after.contains(&serde_json::to_string(text).unwrap()[1..text.len() / 2]),
        "the text on record is the text the model got"
    );

    // Named by the hooks already: the head of the transcript says what the session is.
    let described = || -> Value {
        let listed: Value = serde_json::from_str(
            m.planlog_ok(&project, &["--db", &db, "sessions", "--json"])
                .lines()
                .find(|l| l.contains(&id))
                .unwrap(),
        )
        .unwrap();
        listed["description"].clone()
    };
    let live_description = described();
    assert_eq!(
        live_description["first_prompt"], "plan the shop",
        "{live_description}"
    );
    assert_eq!(live_description["model"], MODEL, "{live_description}");
    // The transcript, imported afterwards.
    let transcripts = m.home().join(".claude/projects");
    let file = walk(&transcripts)
        .into_iter()
        .find(|p| {
            p.file_name()
                .is_some_and(|n| *n == *format!("{}.jsonl", run.session))
        })
        .expect("the session's transcript");
    let out = m.planlog(&project, &["--db", &db, "import", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("(3 calls were there already)"), "{stderr}");
    let after_import = entries();
    let kinds = |kind: &str| after_import.iter().filter(|e| e["kind"] == kind).count();
    assert_eq!(kinds("context_compacted"), 1, "{after_import:#?}");
    assert_eq!(kinds("plan_written"), 3, "{after_import:#?}");
    let history = m.planlog_ok(&project, &["--db", &db, "history", &id]);
    assert!(!history.contains("DIFFERS"), "{history}");
    assert!(!history.contains("earlier than"), "{history}");
    let verify = m.planlog(&project, &["--db", &db, "verify"]);
    let report = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.status.success(), "{report}");
    assert!(!report.contains("differs"), "{report}");
    // What the transcript says the session is.
    let d = described();
    assert_eq!(d["agent"], "claude-code", "{d}");
    assert!(
        d["agent_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("2.")),
        "{d}"
    );
    assert_eq!(d["project"], project.display().to_string(), "{d}");
    assert_eq!(d["model"], MODEL, "{d}");
    assert_eq!(d["first_prompt"], "plan the shop", "{d}");
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
