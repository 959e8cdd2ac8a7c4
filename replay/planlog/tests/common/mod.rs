//! What the `planlog` command tests share: a store in a temporary folder, and running the
//! binary on it as a child process.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // test code; not every test file uses all of it

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

pub(crate) mod catch_up;
pub(crate) mod mcp_lines;
pub(crate) mod model_server;

/// A finished run of the binary.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// What a hook that exited 0 answered for the model: the `additionalContext` of its
    /// `hookSpecificOutput` (stdout one JSON document).
    pub(crate) fn context(&self) -> String {
        assert_eq!(self.code, 0, "{}", self.stderr);
        let out: Value = serde_json::from_str(&self.stdout).unwrap();
        out["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

/// A store in a temporary folder (or, made by [`Planlog::on`], at a URL; the folder is
/// then the working folder the commands get, with their local files).
pub(crate) struct Planlog {
    pub(crate) dir: tempfile::TempDir,
    url: Option<String>,
}

impl Planlog {
    pub(crate) fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            url: None,
        }
    }

    /// The store at `url` (a `postgres://` database).
    pub(crate) fn on(url: &str) -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            url: Some(url.to_owned()),
        }
    }

    /// A command of the binary on this store: for a database, run in the temporary folder
    /// with its data folder there too, so the local sidecars (plan files, the hook spool)
    /// stay out of the repository and the user's home.
    pub(crate) fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_planlog"));
        c.arg("--db").arg(self.store_arg()).env_remove("PLANLOG_DB");
        if self.url.is_some() {
            c.current_dir(self.dir.path())
                .env("XDG_DATA_HOME", self.dir.path().join("data"));
        }
        c
    }

    /// The `--db` argument the commands get.
    pub(crate) fn store_arg(&self) -> String {
        self.url
            .clone()
            .unwrap_or_else(|| self.db().display().to_string())
    }

    pub(crate) fn db(&self) -> PathBuf {
        self.dir.path().join("store").join("planlog.redb")
    }

    pub(crate) fn run(&self, args: &[&str], stdin: Option<&str>) -> Run {
        self.run_with(args, stdin, &[])
    }

    /// [`Planlog::run`] with extra environment variables.
    pub(crate) fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.run_with(args, None, env)
    }

    /// One hook call with `input` on stdin and `env` set.
    pub(crate) fn hook(&self, input: &Value, flags: &[&str], env: &[(&str, &str)]) -> Run {
        self.hook_raw(input.to_string().as_bytes(), flags, env)
    }

    pub(crate) fn hook_raw(&self, stdin: &[u8], flags: &[&str], env: &[(&str, &str)]) -> Run {
        self.hook_of("claude-code", stdin, flags, env)
    }

    /// One `planlog hook AGENT` call with `stdin`.
    pub(crate) fn hook_of(
        &self,
        agent: &str,
        stdin: &[u8],
        flags: &[&str],
        env: &[(&str, &str)],
    ) -> Run {
        let mut c = self.command();
        c.args(["hook", agent])
            .args(flags)
            .env_remove("CLAUDE_CODE_TASK_LIST_ID")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        run_child(c, stdin)
    }

    /// One hook call on a full disk: a file-size limit at the store's size (SIGXFSZ
    /// ignored), so the store can be read but not grown, while small files (the spool) can
    /// still be written.
    pub(crate) fn hook_on_a_full_disk(&self, input: &Value, flags: &[&str]) -> Run {
        // A hook's write goes to the store's journal: make the journal larger than a
        // spooled call (a session of its own with a long plan), then let no file grow past
        // it. The store is full; the spool beside it still takes the call.
        let other = self.ok(&["new"]).trim().to_owned();
        let steps: Vec<Value> = big_list()
            .iter()
            .enumerate()
            .map(|(i, (c, _))| serde_json::json!({"id": (i + 1).to_string(), "content": c, "status": "pending"}))
            .collect();
        let wrote = self.run(
            &["write", &other],
            Some(&serde_json::json!({ "steps": steps }).to_string()),
        );
        assert_eq!(wrote.code, 0, "{}", wrote.stderr);
        let size = std::fs::metadata(planlog_store::journal_path(&self.db()))
            .unwrap()
            .len();
        let mut c = self.with_file_size_limit(size, &["hook", "claude-code"]);
        c.args(flags).env_remove("CLAUDE_CODE_TASK_LIST_ID");
        run_child(c, input.to_string().as_bytes())
    }

    /// `planlog --db STORE ARGS` under a file-size limit of `limit` bytes (SIGXFSZ ignored):
    /// no file grows past it, as on a full disk, while smaller files can still be written.
    pub(crate) fn with_file_size_limit(&self, limit: u64, args: &[&str]) -> Command {
        under_file_size_limit(&self.db(), limit, args)
    }

    fn run_with(&self, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Run {
        let mut child = self
            .command()
            .args(args)
            .envs(env.iter().copied())
            .env("NO_COLOR", "1")
            .env("PLANLOG_LOCK_TIMEOUT_MS", "300")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        {
            let mut pipe = child.stdin.take().unwrap();
            if let Some(text) = stdin {
                // The command may exit without reading stdin (a bad session id): a closed
                // pipe is fine here.
                if let Err(e) = pipe.write_all(text.as_bytes()) {
                    assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
                }
            }
        }
        let out = child.wait_with_output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    /// The call ids of `session`'s events, in log order (what a hook knows of the session,
    /// `session_described`, is no call).
    pub(crate) fn call_ids(&self, session: &str) -> Vec<String> {
        self.ok(&["history", session, "--json"])
            .lines()
            .filter_map(|l| {
                let entry = serde_json::from_str::<Value>(l).ok()?;
                if entry["kind"] == "session_described" {
                    return None;
                }
                entry["call_id"].as_str().map(str::to_owned)
            })
            .collect()
    }

    /// `planlog verify` on the store: exit 0 and no problem found.
    pub(crate) fn verify_clean(&self) {
        let v = self.run(&["verify"], None);
        assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
        assert!(v.stdout.contains(" 0 problems"), "{}", v.stdout);
    }

    pub(crate) fn ok(&self, args: &[&str]) -> String {
        let r = self.run(args, None);
        assert_eq!(r.code, 0, "planlog {args:?} failed: {}", r.stderr);
        r.stdout
    }

    pub(crate) fn write(&self, session: &str, call: &str, args: Value) -> Run {
        self.run(
            &["write", session, "--call-id", call, "--turn", "1"],
            Some(&args.to_string()),
        )
    }

    /// A session with a typical life: plan, progress, a refused forgery, more progress.
    pub(crate) fn sample(&self) -> String {
        let id = self.ok(&["new", "--label", "sample"]).trim().to_owned();
        let step = |i: &str, c: &str, s: &str| json!({"id": i, "content": c, "status": s});
        assert_eq!(self.write(&id, "c1", json!({"steps": [step("1", "Write the parser", "in_progress"), step("2", "Implement load", "pending"), step("3", "Write tests", "pending")]})).code, 0);
        assert_eq!(self.write(&id, "c2", json!({"steps": [step("1", "Write the parser", "completed"), step("2", "Implement load", "in_progress"), step("3", "Write tests", "pending")]})).code, 0);
        assert_eq!(self.write(&id, "c3", json!({"steps": [step("2", "Implement load", "completed"), step("3", "Write tests", "completed"), step("4", "Ship", "completed")]})).code, 1);
        assert_eq!(self.write(&id, "c4", json!({"steps": [step("2", "Implement load", "completed"), step("3", "Write the table tests", "in_progress")]})).code, 0);
        id
    }
}

/// A FIFO at `path` (a file planlog did not write, whose opening for reading waits for a
/// writer).
pub(crate) fn mkfifo(path: &std::path::Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// What `f` returns, when it returns within 10 s; else the FIFO `fifo` is opened for writing
/// (so that what waits on it ends, and the test with it) and the test fails, saying `what`
/// waited on it.
pub(crate) fn before_a_fifo_holds<T: Send>(
    fifo: &std::path::Path,
    what: &str,
    f: impl FnOnce() -> T + Send,
) -> T {
    let (done, answered) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(move || {
            let _ = done.send(f());
        });
        let got = answered.recv_timeout(std::time::Duration::from_secs(10));
        if got.is_err() {
            let _writer = std::fs::OpenOptions::new().write(true).open(fifo);
        }
        got.unwrap_or_else(|_| panic!("{what} waited on the FIFO"))
    })
}

