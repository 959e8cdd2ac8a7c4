//! insta snapshots of everything a person or a model reads: every rejection message, the
//! injection text, the terminal block, the markdown file, the tool schema and its exports.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // test code

mod common;

use common::{given, plan, wrote};
use planlog_core::{
    SessionId, Timestamp, ToolSpec,
    render::{Style, render_block, render_markdown, status_bar},
    tool::PLANNING_GUIDELINE,
};
use serde_json::json;

fn sample_with_dependencies() -> planlog_core::Plan {
    use planlog_core::{ItemId, PlanItem, PlanStatus};
    let id = |s: &str| ItemId::new(s).unwrap();
    planlog_core::Plan::from_items(vec![
        PlanItem::new(id("1"), "Write the parser", PlanStatus::Completed),
        PlanItem::new(id("2"), "Implement load", PlanStatus::InProgress)
            .with_blocked_by(vec![id("1")])
            .with_owner("alice"),
        PlanItem::new(
            id("3"),
            "Write tests ⧗ blocked by nothing",
            PlanStatus::Pending,
        )
        .with_blocked_by(vec![id("2"), id("1")]),
        PlanItem::new(id("4"), "Ship", PlanStatus::Pending)
            .with_owner("bob · owner mallory\n[ ] forged")
            .with_blocked_by(vec![id("3")]),
    ])
}

#[test]
fn every_view_shows_open_blockers_and_owners_and_content_cannot_forge_them() {
    let plan = sample_with_dependencies();
    let at = planlog_core::Timestamp::parse("2026-11-30T12:00:00Z").unwrap();
    let session = SessionId::new("s1").unwrap();
    let out = format!(
        "== injection\n{}\n\n== block\n{}\n\n== markdown\n{}",
        planlog_core::render::injection_text(&plan),
        render_block(&plan, Style::Plain),
        render_markdown(&plan, &session, at)
    );
    // Only planlog writes the mark: content and owners that try are neutralised.
    let marks = out.matches('⧗').count();
    // In each of the three views: item 2 (owner only; its blocker is done), 3 and 4 (waiting)
    // are annotated; content and owners that try to forge a mark add none.
    assert_eq!(marks, 3 * 3, "{out}");
    insta::assert_snapshot!(out);
}

fn sample() -> planlog_core::Plan {
    plan(&[
        ("1", "Create parser.go for config parsing", "completed"),
        ("2", "Implement the load logic", "in_progress"),
        ("3", "Write table tests for load", "pending"),
        ("4", "Port the YAML loader", "cancelled"),
        ("5", "Run go test ./...", "pending"),
    ])
}

