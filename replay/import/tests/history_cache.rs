//! The history cache changes nothing recorded, whatever state it is in, and spares reading a
//! session's history back: calls written one at a time (as hooks write them) give the same
//! log with the cache, without it, and with its files torn, stale or replaced.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::sync::atomic::Ordering;

use planlog_core::testkit::{FaultyLog, every_event};
use planlog_core::{EventLog, MemoryLog, TestEnv};
use planlog_import::{self as import, HistoryCache, Input, Record, SourceFormat};

mod common;
use common::fixture;

/// A Claude Code transcript of `calls` TodoWrite calls on one growing list: most calls
/// change a status (no history needed), and every few an item is reworded, added, dropped
/// or brought back (the assigner's whole state needed).
fn rewording_transcript(calls: usize) -> Vec<u8> {
    let sid = "4157c0de-0000-4000-8000-000000000001";
    let mut items: Vec<(String, &str)> = vec![
        ("Read the code".to_owned(), "in_progress"),
        ("Write the parser".to_owned(), "pending"),
    ];
    let mut dropped: Vec<(String, &str)> = Vec::new();
    let mut out = String::new();
    for n in 0..calls {
        match n % 7 {
            1 => items.push((format!("Step {n} of the plan"), "pending")),
            3 => {
                let last = items.len() - 1;
                items[last].0 = format!("{} (reworded at {n})", items[last].0);
            }
            4 if items.len() > 3 => dropped.push(items.remove(1)),
            5 => {
                if let Some(back) = dropped.pop() {
                    items.push(back);
                }
            }
            _ => {
                let i = n % items.len();
                items[i].1 = match items[i].1 {
                    "pending" => "in_progress",
                    "in_progress" => "completed",
                    _ => "pending",
                };
            }
        }
        let todos: Vec<serde_json::Value> = items
            .iter()
            .map(|(c, s)| serde_json::json!({"content": c, "status": s, "activeForm": c}))
            .collect();
        let at = format!("2026-12-01T10:{:02}:{:02}.000Z", n / 60 % 60, n % 60);
        out.push_str(&format!("{}\n", serde_json::json!({"type": "assistant", "uuid": format!("a{n}"), "sessionId": sid, "timestamp": at,
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_{n}"), "name": "TodoWrite", "input": {"todos": todos}}]}})));
        out.push_str(&format!("{}\n", serde_json::json!({"type": "user", "uuid": format!("r{n}"), "sessionId": sid, "timestamp": at,
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{n}"), "content": "ok"}]}})));
    }
    out.into_bytes()
}

/// The source's records as hooks would write them: each call on its own, after every
/// session record (what a hook knows of its session).
fn one_by_one(format: SourceFormat, name: &str, bytes: &[u8]) -> Vec<Vec<Record>> {
    let records = import::records(format, Input::Bytes { name, bytes });
    let sessions: Vec<Record> = records
        .iter()
        .filter(|r| matches!(r, Record::Session(_)))
        .cloned()
        .collect();
    records
        .into_iter()
        .filter(|r| matches!(r, Record::Call(_)))
        .map(|call| {
            let mut one = sessions.clone();
            one.push(call);
            one
        })
        .collect()
}

fn write(
    log: &dyn EventLog,
    format: SourceFormat,
    records: &[Record],
    cache: Option<&HistoryCache>,
) {
    import::write_records(
        log,
        &TestEnv::default(),
        format,
        "a test hook",
        "captured in a test",
        records,
        cache,
    )
    .unwrap();
}

/// A log that counts the events read from it.
fn counting() -> FaultyLog<MemoryLog> {
    FaultyLog::new(MemoryLog::new())
}

fn read(log: &FaultyLog<MemoryLog>) -> usize {
    log.events_read.load(Ordering::SeqCst)
}

fn cache_files(cache: &HistoryCache) -> Vec<std::path::PathBuf> {
    match std::fs::read_dir(cache.dir()) {
        Ok(dir) => dir.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn calls_written_one_by_one_record_the_same_with_the_cache_in_any_state() {
    let rewording = rewording_transcript(120);
    for (format, name, bytes) in [
        (
            SourceFormat::ClaudeCode,
            "claude-small.jsonl",
            fixture("claude-small.jsonl"),
        ),
        (
            SourceFormat::ClaudeCode,
            "claude-tasks.jsonl",
            fixture("claude-tasks.jsonl"),
        ),
        (
            SourceFormat::Codex,
            "codex-new.jsonl",
            fixture("codex-new.jsonl"),
        ),
        (
            SourceFormat::Gemini,
            "gemini-session.jsonl",
            fixture("gemini-session.jsonl"),
        ),
        (SourceFormat::ClaudeCode, "rewording", rewording.clone()),
    ] {
        let calls = one_by_one(format, name, &bytes);
        assert!(calls.len() > 2, "{name}: has calls");
        let without = MemoryLog::new();
        for call in &calls {
            write(&without, format, call, None);
        }
        // The cache kept throughout; then the same with its files torn, put back from
        // earlier calls (stale: older than the session's head), replaced by the files of
        // another store's sessions, or gone.
        for mischief in 0..4 {
            let dir = tempfile::tempdir().unwrap();
            let cache = HistoryCache::beside(&dir.path().join("planlog.redb"));
            let with = MemoryLog::new();
            let mut earlier: Vec<(std::path::PathBuf, Vec<u8>)> = Vec::new();
            for (n, call) in calls.iter().enumerate() {
                write(&with, format, call, Some(&cache));
                if mischief == 0 || n % 3 != 0 {
                    continue;
                }
                for file in cache_files(&cache) {
                    let bytes = std::fs::read(&file).unwrap();
                    match mischief {
                        1 => std::fs::write(&file, &bytes[..bytes.len() * 2 / 3]).unwrap(),
                        2 => match earlier.iter().find(|(f, _)| *f == file) {
                            Some((_, old)) => std::fs::write(&file, old).unwrap(),
                            None => earlier.push((file, bytes)),
                        },
                        _ => std::fs::remove_file(&file).unwrap(),
                    }
                }
            }
            assert_eq!(
                every_event(&with),
                every_event(&without),
                "{name}, mischief {mischief}"
            );
        }
    }
}

#[test]
fn the_rewording_transcript_needs_the_history() {
    // Without a history read, ids would be those the last list alone gives: the test above
    // compares something only if some call needed the whole assigner.
    let calls = one_by_one(
        SourceFormat::ClaudeCode,
        "rewording",
        &rewording_transcript(40),
    );
    let log = counting();
    for call in &calls {
        write(&log, SourceFormat::ClaudeCode, call, None);
    }
    // A call that needs no history reads one or two events (the session's first, the last
    // list); calls that read the history back read far more.
    assert!(
        read(&log) > 5 * calls.len(),
        "{} calls read back {} events",
        calls.len(),
        read(&log)
    );
}

#[test]
fn with_the_cache_a_call_reads_only_the_events_after_what_was_kept() {
    let calls = one_by_one(
        SourceFormat::ClaudeCode,
        "rewording",
        &rewording_transcript(400),
    );
    let dir = tempfile::tempdir().unwrap();
    let cache = HistoryCache::beside(&dir.path().join("planlog.redb"));
    let (with, without) = (counting(), counting());
    let (mut most_with, mut most_without) = (0, 0);
    for (n, call) in calls.iter().enumerate() {
        let (before_with, before_without) = (read(&with), read(&without));
        write(&with, SourceFormat::ClaudeCode, call, Some(&cache));
        write(&without, SourceFormat::ClaudeCode, call, None);
        if n >= 300 {
            most_with = most_with.max(read(&with) - before_with);
            most_without = most_without.max(read(&without) - before_without);
        }
    }
    // A call past 300 needs the history of ~300 events; kept, it reads the few written since
    // the last call that needed it.
    assert!(most_without >= 300, "without the cache: {most_without}");
    assert!(most_with <= 8, "with the cache: {most_with}");
    assert_eq!(every_event(with.inner()), every_event(without.inner()));
}
