//! Transcript import from arbitrary bytes: every importer (Claude Code, Codex, opencode,
//! Gemini, planlog's own export) and the format detection never panic, and whatever imports
//! yields whole, valid logs whose plans are the fold of their events; an import that fails
//! writes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planlog_core::testkit::assert_chain;
use planlog_core::{EventLog, MemoryLog, Seq, TestEnv};
use planlog_import::{self as import, SourceFormat, ImportOptions, Input};

fuzz_target!(|data: &[u8]| {
    let _ = import::detect_bytes(data);
    for format in [SourceFormat::ClaudeCode, SourceFormat::Codex, SourceFormat::Opencode, SourceFormat::Gemini, SourceFormat::Planlog] {
        // Skipping bad lines changes nothing when the strict import took every line: the
        // lenient one runs only after a refusal.
        for skip_bad_lines in [false, true] {
            let log = MemoryLog::new();
            let env = TestEnv::default();
            let input = Input::Bytes { name: "fuzz.jsonl", bytes: data };
            match import::import(&log, &env, format, input, ImportOptions { skip_bad_lines, ..ImportOptions::default() }) {
                Ok(report) => {
                    for s in report.sessions {
                        let events = log.read(&s.id, Seq::FIRST, None).expect("imported session reads");
                        assert_chain(&events);
                    }
                    break;
                }
                Err(_) => assert!(log.sessions().expect("sessions list").is_empty(), "a failed import wrote nothing"),
            }
        }
    }
});
