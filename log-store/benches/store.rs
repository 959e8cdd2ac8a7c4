//! Store benchmarks, every contender measured side by side in one run, rounds interleaved so
//! machine noise hits all alike. Prints a markdown report (copied into BENCHMARKS.md).
//!
//! Run: `cargo bench -p planlog-store --bench store` (add `-- --quick` for a short run).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)] // benchmark code

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use planlog_core::testkit::{seal_after, sid};
use planlog_core::{EventLog, Seq, events::Origin};
use planlog_store::RedbLog;

mod common;
use common::{build_session, next_event, pct, seeded_rand, us};

struct Contender {
    name: &'static str,
    op: Box<dyn FnMut()>,
    samples: Vec<Duration>,
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
    println!("# planlog store benchmarks\n");
    println!(
        "Temporary files in {} ({}).\n",
        dir.path().display(),
        if quick { "quick run" } else { "full run" }
    );
    append_latency(
        dir.path(),
        if quick { 3 } else { 7 },
        if quick { 50 } else { 150 },
    );
    throughput(dir.path(), if quick { 256 } else { 4096 });
    reads(dir.path(), if quick { 20_000 } else { 100_000 });
}

/// Durable append latency of a typical 8-item plan_write, against the peers.
fn append_latency(dir: &Path, rounds: usize, per_round: usize) {
    let s = sid("latency");
    let sample = next_event(&s, Some(&next_event(&s, None)));
    let bytes = sample.encode();
    let plan_json = sample.plan().unwrap().to_json();

    let mut raw = File::create(dir.join("raw.bin")).unwrap();
    let raw_bytes = bytes.clone();
    let mut jsonl = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("log.jsonl"))
        .unwrap();
    let mut line = bytes.clone();
    line.push(b'\n');
    let sqlite = rusqlite::Connection::open(dir.join("harness9.sqlite")).unwrap();
    sqlite.pragma_update(None, "journal_mode", "WAL").unwrap();
    sqlite.pragma_update(None, "synchronous", "FULL").unwrap();
    sqlite
        .execute_batch("CREATE TABLE session_plans (session_id TEXT PRIMARY KEY, items TEXT NOT NULL DEFAULT '[]', updated_at INTEGER NOT NULL DEFAULT 0)")
        .unwrap();
    let bare = |mode: redb::ConcurrencyMode, name: &str| {
        let mut builder = redb::Database::builder();
        builder.set_concurrency_mode(mode);
        builder.create(dir.join(name)).unwrap()
    };
    let bare_multi = bare(redb::ConcurrencyMode::MultiWriter, "bare-multi.redb");
    let bare_excl = bare(
        redb::ConcurrencyMode::ExclusiveWriter,
        "bare-exclusive.redb",
    );
    const BARE: redb::TableDefinition<u64, &[u8]> = redb::TableDefinition::new("t");
    let bare_commit = |db: &redb::Database, n: u64, value: &[u8]| {
        let txn = db.begin_write().unwrap();
        txn.open_table(BARE).unwrap().insert(n, value).unwrap();
        txn.commit().unwrap();
    };
    let (bm_bytes, be_bytes) = (bytes.clone(), bytes.clone());
    let (mut bm_n, mut be_n) = (0u64, 0u64);
    let log = Arc::new(RedbLog::open(dir.join("latency.redb")).unwrap());
    let mut last = None;
    let mut upsert_n = 0i64;
    let session = s.clone();
    let mut contenders = vec![
        Contender {
            name: "raw write + fdatasync (floor)",
            op: Box::new(move || {
                raw.write_all(&raw_bytes).unwrap();
                raw.sync_data().unwrap();
            }),
            samples: Vec::new(),
        },
        Contender {
            name: "JSONL append + fdatasync",
            op: Box::new(move || {
                jsonl.write_all(&line).unwrap();
                jsonl.sync_data().unwrap();
            }),
            samples: Vec::new(),
        },
        Contender {
            name: "SQLite WAL, synchronous=FULL, one-row upsert",
            op: Box::new(move || {
                upsert_n += 1;
                sqlite
                    .execute(
                        "INSERT INTO session_plans (session_id, items, updated_at) VALUES (?1, ?2, ?3) \
                         ON CONFLICT(session_id) DO UPDATE SET items = excluded.items, updated_at = excluded.updated_at",
                        rusqlite::params!["latency", plan_json, upsert_n],
                    )
                    .unwrap();
            }),
            samples: Vec::new(),
        },
        Contender {
            name: "bare redb commit of the same bytes, exclusive-writer mode",
            op: Box::new(move || {
                be_n += 1;
                bare_commit(&bare_excl, be_n, &be_bytes);
            }),
            samples: Vec::new(),
        },
        Contender {
            name: "bare redb commit of the same bytes, multi-writer mode (planlog's)",
            op: Box::new(move || {
                bm_n += 1;
                bare_commit(&bare_multi, bm_n, &bm_bytes);
            }),
            samples: Vec::new(),
        },
        Contender {
            name: "planlog RedbLog::append (durable)",
            op: Box::new(move || {
                let e = next_event(&session, last.as_ref());
                log.append(&e).unwrap();
                last = Some(e);
            }),
            samples: Vec::new(),
        },
    ];
    // Build the event outside the timed part? No: sealing is part of an append's real cost,
    // but it is measured separately below so the comparison with raw bytes stays fair.
    for _ in 0..rounds {
        for c in contenders.iter_mut() {
            for _ in 0..per_round {
                let t = Instant::now();
                (c.op)();
                c.samples.push(t.elapsed());
            }
        }
    }
    let floor = {
        let mut v = contenders[0].samples.clone();
        v.sort();
        pct(&v, 0.5)
    };
    println!(
        "## Durable append latency (8-item plan_write, {} bytes of canonical JSON; the peers write these bytes, planlog stores them compressed)\n",
        bytes.len()
    );
    println!(
        "{} rounds x {} appends each, interleaved.\n",
        rounds, per_round
    );
    println!("| contender | p50 (µs) | p99 (µs) | p50 / raw floor |");
    println!("|---|---:|---:|---:|");
    for c in &mut contenders {
        c.samples.sort();
        let (p50, p99) = (pct(&c.samples, 0.5), pct(&c.samples, 0.99));
        println!(
            "| {} | {:.0} | {:.0} | {:.2}x |",
            c.name,
            us(p50),
            us(p99),
            us(p50) / us(floor)
        );
    }
    let t = Instant::now();
    let n = 2000;
    let mut prev = next_event(&s, None);
    for _ in 0..n {
        prev = next_event(&s, Some(&prev));
    }
    println!(
        "\nSealing one event (serialize, canonicalize, SHA-256), not in the figures above: {:.1} µs.\n",
        us(t.elapsed()) / n as f64
    );
}

