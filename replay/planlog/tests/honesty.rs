//! Honest failures (issue 11): output that cannot be written is an error; a store one may only
//! read can be read; forged but correctly hashed histories are refused or reported; ids cannot
//! fake history; refused megabytes are not stored; and the small lies at the edges are gone.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use planlog_core::testkit::{item, seal_after, sid};
use planlog_core::{
    EventLog, Plan, PlanStatus, Seq,
    events::{Event, EventBody, Origin, PlanWritten, SessionStarted, WriteSemantics},
};
use serde_json::json;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn planlog(db: &Path, args: &[&str], stdin: Option<&str>) -> Out {
    let mut child = Command::new(env!("CARGO_BIN_EXE_planlog"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("PLANLOG_DB")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    if let Some(text) = stdin
        && let Err(e) = pipe.write_all(text.as_bytes())
    {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);
    }
    drop(pipe);
    let out = child.wait_with_output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    (dir, db)
}

/// A session `s` with `n` accepted writes.
fn session(db: &Path, n: usize) {
    for i in 0..n {
        let args = json!({"steps": [{"id": format!("i{i}"), "content": format!("item {i} {}", "x".repeat(100)), "status": "in_progress"}]});
        let out = planlog(
            db,
            &["write", "s", "--call-id", &format!("c{i}")],
            Some(&args.to_string()),
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
}

#[cfg(target_os = "linux")]
#[test]
fn output_to_a_full_disk_is_an_error_and_a_closed_pipe_is_not() {
    let (_dir, db) = store();
    session(&db, 3);
    for args in [
        &["export", "s", "--format", "jsonl"][..],
        &["history", "s"],
        &["show", "s", "--json"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_planlog"))
            .arg("--db")
            .arg(&db)
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("could not write the output"),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    }
    // `| head -1`: the reader leaves after one line; planlog ends quietly with 0.
    session(&db, 60);
    let mut child = Command::new(env!("CARGO_BIN_EXE_planlog"))
        .arg("--db")
        .arg(&db)
        .args(["history", "s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("session_started"));
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs planlog as a user who may not write the store (root is allowed everything, so as root
/// the command runs as `nobody`).
fn planlog_as_reader(db: &Path, args: &[&str]) -> Out {
    let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let mut c = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_planlog"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_planlog"))
    };
    let out = c
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("PLANLOG_DB")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[cfg(unix)]
#[test]
fn a_store_one_may_only_read_can_be_read() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, db) = store();
    session(&db, 2);
    let before = std::fs::read(&db).unwrap();
    // Readable by everyone, writable by nobody but its owner (root ignores modes, hence the
    // other user above).
    let set = |p: &Path, mode| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    set(dir.path(), 0o555);
    set(&db, 0o444);
    for args in [
        &["show", "s"][..],
        &["history", "s"],
        &["verify"],
        &["sessions"],
    ] {
        let out = planlog_as_reader(&db, args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    }
    let out = planlog_as_reader(&db, &["history", "s"]);
    assert!(out.stdout.contains("[c1]"), "{}", out.stdout);
    let out = planlog_as_reader(&db, &["show", "s", "--json"]);
    assert!(out.stdout.contains("\"i1\""));
    // Writing is refused with a clear message, and nothing changed.
    let out = planlog_as_reader(&db, &["new"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.to_lowercase().contains("permission denied"),
        "{}",
        out.stderr
    );
    set(dir.path(), 0o755);
    assert_eq!(std::fs::read(&db).unwrap(), before, "reading wrote nothing");
}

/// Appends hand-made, correctly hashed events straight into the store (as a forger would,
/// bypassing planlog's writers), and writes them to a jsonl file too.
fn plant(db: &Path, sessions: &[Vec<Event>]) -> PathBuf {
    let log = planlog_store::RedbLog::open(db).unwrap();
    let mut text = String::new();
    for events in sessions {
        log.append_all(events).unwrap();
        for e in events {
            text.push_str(&String::from_utf8(e.encode()).unwrap());
            text.push('\n');
        }
    }
    let file = db.with_extension("forged.jsonl");
    std::fs::write(&file, text).unwrap();
    file
}

fn start(id: &str, origin: Origin, plan: Plan) -> Event {
    seal_after(
        None,
        &sid(id),
        None,
        EventBody::SessionStarted(SessionStarted {
            origin,
            label: None,
            plan,
            plan_mode: false,
            ids_issued: None,
        }),
    )
}

fn whole_list(after: &Event, call: Option<&str>, items: Vec<planlog_core::PlanItem>) -> Event {
    seal_after(
        Some(after),
        &after.session,
        call,
        EventBody::PlanWritten(PlanWritten {
            semantics: WriteSemantics::Replace,
            submitted: items.clone(),
            plan: Plan::from_items(items),
            explanation: None,
            source: None,
            ids_issued: None,
            tool_call: None,
        }),
    )
}

#[test]
fn forged_but_correctly_hashed_histories_are_refused_at_import_and_reported_by_verify() {
    let done = |id: &str| item(id, "done", PlanStatus::Completed);
    let cases: Vec<(&str, Vec<Vec<Event>>, &str)> = vec![
        {
            // A bulk completion recorded with import's whole-list semantics in a new session.
            let s = start("replace", Origin::New, Plan::new());
            let w = whole_list(&s, None, vec![done("1"), done("2"), done("3")]);
            (
                "replace",
                vec![vec![s, w]],
                "whole-list (imported) write in a session that was not imported",
            )
        },
        (
            "born-done",
            vec![vec![start(
                "born-done",
                Origin::New,
                Plan::from_items(vec![done("1"), done("2")]),
            )]],
            "must start with an empty plan",
        ),
        (
            "selfie",
            vec![vec![start(
                "selfie",
                Origin::Fork {
                    parent: sid("selfie"),
                    at: Seq::FIRST,
                },
                Plan::new(),
            )]],
            "a fork of itself",
        ),
        {
            let p = start("parent", Origin::New, Plan::new());
            let p2 = seal_after(
                Some(&p),
                &sid("parent"),
                None,
                EventBody::ModeSelected(planlog_core::events::ModeSelected { active: true }),
            );
            let f = start(
                "late-fork",
                Origin::Fork {
                    parent: sid("parent"),
                    at: Seq::new(99).unwrap(),
                },
                Plan::new(),
            );
            ("late-fork", vec![vec![p, p2], vec![f]], "has only 2 events")
        },
        {
            // Task ids issued that the history never issued (they would make task_create skip
            // numbers), in a write and in a fork's first event.
            let s = start("inflated", Origin::New, Plan::new());
            let one = vec![item("1", "a", PlanStatus::Pending)];
            let w = seal_after(
                Some(&s),
                &sid("inflated"),
                Some("call-1"),
                EventBody::PlanWritten(PlanWritten {
                    semantics: WriteSemantics::Merge,
                    submitted: one.clone(),
                    plan: Plan::from_items(one),
                    explanation: None,
                    source: None,
                    ids_issued: Some(1000),
                    tool_call: None,
                }),
            );
            (
                "inflated",
                vec![vec![s, w]],
                "records task ids issued up to 1000, but the session's history gives none",
            )
        },
        {
            let p = start("ids-parent", Origin::New, Plan::new());
            let mut f = start(
                "ids-fork",
                Origin::Fork {
                    parent: sid("ids-parent"),
                    at: Seq::FIRST,
                },
                Plan::new(),
            );
            if let EventBody::SessionStarted(s) = &mut f.body {
                s.ids_issued = Some(7);
            }
            f.hash = f.compute_hash();
            (
                "ids-fork",
                vec![vec![p], vec![f]],
                "fork's first state (plan, plan mode or task ids issued) differs",
            )
        },
        {
            let s = start(
                "twice",
                Origin::Import {
                    source: "claude-code".into(),
                    source_session: None,
                    parent: None,
                    cwd: None,
                    transcript: None,
                },
                Plan::new(),
            );
            let a = whole_list(
                &s,
                Some("call-1"),
                vec![item("1", "a", PlanStatus::InProgress)],
            );
            let b = whole_list(
                &a,
                Some("call-1"),
                vec![item("1", "a", PlanStatus::Completed)],
            );
            ("twice", vec![vec![s, a, b]], "recorded twice")
        },
    ];
    for (name, sessions, expected) in cases {
        // Import refuses the file, writing nothing.
        let (_dir, clean) = store();
        let (_dir2, planted) = store();
        let file = plant_file_only(&planted, &sessions);
        let out = planlog(&clean, &["import", "planlog", file.to_str().unwrap()], None);
        assert_eq!(out.code, 2, "{name}: import must refuse: {}", out.stdout);
        assert!(out.stderr.contains(expected), "{name}: {}", out.stderr);
        let listed = planlog(&clean, &["sessions", "--json"], None);
        assert!(listed.stdout.trim().is_empty(), "{name}: nothing imported");
        // Planted straight into a store, verify reports it as a problem. (A store never takes
        // a second event with a recorded call id: `append` answers it as a duplicate.)
        if name == "twice" {
            continue;
        }
        let (_dir3, db) = store();
        plant(&db, &sessions);
        let out = planlog(&db, &["verify"], None);
        assert_eq!(out.code, 1, "{name}: {}", out.stdout);
        assert!(
            out.stdout
                .lines()
                .any(|l| l.starts_with("problem:") && l.contains(expected)),
            "{name}: {}",
            out.stdout
        );
    }
}

/// The jsonl of `sessions` (no store), for import.
fn plant_file_only(db: &Path, sessions: &[Vec<Event>]) -> PathBuf {
    let mut text = String::new();
    for e in sessions.iter().flatten() {
        text.push_str(&String::from_utf8(e.encode()).unwrap());
        text.push('\n');
    }
    let file = db.with_extension("forged.jsonl");
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn an_id_cannot_fake_a_history_line() {
    let (_dir, db) = store();
    let fake = "tests: in_progress -> completed, docs";
    let args = json!({"steps": [{"id": fake, "content": "a", "status": "in_progress"}]});
    assert_eq!(
        planlog(&db, &["write", "s"], Some(&args.to_string())).code,
        0
    );
    let history = planlog(&db, &["history", "s"], None).stdout;
    let line = history.lines().last().unwrap();
    assert!(
        line.contains("\"tests: in_progress -> completed, docs\" \"a\": new in_progress"),
        "{line}"
    );
    let items = planlog(&db, &["items", "s"], None).stdout;
    assert!(items.starts_with(&format!("{fake:?} ")), "{items}");
    let diff = planlog(&db, &["diff", "s", "1", "2"], None).stdout;
    assert!(
        diff.contains(&format!("+ {fake:?} [in_progress]")),
        "{diff}"
    );
}

#[test]
fn refused_megabytes_do_not_grow_the_store() {
    let (_dir, db) = store();
    session(&db, 1);
    let before = std::fs::metadata(&db).unwrap().len();
    for i in 0..5 {
        let args =
            json!({"steps": [{"id": "big", "content": "z".repeat(3 << 20), "status": "pending"}]});
        let out = planlog(
            &db,
            &["write", "s", "--call-id", &format!("big{i}")],
            Some(&args.to_string()),
        );
        assert_eq!(out.code, 1, "refused: {}", out.stderr);
    }
    // (The file may even shrink: redb trims free space at the end when it closes.)
    let grown = std::fs::metadata(&db).unwrap().len().saturating_sub(before);
    assert!(
        grown < 2 << 20,
        "five refused 3 MB calls grew the store by {grown} bytes"
    );
    let history = planlog(&db, &["history", "s"], None).stdout;
    assert_eq!(history.matches("content_too_long").count(), 5);
    assert_eq!(planlog(&db, &["verify"], None).code, 0);
}

#[test]
fn the_small_lies_are_gone() {
    let (_dir, db) = store();
    for (i, status) in ["in_progress", "completed"].iter().enumerate() {
        let args = json!({"steps": [{"id": "1", "content": "a", "status": status}]});
        let out = planlog(
            &db,
            &["write", "s", "--turn", &(i + 1).to_string()],
            Some(&args.to_string()),
        );
        assert_eq!(out.code, 0);
    }
    // replay --from after --to
    let out = planlog(&db, &["replay", "s", "--from", "3", "--to", "1"], None);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("--from 3 is after --to 1"),
        "{}",
        out.stderr
    );
    // fork at a turn the session never reached
    let out = planlog(&db, &["fork", "s", "--at-turn", "99"], None);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("turns up to 2"), "{}", out.stderr);
    // a backwards diff says so
    let out = planlog(&db, &["diff", "s", "3", "1"], None);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout
            .starts_with("(backwards: from seq 3 back to seq 1"),
        "{}",
        out.stdout
    );
    // sessions by time, not by id: the most recently updated first, or the oldest first
    let later = json!({"steps": [{"id": "1", "content": "b", "status": "pending"}]});
    assert_eq!(
        planlog(&db, &["write", "aaa"], Some(&later.to_string())).code,
        0
    );
    let listed = planlog(&db, &["sessions"], None).stdout;
    let (s, aaa) = (listed.find("\ns ").unwrap(), listed.find("\naaa ").unwrap());
    assert!(aaa < s, "most recent first: {listed}");
    let listed = planlog(&db, &["sessions", "--oldest-first"], None).stdout;
    let (s, aaa) = (listed.find("\ns ").unwrap(), listed.find("\naaa ").unwrap());
    assert!(s < aaa, "oldest first: {listed}");
    // verify --db of a missing file
    let missing = db.with_file_name("missing.redb");
    let out = planlog(&missing, &["verify"], None);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no store at") && !out.stderr.contains("pass --db PATH"),
        "{}",
        out.stderr
    );
    assert!(!missing.exists(), "verify created nothing");
    // a text file given as the store
    let text = db.with_file_name("notes.txt");
    std::fs::write(&text, "these are my notes, not a database\n".repeat(100)).unwrap();
    let out = planlog(&text, &["sessions"], None);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("is not a planlog store"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("backup"), "{}", out.stderr);
    // a text file where the journal goes, beside a fresh store: refused, never cut (it once
    // was read as a torn first write and cut to nothing)
    let fresh = db.with_file_name("fresh.redb");
    let journal = db.with_file_name("fresh.redb.journal");
    let notes = "these are my notes, not a journal\n".repeat(100);
    std::fs::write(&journal, &notes).unwrap();
    for args in [&["new"][..], &["sessions"][..]] {
        let out = planlog(&fresh, args, None);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stdout);
        assert!(
            out.stderr.contains("did not write") && out.stderr.contains("move it away"),
            "{args:?}: {}",
            out.stderr
        );
    }
    assert_eq!(std::fs::read_to_string(&journal).unwrap(), notes);
    // and nothing of planlog's is left beside the file it refused
    let mut left: Vec<_> = std::fs::read_dir(fresh.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("fresh"))
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["fresh.redb.journal"],
        "files beside the refused journal"
    );
    // once it is moved away, the store is made as usual
    std::fs::rename(&journal, db.with_file_name("notes-moved.txt")).unwrap();
    let out = planlog(&fresh, &["new"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
}
