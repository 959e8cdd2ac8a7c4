//! `export_to` (chunk by chunk, memory flat in the session's length) writes exactly the bytes
//! `export` (the whole session in memory) does, in every format, across chunk boundaries:
//! a session of 4,500 events mixing accepted writes, refusals and reads.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::sync::Arc;

use planlog_core::{EventLog, MemoryLog, PlanSession, Seq, SessionId, TestEnv};
use planlog_export::{ExportFormat, export, export_to};
use serde_json::json;

#[test]
fn streamed_exports_equal_whole_ones_in_every_format() {
    let log = Arc::new(MemoryLog::new());
    let id = SessionId::new("long").unwrap();
    let mut s = PlanSession::builder(Arc::clone(&log), Arc::new(TestEnv::default()))
        .open(&id)
        .unwrap();
    let step = |i: &str, c: String, st: &str| json!({"id": i, "content": c, "status": st});
    for n in 0..4_500 {
        let args = match n % 4 {
            0 => {
                json!({"steps": [step("a", format!("write {n}"), "in_progress"), step("b", "b".into(), "pending")]})
            }
            1 => {
                json!({"steps": [step("a", format!("write {n}"), "completed"), step("b", "b".into(), "in_progress")]})
            }
            // A bulk completion: refused, recorded as write_rejected.
            2 => {
                json!({"steps": [step("b", "b".into(), "completed"), step("c", "c".into(), "completed"), step("d", "d".into(), "completed")]})
            }
            _ => json!({"steps": [step("b", "b".into(), "pending")]}),
        };
        let out = s.plan_write(Some(&format!("c{n}")), Some(n), &args.to_string());
        assert!(
            matches!(out.status(), planlog_core::WriteStatus::Stored(_)),
            "call {n}: {:?}",
            out.status()
        );
    }
    let info = log.session(&id).unwrap().unwrap();
    assert!(info.events > 4_000, "{} events", info.events);
    let events = log.read(&id, Seq::FIRST, None).unwrap();
    for format in [
        ExportFormat::Json,
        ExportFormat::Jsonl,
        ExportFormat::Markdown,
        ExportFormat::Html,
    ] {
        let mut streamed = String::new();
        let mut counted = 0;
        export_to(
            &*log,
            &info,
            format,
            &mut |text| {
                streamed.push_str(text);
                Ok(())
            },
            &mut |n| counted += n,
        )
        .unwrap();
        assert_eq!(counted, info.events, "{format:?}: every event counted once");
        let whole = export(&info, &events, format);
        assert!(
            streamed == whole,
            "{format:?}: streamed and whole exports differ"
        );
    }
    // A failing output stops the export with its error.
    let failed = export_to(
        &*log,
        &info,
        ExportFormat::Jsonl,
        &mut |_| Err(std::io::Error::other("disk full")),
        &mut |_| {},
    );
    assert!(matches!(
        failed,
        Err(planlog_export::ExportError::Output(_))
    ));
}
