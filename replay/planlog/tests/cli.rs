//! The `planlog` command: every command's output and exit codes, run as a child process.
//! Human output is compared with reviewed insta snapshots (times and ULIDs redacted).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use serde_json::{Value, json};

mod common;
use common::Planlog;

#[test]
fn new_prints_a_fresh_session_id() {
    let p = Planlog::new();
    let a = p.ok(&["new"]);
    let b = p.ok(&["new", "--label", "x"]);
    assert_eq!(a.trim().len(), 26);
    assert_ne!(a, b);
    assert!(p.ok(&["sessions"]).contains("\"x\""));
}

#[test]
fn write_exit_codes_accepted_rejected_read() {
    let p = Planlog::new();
    let ok = p.write(
        "s1",
        "c1",
        json!({"steps": [{"id": "1", "content": "a", "status": "in_progress"}]}),
    );
    assert_eq!(
        (ok.code, ok.stdout.trim()),
        (0, r#"[{"id":"1","content":"a","status":"in_progress"}]"#)
    );
    let rejected = p.write("s1", "c2", json!({"steps": [{"id": "2", "content": "b", "status": "completed"}, {"id": "3", "content": "c", "status": "completed"}]}));
    assert_eq!(rejected.code, 1);
    assert!(
        rejected.stdout.starts_with("Rejected as a bulk completion"),
        "{}",
        rejected.stdout
    );
    let read = p.run(&["write", "s1"], Some("{}"));
    assert_eq!(
        (read.code, read.stdout.trim()),
        (0, r#"[{"id":"1","content":"a","status":"in_progress"}]"#)
    );
    // The rejection is on record; the read is not.
    let history = p.ok(&["history", "s1"]);
    assert_eq!(history.lines().count(), 3, "{history}");
    assert!(history.contains("write_rejected") && history.contains("bulk_completion"));
}

#[test]
fn write_refuses_malformed_stdin_and_writes_nothing() {
    let p = Planlog::new();
    p.write(
        "s1",
        "c1",
        json!({"steps": [{"id": "1", "content": "a", "status": "pending"}]}),
    );
    for bad in ["", "not json", "[1,2]", "{\"steps\": ["] {
        let r = p.run(&["write", "s1"], Some(bad));
        assert_eq!(r.code, 2, "{bad:?}: {}", r.stdout);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(
            r.stderr.contains("plan_write argument object") || r.stderr.contains("one JSON object"),
            "{}",
            r.stderr
        );
        assert!(r.stdout.is_empty());
    }
    assert_eq!(p.ok(&["history", "s1"]).lines().count(), 2);
    let bad_id = p.run(&["write", "../etc"], Some("{}"));
    assert_eq!(bad_id.code, 2);
    assert!(bad_id.stderr.contains("is not a session id"));
}

#[test]
fn a_repeated_call_id_is_applied_once() {
    let p = Planlog::new();
    let call = json!({"steps": [{"id": "1", "content": "a", "status": "pending"}]});
    let first = p.write("s1", "c1", call.clone());
    let again = p.write("s1", "c1", call);
    assert_eq!((first.code, again.code), (0, 0));
    assert_eq!(first.stdout, again.stdout);
    assert_eq!(p.ok(&["history", "s1"]).lines().count(), 2);
}

#[test]
fn a_call_id_reused_with_other_arguments_is_refused_and_writes_nothing() {
    let p = Planlog::new();
    let first = p.write(
        "s1",
        "c1",
        json!({"steps": [{"id": "1", "content": "a", "status": "pending"}]}),
    );
    assert_eq!(first.code, 0);
    let other = p.write(
        "s1",
        "c1",
        json!({"steps": [{"id": "9", "content": "other", "status": "pending"}]}),
    );
    assert_eq!(other.code, 2, "{}", other.stderr);
    assert!(other.stdout.is_empty());
    assert!(
        other.stderr.contains("call id c1 was already used") && other.stderr.contains("--call-id"),
        "{}",
        other.stderr
    );
    assert_eq!(p.ok(&["history", "s1"]).lines().count(), 2);
    assert_eq!(
        p.ok(&["show", "s1", "--json"]).trim(),
        r#"[{"id":"1","content":"a","status":"pending"}]"#
    );
}

#[test]
fn writes_feed_the_private_markdown_plan_file() {
    let p = Planlog::new();
    p.write(
        "s1",
        "c1",
        json!({"steps": [{"id": "1", "content": "Write it", "status": "in_progress"}]}),
    );
    let file = p.db().parent().unwrap().join("planlog.plans").join("s1.md");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("- [>] Write it"));
    // The file is the markdown view after planlog's ownership line.
    let (owner, view) = text.split_once('\n').unwrap();
    assert!(
        owner.starts_with("<!-- planlog plan file of session s1"),
        "{owner}"
    );
    assert_eq!(p.ok(&["show", "s1", "--markdown"]), view);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}

#[test]
fn show_in_every_form_now_and_at_a_seq() {
    let p = Planlog::new();
    let id = p.sample();
    snapshot!("show_block", p.ok(&["show", &id]));
    snapshot!("show_at_3", p.ok(&["show", &id, "--at", "3"]));
    let json: Value = serde_json::from_str(&p.ok(&["show", &id, "--json"])).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 3);
    let inject = p.ok(&["show", &id, "--inject"]);
    assert!(
        inject.starts_with("## Current Execution Plan")
            && inject.contains("[>] Write the table tests")
    );
    // Before any item was active the injection is empty.
    assert_eq!(p.ok(&["show", &id, "--at", "1", "--inject"]), "");
}

