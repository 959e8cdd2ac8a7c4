//! The journaled store (journal + redb index) against the physical floor and against the
//! redb store, side by side in one run (issue 26's store targets):
//!
//! - the floor: the typical event's bytes (an 8-item plan_write, ~1,970 bytes) written to a
//!   file and `fdatasync`ed, one after another;
//! - `JournaledLog::append` of the typical event (indexed on its thread, the default) and
//!   `RedbLog::append`, one after another, in turn with the floor (p50, p99);
//! - 64 sessions appended at once by 64 threads of one process, against one session, and
//!   the same against a bare probe of the machine (the callers' sealing and a minimal group
//!   commit to a plain file: what 2 cores allow this workload without any store);
//! - 8 processes appending at once, each to a session of its own, against one process, and
//!   the same against a bare probe (each process seals the typical event, takes a `flock`,
//!   writes, lets go and syncs: the journal's shape across processes with no store).
//!
//! The probes write over zeros kept past the end of their file, as the journal does (an
//! append that grows a file makes its `fdatasync` write the inode too), so that each is the
//! journal's physical shape with the store taken away.
//!
//! `cargo bench -p planlog-store --bench journaled` (release; `PLANLOG_BENCH_DIR` picks the
//! disk; `PLANLOG_JOURNALED_ONLY=N` runs N sessions of one process alone, for a profiler;
//! `PLANLOG_JOURNALED_ONLY=processes8` runs 8 processes against one, and the bare probe's
//! the same, 5 rounds in turns).
//! Numbers are this machine's; the ratios are what the targets speak of.

#![allow(clippy::unwrap_used, clippy::expect_used)] // benchmark code: a failure ends the run

use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use planlog_core::log::Appended;
use planlog_core::{EventLog, SessionId};
use planlog_store::journal::zeros_kept_to;
use planlog_store::{JournaledLog, RedbLog};

mod common;
use common::{next_event, next_sealed, pct};

/// The allocator the `planlog` binary ships, whose servers and hooks these processes stand
/// for (glibc's malloc cost the 8-process case ~8 µs of CPU an append more:
/// BENCHMARKS.md § "A stat before each append").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CHILD: &str = "PLANLOG_JOURNALED_BENCH_CHILD";
const N: usize = 400;
/// `PLANLOG_JOURNALED_ONLY=64` runs one case alone (64 sessions of one process, 5 s; `probe64`
/// the bare probe with 64 threads; `processes8` 8 processes against one, and the bare
/// probe's, 5 rounds): what a profiler, or a side-by-side comparison, is pointed at.
const ONLY: &str = "PLANLOG_JOURNALED_ONLY";

