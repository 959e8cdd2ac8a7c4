//! Measures one Claude Code hook call of `planlog hook claude-code`, process start included
//! (BENCHMARKS.md § Hooks): CALLS PostToolUse TodoWrite calls (each a new process, as Claude
//! Code runs them) against a fresh store, side by side with `planlog --version` (the cost of
//! starting the process at all) and a SessionStart restore; prints p50 and p99 of each.
//! Those calls change statuses only (the common call, which needs none of the session's
//! history). A fourth call per round, on a session of its own, rewords one item: the
//! importer then works item ids out from the session's history (up to its last 2,000
//! events), so its cost grows with the session; its p50 is printed over the first and the
//! last tenth of the rounds (it records one event a round: a session of about `CALLS / 20`
//! events, then about `CALLS`).
//!
//! Each round also times the floor in this process (a typical event's 1,970 bytes appended
//! to a file and `fdatasync`ed, as `journaled`'s bench does), so the target's line (the
//! process start plus 4 x the floor) is printed from the same run. `hook_probe` (a bare
//! process-per-call hook, with planlog taken away) can run in turns as one of the binaries.
//!
//! Usage: `hook_latency PLANLOG_BINARY [PLANLOG_BINARY...] [CALLS]`: several binaries (an
//! older build beside a newer one) take turns round by round, each on a store of its own,
//! each run from a copy of it (as an installed binary is). A binary given as
//! `no-history:PLANLOG_BINARY` runs on a store whose history cache (`<store>.history`) a
//! file of the bench's own stands in the way of: the same build reading the history back on
//! every reworded call, as builds before the cache did. A binary given as `cold:PLANLOG_BINARY`
//! runs every call in the hook's own process (`PLANLOG_HOOK_SERVER=off`): the same build
//! without its warm hook server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // measurement tool

use std::io::Write;
use std::os::unix::fs::FileExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

fn run(binary: &str, args: &[&str], stdin: &str, cold: bool) -> Duration {
    let started = Instant::now();
    let mut command = Command::new(binary);
    if cold {
        command.env("PLANLOG_HOOK_SERVER", "off");
    }
    let mut child = command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    started.elapsed()
}

