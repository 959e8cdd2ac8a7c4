//! Two processes on one store: while a child process appends in a loop (an agent), this
//! process opens the same file, reads the live session and writes a session of its own (the
//! CLI forking). Nobody waits for long, nothing is lost or damaged.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use planlog_core::testkit::{assert_chain, seed, sid};
use planlog_core::{EventLog, Seq};
use planlog_store::JournaledLog;

#[test]
fn the_cli_reads_and_writes_while_an_agent_process_appends() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("planlog.redb");
    let mut agent = Command::new(env!("CARGO_BIN_EXE_crash_child"))
        .arg(&store)
        .arg("1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut acks = BufReader::new(agent.stdout.take().unwrap()).lines();
    // Wait until the agent has acknowledged a few appends.
    for _ in 0..5 {
        acks.next().unwrap().unwrap();
    }
    let live = sid("crash0");
    let mut seen = Vec::new();
    let mut open_times = Vec::new();
    for round in 0..10 {
        let t = Instant::now();
        let cli = JournaledLog::open(&store).unwrap();
        open_times.push(t.elapsed());
        let events = cli.read(&live, Seq::FIRST, None).unwrap();
        assert_chain(&events);
        seen.push(events.len());
        let last = Seq::new(events.len() as u64).unwrap();
        assert_eq!(
            cli.state_at(&live, last).unwrap(),
            planlog_core::fold(&events)
        );
        // The CLI writes too (a fork, an import): its own session, in the same file.
        let mine = sid(&format!("cli{round}"));
        let written = seed(&cli, &mine, 3);
        assert_eq!(cli.read(&mine, Seq::FIRST, None).unwrap(), written);
        drop(cli);
        std::thread::sleep(Duration::from_millis(20));
    }
    agent.kill().unwrap();
    agent.wait().unwrap();
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]),
        "the live session only grows: {seen:?}"
    );
    assert!(
        seen.last() > seen.first(),
        "the CLI saw the agent's appends as they happened: {seen:?}"
    );
    let log = JournaledLog::open(&store).unwrap();
    assert_chain(&log.read(&live, Seq::FIRST, None).unwrap());
    assert_eq!(log.sessions().unwrap().len(), 11);
    open_times.sort();
    eprintln!(
        "open while another process writes: median {:?}, max {:?}",
        open_times[5], open_times[9]
    );
}
