//! Crash tests: a child process works on a store in a loop and reports each acknowledged
//! operation on a pipe; the parent kills it with SIGKILL at random moments and reopens the
//! store. Every acknowledged event must be present, each log a contiguous prefix with an
//! intact hash chain, every acknowledged fork present, every acknowledged delete gone, every
//! import all-or-nothing, and nothing may panic.
//!
//! `PLANLOG_CRASH_KILLS` sets the number of kills per test (default 50; the documented long run
//! uses 500), `PLANLOG_CRASH_SEED` the random seed (printed on every run).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use planlog_core::testkit::{assert_chain, sid};
use planlog_core::{EventLog, Seq, events::Event};
use planlog_store::StoreAddress;

/// xorshift64*: enough randomness for kill timing, reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[derive(Default)]
struct Acked {
    /// Highest acknowledged seq and its hash, per appended session.
    appends: HashMap<String, (u64, String)>,
    forks: HashMap<String, String>,
    deleted: HashSet<String>,
    /// Deletes announced but maybe not done when the child died.
    deleting: HashSet<String>,
    imports: Vec<(String, String)>,
    total: u64,
}

/// Kills a child working on `store` (a path or URL; `None`: a fresh redb file) again and again.
fn kill_loop(mixed: bool, store: Option<&str>) -> Acked {
    let kills = env_or("PLANLOG_CRASH_KILLS", 50);
    let seed = env_or(
        "PLANLOG_CRASH_SEED",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            | 1,
    );
    eprintln!(
        "crash test{}: {kills} kills, PLANLOG_CRASH_SEED={seed}",
        if mixed {
            " (forks, deletes, imports)"
        } else {
            ""
        }
    );
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("planlog.redb");
    let store = store.map_or_else(|| file.display().to_string(), str::to_owned);
    let address = StoreAddress::parse(&store).unwrap();
    let mut acked = Acked::default();
    let mut verified: HashMap<String, Event> = HashMap::new();
    let started = Instant::now();
    for kill in 0..kills {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_crash_child"));
        cmd.arg(&store).arg("4");
        if mixed {
            cmd.arg("mixed").arg(kill.to_string());
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        std::thread::sleep(Duration::from_millis(rng.next() % 80 + 2));
        child.kill().unwrap(); // SIGKILL on Unix
        let status = child.wait().unwrap();
        reader.join().unwrap();
        for line in rx.try_iter() {
            acked.total += 1;
            let parts: Vec<&str> = line.split(' ').collect();
            match parts[0] {
                "append" => {
                    let seq: u64 = parts[2].parse().unwrap();
                    let entry = acked
                        .appends
                        .entry(parts[1].to_owned())
                        .or_insert((0, String::new()));
                    if seq > entry.0 {
                        *entry = (seq, parts[3].to_owned());
                    }
                }
                "fork" => {
                    acked.forks.insert(parts[1].to_owned(), parts[2].to_owned());
                }
                "deleting" => {
                    acked.deleting.insert(parts[1].to_owned());
                }
                "delete" => {
                    acked.deleted.insert(parts[1].to_owned());
                }
                "import" => acked
                    .imports
                    .push((parts[1].to_owned(), parts[2].to_owned())),
                other => panic!("unknown report {other}"),
            }
        }
        let mut stderr = String::new();
        if let Some(mut e) = child.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut stderr).unwrap();
        }
        assert!(
            !stderr.contains("panicked"),
            "kill {kill}: the child panicked: {stderr}"
        );
        assert!(
            status.code().is_none(),
            "kill {kill}: the child exited by itself: {status}; {stderr}"
        );
        let log = address
            .open()
            .unwrap_or_else(|e| panic!("kill {kill} (seed {seed}): reopen failed: {e}"));
        check_appends(&*log, &acked, &mut verified, kill, seed);
        if mixed {
            check_mixed(&*log, &acked, &format!("-{kill}-"), kill, seed);
        }
    }
    let log = address.open().unwrap();
    if mixed {
        // Everything acknowledged in any run is still as acknowledged at the end.
        check_mixed(&*log, &acked, "-", kills, seed);
    }
    for s in acked.appends.keys() {
        assert_chain(&log.read(&sid(s), Seq::FIRST, None).unwrap());
    }
    eprintln!(
        "crash test{}: {kills} kills in {:.1}s, {} acknowledged operations ({} forks, {} deletes, {} imports), none lost",
        if mixed { " (mixed)" } else { "" },
        started.elapsed().as_secs_f64(),
        acked.total,
        acked.forks.len(),
        acked.deleted.len(),
        acked.imports.len()
    );
    assert!(
        acked.total > 0,
        "the child never acknowledged anything: the test tested nothing"
    );
    acked
}

