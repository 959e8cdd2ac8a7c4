//! Writes a large Claude Code transcript for import measurements (BENCHMARKS.md § Limits):
//! CALLS TodoWrite calls, every call followed by its result line.
//!
//! Usage: `make_transcript FILE CALLS [varied] [SEED]`
//!
//! - Plain: 8 items with the same texts in every call.
//! - `varied` (BENCHMARKS.md § One million events): plans of 6 to 12 items with texts of their
//!   own, worked through one step per call; every 97th plan completes two pending items in one
//!   call (a flagged bulk completion), every 331st call gets an error result (a refusal), every
//!   5,000th call is followed by a compaction; a title and a prompt; time moves on 20 s a call.
#![allow(clippy::unwrap_used, clippy::expect_used)] // measurement tool

use std::io::Write;

use serde_json::{Value, json};

const WORDS: &[&str] = &[
    "parser",
    "index",
    "schema",
    "migration",
    "cache",
    "viewer",
    "scrubber",
    "journal",
    "segment",
    "checksum",
    "fixture",
    "benchmark",
    "timeline",
    "search",
    "export",
    "hook",
    "session",
    "replay",
    "fork",
    "compaction",
    "lifeline",
    "summary",
    "minimap",
    "refusal",
];

fn main() {
    let mut args = std::env::args().skip(1);
    let file = args
        .next()
        .expect("usage: make_transcript FILE CALLS [varied] [SEED]");
    let calls: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let varied = args.next().as_deref() == Some("varied");
    let seed: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    let sid = format!("be4c4be4-0000-4000-8000-{seed:012}");
    let mut out = std::io::BufWriter::new(std::fs::File::create(file).unwrap());
    let base = 1_793_491_200 + seed * 3_600; // 2026-11-01T00:00:00Z, an hour a seed
    let stamp = |c: usize| rfc3339(base + 20 * c as u64);
    if varied {
        writeln!(out, "{}", json!({"type":"custom-title","customTitle":format!("Long session {seed}: the million-event plan"),"sessionId":sid})).unwrap();
        writeln!(out, "{}", json!({"type":"user","uuid":"p0","parentUuid":null,"sessionId":sid,"timestamp":stamp(0),"isSidechain":false,"cwd":"/work/project","gitBranch":"main","version":"2.1.332","message":{"role":"user","content":"Build the whole thing, one plan at a time."}})).unwrap();
    }
    let mut plan_no = 0usize;
    let mut step = 0usize; // steps taken in the current plan
    let mut len = 8usize;
    for c in 0..calls {
        let id = format!("toolu_{c:08}");
        let at = stamp(c);
        let todos: Vec<Value> = if varied {
            // A plan of `len` items takes 2 * len steps: start one, finish it.
            if step >= 2 * len {
                plan_no += 1;
                step = 0;
                len = 6 + (plan_no * 7) % 7;
            }
            let done = step / 2;
            let bulk = plan_no.is_multiple_of(97) && step == 2;
            let todos = (0..len)
                .map(|i| {
                    let status = if i < done || (bulk && (i == done || i == done + 1)) {
                        "completed"
                    } else if i == done && step % 2 == 1 {
                        "in_progress"
                    } else {
                        "pending"
                    };
                    let w = WORDS[(plan_no * 5 + i * 3) % WORDS.len()];
                    json!({"content": format!("Plan {plan_no} step {i}: rework the {w} for case {}", (plan_no * 31 + i) % 1000), "status": status, "activeForm": format!("Reworking the {w}")})
                })
                .collect();
            step += if bulk { 4 } else { 1 };
            todos
        } else {
            (0..8)
                .map(|i| {
                    let status = if i < c % 9 { "completed" } else { "pending" };
                    json!({"content": format!("Implement part {i} of the feature, the way the spec says"), "status": status, "activeForm": format!("Implementing part {i}")})
                })
                .collect()
        };
        writeln!(out, "{}", json!({"type":"assistant","uuid":format!("a{c}"),"parentUuid":format!("r{}", c.saturating_sub(1)),"sessionId":sid,"timestamp":at,"isSidechain":false,"message":{"role":"assistant","id":format!("msg_{c}"),"content":[{"type":"tool_use","id":id,"name":"TodoWrite","input":{"todos":todos}}]}})).unwrap();
        if varied && c % 331 == 330 {
            writeln!(out, "{}", json!({"type":"user","uuid":format!("r{c}"),"parentUuid":format!("a{c}"),"sessionId":sid,"timestamp":at,"isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":id,"is_error":true,"content":format!("<tool_use_error>InputValidationError: call {c} was refused</tool_use_error>")}]},"toolUseResult":"Error: InputValidationError"})).unwrap();
        } else {
            writeln!(out, "{}", json!({"type":"user","uuid":format!("r{c}"),"parentUuid":format!("a{c}"),"sessionId":sid,"timestamp":at,"isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":id,"content":"Todos have been modified successfully."}]},"toolUseResult":{"oldTodos":[],"newTodos":[]}})).unwrap();
        }
        if varied && c % 5000 == 4999 {
            writeln!(out, "{}", json!({"type":"system","subtype":"compact_boundary","uuid":format!("k{c}"),"parentUuid":format!("r{c}"),"sessionId":sid,"timestamp":at,"content":"Conversation compacted","compactMetadata":{"trigger":"auto","preTokens":160_000,"postTokens":12_000}})).unwrap();
        }
    }
    out.flush().unwrap();
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SS.000Z`.
fn rfc3339(secs: u64) -> String {
    planlog_core::Timestamp::from_millis(
        i64::try_from(secs).unwrap_or(i64::MAX).saturating_mul(1000),
    )
    .to_string()
}