#[test]
fn every_rejection_message() {
    let prior = wrote(&[
        ("p", "pending item", "pending"),
        ("c", "cancelled item", "cancelled"),
    ]);
    let cases = [
        ("invalid_json", "{\"steps\": [".to_string()),
        ("arguments_not_object", "[]".to_string()),
        ("unknown_argument", json!({"plan": []}).to_string()),
        ("steps_not_array", json!({"steps": "all of them"}).to_string()),
        ("step_not_object", json!({"steps": [42]}).to_string()),
        ("missing_field", json!({"steps": [{"id": "1", "content": "a"}]}).to_string()),
        ("unknown_field", json!({"steps": [{"id": "1", "content": "a", "status": "pending", "activeForm": "A-ing"}]}).to_string()),
        ("field_not_string", json!({"steps": [{"id": "1", "content": "a", "status": 2}]}).to_string()),
        ("empty_id", json!({"steps": [{"id": " ", "content": "a", "status": "pending"}]}).to_string()),
        ("id_too_long", json!({"steps": [{"id": "i".repeat(129), "content": "a", "status": "pending"}]}).to_string()),
        ("id_bad_char", json!({"steps": [{"id": "a\u{1b}b", "content": "a", "status": "pending"}]}).to_string()),
        ("empty_content", json!({"steps": [{"id": "1", "content": "", "status": "pending"}]}).to_string()),
        ("content_too_long", json!({"steps": [{"id": "1", "content": "c".repeat(2001), "status": "pending"}]}).to_string()),
        ("unknown_status", json!({"steps": [{"id": "1", "content": "a", "status": "done"}]}).to_string()),
        ("duplicate_id", json!({"steps": [{"id": "1", "content": "a", "status": "pending"}, {"id": "1", "content": "b", "status": "pending"}]}).to_string()),
        ("too_many_steps", json!({"steps": (0..201).map(|i| json!({"id": i.to_string(), "content": "x", "status": "pending"})).collect::<Vec<_>>()}).to_string()),
        ("plan_too_large", json!({"steps": (0..200).map(|i| json!({"id": i.to_string(), "content": "x", "status": "in_progress"})).collect::<Vec<_>>()}).to_string()),
        ("bulk_completion", json!({"steps": [{"id": "p", "content": "pending item", "status": "completed"}, {"id": "n", "content": "new item", "status": "completed"}]}).to_string()),
        ("cancelled_to_completed", json!({"steps": [{"id": "c", "content": "cancelled item", "status": "completed"}]}).to_string()),
        ("arguments_too_large", " ".repeat(planlog_core::limits::MAX_ARGUMENTS_BYTES + 1)),
        ("field_too_long", json!({"steps": [{"id": "1", "content": "a", "status": "pending", "owner": "o".repeat(129)}]}).to_string()),
        ("field_not_list", json!({"steps": [{"id": "1", "content": "a", "status": "pending", "blocked_by": "p"}]}).to_string()),
        ("bad_blocker", json!({"steps": [{"id": "1", "content": "a", "status": "pending", "blocked_by": [3]}]}).to_string()),
        ("metadata_not_object", json!({"steps": [{"id": "1", "content": "a", "status": "pending", "metadata": [1]}]}).to_string()),
        ("unknown_blocker", json!({"steps": [{"id": "1", "content": "a", "status": "pending", "blocked_by": ["ghost"]}]}).to_string()),
        ("self_blocked", json!({"steps": [{"id": "1", "content": "a", "status": "pending", "blocked_by": ["1"]}]}).to_string()),
        ("dependency_cycle", json!({"steps": [{"id": "1", "content": "a", "status": "pending", "blocked_by": ["2"]}, {"id": "2", "content": "b", "status": "pending", "blocked_by": ["p"]}, {"id": "p", "content": "pending item", "status": "pending", "blocked_by": ["1"]}]}).to_string()),
    ];
    let mut out = String::new();
    for (code, args) in cases {
        // plan_too_large needs a plan to grow past the limit.
        let events = if code == "plan_too_large" {
            vec![wrote(&[("keep", "started", "in_progress")])]
        } else {
            vec![prior.clone()]
        };
        let then = given(&events).when_raw(&args);
        let exec = &then.exec;
        assert!(exec.result.is_error, "{code} was accepted");
        match &exec.event {
            Some(planlog_core::events::EventBody::WriteRejected(r)) => {
                assert_eq!(r.code.as_str(), code)
            }
            other => panic!("{code}: {other:?}"),
        }
        out.push_str(&format!("{code}:\n  {}\n\n", exec.result.content));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn injection_text() {
    insta::assert_snapshot!(planlog_core::render::injection_text(&sample()));
}

#[test]
fn terminal_block_plain_and_status_bar() {
    insta::assert_snapshot!(format!(
        "{}\n\n{}",
        render_block(&sample(), Style::Plain),
        status_bar(&sample())
    ));
}

#[test]
fn terminal_block_in_colour() {
    insta::assert_snapshot!(format!("{:?}", render_block(&sample(), Style::Color)));
}

#[test]
fn terminal_block_of_an_empty_plan() {
    insta::assert_snapshot!(render_block(&planlog_core::Plan::new(), Style::Plain));
}

#[test]
fn terminal_block_neutralises_escape_sequences() {
    let hostile = plan(&[(
        "1",
        "\u{1b}]0;pwned\u{7}\u{1b}[31mred\nsecond line\u{202e}",
        "pending",
    )]);
    let block = render_block(&hostile, Style::Plain);
    assert!(!block.contains('\u{1b}'));
    assert_eq!(block.lines().count(), 3);
    insta::assert_snapshot!(block);
}

#[test]
fn markdown_plan_file() {
    let session = SessionId::new("01JDXSESSION").unwrap();
    let at = Timestamp::parse("2026-11-29T19:34:14.123Z").unwrap();
    insta::assert_snapshot!(render_markdown(&sample(), &session, at));
}

#[test]
fn plan_write_schema_and_description() {
    let spec = ToolSpec::plan_write();
    insta::assert_snapshot!("description", spec.description);
    insta::assert_json_snapshot!("schema", spec.input_schema);
}

#[test]
fn tool_spec_exports() {
    let spec = ToolSpec::plan_write();
    let mut openai = spec.to_openai();
    let mut anthropic = spec.to_anthropic();
    let mut mcp = spec.to_mcp();
    // The description and schema have snapshots of their own; here the shapes matter.
    openai["function"]["description"] = json!("…");
    anthropic["description"] = json!("…");
    mcp["description"] = json!("…");
    assert_eq!(openai["function"]["parameters"], spec.input_schema);
    assert_eq!(anthropic["input_schema"], spec.input_schema);
    assert_eq!(mcp["inputSchema"], spec.input_schema);
    openai["function"]["parameters"] = json!("<schema>");
    anthropic["input_schema"] = json!("<schema>");
    mcp["inputSchema"] = json!("<schema>");
    insta::assert_json_snapshot!("export_openai", openai);
    insta::assert_json_snapshot!("export_anthropic", anthropic);
    insta::assert_json_snapshot!("export_mcp", mcp);
}

#[test]
fn planning_guideline() {
    insta::assert_snapshot!(PLANNING_GUIDELINE);
}

#[test]
fn over_mcp_the_descriptions_say_the_model_reads_the_plan_itself() {
    let mcp = ToolSpec::plan_write_mcp();
    assert_eq!(mcp.input_schema, ToolSpec::plan_write().input_schema);
    assert!(!mcp.description.contains("shown to you on every turn"));
    insta::assert_snapshot!("description_mcp", mcp.description);
    insta::assert_snapshot!(
        "planning_guideline_mcp",
        planlog_core::tool::PLANNING_GUIDELINE_MCP
    );
    for spec in planlog_core::tool::task_tool_specs() {
        assert!(spec.description.contains("call task_list when you start"));
        insta::assert_snapshot!(
            format!("task_tool_{}", spec.name),
            format!(
                "{}\n\n{}",
                spec.description,
                serde_json::to_string_pretty(&spec.input_schema).unwrap()
            )
        );
    }
}
