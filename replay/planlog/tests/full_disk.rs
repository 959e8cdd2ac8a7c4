//! A real disk that fills and frees (a small tmpfs mounted for the test; root only, as CI
//! runs, else SKIPPED): hooks, an MCP server and readers keep working on the journaled
//! store while the index cannot be written, and nothing acknowledged is lost.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::mcp_lines::Mcp;
use serde_json::json;

/// A tmpfs of `mib` MiB mounted on a temporary folder, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// `None` (said as SKIPPED) where no tmpfs can be mounted (not root).
    fn mount(mib: u32) -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            println!("SKIPPED: cannot mount a tmpfs here (needs root)");
        }
        mounted.then_some(Self { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file until the disk refuses: the disk is then full.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let filler = self.path().join("filler");
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![0u8; 64 * 1024];
        while f.write_all(&block).is_ok() {}
        while f.write_all(&block[..4096]).is_ok() {}
        let _ = f.sync_all();
        filler
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn planlog(db: &Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_planlog"));
    c.arg("--db")
        .arg(db)
        .args(args)
        .env_remove("PLANLOG_DB")
        .env("NO_COLOR", "1");
    let run = common::run_child(c, stdin.as_bytes());
    (run.code, run.stdout, run.stderr)
}

fn hook(db: &Path, call: usize) -> (i32, String) {
    let input = json!({"session_id": "full", "hook_event_name": "PostToolUse", "tool_name": "TodoWrite",
        "tool_use_id": format!("toolu_{call}"), "cwd": "/work", "tool_response": {},
        "tool_input": {"todos": [{"content": "Step A", "status": "in_progress", "activeForm": "a"},
            {"content": format!("Step B {call}"), "status": "pending", "activeForm": "b"}]}});
    let (code, _, stderr) = planlog(db, &["hook", "claude-code"], &input.to_string());
    (code, stderr)
}

/// The call ids recorded in `session`, in order.
fn calls(db: &Path, session: &str) -> Vec<String> {
    let (code, out, err) = planlog(db, &["export", session, "--format", "jsonl"], "");
    assert_eq!(code, 0, "export on the full disk: {err}");
    out.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|e| e["call_id"].as_str().map(str::to_owned))
        .filter(|c| !c.starts_with("describe:"))
        .collect()
}

/// Past the 16 records a hook indexes at, on a full disk: every call is stored (the journal
/// takes it in the zeros kept past its end), none is left to a spool that could not be
/// written either, and readers read them all while the disk is full. Before the index was
/// left alone on a full disk, the call that found 16 records past the index (the 14th
/// here) had its index commit fail part way: from then on
/// every hook call failed to read the index ("previous I/O error") and was lost, and
/// `verify` could not open the store.
#[test]
fn hooks_and_readers_on_a_disk_that_fills_and_frees_lose_nothing() {
    let Some(disk) = Tmpfs::mount(16) else {
        return;
    };
    let db = disk.path().join("s").join("planlog.redb");
    for call in 1..=3 {
        assert_eq!(hook(&db, call).0, 0);
    }
    let filler = disk.fill();
    for call in 4..=24 {
        let (code, stderr) = hook(&db, call);
        assert_eq!(code, 0, "{stderr}");
        assert!(
            !stderr.contains("could not be stored or kept")
                && !stderr.contains("could not store the call now"),
            "call {call} on the full disk: {stderr}"
        );
    }
    let expected: Vec<String> = (1..=24).map(|c| format!("toolu_{c}")).collect();
    assert_eq!(calls(&db, "cc-full"), expected, "read on the full disk");
    let (code, out, err) = planlog(&db, &["verify"], "");
    assert_eq!(code, 0, "verify on the full disk: {out}{err}");
    assert!(out.contains("26 events checked: 0 problems"), "{out}");

    // The disk frees: the next call is stored and the index catches up.
    std::fs::remove_file(filler).unwrap();
    assert_eq!(hook(&db, 25).0, 0);
    let (code, out, err) = planlog(&db, &["verify"], "");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0 problems"), "{out}");
    assert_eq!(calls(&db, "cc-full").len(), 25);
}

/// A server keeps taking plan_writes on a full disk and after it frees. Before, its
/// background index commit failed on the full disk and left its index handle failed: every
/// later write answered "not saved yet", even after the disk freed, until it was restarted.
#[test]
fn a_server_writes_through_a_disk_that_fills_and_frees() {
    let Some(disk) = Tmpfs::mount(16) else {
        return;
    };
    let db = disk.path().join("m").join("planlog.redb");
    let logs = tempfile::tempdir().unwrap();
    let mut server = Mcp::serve(&db, "full", logs.path().join("stderr"));
    let write = |server: &mut Mcp, k: usize| {
        let steps = json!([{"id": "1", "content": "Work", "status": "in_progress"},
            {"id": "2", "content": format!("Step {k}"), "status": "pending"}]);
        let (error, text) = server.call(json!(k + 1), "plan_write", json!({"steps": steps}));
        assert!(!error, "write {k}: {text}");
    };
    for k in 0..3 {
        write(&mut server, k);
    }
    let filler = disk.fill();
    for k in 3..30 {
        write(&mut server, k);
        // The server's indexing round after each write (~50 ms).
        std::thread::sleep(std::time::Duration::from_millis(60));
    }
    std::fs::remove_file(filler).unwrap();
    for k in 30..35 {
        write(&mut server, k);
    }
    let (code, stderr) = server.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !Path::new(&format!("{}.mcp-spool", db.display())).exists(),
        "nothing left unsaved: {stderr}"
    );
    let (code, out, err) = planlog(&db, &["verify"], "");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("36 events checked: 0 problems"), "{out}");
}