fn percentiles(mut d: Vec<Duration>) -> (f64, f64) {
    d.sort_unstable();
    let at = |p: f64| d[((d.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1000.0;
    (at(0.5), at(0.99))
}

fn main() {
    // Binaries, then an optional number of calls: each binary on a store of its own, the
    // binaries taking turns round by round, so they are measured under the same load.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (calls, binaries): (usize, Vec<String>) = match args.last().and_then(|a| a.parse().ok()) {
        Some(n) => (n, args[..args.len() - 1].to_vec()),
        None => (200, args),
    };
    assert!(
        !binaries.is_empty(),
        "usage: hook_latency PLANLOG_BINARY [PLANLOG_BINARY...] [CALLS]"
    );
    let dir = tempfile::tempdir().unwrap();
    let cold: Vec<bool> = binaries.iter().map(|b| b.starts_with("cold:")).collect();
    let binaries: Vec<String> = binaries
        .iter()
        .map(|b| b.strip_prefix("cold:").unwrap_or(b).to_owned())
        .collect();
    let blocked: Vec<bool> = binaries
        .iter()
        .map(|b| b.starts_with("no-history:"))
        .collect();
    let binaries: Vec<String> = binaries
        .iter()
        .map(|b| b.strip_prefix("no-history:").unwrap_or(b).to_owned())
        .collect();
    // Each binary runs from a copy of its own, as an installed one does (`cargo install`
    // copies). The file the linker wrote is not the same thing in the page cache: run as it
    // is, the same bytes started ~0.1 ms slower per call here (more page faults, our
    // reading; BENCHMARKS.md § "Hooks measured on an installed copy").
    let copies: Vec<String> = binaries
        .iter()
        .enumerate()
        .map(|(k, binary)| {
            let folder = dir.path().join(format!("bin-{k}"));
            std::fs::create_dir(&folder).unwrap();
            let copy = folder.join("planlog");
            std::fs::copy(binary, &copy).unwrap();
            copy.display().to_string()
        })
        .collect();
    let dbs: Vec<String> = (0..binaries.len())
        .map(|k| {
            let db = dir.path().join(format!("planlog-{k}.redb"));
            if blocked[k] {
                std::fs::write(
                    dir.path().join(format!("planlog-{k}.redb.history")),
                    "not a folder: the history cache cannot be kept\n",
                )
                .unwrap();
            }
            db.display().to_string()
        })
        .collect();
    let mut times = vec![(Vec::new(), Vec::new(), Vec::new()); binaries.len()];
    let mut reworded: Vec<Vec<Duration>> = vec![Vec::new(); binaries.len()];
    // The floor, timed in turns with the calls: the typical event's bytes appended and synced.
    let raw = std::fs::File::create(dir.path().join("floor")).unwrap();
    let event = vec![b'x'; 1_970];
    let mut floor = Vec::new();
    for i in 0..calls {
        let t = Instant::now();
        raw.write_all_at(&event, (i * event.len()) as u64).unwrap();
        raw.sync_data().unwrap();
        floor.push(t.elapsed());
        for (k, binary) in copies.iter().enumerate() {
            let db = dbs[k].as_str();
            let (start, post, restore) = &mut times[k];
            start.push(run(binary, &["--version"], "", cold[k]));
            let todos: Vec<_> = (0..8)
                .map(|k| json!({"content": format!("Step {k}"), "status": if k < i % 9 { "completed" } else { "pending" }, "activeForm": format!("Doing step {k}")}))
                .collect();
            let input = json!({"session_id": "bench", "hook_event_name": "PostToolUse", "tool_name": "TodoWrite",
                "tool_use_id": format!("toolu_{i}"), "tool_input": {"todos": todos}, "tool_response": {}, "cwd": "/work"});
            post.push(run(
                binary,
                &["--db", db, "hook", "claude-code"],
                &input.to_string(),
                cold[k],
            ));
            let input = json!({"session_id": "bench", "hook_event_name": "SessionStart", "source": "compact"});
            restore.push(run(
                binary,
                &["--db", db, "hook", "claude-code"],
                &input.to_string(),
                cold[k],
            ));
            let todos: Vec<_> = (0..8)
                .map(|k| json!({"content": if k == 7 { format!("Step {k}, reworded in round {i}") } else { format!("Step {k}") }, "status": "pending", "activeForm": format!("Doing step {k}")}))
                .collect();
            let input = json!({"session_id": "bench-reworded", "hook_event_name": "PostToolUse", "tool_name": "TodoWrite",
                "tool_use_id": format!("toolu_r{i}"), "tool_input": {"todos": todos}, "tool_response": {}, "cwd": "/work"});
            reworded[k].push(run(
                binary,
                &["--db", db, "hook", "claude-code"],
                &input.to_string(),
                cold[k],
            ));
        }
    }
    let (floor50, _) = percentiles(floor);
    println!(
        "floor (1,970 bytes appended + fdatasync) p50 {floor50:.3} ms: the line past --version is 4 x = {:.2} ms",
        4.0 * floor50
    );
    for (k, ((binary, (start, post, restore)), reworded)) in
        binaries.iter().zip(times).zip(reworded).enumerate()
    {
        let blocked = if blocked[k] { ", no history cache" } else { "" };
        let cold = if cold[k] { ", no hook server" } else { "" };
        println!("{binary} ({calls} rounds, from a copy{blocked}{cold})");
        // The gap a call adds past starting the process, each round's call against the
        // same round's `--version`: the figure the hook's target is about.
        let mut gaps: Vec<f64> = post
            .iter()
            .zip(&start)
            .map(|(p, s)| (p.as_secs_f64() - s.as_secs_f64()) * 1000.0)
            .collect();
        gaps.sort_unstable_by(f64::total_cmp);
        for (name, d) in [
            ("planlog --version", start),
            ("PostToolUse TodoWrite (8 items)", post),
            ("SessionStart compact", restore),
        ] {
            let (p50, p99) = percentiles(d);
            println!("  {name:34} p50 {p50:6.2} ms   p99 {p99:6.2} ms");
        }
        let median = gaps[gaps.len() / 2];
        println!(
            "  {:34} p50 {median:6.2} ms ({:.2} x the floor)",
            "PostToolUse past --version",
            median / floor50
        );
        let tenth = (reworded.len() / 10).max(1);
        let (first, _) = percentiles(reworded[..tenth].to_vec());
        let (last, _) = percentiles(reworded[reworded.len() - tenth..].to_vec());
        println!(
            "  {:34} p50 {first:6.2} ms over the first tenth, {last:6.2} ms over the last",
            "PostToolUse, an item reworded"
        );
    }
}