#[test]
fn unknown_sessions_and_seqs_out_of_range_are_one_line_errors() {
    let p = Planlog::new();
    let id = p.sample();
    for args in [
        vec!["show", "nobody"],
        vec!["show", &id, "--at", "99"],
        vec!["show", &id, "--at", "0"],
        vec!["diff", &id, "1", "42"],
        vec!["history", "nobody"],
        vec!["fork", &id, "--at", "50"],
    ] {
        let r = p.run(&args, None);
        assert_eq!(r.code, 2, "{args:?}");
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("planlog sessions") || r.stderr.contains("out of range"),
            "{}",
            r.stderr
        );
    }
}

/// A session longer than two of the chunks history reads at a time (each chunk's lines are
/// made on the thread that read it, from the store's state before the chunk): every line,
/// plain and JSON, is the one made from the whole session read in one piece.
#[test]
fn history_of_a_long_session_is_the_history_of_the_whole() {
    let p = Planlog::new();
    let file = p.dir.path().join("long.jsonl");
    let chunk = planlog_core::limits::SCAN_CHUNK as usize;
    common::long_transcript(&file, 2 * chunk + 500);
    let id = p
        .ok(&["import", "claude-code", file.to_str().unwrap()])
        .trim()
        .to_owned();
    let events: Vec<planlog_core::events::Event> = p
        .ok(&["export", &id, "--format", "jsonl"])
        .lines()
        .map(|l| planlog_core::events::Event::decode(l.as_bytes()).unwrap())
        .collect();
    assert!(events.len() > 2 * chunk, "{}", events.len());
    let whole = planlog_audit::history(&events);
    let lines: Vec<String> = whole.iter().map(|e| e.line()).collect();
    let plain = p.ok(&["history", &id]);
    assert_eq!(plain.lines().count(), lines.len());
    for (got, want) in plain.lines().zip(&lines) {
        assert_eq!(got, want);
    }
    // The kinds a chunk may start with or carry over are all there: refusals, a flag, the
    // compaction, and plan writes on both sides of each chunk's edge.
    for needle in ["write_rejected", "FLAG", "context_compacted"] {
        assert!(plain.contains(needle), "{needle}");
    }
    let json = p.ok(&["history", &id, "--json"]);
    assert_eq!(json.lines().count(), whole.len());
    for (got, want) in json.lines().zip(&whole) {
        assert_eq!(got, serde_json::to_string(want).unwrap());
    }
}

#[test]
fn history_items_diff_and_replay() {
    let p = Planlog::new();
    let id = p.sample();
    snapshot!("history", p.ok(&["history", &id]));
    for line in p.ok(&["history", &id, "--json"]).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        for key in ["seq", "id", "at", "kind"] {
            assert!(v.get(key).is_some(), "{key} missing in {line}");
        }
    }
    snapshot!("items", p.ok(&["items", &id]));
    snapshot!("diff_2_5", p.ok(&["diff", &id, "2", "5"]));
    snapshot!(
        "replay_4_5",
        p.ok(&["replay", &id, "--from", "4", "--to", "5"])
    );
}