/// The CPU time this process has used (user + system, its exited threads included), from
/// `/proc/self/stat` in clock ticks of 10 ms: a case must run for seconds to read it well.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command (which may hold spaces) start after the last ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    // utime and stime are fields 14 and 15 of the line; after the ')' (state is 0), 11 and 12.
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// Append throughput with 1, 8 and 64 sessions appending at once.
fn throughput(dir: &Path, total: usize) {
    println!("## Append throughput by concurrent sessions ({total} durable appends per case)\n");
    println!(
        "| sessions | appends/s | commits | appends per commit | vs 1 session | CPU per append (µs) | cores busy | leader writing rows per append (µs) | committing per commit (µs) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut base = 0.0;
    for sessions in [1usize, 8, 64] {
        let log = Arc::new(RedbLog::open(dir.join(format!("tp{sessions}.redb"))).unwrap());
        let per = total / sessions;
        let cpu = cpu_seconds();
        let t = Instant::now();
        let handles: Vec<_> = (0..sessions)
            .map(|k| {
                let log = Arc::clone(&log);
                std::thread::spawn(move || {
                    let s = sid(&format!("s{k}"));
                    let mut last = None;
                    for _ in 0..per {
                        let e = next_event(&s, last.as_ref());
                        log.append(&e).unwrap();
                        last = Some(e);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let wall = t.elapsed().as_secs_f64();
        let busy = cpu_seconds() - cpu;
        let rate = (per * sessions) as f64 / wall;
        if sessions == 1 {
            base = rate;
        }
        let stats = log.commit_stats();
        println!(
            "| {sessions} | {rate:.0} | {} | {:.1} | {:.1}x | {:.0} | {:.2} | {:.0} | {:.0} |",
            stats.commits,
            stats.appends as f64 / stats.commits as f64,
            rate / base,
            busy * 1e6 / (per * sessions) as f64,
            busy / wall,
            us(stats.writing) / stats.appends as f64,
            us(stats.committing) / stats.commits as f64
        );
    }
    println!();
}

/// State at a seq, last event and fork, on a 10-event and a long session.
fn reads(dir: &Path, long_len: u64) {
    let path = dir.join("reads.redb");
    let log = RedbLog::open(&path).unwrap();
    let short = sid("short");
    let long = sid("long");
    let t = Instant::now();
    for (s, len) in [(&short, 10u64), (&long, long_len)] {
        build_session(&log, s, len);
    }
    let build = t.elapsed();
    let events = 10 + long_len;
    let file = std::fs::metadata(&path).unwrap().len();
    println!("## Reads at 10 vs {long_len} events\n");
    println!(
        "Built in {:.1}s. Store file {:.1} MB for {events} events: {:.0} bytes per event on disk \
         (the event's own canonical JSON is {} bytes).\n",
        build.as_secs_f64(),
        file as f64 / 1e6,
        file as f64 / events as f64,
        log.last(&long).unwrap().unwrap().encode().len()
    );
    let mut rand = seeded_rand();
    let lookups = 2000;
    let mut results: Vec<(&str, Vec<Duration>, Vec<Duration>)> = vec![
        ("state at a random seq", Vec::new(), Vec::new()),
        ("last event", Vec::new(), Vec::new()),
        (
            "fork lookup (state at seq + parent catalogue)",
            Vec::new(),
            Vec::new(),
        ),
    ];
    for _ in 0..lookups {
        for (which, s, len) in [(1usize, &short, 10u64), (2usize, &long, long_len)] {
            let seq = Seq::new(rand(len)).unwrap();
            let mut time = |i: usize, f: &mut dyn FnMut()| {
                let t = Instant::now();
                f();
                let d = t.elapsed();
                if which == 1 {
                    results[i].1.push(d)
                } else {
                    results[i].2.push(d)
                }
            };
            time(0, &mut || {
                log.state_at(s, seq).unwrap();
            });
            time(1, &mut || {
                log.last(s).unwrap();
            });
            time(2, &mut || {
                log.state_at(s, seq).unwrap();
                log.session(s).unwrap();
            });
        }
    }
    println!("| read | 10 events p50 (µs) | {long_len} events p50 (µs) | ratio |");
    println!("|---|---:|---:|---:|");
    for (name, mut a, mut b) in results {
        a.sort();
        b.sort();
        let (pa, pb) = (pct(&a, 0.5), pct(&b, 0.5));
        println!(
            "| {name} | {:.1} | {:.1} | {:.2}x |",
            us(pa),
            us(pb),
            us(pb) / us(pa)
        );
    }
    // A whole fork: the lookup plus the new session's durable first event.
    let mut forks = Vec::new();
    for k in 0..20 {
        let t = Instant::now();
        let state = log
            .state_at(&long, Seq::new(long_len / 2).unwrap())
            .unwrap();
        let child = sid(&format!("fork{k}"));
        let first = seal_after(
            None,
            &child,
            None,
            planlog_core::events::EventBody::SessionStarted(planlog_core::events::SessionStarted {
                origin: Origin::Fork {
                    parent: long.clone(),
                    at: Seq::new(long_len / 2).unwrap(),
                },
                label: None,
                plan: state.plan,
                plan_mode: state.plan_mode,
                ids_issued: None,
            }),
        );
        log.append(&first).unwrap();
        forks.push(t.elapsed());
    }
    forks.sort();
    println!(
        "\nA whole fork of the {long_len}-event session at its middle (lookup + durable append of the fork's first event): p50 {:.0} µs.\n",
        us(pct(&forks, 0.5))
    );
}
