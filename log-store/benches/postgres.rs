//! The PostgreSQL log against redb, side by side in one run on this machine: durable append
//! latency (with the raw write + fdatasync floor), append throughput from 1, 8 and 64
//! concurrent writers (threads of one process, and separate processes), and state-at-seq on a
//! 10-event and a long session. Prints a markdown report (copied into BENCHMARKS.md).
//!
//! Needs a PostgreSQL server: run under `.ci/with-postgres`, which sets `PLANLOG_TEST_POSTGRES`
//! (a fresh database is created for the run and dropped after):
//!
//! `.ci/with-postgres cargo bench -p planlog-store --features bench --bench postgres [-- --quick]`
//!
//! The writer processes are this same binary, started with `--writer STORE SESSION COUNT`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)] // benchmark code

use std::io::{BufRead, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use planlog_core::testkit::sid;
use planlog_core::{EventLog, Seq, events::Event};
use planlog_store::{PgLog, RedbLog, StoreAddress};

mod common;
use common::{build_session, next_event, pct, seeded_rand, us};

/// A database of its own on the benchmark server, dropped at the end.
struct BenchDb {
    admin: String,
    name: String,
    url: String,
}

impl BenchDb {
    fn create(admin: &str) -> Self {
        let name = format!(
            "planlog_bench_{}",
            ulid::Ulid::new().to_string().to_lowercase()
        );
        let mut c = postgres::Client::connect(admin, postgres::NoTls).unwrap();
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        let url = format!("{}/{name}", admin.rsplit_once('/').unwrap().0);
        Self {
            admin: admin.to_owned(),
            name,
            url,
        }
    }
}

impl Drop for BenchDb {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// A writer process: opens STORE, says `ready`, waits for a line, appends COUNT events to
/// SESSION, exits.
fn writer(store: &str, session: &str, count: usize) {
    let log = StoreAddress::parse(store).unwrap().open().unwrap();
    let s = sid(session);
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    std::io::stdin()
        .lock()
        .read_line(&mut String::new())
        .unwrap();
    let mut last = log.last(&s).unwrap();
    for _ in 0..count {
        let e = next_event(&s, last.as_ref());
        log.append(&e).unwrap();
        last = Some(e);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--writer") {
        return writer(&args[i + 1], &args[i + 2], args[i + 3].parse().unwrap());
    }
    let quick = args.iter().any(|a| a == "--quick");
    let Ok(admin) = std::env::var("PLANLOG_TEST_POSTGRES") else {
        eprintln!(
            "no PLANLOG_TEST_POSTGRES: run under .ci/with-postgres (see the top of benches/postgres.rs)"
        );
        std::process::exit(2);
    };
    let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
    let server = {
        let mut c = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
        let v: String = c.query_one("SHOW server_version", &[]).unwrap().get(0);
        let sc: String = c.query_one("SHOW synchronous_commit", &[]).unwrap().get(0);
        let fsync: String = c.query_one("SHOW fsync", &[]).unwrap().get(0);
        format!("PostgreSQL {v} on 127.0.0.1 (fsync={fsync}, synchronous_commit={sc})")
    };
    println!("# planlog on PostgreSQL vs redb\n");
    println!(
        "{server}; redb files in {} ({}).\n",
        dir.path().display(),
        if quick { "quick run" } else { "full run" }
    );
    let db = BenchDb::create(&admin);
    let redb_path = dir.path().join("bench.redb");
    let redb_store = redb_path.display().to_string();
    latency(
        &redb_store,
        &db.url,
        dir.path(),
        if quick { 3 } else { 7 },
        if quick { 50 } else { 150 },
    );
    throughput(&redb_store, &db.url, if quick { 256 } else { 1024 });
    let reads_db = BenchDb::create(&admin);
    reads(
        &dir.path().join("reads.redb").display().to_string(),
        &reads_db.url,
        if quick { 20_000 } else { 100_000 },
    );
}

/// Durable append latency, rounds interleaved: the floor, redb, PostgreSQL.
fn latency(redb: &str, pg: &str, dir: &std::path::Path, rounds: usize, per_round: usize) {
    let redb = Arc::new(RedbLog::open(redb).unwrap());
    let pg = Arc::new(PgLog::open(pg).unwrap());
    let sample = next_event(&sid("x"), Some(&next_event(&sid("x"), None)));
    let bytes = sample.encode();
    let mut raw = std::fs::File::create(dir.join("raw.bin")).unwrap();
    let mut samples: [Vec<Duration>; 3] = Default::default();
    let mut lasts: [Option<Event>; 2] = [None, None];
    let s = sid("latency");
    for _ in 0..rounds {
        for _ in 0..per_round {
            let t = Instant::now();
            raw.write_all(&bytes).unwrap();
            raw.sync_data().unwrap();
            samples[0].push(t.elapsed());
        }
        for (k, log) in [&*redb as &dyn EventLog, &*pg].into_iter().enumerate() {
            for _ in 0..per_round {
                let e = next_event(&s, lasts[k].as_ref());
                let t = Instant::now();
                log.append(&e).unwrap();
                samples[k + 1].push(t.elapsed());
                lasts[k] = Some(e);
            }
        }
    }
    println!(
        "## Durable append latency (8-item plan_write, {} bytes), {rounds} rounds x {per_round} each, interleaved\n",
        bytes.len()
    );
    println!("| contender | p50 (µs) | p99 (µs) | p50 / raw floor |");
    println!("|---|---:|---:|---:|");
    let mut floor = 0.0;
    for (name, v) in [
        "raw write + fdatasync (floor)",
        "planlog `RedbLog::append`",
        "planlog `PgLog::append` (one transaction, synchronous commit)",
    ]
    .into_iter()
    .zip(samples.iter_mut())
    {
        v.sort();
        let (p50, p99) = (us(pct(v, 0.5)), us(pct(v, 0.99)));
        if floor == 0.0 {
            floor = p50;
        }
        println!("| {name} | {p50:.0} | {p99:.0} | {:.2}x |", p50 / floor);
    }
    println!();
}

/// Appends/s from `writers` threads of this process, each on its own session of `log`.
fn threads(log: Arc<dyn EventLog>, writers: usize, per: usize, tag: &str) -> f64 {
    let barrier = Arc::new(Barrier::new(writers + 1));
    let handles: Vec<_> = (0..writers)
        .map(|k| {
            let (log, barrier) = (Arc::clone(&log), Arc::clone(&barrier));
            let s = sid(&format!("{tag}-{k}"));
            std::thread::spawn(move || {
                let mut last = log.last(&s).unwrap();
                barrier.wait();
                for _ in 0..per {
                    let e = next_event(&s, last.as_ref());
                    log.append(&e).unwrap();
                    last = Some(e);
                }
            })
        })
        .collect();
    barrier.wait();
    let t = Instant::now();
    for h in handles {
        h.join().unwrap();
    }
    (writers * per) as f64 / t.elapsed().as_secs_f64()
}

/// Appends/s from `writers` processes, each on its own session of `store`, released at once
/// (their start and open are not timed).
fn processes(store: &str, writers: usize, per: usize, tag: &str) -> f64 {
    let exe = std::env::current_exe().unwrap();
    let mut children: Vec<_> = (0..writers)
        .map(|k| {
            let mut c = Command::new(&exe)
                .args(["--writer", store, &format!("{tag}-{k}"), &per.to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut line = String::new();
            std::io::BufReader::new(c.stdout.as_mut().unwrap())
                .read_line(&mut line)
                .unwrap();
            assert_eq!(line.trim(), "ready");
            c
        })
        .collect();
    let t = Instant::now();
    for c in &mut children {
        writeln!(c.stdin.as_mut().unwrap()).unwrap();
    }
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    (writers * per) as f64 / t.elapsed().as_secs_f64()
}

/// Throughput from 1, 8 and 64 writers, threads and processes, redb and PostgreSQL.
fn throughput(redb: &str, pg: &str, total: usize) {
    println!(
        "## Append throughput by concurrent writers ({total} durable appends per case, each writer its own session)\n"
    );
    println!(
        "| writers | redb threads | PostgreSQL threads | redb processes | PostgreSQL processes |"
    );
    println!("|---:|---:|---:|---:|---:|");
    let redb_log: Arc<dyn EventLog> = Arc::new(RedbLog::open(redb).unwrap());
    let pg_log: Arc<dyn EventLog> = Arc::new(PgLog::open(pg).unwrap());
    let mut base = [0.0f64; 4];
    for writers in [1usize, 8, 64] {
        let per = total / writers;
        let rates = [
            threads(Arc::clone(&redb_log), writers, per, &format!("t{writers}")),
            threads(Arc::clone(&pg_log), writers, per, &format!("t{writers}")),
            processes(redb, writers, per, &format!("p{writers}")),
            processes(pg, writers, per, &format!("p{writers}")),
        ];
        if writers == 1 {
            base = rates;
        }
        let cells: Vec<String> = rates
            .iter()
            .zip(base)
            .map(|(r, b)| format!("{r:.0}/s ({:.1}x)", r / b))
            .collect();
        println!("| {writers} | {} |", cells.join(" | "));
    }
    println!("\n(In brackets: against one writer of the same kind.)\n");
}

/// State at a random seq on a 10-event and a `long_len`-event session, both stores.
fn reads(redb: &str, pg: &str, long_len: u64) {
    println!("## State at a seq: 10 vs {long_len} events\n");
    println!("| store | build (s) | 10 events p50 (µs) | {long_len} events p50 (µs) | ratio |");
    println!("|---|---:|---:|---:|---:|");
    let stores: [(&str, Box<dyn EventLog>); 2] = [
        ("redb", Box::new(RedbLog::open(redb).unwrap())),
        ("PostgreSQL", Box::new(PgLog::open(pg).unwrap())),
    ];
    for (name, log) in &stores {
        let (short, long) = (sid("short"), sid("long"));
        let t = Instant::now();
        for (s, len) in [(&short, 10u64), (&long, long_len)] {
            build_session(&**log, s, len);
        }
        let build = t.elapsed();
        let mut rand = seeded_rand();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..2000 {
            for (s, len, out) in [(&short, 10u64, &mut a), (&long, long_len, &mut b)] {
                let seq = Seq::new(rand(len)).unwrap();
                let t = Instant::now();
                log.state_at(s, seq).unwrap();
                out.push(t.elapsed());
            }
        }
        a.sort();
        b.sort();
        let (pa, pb) = (us(pct(&a, 0.5)), us(pct(&b, 0.5)));
        println!(
            "| {name} | {:.1} | {pa:.1} | {pb:.1} | {:.2}x |",
            build.as_secs_f64(),
            pb / pa
        );
    }
    println!();
}