#[test]
fn fork_at_a_seq_or_turn_leaves_the_parent_untouched() {
    let p = Planlog::new();
    let id = p.sample();
    let parent_before = p.ok(&["history", &id]);
    let fork = p
        .ok(&["fork", &id, "--at", "3", "--label", "other route"])
        .trim()
        .to_owned();
    assert_eq!(
        p.ok(&["show", &fork, "--json"]),
        p.ok(&["show", &id, "--at", "3", "--json"])
    );
    p.write(
        &fork,
        "f1",
        json!({"steps": [{"id": "5", "content": "Another way", "status": "in_progress"}]}),
    );
    assert_eq!(p.ok(&["history", &id]), parent_before);
    assert!(!p.ok(&["show", &id, "--json"]).contains("Another way"));
    let by_turn = p.ok(&["fork", &id, "--at-turn", "1"]).trim().to_owned();
    assert_eq!(
        p.ok(&["show", &by_turn, "--json"]),
        p.ok(&["show", &id, "--json"]),
        "every sample write is turn 1"
    );
    let sessions: Vec<Value> = p
        .ok(&["sessions", "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let f = sessions.iter().find(|s| s["id"] == fork.as_str()).unwrap();
    assert_eq!(f["origin"], json!({"type": "fork", "parent": id, "at": 3}));
    assert!(p.ok(&["sessions"]).contains(&format!("fork of {id} at 3")));
    assert_eq!(p.run(&["verify"], None).code, 0);
}

#[test]
fn verify_is_clean_then_names_the_damaged_event() {
    let p = Planlog::new();
    let id = p.sample();
    let clean = p.run(&["verify"], None);
    assert_eq!(clean.code, 0, "{}", clean.stdout);
    assert!(clean.stdout.contains("0 problems"));
    // Tamper with event 3 behind planlog's back: change its content, keep its hash, and
    // give its journal frame a checksum that matches (a forger's work, not a torn write).
    {
        use planlog_store::journal::{FileStorage, Journal, crc32c};
        let path = planlog_store::journal_path(&p.db());
        let (_, opened) = Journal::open(FileStorage::open(&path).unwrap()).unwrap();
        let third = opened
            .records
            .iter()
            .find(|r| {
                let e = planlog_core::events::Event::decode(&r.data).unwrap();
                e.session.as_str() == id && e.seq.get() == 3
            })
            .unwrap();
        let mut journal = std::fs::read(&path).unwrap();
        let at = usize::try_from(third.at).unwrap();
        let len = u32::from_le_bytes(journal[at..at + 4].try_into().unwrap()) as usize;
        let body = &journal[at + 8..at + 8 + len];
        // [kind | 0x80 when compressed][durable: 8 bytes][the JSON's length: 4][LZ4 block].
        assert_eq!(body[0] & 0x80, 0x80, "the record is compressed");
        // One letter changed, so the frame keeps its size: the event's ids and times are new
        // each run, and one change can shift LZ4's matches by a byte, so the first of a few
        // that compresses to the same size is taken.
        let text = String::from_utf8(third.data.clone()).unwrap();
        let block = ["parsec", "parsed", "parses", "parsee", "parsen", "parsel"]
            .iter()
            .map(|word| {
                let forged = text.replace("Write the parser", &format!("Write the {word}"));
                lz4_flex::block::compress(forged.as_bytes())
            })
            .find(|block| block.len() == len - 13)
            .expect("a forged record that compresses to the same size");
        journal[at + 8 + 13..at + 8 + len].copy_from_slice(&block);
        let crc = crc32c(&journal[at + 8..at + 8 + len]);
        journal[at + 4..at + 8].copy_from_slice(&crc.to_le_bytes());
        std::fs::write(&path, &journal).unwrap();
    }
    let r = p.run(&["verify"], None);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains(&format!("problem: session {id} seq 3:")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("hash mismatch"), "{}", r.stdout);
}

#[test]
fn delete_asks_unless_yes() {
    let p = Planlog::new();
    let id = p.sample();
    let refused = p.run(&["delete", &id], None);
    assert_eq!(refused.code, 2);
    assert!(refused.stderr.contains("--yes"));
    assert!(p.ok(&["delete", &id, "--yes"]).contains("deleted"));
    assert_eq!(p.run(&["show", &id], None).code, 2);
    assert!(
        !p.db()
            .parent()
            .unwrap()
            .join("plans")
            .join(format!("{id}.md"))
            .exists()
    );
    let again = p.write(&id, "x", json!({}));
    assert_eq!(again.code, 2, "a deleted session cannot be written again");
    assert!(again.stderr.contains("deleted"), "{}", again.stderr);
}

#[test]
fn compact_reclaims_a_deleted_sessions_space_and_refuses_while_the_store_is_open() {
    let p = Planlog::new();
    let kept = p.sample();
    let gone = p.sample();
    let journal = planlog_store::journal_path(&p.db());
    let deleted = p.run(&["delete", &gone, "--yes"], None);
    assert_eq!(deleted.code, 0, "{}", deleted.stderr);
    assert!(
        deleted.stderr.contains("planlog compact"),
        "{}",
        deleted.stderr
    );
    let history = p.ok(&["history", &kept]);
    let size = std::fs::metadata(&journal).unwrap().len();

    // Open in another process (a server on the store): refused, nothing changed.
    let mut server = p
        .command()
        .args(["mcp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the server holds the store (its shared lock on the users file).
    let users = std::fs::File::open(planlog_store::users_path(&p.db())).unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while users.try_lock().is_ok() {
        users.unlock().unwrap();
        assert!(
            std::time::Instant::now() < until,
            "the server never opened the store"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let refused = p.run(&["compact"], None);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("another process has the store open"),
        "{}",
        refused.stderr
    );
    assert_eq!(std::fs::metadata(&journal).unwrap().len(), size);
    server.kill().unwrap();
    server.wait().unwrap();

    let done = p.run(&["compact"], None);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert!(done.stderr.contains("compacted"), "{}", done.stderr);
    assert!(std::fs::metadata(&journal).unwrap().len() < size);
    assert_eq!(p.ok(&["history", &kept]), history);
    assert_eq!(p.run(&["show", &gone], None).code, 2);
    let verified = p.run(&["verify"], None);
    assert_eq!(verified.code, 0, "{}", verified.stdout);
}

/// The index (the redb file) lost beside its journal: a command that only reads rebuilds
/// it, as one that writes would; `planlog reindex` rebuilds it on request.
#[test]
fn a_store_whose_index_is_lost_is_read_whole_and_reindexed() {
    let p = Planlog::new();
    let s = p.sample();
    let history = p.ok(&["history", &s]);
    let plan = p.ok(&["show", &s, "--json"]);
    std::fs::remove_file(p.db()).unwrap();
    assert_eq!(p.ok(&["history", &s]), history);
    assert!(p.db().is_file(), "the reader did not rebuild the index");
    std::fs::remove_file(p.db()).unwrap();
    let rebuilt = p.run(&["reindex"], None);
    assert_eq!(rebuilt.code, 0, "{}", rebuilt.stderr);
    assert!(
        rebuilt.stderr.contains("rebuilt the index") && rebuilt.stderr.contains("1 sessions"),
        "{}",
        rebuilt.stderr
    );
    assert_eq!(p.ok(&["show", &s, "--json"]), plan);
    let verified = p.run(&["verify"], None);
    assert_eq!(verified.code, 0, "{}", verified.stdout);
}

/// A store reached through a symbolic link to its index: `reindex` rebuilds the file the
/// link points to (the link stays one), and every command finds the journal beside that
/// file, making nothing beside the link.
#[test]
fn a_store_reached_through_a_link_is_reindexed_through_it() {
    let p = Planlog::new();
    let s = p.sample();
    let history = p.ok(&["history", &s]);
    let elsewhere = tempfile::tempdir().unwrap();
    let link = elsewhere.path().join("planlog.redb");
    std::os::unix::fs::symlink(p.db(), &link).unwrap();
    let through = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_planlog"))
            .arg("--db")
            .arg(&link)
            .args(args)
            .env_remove("PLANLOG_DB")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, _, err) = through(&["reindex"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("rebuilt the index"), "{err}");
    assert!(link.is_symlink());
    assert_eq!(through(&["history", &s]).1, history);
    let (code, out, _) = through(&["verify"]);
    assert_eq!(code, Some(0), "{out}");
    let beside: Vec<_> = std::fs::read_dir(elsewhere.path()).unwrap().collect();
    assert_eq!(beside.len(), 1, "{beside:?}");
    assert_eq!(p.ok(&["history", &s]), history);
}

/// A store of the older layout named by a bare file name (`--db planlog.redb`, the folder
/// the current one) upgrades with its folder synced: the journal's name survives a crash.
#[test]
fn a_store_named_by_a_bare_file_name_upgrades_with_its_folder_synced() {
    let dir = tempfile::tempdir().unwrap();
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/stores/v4.redb");
    std::fs::copy(fixture, dir.path().join("planlog.redb")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_planlog"))
        .args(["--db", "planlog.redb", "new"])
        .current_dir(dir.path())
        .env_remove("PLANLOG_DB")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    assert!(dir.path().join("planlog.redb.journal").is_file());
    assert!(!err.contains("could not sync"), "{err}");
}

/// A torn write at the journal's end is read past by a command that only reads, which
/// writes nothing, and cut by the next one that opens the store read-write (`verify`
/// does, for redb's full check), its bytes kept beside the journal; `verify` notes the cut
/// and where the bytes are (a note: a crash's torn write is routine), and the store reads
/// as before.
#[test]
fn a_cut_tail_is_kept_and_verify_notes_it() {
    use std::os::unix::fs::FileExt as _;
    let p = Planlog::new();
    let s = p.sample();
    let history = p.ok(&["history", &s]);
    let end = planlog_store::JournaledLog::options()
        .read_only(true)
        .open(p.db())
        .unwrap()
        .journal_end();
    let journal = planlog_store::journal_path(&p.db());
    std::fs::OpenOptions::new()
        .write(true)
        .open(&journal)
        .unwrap()
        .write_all_at(b"half a frame", end)
        .unwrap();
    assert_eq!(p.ok(&["history", &s]), history);
    assert_eq!(
        planlog_store::journal::cuts_kept_beside(&journal).unwrap(),
        vec![],
        "a reader cut nothing"
    );
    let verified = p.run(&["verify"], None);
    assert_eq!(verified.code, 0, "{}", verified.stdout);
    let kept = planlog_store::journal::cuts_kept_beside(&journal).unwrap();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].1, end);
    assert_eq!(std::fs::read(&kept[0].0).unwrap(), b"half a frame");
    assert_eq!(p.ok(&["history", &s]), history);
    assert!(
        verified
            .stdout
            .contains(&format!("note: the journal's tail was cut at byte {end}"))
            && verified.stdout.contains(&kept[0].0.display().to_string())
            && verified.stdout.contains("0 problems, 1 notes"),
        "{}",
        verified.stdout
    );
}

#[test]
fn compact_on_a_full_disk_changes_nothing_and_succeeds_once_there_is_room() {
    let p = Planlog::new();
    let kept = p.sample();
    let gone = p.sample();
    p.ok(&["delete", &gone, "--yes"]);
    let journal = planlog_store::journal_path(&p.db());
    let bytes = std::fs::read(&journal).unwrap();
    let history = p.ok(&["history", &kept]);
    let index = std::fs::metadata(p.db()).unwrap();
    assert!(
        index.len() > bytes.len() as u64,
        "the index is the larger file"
    );
    // No file may grow past 1,000 bytes (the new journal cannot be written), then past the
    // old journal's size (the new journal can, its index cannot).
    for (limit, failed) in [
        (1000, "compacted journal"),
        (
            bytes.len(),
            "planlog.redb.compacting: opening failed: File too large",
        ),
    ] {
        let out = p
            .with_file_size_limit(limit as u64, &["compact"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(failed), "{stderr}");
        assert!(
            std::fs::read(&journal).unwrap() == bytes,
            "the journal is as it was"
        );
        assert_eq!(
            std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p.db()).unwrap()),
            std::os::unix::fs::MetadataExt::ino(&index),
            "the index is the same file"
        );
        let store = p.db().parent().unwrap().to_path_buf();
        let names: Vec<_> = std::fs::read_dir(&store)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.contains("compacting"))
            .collect();
        assert!(names.is_empty(), "left behind: {names:?}");
        assert_eq!(p.ok(&["history", &kept]), history);
    }
    // Room again: it goes through.
    let done = p.run(&["compact"], None);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert!(std::fs::metadata(&journal).unwrap().len() < bytes.len() as u64);
    assert_eq!(p.ok(&["history", &kept]), history);
}

#[test]
fn the_demo_runs_and_points_at_what_it_wrote() {
    let p = Planlog::new();
    let out = p.ok(&["demo"]);
    for needle in [
        "Rejected as a bulk completion",
        "## Current Execution Plan",
        "sub-agent",
        "fork",
        "planlog --db",
        "verify",
        "ui --open",
    ] {
        assert!(out.contains(needle), "demo output lacks {needle:?}");
    }
    assert!(
        out.trim_end()
            .ends_with("the fork hangs under its parent)."),
        "the demo ends by suggesting the viewer"
    );
    assert_eq!(
        p.ok(&["sessions", "--json"]).lines().count(),
        2,
        "the session and its fork; the sub-agent left nothing"
    );
    assert_eq!(p.run(&["verify"], None).code, 0);
}

#[test]
fn a_locked_store_is_a_one_line_error() {
    let p = Planlog::new();
    p.sample();
    let holder = redb::Database::create(p.db()).unwrap();
    let r = p.run(&["sessions"], None);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("locked by another process") && r.stderr.contains("planlog.redb"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1);
    drop(holder);
    assert_eq!(p.run(&["sessions"], None).code, 0);
}

#[test]
fn usage_errors_exit_2() {
    let p = Planlog::new();
    assert_eq!(p.run(&["show"], None).code, 2);
    assert_eq!(p.run(&["frobnicate"], None).code, 2);
    assert_eq!(p.run(&["fork", "x"], None).code, 2);
}

/// `items` reads the session in chunks and keeps each item's steps on disk until it prints
/// them: across chunk boundaries its output is exactly the lives computed in memory.
#[test]
fn items_of_a_long_session_are_the_lives_computed_in_memory() {
    use planlog_core::{PlanSession, Seq, SessionId};
    let p = Planlog::new();
    std::fs::create_dir_all(p.db().parent().unwrap()).unwrap();
    let events = {
        let log = std::sync::Arc::new(planlog_store::RedbLog::open(p.db()).unwrap());
        let id = SessionId::new("long").unwrap();
        let mut s = PlanSession::builder(
            std::sync::Arc::clone(&log),
            std::sync::Arc::new(planlog_core::TestEnv::default()),
        )
        .open(&id)
        .unwrap();
        for n in 0..4_300u64 {
            let item = |i: u64, st: &str| serde_json::json!({"id": i.to_string(), "content": format!("item {i}, pass {}", n / 100), "status": st});
            // Items come and go: a new one every 100 calls, the oldest dropped by a
            // completion then left out.
            let k = n / 100;
            let args =
                serde_json::json!({"steps": [item(k, "in_progress"), item(k + 1, "pending")]});
            let out = s.plan_write(Some(&format!("c{n}")), Some(n), &args.to_string());
            assert!(
                !out.result().is_error || n % 100 == 0,
                "call {n}: {}",
                out.result().content
            );
        }
        planlog_core::EventLog::read(&*log, &id, Seq::FIRST, None).unwrap()
    };
    assert!(events.len() > 4_000);
    let mut want = String::new();
    for life in planlog_audit::item_lives(&events) {
        want.push_str(&format!(
            "{} {:?}\n",
            planlog_audit::shown(&life.id),
            planlog_core::render::one_line(&life.first_content)
        ));
        for (seq, what) in &life.steps {
            want.push_str(&format!("  seq {seq:>4}  {what}\n"));
        }
        want.push_str(&format!("  {}\n", life.end));
    }
    assert_eq!(p.ok(&["items", "long"]), want);
}

/// The binary allocates with mimalloc (BENCHMARKS.md § issue 17 measured reads with it): a
/// dependency alone does not make it the allocator; the `#[global_allocator]` does. Its
/// version 2, which starts a process faster than the crate's default (the `v2` feature).
#[test]
fn the_binary_allocates_with_mimalloc() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_planlog"))
        .arg("--version")
        .env("MIMALLOC_VERBOSE", "1")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("mimalloc: process init"), "{stderr}");
    assert!(stderr.starts_with("mimalloc: v2."), "{stderr}");
}