/// Every acknowledged append is there; only events since the last check are re-read.
fn check_appends(
    log: &dyn EventLog,
    acked: &Acked,
    verified: &mut HashMap<String, Event>,
    kill: u64,
    seed: u64,
) {
    for (s, (seq, hash)) in &acked.appends {
        let from = verified.get(s).map_or(Seq::FIRST, |e| e.seq);
        let mut fresh = log.read(&sid(s), from, None).unwrap();
        let mut prev = verified.get(s).cloned();
        if let Some(v) = &prev {
            assert_eq!(
                fresh.first(),
                Some(v),
                "kill {kill}: an earlier event of {s} changed or vanished"
            );
            fresh.remove(0);
        }
        for e in &fresh {
            assert_eq!(
                e.seq.get(),
                prev.as_ref().map_or(1, |p| p.seq.get() + 1),
                "kill {kill}: seqs contiguous in {s}"
            );
            assert_eq!(
                e.prev,
                prev.as_ref().map(|p| p.hash),
                "kill {kill}: chain intact in {s}"
            );
            prev = Some(e.clone());
        }
        let last = prev.unwrap_or_else(|| {
            panic!("kill {kill} (seed {seed}): {s} acked seq {seq} but has no events")
        });
        assert!(
            last.seq.get() >= *seq,
            "kill {kill} (seed {seed}): {s} acked seq {seq} but only {} stored",
            last.seq
        );
        let at = log
            .read(
                &sid(s),
                Seq::new(*seq).unwrap(),
                Some(Seq::new(*seq).unwrap()),
            )
            .unwrap();
        assert_eq!(&at[0].hash.to_string(), hash, "acked event stored as acked");
        verified.insert(s.clone(), last);
    }
}

/// Checks the forks, deletes and imports whose ids start with `scope` (`-<kill>-` for the run
/// just killed; `-` for all of them at the end), so long runs stay linear.
fn check_mixed(log: &dyn EventLog, acked: &Acked, scope: &str, kill: u64, seed: u64) {
    let mine = |id: &str| id.contains(scope);
    for (id, hash) in acked.forks.iter().filter(|(id, _)| mine(id)) {
        let first = log.read(&sid(id), Seq::FIRST, Some(Seq::FIRST));
        if acked.deleted.contains(id) {
            assert!(
                log.session(&sid(id)).unwrap().is_none(),
                "kill {kill} (seed {seed}): deleted fork {id} is back"
            );
        } else if acked.deleting.contains(id) && log.session(&sid(id)).unwrap().is_none() {
            // Its delete was under way when the child died: gone is as right as present.
        } else {
            let first = first.unwrap_or_else(|e| {
                panic!("kill {kill} (seed {seed}): acked fork {id} missing: {e}")
            });
            assert_eq!(first[0].hash.to_string(), *hash);
        }
    }
    for (a, b) in acked.imports.iter().filter(|(a, _)| mine(a)) {
        for id in [a, b] {
            let events = log
                .read(&sid(id), Seq::FIRST, None)
                .unwrap_or_else(|e| panic!("kill {kill}: acked import {id} missing: {e}"));
            assert_eq!(events.len(), 20);
        }
    }
    // Unacknowledged imports are all or nothing too.
    let sessions: HashSet<String> = log
        .sessions()
        .unwrap()
        .into_iter()
        .map(|i| i.id.to_string())
        .collect();
    for s in sessions
        .iter()
        .filter(|s| s.starts_with("imp-") && s.ends_with("-a") && mine(s))
    {
        let pair = format!("{}-b", s.trim_end_matches("-a"));
        assert!(
            sessions.contains(&pair),
            "kill {kill} (seed {seed}): half an import: {s} without {pair}"
        );
        assert_eq!(log.read(&sid(s), Seq::FIRST, None).unwrap().len(), 20);
        assert_eq!(log.read(&sid(&pair), Seq::FIRST, None).unwrap().len(), 20);
    }
}

#[test]
fn sigkill_at_random_moments_loses_no_acknowledged_append() {
    kill_loop(false, None);
}

#[test]
fn sigkill_on_postgres_loses_no_acknowledged_append() {
    let Some(pg) = planlog_tests::TempPg::new() else {
        return;
    };
    kill_loop(false, Some(&pg.url));
}

#[test]
fn sigkill_on_postgres_during_forks_deletes_and_imports_loses_nothing_and_splits_nothing() {
    let Some(pg) = planlog_tests::TempPg::new() else {
        return;
    };
    let acked = kill_loop(true, Some(&pg.url));
    assert!(
        !acked.forks.is_empty() && !acked.imports.is_empty(),
        "the mixed worker acknowledged no fork or import"
    );
}

#[test]
fn sigkill_during_forks_deletes_and_imports_loses_nothing_and_splits_nothing() {
    let acked = kill_loop(true, None);
    assert!(
        !acked.forks.is_empty() && !acked.imports.is_empty(),
        "the mixed worker acknowledged no fork or import"
    );
}
