//! The journaled store (journal and index together) losing power at every step of a seeded
//! run of appends, batches, deletions and index catch-ups. After each acknowledged step the
//! journal is synced and the index committed, so what a power loss can leave during step
//! `k + 1` is: the journal as after step `k` plus any torn piece of step `k + 1`'s write,
//! with the index as after step `k`; or the step's write whole, with the index as after
//! step `k` or `k + 1`. Every such state opens, and reads exactly as after step `k` or step
//! `k + 1`: every acknowledged step there, no batch half visible, no index entry without
//! its record. Seeds: `PLANLOG_JOURNALED_POWER_SEEDS` (4 by default).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::path::Path;

use planlog_core::testkit::{item, seal_after, sid, started, written};
use planlog_core::{
    EventLog, PlanStatus,
    events::{Event, Origin},
};
use planlog_store::{Indexing, JournaledLog, journal_path};

mod common;
use common::everything;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The files of a store, as bytes.
struct Files {
    journal: Vec<u8>,
    index: Vec<u8>,
}

fn files(path: &Path) -> Files {
    Files {
        journal: std::fs::read(journal_path(path)).unwrap(),
        index: std::fs::read(path).unwrap(),
    }
}

/// Opens a store made of `journal` and `index` and reads everything.
fn read_crashed(journal: &[u8], index: &[u8]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    std::fs::write(journal_path(&path), journal).unwrap();
    std::fs::write(&path, index).unwrap();
    let log = JournaledLog::options()
        .indexing(Indexing::Lazy)
        .open(&path)
        .unwrap();
    everything(&log)
}

/// One step of the run.
fn step(log: &JournaledLog, rng: &mut Rng, sessions: &mut Vec<Vec<Event>>, n: u64) -> &'static str {
    let live: Vec<usize> = (0..sessions.len())
        .filter(|i| !sessions[*i].is_empty())
        .collect();
    match rng.below(10) {
        0 | 1 if !live.is_empty() => {
            log.index_now().unwrap();
            "index"
        }
        2 if !live.is_empty() => {
            let i = live[rng.below(live.len() as u64) as usize];
            log.delete(&sessions[i][0].session).unwrap();
            sessions[i].clear();
            "delete"
        }
        3 | 4 => {
            // A batch: a new session with its first writes, all or nothing.
            let s = sid(&format!("s{n}"));
            let mut events = vec![seal_after(None, &s, None, started(Origin::New))];
            for k in 0..(1 + rng.below(4)) {
                let e = seal_after(
                    events.last(),
                    &s,
                    Some(&format!("b{n}-{k}")),
                    written(vec![item(
                        "1",
                        &format!("batch step {k}"),
                        PlanStatus::InProgress,
                    )]),
                );
                events.push(e);
            }
            log.append_all(&events).unwrap();
            sessions.push(events);
            "batch"
        }
        _ if !live.is_empty() => {
            let i = live[rng.below(live.len() as u64) as usize];
            let e = seal_after(
                sessions[i].last(),
                &sessions[i][0].session.clone(),
                Some(&format!("c{n}")),
                written(vec![item(
                    "1",
                    &format!("step {n}"),
                    PlanStatus::InProgress,
                )]),
            );
            log.append(&e).unwrap();
            sessions[i].push(e);
            "append"
        }
        _ => {
            let s = sid(&format!("s{n}"));
            let e = seal_after(None, &s, None, started(Origin::New));
            log.append(&e).unwrap();
            sessions.push(vec![e]);
            "start"
        }
    }
}

#[test]
fn power_lost_at_any_step_leaves_the_state_before_or_after_it() {
    let seeds: u64 = std::env::var("PLANLOG_JOURNALED_POWER_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    let mut states_checked = 0;
    for seed in 0..seeds {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (seed + 1).wrapping_mul(0x1000_0000_01B3));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("planlog.redb");
        let log = JournaledLog::options()
            .indexing(Indexing::Lazy)
            .open(&path)
            .unwrap();
        let mut sessions = Vec::new();
        let mut before = files(&path);
        let mut seen_before = everything(&log);
        for n in 0..24 {
            let what = step(&log, &mut rng, &mut sessions, n);
            let after = files(&path);
            let seen_after = everything(&log);
            let either = |seen: &Vec<String>, how: &str| {
                assert!(
                    *seen == seen_before || *seen == seen_after,
                    "seed {seed} step {n} ({what}), {how}: neither the state before nor after"
                );
            };
            // The step's write torn anywhere (a sample of bytes, its ends included), the
            // index as before it. The journal keeps zeros past its end and overwrites them,
            // so the write is where the bytes changed (zeros added past the old file's end
            // are no change), and a torn write is its first bytes over the file as before.
            assert!(
                after.journal.len() >= before.journal.len(),
                "the journal only grows"
            );
            let changed =
                |i: usize| after.journal[i] != before.journal.get(i).copied().unwrap_or(0);
            let (old, new) = match (0..after.journal.len()).find(|&i| changed(i)) {
                Some(first) => {
                    let last = (first..after.journal.len()).rev().find(|&i| changed(i));
                    (first, last.map_or(first, |l| l + 1))
                }
                None => (0, 0),
            };
            let mut cuts = vec![
                old,
                old + 1,
                old + 8,
                (old + new) / 2,
                new.saturating_sub(1),
            ];
            for _ in 0..3 {
                cuts.push(old + rng.below((new - old + 1) as u64) as usize);
            }
            for cut in cuts.into_iter().filter(|c| *c >= old && *c < new) {
                let mut torn = after.journal[..cut].to_vec();
                torn.extend_from_slice(before.journal.get(cut..).unwrap_or_default());
                let seen = read_crashed(&torn, &before.index);
                assert_eq!(
                    seen, seen_before,
                    "seed {seed} step {n} ({what}): torn at byte {cut} of {old}..{new}"
                );
                states_checked += 1;
            }
            // The write whole, the index before or after the step.
            either(&read_crashed(&after.journal, &before.index), "old index");
            either(&read_crashed(&after.journal, &after.index), "new index");
            states_checked += 2;
            before = after;
            seen_before = seen_after;
        }
    }
    assert!(states_checked > 100 * seeds, "{states_checked} states");
}