#[test]
fn an_empty_store_file_is_reported_as_damage_and_nothing_is_written_into_it() {
    let p = Planlog::new();
    std::fs::create_dir_all(p.db().parent().unwrap()).unwrap();
    std::fs::write(p.db(), b"").unwrap();
    for args in [
        &["verify"][..],
        &["sessions"],
        &["show", "x"],
        &["history", "x"],
        &["export", "x", "--format", "jsonl"],
        &["new"],
    ] {
        let r = p.run(args, None);
        assert_ne!(
            r.code, 0,
            "planlog {args:?} must not call an empty file a store"
        );
        assert!(
            format!("{}{}", r.stdout, r.stderr).contains("empty (0 bytes)"),
            "planlog {args:?}: {}{}",
            r.stdout,
            r.stderr
        );
        assert_eq!(
            std::fs::metadata(p.db()).unwrap().len(),
            0,
            "planlog {args:?} wrote into it"
        );
    }
    assert_eq!(
        p.run(&["verify"], None).code,
        1,
        "verify reports it as a problem"
    );
}

#[test]
fn copy_takes_a_destination_that_went_further_and_names_where_two_histories_part() {
    let (source, dest) = (Planlog::new(), Planlog::new());
    let id = source.sample();
    let copy = |p: &Planlog| {
        p.run(
            &[
                "copy",
                "--from",
                &source.store_arg(),
                "--to",
                &dest.store_arg(),
            ],
            None,
        )
    };
    assert_eq!(copy(&dest).code, 0);
    let step = |n: &str, c: &str| json!({"steps": [{"id": n, "content": c, "status": "pending"}]});
    // The destination went on (seqs 6 and 7): it holds all of the source and more.
    assert_eq!(
        dest.write(&id, "d1", step("8", "in the destination")).code,
        0
    );
    assert_eq!(
        dest.write(&id, "d2", step("9", "in the destination")).code,
        0
    );
    let r = copy(&dest);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("with 2 newer events"), "{}", r.stderr);
    // The source goes on differently, further than the destination: they part at seq 6.
    for (call, n) in [("s1", "10"), ("s2", "11"), ("s3", "12"), ("s4", "13")] {
        assert_eq!(source.write(&id, call, step(n, "at the source")).code, 0);
    }
    let before = dest.ok(&["export", &id, "--format", "jsonl"]);
    let r = copy(&dest);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("differ from seq 6 on"), "{}", r.stderr);
    assert!(
        dest.ok(&["export", &id, "--format", "jsonl"]) == before,
        "left as it was"
    );
}