/// Appends for `secs` seconds from this process, `threads` sessions at once: how many.
fn appends_for(path: &Path, threads: usize, secs: f64, tag: &str) -> usize {
    let log = JournaledLog::open(path).expect("open");
    let until = Instant::now() + Duration::from_secs_f64(secs);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let log = &log;
                s.spawn(move || {
                    let session = SessionId::new(format!("{tag}-{t}")).expect("id");
                    let mut last = None;
                    let mut n = 0;
                    while Instant::now() < until {
                        let e = next_sealed(&session, last.as_deref());
                        last = Some(match log.append_sealed(e).expect("append") {
                            Appended::Stored(e) | Appended::Duplicate(e) => e,
                        });
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
    })
}

/// Writes `bytes` at `at` in `file` as the journal does: when they reach past the zeros
/// kept beyond the end (`allocated`), zeros to where the journal keeps them
/// ([`zeros_kept_to`]) go in the same write, so that most appends overwrite zeros and their
/// `fdatasync` writes no inode.
fn write_over_zeros(file: &std::fs::File, bytes: &[u8], at: u64, allocated: &mut u64) {
    let end = at + bytes.len() as u64;
    if end <= *allocated {
        file.write_all_at(bytes, at).expect("write");
        return;
    }
    let to = zeros_kept_to(end);
    let mut padded = bytes.to_vec();
    padded.resize(bytes.len() + usize::try_from(to - end).expect("a step"), 0);
    file.write_all_at(&padded, at).expect("write");
    *allocated = to;
}

/// The bare probe of what this machine allows the 64-session case: `threads` threads seal
/// the typical event as the store's callers do and append its bytes to a plain file, one
/// write (over zeros kept past the end, as the journal's: [`write_over_zeros`]) and one
/// `fdatasync` per group of waiting appends (a minimal group commit, no store: no checks,
/// no index, no locks between processes). Appends per second.
fn probe_rate(path: &Path, threads: usize, secs: f64) -> f64 {
    use std::sync::{Condvar, Mutex};
    struct Queue {
        pending: Vec<u8>,
        queued: u64,
        synced: u64,
        leading: bool,
        at: u64,
        allocated: u64,
    }
    let file = std::fs::File::create(path).expect("probe file");
    let queue = Mutex::new(Queue {
        pending: Vec::new(),
        queued: 0,
        synced: 0,
        leading: false,
        at: 0,
        allocated: 0,
    });
    let done = Condvar::new();
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let total: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (file, queue, done) = (&file, &queue, &done);
                s.spawn(move || {
                    let session = SessionId::new(format!("probe-{t}")).expect("id");
                    let (mut last, mut n) = (None, 0);
                    while Instant::now() < until {
                        let (e, bytes) = next_sealed(&session, last.as_ref()).into_parts();
                        let mut q = queue.lock().expect("queue");
                        q.pending.extend_from_slice(&bytes);
                        q.queued += 1;
                        let mine = q.queued;
                        while q.synced < mine {
                            if q.leading {
                                q = done.wait(q).expect("queue");
                                continue;
                            }
                            q.leading = true;
                            let batch = std::mem::take(&mut q.pending);
                            let (upto, at, mut allocated) = (q.queued, q.at, q.allocated);
                            q.at += batch.len() as u64;
                            drop(q);
                            // Only the leader writes: `allocated` is the leader's to move.
                            write_over_zeros(file, &batch, at, &mut allocated);
                            file.sync_data().expect("sync");
                            q = queue.lock().expect("queue");
                            q.allocated = allocated;
                            q.synced = upto;
                            q.leading = false;
                            done.notify_all();
                        }
                        drop(q);
                        last = Some(e);
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
    });
    total as f64 / secs
}

/// The bare probe of what this machine allows the 8-process case, one process of it: for
/// `secs` seconds, seal the typical event as the store's callers do, take an exclusive
/// `flock` on the file at `path`, write the event's bytes at its end (over zeros kept past
/// it, as the journal's: [`write_over_zeros`]), let go, `fdatasync` (the journal's shape
/// across processes, without a store: no checks, no catch-up, no frames, no index). Where
/// the bytes end is kept in `<path>.end`, read and written under the lock and never synced
/// (the journal finds its end by reading its frames). How many appends.
fn probe_appends_for(path: &Path, secs: f64, tag: &str) -> usize {
    use std::io::Seek as _;
    let open = |path: &Path| {
        std::fs::File::options()
            .create(true)
            .read(true)
            .write(true)
            .truncate(false)
            .open(path)
            .expect("probe file")
    };
    let file = open(path);
    let mut end_path = path.as_os_str().to_owned();
    end_path.push(".end");
    let ends = open(Path::new(&end_path));
    let session = SessionId::new(format!("{PROBE}-{tag}")).expect("id");
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let (mut last, mut n) = (None, 0);
    while Instant::now() < until {
        let (e, bytes) = next_sealed(&session, last.as_ref()).into_parts();
        file.lock().expect("lock");
        let mut end = [0u8; 8];
        let known = ends.read_at(&mut end, 0).expect("end") == end.len();
        let at = if known { u64::from_le_bytes(end) } else { 0 };
        // The file's length by `lseek`, not `stat` (a `stat` makes the next write dirty
        // the inode: `FileStorage::size`).
        let mut allocated = (&file).seek(std::io::SeekFrom::End(0)).expect("length");
        write_over_zeros(&file, &bytes, at, &mut allocated);
        let after = at + bytes.len() as u64;
        ends.write_all_at(&after.to_le_bytes(), 0).expect("end");
        file.unlock().expect("unlock");
        file.sync_data().expect("sync");
        last = Some(e);
        n += 1;
    }
    n
}

/// A child process appending to the store ([`appends_for`], one session).
const STORE: &str = "store";
/// A child process of the bare probe ([`probe_appends_for`]).
const PROBE: &str = "probe";

/// `processes` child processes of `kind` ([`STORE`] or [`PROBE`]) appending for `secs`
/// seconds at once, each to a session of its own: appends per second in all.
fn processes_rate(path: &Path, processes: usize, secs: f64, kind: &str) -> f64 {
    let children: Vec<_> = (0..processes)
        .map(|p| {
            Command::new(std::env::current_exe().expect("exe"))
                .env(CHILD, format!("{} {secs} {kind} p{p}", path.display()))
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
        let mut words = spec.split(' ');
        let (path, secs, kind, tag) = (
            Path::new(words.next().expect("path")),
            words.next().expect("secs").parse().expect("secs"),
            words.next().expect("kind"),
            words.next().expect("tag"),
        );
        let n = match kind {
            PROBE => probe_appends_for(path, secs, tag),
            STORE => appends_for(path, 1, secs, tag),
            other => panic!("a child of an unknown kind: {other}"),
        };
        let _ = writeln!(std::io::stdout(), "{n}");
        return;
    }
    if let Ok(threads) = std::env::var(ONLY) {
        // One case alone, for a profiler: `threads` sessions of one process for 5 s.
        let dir = tempfile::tempdir_in(
            std::env::var_os("PLANLOG_BENCH_DIR").unwrap_or_else(|| ".".into()),
        )
        .expect("tempdir");
        if let Some(processes) = threads.strip_prefix("processes") {
            // `processesN`: N processes against one, 5 rounds of 2 s each, in turns.
            let processes = processes.parse().expect("processes and a number");
            for k in 0..5 {
                let at = |name: String| dir.path().join(name);
                let one = processes_rate(&at(format!("one-{k}.redb")), 1, 2.0, STORE);
                let many = processes_rate(&at(format!("many-{k}.redb")), processes, 2.0, STORE);
                let probe1 = processes_rate(&at(format!("po-{k}")), 1, 2.0, PROBE);
                let probes = processes_rate(&at(format!("pm-{k}")), processes, 2.0, PROBE);
                println!(
                    "{processes} processes {many:.0} appends/s, one {one:.0}: {:.2} x; bare probe {probes:.0}, one {probe1:.0}: {:.2} x",
                    many / one,
                    probes / probe1
                );
            }
            return;
        }
        if let Some(threads) = threads.strip_prefix("probe") {
            let threads = threads.parse().expect("probe and a number of threads");
            let rate = probe_rate(&dir.path().join("probe"), threads, 5.0);
            println!("bare probe, {threads} threads: {rate:.0} appends/s");
            return;
        }
        let threads = threads.parse().expect("a number of sessions");
        let n = appends_for(&dir.path().join("only.redb"), threads, 5.0, "only");
        println!("{threads} sessions: {:.0} appends/s", n as f64 / 5.0);
        return;
    }
    let dir =
        tempfile::tempdir_in(std::env::var_os("PLANLOG_BENCH_DIR").unwrap_or_else(|| ".".into()))
            .expect("tempdir");
    let raw = std::fs::File::create(dir.path().join("raw")).expect("raw");
    let journaled = JournaledLog::open(dir.path().join("journaled.redb")).expect("open");
    let redb = RedbLog::open(dir.path().join("redb.redb")).expect("open");
    let (sj, sr) = (
        SessionId::new("journaled").expect("id"),
        SessionId::new("redb").expect("id"),
    );
    let (mut lj, mut lr) = (None, None);
    let (mut floor, mut tj, mut tr) = (Vec::new(), Vec::new(), Vec::new());
    let mut at = 0u64;
    let mut bytes = 0usize;
    for _ in 0..N {
        let ej = next_event(&sj, lj.as_ref());
        let er = next_event(&sr, lr.as_ref());
        let raw_bytes = ej.encode();
        bytes += raw_bytes.len();
        let t = Instant::now();
        raw.write_all_at(&raw_bytes, at).expect("write");
        raw.sync_data().expect("sync");
        floor.push(t.elapsed());
        at += raw_bytes.len() as u64;
        let t = Instant::now();
        journaled.append(&ej).expect("append");
        tj.push(t.elapsed());
        let t = Instant::now();
        redb.append(&er).expect("append");
        tr.push(t.elapsed());
        lj = Some(ej);
        lr = Some(er);
    }
    for v in [&mut floor, &mut tj, &mut tr] {
        v.sort();
    }
    let (f50, f99) = (pct(&floor, 0.5), pct(&floor, 0.99));
    println!(
        "floor ({} bytes + fdatasync): p50 {f50:?}, p99 {f99:?}",
        bytes / N
    );
    for (name, t) in [("JournaledLog::append", &tj), ("RedbLog::append", &tr)] {
        let (p50, p99) = (pct(t, 0.5), pct(t, 0.99));
        println!(
            "{name}: p50 {p50:?} ({:.2} x the floor), p99 {p99:?} ({:.2} x the floor's p99)",
            p50.as_secs_f64() / f50.as_secs_f64(),
            p99.as_secs_f64() / f99.as_secs_f64()
        );
    }
    drop(journaled);
    drop(redb);
    let secs = 2.0;
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (mut sessions, mut processes, mut probes) = (Vec::new(), Vec::new(), Vec::new());
    let mut process_probes = Vec::new();
    for k in 0..3 {
        let p1 = probe_rate(&dir.path().join(format!("probe1-{k}")), 1, secs);
        let p64 = probe_rate(&dir.path().join(format!("probe64-{k}")), 64, secs);
        println!("  bare probe: 64 threads {p64:.0} appends/s, one {p1:.0}");
        probes.push(p64 / p1);
        let one =
            appends_for(&dir.path().join(format!("s1-{k}.redb")), 1, secs, "one") as f64 / secs;
        let many =
            appends_for(&dir.path().join(format!("s64-{k}.redb")), 64, secs, "many") as f64 / secs;
        println!("  64 sessions {many:.0} appends/s, one {one:.0}");
        sessions.push(many / one);
        let p1 = processes_rate(&dir.path().join(format!("p1-{k}.redb")), 1, secs, STORE);
        let p8 = processes_rate(&dir.path().join(format!("p8-{k}.redb")), 8, secs, STORE);
        println!("  8 processes {p8:.0} appends/s, one {p1:.0}");
        processes.push(p8 / p1);
        let b1 = processes_rate(&dir.path().join(format!("pp1-{k}")), 1, secs, PROBE);
        let b8 = processes_rate(&dir.path().join(format!("pp8-{k}")), 8, secs, PROBE);
        println!("  bare probe: 8 processes {b8:.0} appends/s, one {b1:.0}");
        process_probes.push(b8 / b1);
    }
    println!(
        "64 sessions in one process: {:.1} x one session (the bare probe: {:.1} x); 8 processes: {:.1} x one process (the bare probe: {:.1} x); medians of 3",
        median(sessions),
        median(probes),
        median(processes),
        median(process_probes)
    );
}
