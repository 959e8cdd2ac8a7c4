//! Transcript import from arbitrary lines: parsing Claude Code and Codex files never panics,
//! and whatever imports yields whole, valid logs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planlog_core::testkit::assert_chain;
use planlog_core::{EventLog, MemoryLog, Seq, TestEnv};
use planlog_replay::import::{claude_code, codex, import_parsed};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for (source, parsed) in [("claude-code", claude_code::parse(&text)), ("codex", codex::parse(&text))] {
        let log = MemoryLog::new();
        let env = TestEnv::default();
        if let Ok(imported) = import_parsed(&log, &env, source, "fuzz.jsonl", parsed, true) {
            for id in imported.sessions {
                assert_chain(&log.read(&id, Seq::FIRST, None).expect("imported session reads"));
            }
        }
    }
});