/// Runs `c` with `stdin` on its standard input (a command that stops reading early, as a hook
/// does past its input limit, is fine).
pub(crate) fn run_child(mut c: Command, stdin: &[u8]) -> Run {
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A list of 30 long items of text that does not compress: its events (and any event
/// copying it) do not fit in a store's free pages, so a write of it must grow the store.
pub(crate) fn big_list() -> Vec<(String, &'static str)> {
    (0..30)
        .map(|i| (format!("item {i} {}", noise(1500, i)), "pending"))
        .collect()
}

/// The items of a plan as `show --json` prints it: (id, content, status).
pub(crate) fn plan_rows(json: &str) -> Vec<(String, String, String)> {
    let v: Value = serde_json::from_str(json).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["id"].as_str().unwrap().to_owned(),
                i["content"].as_str().unwrap().to_owned(),
                i["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Holds a store's write locks (as a long import in another process would) until dropped:
/// the journal's, which every append takes, and the index's.
pub(crate) struct WriteLock {
    _journal: Option<std::fs::File>,
    _txn: redb::WriteTransaction,
    _db: redb::Database,
}

/// Takes the write locks of the store at `db`: its journal's (when it has one) and its
/// redb file's (creating that if needed).
pub(crate) fn hold_write_lock(db: &std::path::Path) -> WriteLock {
    let journal = std::fs::File::options()
        .read(true)
        .write(true)
        .open(planlog_store::journal_path(db))
        .ok();
    if let Some(j) = &journal {
        j.lock().unwrap();
    }
    WriteLock {
        _journal: journal,
        ..hold_index_write_lock(db)
    }
}

/// Holds the write transaction of the store's index (its redb file) alone, as another
/// process's indexing does while it syncs: appends to the journal go on.
pub(crate) fn hold_index_write_lock(db: &std::path::Path) -> WriteLock {
    let database = redb::Database::builder()
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .create(db)
        .unwrap();
    let txn = database.begin_write().unwrap();
    WriteLock {
        _journal: None,
        _txn: txn,
        _db: database,
    }
}

/// Compares text with a reviewed insta snapshot, times and ULIDs redacted.
#[macro_export]
macro_rules! snapshot {
    ($name:expr, $text:expr) => {{
        let mut settings = insta::Settings::clone_current();
        settings.add_filter(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", "[time]");
        settings.add_filter(r"[0-9A-HJKMNP-TV-Z]{26}", "[ulid]");
        settings.bind(|| insta::assert_snapshot!($name, $text));
    }};
}

pub(crate) use planlog_core::testkit::noise;

/// Claude Code's hook inputs, shaped as Claude Code sends them (REFERENCE-FORMATS.md § 2).
pub(crate) mod claude {
    use serde_json::{Value, json};

    use super::Planlog;

    pub(crate) const SID: &str = "0d5e7a1c-0000-4000-8000-00000000a11c";

    impl Planlog {
        pub(crate) fn plan_of(&self, session: &str) -> Vec<(String, String, String)> {
            super::plan_rows(&self.ok(&["show", session, "--json"]))
        }
    }

    pub(crate) fn common(event: &str) -> Value {
        json!({
            "session_id": SID,
            "transcript_path": format!("/home/u/.claude/projects/-work-app/{SID}.jsonl"),
            "cwd": "/work/app",
            "hook_event_name": event,
            "permission_mode": "default"
        })
    }

    pub(crate) fn tool_event(event: &str, tool: &str, id: &str, input: Value) -> Value {
        let mut v = common(event);
        v["tool_name"] = json!(tool);
        v["tool_input"] = input;
        v["tool_use_id"] = json!(id);
        v
    }

    /// A PostToolUse of `tool` with its response.
    pub(crate) fn post(tool: &str, id: &str, input: Value, response: Value) -> Value {
        let mut v = tool_event("PostToolUse", tool, id, input);
        v["tool_response"] = response;
        v["duration_ms"] = json!(12);
        v
    }

    pub(crate) fn todos(list: &[(&str, &str)]) -> Value {
        json!({"todos": list.iter().map(|(c, s)| json!({"content": c, "status": s, "activeForm": format!("Doing: {c}")})).collect::<Vec<_>>()})
    }

    pub(crate) fn session() -> String {
        format!("cc-{SID}")
    }
}

/// An agent's command, when it is here: at the path in `var`, else `bin` in `target/agents`
/// (where `.ci/run` installs the agents from npm). Without it a test says SKIPPED and gets
/// `None`, unless `PLANLOG_REQUIRE_AGENTS` is set (CI), which fails it.
pub(crate) fn agent(name: &str, var: &str, bin: &str, package: &str) -> Option<PathBuf> {
    let path = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../target/agents/node_modules/.bin")
            .join(bin)
    });
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("PLANLOG_REQUIRE_AGENTS").is_none(),
        "{name} is required (PLANLOG_REQUIRE_AGENTS) but not at {} (or set {var})",
        path.display()
    );
    eprintln!(
        "SKIPPED: {name} is not installed at {} (npm install --prefix target/agents {package}, or set {var})",
        path.display()
    );
    None
}

/// The first file below `dir` whose path `wanted` accepts (depth first).
pub(crate) fn find_file(
    dir: &std::path::Path,
    wanted: &dyn Fn(&std::path::Path) -> bool,
) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, wanted) {
                return Some(found);
            }
        } else if wanted(&path) {
            return Some(path);
        }
    }
    None
}