/// A session is named by its id or any unique beginning of it; a beginning several ids share
/// is refused naming them, and one no id has says there is no such session. `delete` takes
/// the whole id only.
#[test]
fn a_session_is_named_by_any_unique_beginning_of_its_id() {
    let p = Planlog::new();
    let step = json!({"steps": [{"id": "1", "content": "Parse", "status": "in_progress"}]});
    for id in ["cc-0c18aa", "cc-0c18bb", "cx-77ff"] {
        assert_eq!(p.write(id, "c1", step.clone()).code, 0);
    }
    let whole = p.ok(&["history", "cx-77ff"]);
    assert_eq!(p.ok(&["history", "cx-7"]), whole);
    assert!(p.ok(&["show", "cc-0c18b"]).contains("Parse"));
    let both = p.run(&["history", "cc-0c18"], None);
    assert_eq!(both.code, 2);
    assert!(
        both.stderr
            .contains("names 2 sessions (cc-0c18aa, cc-0c18bb)"),
        "{}",
        both.stderr
    );
    let none = p.run(&["history", "zz"], None);
    assert_eq!(none.code, 2);
    assert!(none.stderr.contains("no session"), "{}", none.stderr);
    let delete = p.run(&["delete", "cx-7", "--yes"], None);
    assert_ne!(delete.code, 0, "{}", delete.stdout);
    assert_eq!(p.ok(&["history", "cx-77ff"]), whole);
}
