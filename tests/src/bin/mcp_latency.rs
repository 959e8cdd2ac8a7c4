//! Where the time of one plan_write through `planlog mcp` goes (BENCHMARKS.md § issue 17):
//! side by side in one run, rounds interleaved, on the same disk, each a durable 8-item
//! plan_write (the same 8 pending items every time, the fifth's status flipped so each write
//! changes the plan):
//!
//! 1. raw `write` + `fdatasync` of the event's bytes (the physical floor);
//! 2. `JournaledLog::append` of a sealed event (the store alone);
//! 3. `PlanSession::plan_write` on a `JournaledLog` (decide, seal, append), no plan file;
//! 4. the same with the markdown plan file sink (`PlanFiles`) on the reply path;
//! 5. the same with the plan file written in the background (`BackgroundSink`), as
//!    `planlog mcp` runs it;
//! 6. then, once the rows above have stopped (their indexing and plan-file threads too), a
//!    `planlog mcp` server on a store of its own, driven by this process writing JSON-RPC
//!    lines itself (stdio framing, the async session thread, the reply): each round a
//!    plan_write, a read-mode plan_write (no arguments: the round trip without a write) and
//!    the floor again, so the first less the second is what a write adds, against the
//!    floor measured alongside. (Until 2026-12-02 the server shared the in-process rows'
//!    store, so its writes also caught up with theirs and competed with their indexing
//!    threads; see BENCHMARKS.md.)
//!
//! 7. alongside the server, a bare probe of the same shape: a child process (this binary,
//!    `--probe`) that reads a line on stdin, hands it to a thread of its own that writes
//!    and syncs the same bytes, and answers a line on stdout when that thread is done; a
//!    "read" line goes to the thread and back without a write. What a write adds there is
//!    the floor of any server that keeps its request loop free while it syncs (two pipes
//!    and two thread hand-overs per call, as `planlog mcp` has), on this machine.
//!
//! Besides the latencies, it prints the CPU each kind of call costs (all threads of the
//! process doing the work, from `/proc/PID/task/*/schedstat`): this process's for the
//! in-process rows, the server's for its calls.
//!
//! Usage: `mcp_latency PLANLOG_BINARY [ROUNDS] [PER_ROUND] [PAUSE_MS]` (default 7 x 100, no
//! pause; a pause between calls, not timed, stands for the model thinking between two calls)
#![allow(clippy::unwrap_used, clippy::expect_used)] // measurement tool

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use planlog_core::testkit::{item, seal_after, sid, started, written};
use planlog_core::{EventLog, PlanSession, PlanStatus, SessionId, events::Origin};
use planlog_store::JournaledLog;
use planlog_store::host::{BackgroundSink, PlanFiles, SystemEnv};
use serde_json::{Value, json};