/// Runs an agent's command `c` (stdin empty), which must succeed: the JSON lines of its stdout.
pub(crate) fn json_lines_of(what: &str, mut c: Command) -> Vec<Value> {
    let out = c.stdin(Stdio::null()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// `planlog --db STORE ARGS…` (`setup` adds the folder and environment), which must succeed:
/// its stdout.
pub(crate) fn planlog_ok(
    store: &std::ffi::OsStr,
    args: &[&str],
    setup: impl FnOnce(&mut Command),
) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_planlog"));
    c.arg("--db")
        .arg(store)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("PLANLOG_DB");
    setup(&mut c);
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "planlog {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A Claude Code transcript of `calls` TodoWrite calls: plans of five items worked through a
/// step per call (every plan's own texts), an error result every 50th call (a refusal), one
/// call that completes two items at once (a flag), a compaction after call 300.
pub(crate) fn long_transcript(path: &std::path::Path, calls: usize) {
    let sid = "5e5e5e5e-0000-4000-8000-000000000001";
    let mut out = String::new();
    let line = |v: Value, out: &mut String| {
        out.push_str(&v.to_string());
        out.push('\n');
    };
    line(
        json!({"type":"custom-title","customTitle":"The long one","sessionId":sid}),
        &mut out,
    );
    for c in 0..calls {
        let (plan, step) = (c / 10, c % 10);
        let bulk = plan == 3 && step == 2;
        let todos: Vec<Value> = (0..5)
            .map(|i| {
                let status = if i < step / 2 || (bulk && (i == 1 || i == 2)) {
                    "completed"
                } else if i == step / 2 && step % 2 == 1 {
                    "in_progress"
                } else {
                    "pending"
                };
                json!({"content": format!("Task {plan} step {i}"), "status": status, "activeForm": "Working"})
            })
            .collect();
        let at = format!(
            "2026-11-01T{:02}:{:02}:{:02}.000Z",
            c / 3600,
            (c / 60) % 60,
            c % 60
        );
        let id = format!("toolu_{c:06}");
        line(
            json!({"type":"assistant","uuid":format!("a{c}"),"parentUuid":format!("r{}", c.saturating_sub(1)),"sessionId":sid,"timestamp":at,"isSidechain":false,"message":{"role":"assistant","id":format!("m{c}"),"content":[{"type":"tool_use","id":id,"name":"TodoWrite","input":{"todos":todos}}]}}),
            &mut out,
        );
        let result = if c % 50 == 49 {
            json!([{"type":"tool_result","tool_use_id":id,"is_error":true,"content":format!("call {c} was refused by the harness")}])
        } else {
            json!([{"type":"tool_result","tool_use_id":id,"content":"Todos have been modified successfully."}])
        };
        line(
            json!({"type":"user","uuid":format!("r{c}"),"parentUuid":format!("a{c}"),"sessionId":sid,"timestamp":at,"isSidechain":false,"message":{"role":"user","content":result}}),
            &mut out,
        );
        if c == 300 {
            line(
                json!({"type":"system","subtype":"compact_boundary","uuid":"k1","parentUuid":format!("r{c}"),"sessionId":sid,"timestamp":at,"content":"Conversation compacted","compactMetadata":{"trigger":"auto","preTokens":150_000,"postTokens":9_000}}),
                &mut out,
            );
        }
    }
    std::fs::write(path, out).unwrap();
}

/// `planlog --db DB ARGS` under a file-size limit of `limit` bytes (SIGXFSZ ignored, so a
/// write past it fails with EFBIG instead of killing the process).
pub(crate) fn under_file_size_limit(db: &Path, limit: u64, args: &[&str]) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!(
            "trap '' XFSZ; exec prlimit --fsize={limit}:unlimited \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_planlog"))
        .arg("--db")
        .arg(db)
        .args(args)
        // A hook under the limit meets the full disk itself, not through a hook server
        // without the limit (`tests/hook_server.rs` fills the disk under a server).
        .env("PLANLOG_HOOK_SERVER", "off");
    c
}

/// Lifts the file-size limit of the running process `pid` (the disk frees up).
pub(crate) fn lift_file_size_limit(pid: u32) {
    let status = Command::new("prlimit")
        .arg(format!("--pid={pid}"))
        .arg("--fsize=unlimited")
        .status()
        .unwrap();
    assert!(status.success());
}
