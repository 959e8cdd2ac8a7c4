//! A bare MCP client for the command tests: JSON-RPC lines over a `planlog mcp` child's
//! stdin and stdout, written and read by the test itself (no SDK between them), so a test
//! can send several requests before reading any answer.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A bare MCP client over a child's stdin/stdout, speaking JSON-RPC lines itself.
pub(crate) struct Mcp {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    pub(crate) lines: Receiver<Value>,
    /// Notifications seen so far.
    pub(crate) notes: Vec<Value>,
    /// Answers read while waiting for another.
    answers: Vec<Value>,
    pub(crate) stderr: PathBuf,
}

impl Mcp {
    /// Starts `command` (a `planlog mcp`), its stderr into the file `stderr`, and
    /// initializes the connection.
    pub(crate) fn start(mut command: Command, stderr: PathBuf) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        let mut mcp = Self {
            child,
            stdin,
            lines,
            notes: Vec::new(),
            answers: Vec::new(),
            stderr,
        };
        mcp.request(json!(0), "initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}));
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    /// `planlog mcp --session SESSION` on the store `db`, started and initialized.
    pub(crate) fn serve(db: &Path, session: &str, stderr: PathBuf) -> Self {
        let mut c = Command::new(env!("CARGO_BIN_EXE_planlog"));
        c.arg("--db")
            .arg(db)
            .env_remove("PLANLOG_DB")
            .env("NO_COLOR", "1")
            .args(["mcp", "--session", session]);
        Self::start(c, stderr)
    }

    /// Writes one JSON-RPC line.
    pub(crate) fn send(&mut self, v: &Value) {
        self.stdin.write_all(v.to_string().as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and waits for its response (notifications on the way are kept, and
    /// other requests' answers too).
    pub(crate) fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer_within(&id, Duration::from_secs(30))
            .unwrap_or_else(|| {
                panic!(
                    "no answer to {method}: {}",
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                )
            })
    }

    /// The answer to request `id`, waiting at most `within` for it (`None`: none came).
    pub(crate) fn answer_within(&mut self, id: &Value, within: Duration) -> Option<Value> {
        let until = Instant::now() + within;
        loop {
            if let Some(at) = self.answers.iter().position(|v| v.get("id") == Some(id)) {
                return Some(self.answers.remove(at));
            }
            let line = self
                .lines
                .recv_timeout(until.saturating_duration_since(Instant::now()))
                .ok()?;
            self.keep(line);
        }
    }

    /// Whether request `id` has been answered by now (everything sent so far read first).
    pub(crate) fn answered(&mut self, id: &Value) -> bool {
        while let Ok(line) = self.lines.try_recv() {
            self.keep(line);
        }
        self.answers.iter().any(|v| v.get("id") == Some(id))
    }

    /// Keeps a line read: a notification, or an answer.
    fn keep(&mut self, line: Value) {
        match (line.get("id"), line.get("method")) {
            (None, Some(_)) => self.notes.push(line),
            (Some(_), None) => self.answers.push(line),
            _ => {}
        }
    }

    /// Calls a tool; returns (is_error, text).
    pub(crate) fn call(&mut self, id: Value, name: &str, arguments: Value) -> (bool, String) {
        let r = self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        let result = &r["result"];
        assert!(result.is_object(), "tools/call {name}: {r}");
        (
            result["isError"].as_bool().unwrap_or(false),
            result["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        )
    }

    /// Closes the server's stdin and waits for it: its exit code and its stderr.
    pub(crate) fn stop(mut self) -> (i32, String) {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        (
            status.code().unwrap_or(-1),
            std::fs::read_to_string(&self.stderr).unwrap_or_default(),
        )
    }
}