fn pct(d: &mut [Duration], p: f64) -> f64 {
    d.sort_unstable();
    d[((d.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e6
}

/// A markdown table of `rows` (each a path and its samples), the first row being the floor
/// the others are set against.
fn table(rows: &mut [(&str, Vec<Duration>)]) {
    let floor = pct(&mut rows[0].1, 0.5);
    println!("| path | p50 (µs) | p99 (µs) | p50 / floor |");
    println!("|---|---:|---:|---:|");
    for (name, d) in rows.iter_mut() {
        let (p50, p99) = (pct(d, 0.5), pct(d, 0.99));
        println!("| {name} | {p50:.0} | {p99:.0} | {:.2}x |", p50 / floor);
    }
}

/// The plan_write arguments of call `n`: 8 items, the fifth's status flipping.
fn args(n: u64) -> Value {
    json!({"steps": (0..8).map(|i| json!({
        "id": format!("step-{i}"),
        "content": format!("Implement part {i} of the config loader"),
        "status": if i == 4 && n.is_multiple_of(2) { "in_progress" } else { "pending" },
    })).collect::<Vec<_>>()})
}

/// The CPU time every thread of process `pid` has run so far (`/proc/PID/task/*/schedstat`,
/// nanoseconds; zero where there is no such file). A thread that ends takes its time out of
/// the sum, so a window it ends in counts as zero rather than wrapping.
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

struct Mcp {
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    child: std::process::Child,
    next: u64,
}

impl Mcp {
    fn start(binary: &str, db: &str) -> Self {
        let mut child = Command::new(binary)
            .args(["--db", db, "mcp", "--session", "via-mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut mcp = Self {
            stdin,
            lines,
            child,
            next: 1,
        };
        mcp.call("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}));
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    /// Sends one message as a client does: the whole line in one write. (`writeln!` of a
    /// `Value` on the unbuffered pipe wrote each piece of its text apart, ~150 system calls
    /// a plan_write, each able to wake the server's reader; until 2026-12-04 every figure
    /// of this row was measured so. See BENCHMARKS.md.)
    fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).unwrap();
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let v: Value = serde_json::from_str(&self.lines.next().unwrap().unwrap()).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }
}

/// The bare probe server (`mcp_latency --probe DIR BYTES`): see row 7.
fn probe(dir: &str, size: usize) {
    let (jobs, work) = std::sync::mpsc::channel::<bool>();
    let (done, answers) = std::sync::mpsc::channel::<()>();
    let path = std::path::Path::new(dir).join("probe.bin");
    let worker = std::thread::spawn(move || {
        let mut f = std::fs::File::create(path).unwrap();
        let bytes = vec![b'x'; size];
        for write in work {
            if write {
                f.write_all(&bytes).unwrap();
                f.sync_data().unwrap();
            }
            done.send(()).unwrap();
        }
    });
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        jobs.send(line.unwrap() == "w").unwrap();
        answers.recv().unwrap();
        writeln!(out, "ok").unwrap();
        out.flush().unwrap();
    }
    drop(jobs);
    worker.join().unwrap();
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--probe") {
        let dir = std::env::args().nth(2).unwrap();
        let size = std::env::args().nth(3).unwrap().parse().unwrap();
        return probe(&dir, size);
    }
    let mut a = std::env::args().skip(1);
    let binary = a
        .next()
        .expect("usage: mcp_latency PLANLOG_BINARY [ROUNDS] [PER_ROUND]");
    let rounds: usize = a.next().and_then(|n| n.parse().ok()).unwrap_or(7);
    let per: u64 = a.next().and_then(|n| n.parse().ok()).unwrap_or(100);
    let pause = Duration::from_millis(a.next().and_then(|n| n.parse().ok()).unwrap_or(0));
    let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
    let store = dir.path().join("planlog.redb");
    let log = Arc::new(JournaledLog::open(&store).unwrap());
    // The floor: the same bytes an 8-item event takes.
    let s = sid("bare");
    let first = seal_after(None, &s, None, started(Origin::New));
    log.append(&first).unwrap();
    let mut last = first;
    let sample = seal_after(
        Some(&last),
        &s,
        Some("x"),
        written(
            (0..8)
                .map(|i| {
                    item(
                        &i.to_string(),
                        &format!("Implement part {i} of the config loader"),
                        PlanStatus::Pending,
                    )
                })
                .collect(),
        ),
    );
    let bytes = sample.encode();
    let mut raw = std::fs::File::create(dir.path().join("raw.bin")).unwrap();
    let session = |id: &str, sink: u8| {
        let b = PlanSession::builder(Arc::clone(&log) as Arc<dyn EventLog>, SystemEnv);
        let b = match sink {
            0 => b,
            1 => b.sink(PlanFiles::beside(&store)),
            _ => b.sink(BackgroundSink::new(PlanFiles::beside(&store))),
        };
        b.open(&SessionId::new(id).unwrap()).unwrap()
    };
    let mut plain = session("no-sink", 0);
    let mut with_sink = session("with-sink", 1);
    let mut with_background = session("with-background", 2);
    let names = [
        "raw write + fdatasync (the floor)",
        "JournaledLog::append (the store alone)",
        "PlanSession::plan_write, no plan file",
        "PlanSession::plan_write + plan file on the reply path",
        "PlanSession::plan_write + plan file in the background (as planlog mcp)",
    ];
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
    // This process's CPU (all its threads) during each call, by row.
    let me = std::process::id();
    let mut cpu = vec![0u64; names.len()];
    let mut n = 0u64;
    for _ in 0..rounds {
        #[allow(clippy::needless_range_loop)] // k picks the path and its samples
        for k in 0..names.len() {
            for _ in 0..per {
                std::thread::sleep(pause);
                n += 1;
                let call = format!("c{n}");
                let c0 = cpu_ns(me);
                let t = Instant::now();
                match k {
                    0 => {
                        raw.write_all(&bytes).unwrap();
                        raw.sync_data().unwrap();
                    }
                    1 => {
                        let e = seal_after(
                            Some(&last),
                            &s,
                            Some(&call),
                            written(
                                (0..8)
                                    .map(|i| {
                                        item(
                                            &i.to_string(),
                                            &format!("part {i} {n}"),
                                            PlanStatus::Pending,
                                        )
                                    })
                                    .collect(),
                            ),
                        );
                        let t = Instant::now();
                        log.append(&e).unwrap();
                        samples[k].push(t.elapsed());
                        last = e;
                        continue;
                    }
                    2 => drop(
                        plain
                            .plan_write(Some(&call), None, &args(n).to_string())
                            .durable()
                            .unwrap(),
                    ),
                    3 => drop(
                        with_sink
                            .plan_write(Some(&call), None, &args(n).to_string())
                            .durable()
                            .unwrap(),
                    ),
                    _ => drop(
                        with_background
                            .plan_write(Some(&call), None, &args(n).to_string())
                            .durable()
                            .unwrap(),
                    ),
                }
                samples[k].push(t.elapsed());
                cpu[k] += cpu_ns(me).saturating_sub(c0);
            }
        }
    }
    // What reading the CPU times costs inside a window (a read's end and the next's start).
    let probe = 1000u64;
    let empty: u64 = (0..probe)
        .map(|_| {
            let c0 = cpu_ns(me);
            cpu_ns(me).saturating_sub(c0)
        })
        .sum::<u64>()
        / probe;
    // The in-process rows' threads (indexing, plan files) end before the server runs.
    drop((plain, with_sink, with_background, log));
    println!(
        "{rounds} rounds x {per} calls each, interleaved; {} bytes per event\n",
        bytes.len()
    );
    table(&mut names.into_iter().zip(samples).collect::<Vec<_>>());
    let per_call = |k: usize| (cpu[k] / (rounds as u64 * per)).saturating_sub(empty) as f64 / 1e3;
    println!(
        "\nthis process's CPU, all threads, mean a call (less {:.0} µs the reading costs): the floor {:.0} µs; plan_write, no plan file {:.0} µs; plan file in the background {:.0} µs",
        empty as f64 / 1e3,
        per_call(0),
        per_call(2),
        per_call(4)
    );

    // The server on a store of its own, as an agent's is: each call a write, a read-mode
    // call (the round trip without a write) and the floor, one after the other.
    let own = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
    let mut mcp = Mcp::start(&binary, own.path().join("planlog.redb").to_str().unwrap());
    let mut raw = std::fs::File::create(own.path().join("raw.bin")).unwrap();
    let mut server: [Vec<Duration>; 5] = Default::default();
    let mut bare = Command::new(std::env::current_exe().unwrap())
        .args([
            "--probe",
            own.path().to_str().unwrap(),
            &bytes.len().to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut bare_in = bare.stdin.take().unwrap();
    let mut bare_out = BufReader::new(bare.stdout.take().unwrap()).lines();
    let mut ask = move |what: &str| {
        let t = Instant::now();
        bare_in.write_all(format!("{what}\n").as_bytes()).unwrap();
        assert_eq!(bare_out.next().unwrap().unwrap(), "ok");
        t.elapsed()
    };
    // The server's CPU (all its threads) from before each call to after it, by kind: what
    // each call costs it, whichever thread does the work.
    let pid = mcp.child.id();
    let (mut write_cpu, mut read_cpu) = (0u64, 0u64);
    for _ in 0..rounds as u64 * per {
        std::thread::sleep(pause);
        n += 1;
        let t = Instant::now();
        raw.write_all(&bytes).unwrap();
        raw.sync_data().unwrap();
        server[0].push(t.elapsed());
        let before = cpu_ns(pid);
        let t = Instant::now();
        let r = mcp.call(
            "tools/call",
            json!({"name": "plan_write", "arguments": args(n)}),
        );
        server[1].push(t.elapsed());
        let between = cpu_ns(pid);
        write_cpu += between.saturating_sub(before);
        assert_eq!(r["result"]["isError"], false, "{r}");
        let t = Instant::now();
        let r = mcp.call("tools/call", json!({"name": "plan_write", "arguments": {}}));
        server[2].push(t.elapsed());
        read_cpu += cpu_ns(pid).saturating_sub(between);
        assert_eq!(r["result"]["isError"], false, "{r}");
        server[3].push(ask("w"));
        server[4].push(ask("r"));
    }
    drop(ask);
    bare.wait().unwrap();
    let calls = (rounds as u64 * per) as f64;
    drop(mcp.stdin);
    mcp.child.wait().unwrap();
    println!("\n`planlog mcp` on a store of its own, calls alternating with the floor:\n");
    let [floor, write, read, bare_write, bare_read] = server;
    let mut rows = [
        (
            "raw write + fdatasync (the floor, in this alternation)",
            floor,
        ),
        ("planlog mcp, a plan_write over JSON-RPC on stdio", write),
        (
            "planlog mcp, a read-mode plan_write (no arguments: the round trip without a write)",
            read,
        ),
        (
            "bare probe: a write + fdatasync on the probe's worker thread, over stdio",
            bare_write,
        ),
        (
            "bare probe: the same round trip without the write",
            bare_read,
        ),
    ];
    table(&mut rows);
    let floor = pct(&mut rows[0].1, 0.5);
    let added = pct(&mut rows[1].1, 0.5) - pct(&mut rows[2].1, 0.5);
    let bare_added = pct(&mut rows[3].1, 0.5) - pct(&mut rows[4].1, 0.5);
    println!(
        "\nwhat a plan_write adds to the round trip, p50: {added:.0} µs ({:.2}x the floor); what a write adds to the bare probe's: {bare_added:.0} µs ({:.2}x)",
        added / floor,
        bare_added / floor
    );
    println!(
        "the server's CPU, all threads, mean a call: plan_write {:.0} µs, read-mode {:.0} µs",
        write_cpu as f64 / calls / 1e3,
        read_cpu as f64 / calls / 1e3
    );
}
