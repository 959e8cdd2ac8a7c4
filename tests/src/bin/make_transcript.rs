//! Writes a large Claude Code transcript for import measurements (BENCHMARKS.md § Limits):
//! CALLS TodoWrite calls of 8 items each, every call followed by its result line.
//!
//! Usage: `make_transcript FILE CALLS`
#![allow(clippy::unwrap_used, clippy::expect_used)] // measurement tool

use std::io::Write;

use serde_json::{Value, json};

fn main() {
    let mut args = std::env::args().skip(1);
    let file = args.next().expect("usage: make_transcript FILE CALLS");
    let calls: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let sid = "be4c4be4-0000-4000-8000-000000000001";
    let mut out = std::io::BufWriter::new(std::fs::File::create(file).unwrap());
    for c in 0..calls {
        let todos: Vec<Value> = (0..8)
            .map(|i| {
                let status = if i < c % 9 { "completed" } else { "pending" };
                json!({"content": format!("Implement part {i} of the feature, the way the spec says"), "status": status, "activeForm": format!("Implementing part {i}")})
            })
            .collect();
        let id = format!("toolu_{c:08}");
        let at = format!(
            "2026-11-01T{:02}:{:02}:{:02}.000Z",
            (c / 3600) % 24,
            (c / 60) % 60,
            c % 60
        );
        writeln!(out, "{}", json!({"type":"assistant","uuid":format!("a{c}"),"parentUuid":format!("r{}", c.saturating_sub(1)),"sessionId":sid,"timestamp":at,"isSidechain":false,"message":{"role":"assistant","id":format!("msg_{c}"),"content":[{"type":"tool_use","id":id,"name":"TodoWrite","input":{"todos":todos}}]}})).unwrap();
        writeln!(out, "{}", json!({"type":"user","uuid":format!("r{c}"),"parentUuid":format!("a{c}"),"sessionId":sid,"timestamp":at,"isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":id,"content":"Todos have been modified successfully."}]},"toolUseResult":{"oldTodos":[],"newTodos":[]}})).unwrap();
    }
    out.flush().unwrap();
}
