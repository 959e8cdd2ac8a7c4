//! The journal against the physical floor, side by side in one run (issue 26's targets):
//!
//! - the floor: a 1,000-byte append to a file and `fdatasync`, one after another;
//! - one `SharedJournal` append of a 1,000-byte record, one after another (p50 and p99);
//! - 64 threads of one process appending at once (group commit), against one thread;
//! - 8 processes appending at once (a lock for the write, the syncs outside it), against one;
//! - bytes per typical event (the store benchmark's 8-item plan_write, appended one per
//!   append as live appends are), and the journal verified without redb (`check_chains`).
//!
//! `cargo bench -p planlog-store --bench journal` (release). Numbers are this machine's; the
//! ratios are what the targets speak of.

#![allow(clippy::unwrap_used, clippy::expect_used)] // benchmark code: a failure ends the run

use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use planlog_store::journal::{SharedJournal, check_chains};

mod common;
use common::next_event;

const CHILD: &str = "PLANLOG_JOURNAL_BENCH_CHILD";
const RECORD: usize = 1_000;
const N: usize = 400;

/// A 1,000-byte record of letters that do not repeat (so compression does not shrink it and
/// the journal writes as many bytes as the floor).
fn record(i: usize) -> Vec<u8> {
    let mut r = format!("{{\"n\":{i},\"text\":\"").into_bytes();
    let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    while r.len() < RECORD - 2 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        r.push(b'a' + (x % 26) as u8);
    }
    r.extend_from_slice(b"\"}");
    r
}

fn percentile(mut d: Vec<Duration>, p: f64) -> Duration {
    d.sort();
    d[((d.len() as f64 - 1.0) * p).round() as usize]
}

/// Appends for `secs` seconds from this process: how many.
fn appends_for(path: &Path, threads: usize, secs: f64) -> usize {
    let (journal, _) = SharedJournal::open(path).expect("open");
    let until = Instant::now() + Duration::from_secs_f64(secs);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let journal = &journal;
                s.spawn(move || {
                    let mut n = 0;
                    while Instant::now() < until {
                        journal
                            .append(&[&record(t * 1_000_000 + n)])
                            .expect("append");
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
    })
}

/// `processes` processes appending for `secs` seconds at once: appends per second in all.
fn processes_rate(path: &Path, processes: usize, secs: f64) -> f64 {
    let children: Vec<_> = (0..processes)
        .map(|_| {
            Command::new(std::env::current_exe().expect("exe"))
                .env(CHILD, format!("{} {secs}", path.display()))
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    let total: usize = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().expect("wait");
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse::<usize>()
                .unwrap_or(0)
        })
        .sum();
    total as f64 / secs
}

fn main() {
    if let Ok(spec) = std::env::var(CHILD) {
        let (path, secs) = spec.split_once(' ').expect("spec");
        let n = appends_for(Path::new(path), 1, secs.parse().expect("secs"));
        let _ = writeln!(std::io::stdout(), "{n}");
        return;
    }
    let dir =
        tempfile::tempdir_in(std::env::var_os("PLANLOG_BENCH_DIR").unwrap_or_else(|| ".".into()))
            .expect("tempdir");
    // The floor and the journal, one append of each in turn, so both meet the same disk.
    let raw = std::fs::File::create(dir.path().join("raw")).expect("raw");
    let path = dir.path().join("journal");
    let (journal, _) = SharedJournal::open(&path).expect("open");
    let (mut floor, mut appends) = (Vec::new(), Vec::new());
    let mut at = 0u64;
    for i in 0..N {
        let r = record(i);
        let t = Instant::now();
        raw.write_all_at(&r, at).expect("write");
        raw.sync_data().expect("sync");
        floor.push(t.elapsed());
        at += r.len() as u64;
        let t = Instant::now();
        journal.append(&[&r]).expect("append");
        appends.push(t.elapsed());
    }
    drop(journal);
    let (f50, f99) = (percentile(floor.clone(), 0.5), percentile(floor, 0.99));
    let (a50, a99) = (percentile(appends.clone(), 0.5), percentile(appends, 0.99));
    println!("floor (1,000 bytes + fdatasync): p50 {f50:?}, p99 {f99:?}");
    println!(
        "journal append: p50 {a50:?} ({:.2} x the floor), p99 {a99:?} ({:.2} x the floor's p99)",
        a50.as_secs_f64() / f50.as_secs_f64(),
        a99.as_secs_f64() / f99.as_secs_f64()
    );
    // Bytes per typical event, and the journal checked as events and chains on its own.
    let typical = dir.path().join("typical");
    let (journal, _) = SharedJournal::open(&typical).expect("open");
    let session = planlog_core::SessionId::new("bench-session".to_owned()).expect("id");
    let (mut last, mut json) = (None, 0usize);
    let events = 20_000;
    for _ in 0..events {
        let e = next_event(&session, last.as_ref());
        let bytes = e.encode();
        json += bytes.len();
        journal.append(&[&bytes]).expect("append");
        last = Some(e);
    }
    drop(journal);
    let size = std::fs::metadata(&typical).expect("size").len();
    let (_, opened) = SharedJournal::open(&typical).expect("open");
    let t = Instant::now();
    let chains = check_chains(&opened.records).expect("chains");
    println!(
        "bytes per typical event: {} on disk (its JSON {} bytes); {} events checked as chains without redb in {:?}",
        size / events as u64,
        json / events,
        chains.events,
        t.elapsed()
    );
    // Many against one, measured in turn three times: the median ratio.
    let secs = 2.0;
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (mut threads, mut processes) = (Vec::new(), Vec::new());
    for k in 0..3 {
        let one = appends_for(&dir.path().join(format!("t1-{k}")), 1, secs) as f64 / secs;
        let many = appends_for(&dir.path().join(format!("t64-{k}")), 64, secs) as f64 / secs;
        println!("  64 threads {many:.0} appends/s, one {one:.0}");
        threads.push(many / one);
        let p1 = processes_rate(&dir.path().join(format!("p1-{k}")), 1, secs);
        let p8 = processes_rate(&dir.path().join(format!("p8-{k}")), 8, secs);
        println!("  8 processes {p8:.0} appends/s, one {p1:.0}");
        processes.push(p8 / p1);
    }
    println!(
        "64 threads in one process: {:.1} x one thread; 8 processes: {:.1} x one process (medians of 3)",
        median(threads),
        median(processes)
    );
}
