//! Task calls (Claude Code's Tasks schemas): ids, result shapes, every rule with its message
//! code, lenient parsing, reads that write nothing, and the session's write path for them.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // test code

use std::sync::Arc;

use planlog_core::events::{EventBody, WriteSemantics};
use planlog_core::rules::RejectionCode;
use planlog_core::tasks::{TaskTool, execute_task_tool};
use planlog_core::testkit::sid;
use planlog_core::{
    EventLog, MemoryLog, Plan, PlanSession, PlanStatus, Seq, SessionState, TestEnv, WriteError,
    WriteStatus,
};
use serde_json::{Value, json};

/// Runs one call, returning the new plan (or the old one) and the result.
fn run(
    plan: &Plan,
    tool: TaskTool,
    args: Value,
) -> (Plan, planlog_core::ToolResult, Option<EventBody>) {
    let state = SessionState {
        plan: plan.clone(),
        ..SessionState::default()
    };
    let e = execute_task_tool(&state, tool, &args.to_string());
    (
        e.plan.clone().unwrap_or_else(|| plan.clone()),
        e.result,
        e.event,
    )
}

fn code(event: &Option<EventBody>) -> Option<RejectionCode> {
    match event {
        Some(EventBody::WriteRejected(r)) => Some(r.code),
        _ => None,
    }
}

/// Three tasks: 2 waits for 1.
fn three() -> Plan {
    let mut plan = Plan::new();
    for subject in ["Parse", "Test", "Ship"] {
        plan = run(&plan, TaskTool::Create, json!({"subject": subject})).0;
    }
    run(
        &plan,
        TaskTool::Update,
        json!({"taskId": "2", "addBlockedBy": ["1"]}),
    )
    .0
}

#[test]
fn creates_number_tasks_and_answer_in_claude_codes_shape() {
    let (plan, result, event) = run(
        &Plan::new(),
        TaskTool::Create,
        json!({"subject": "Parse", "description": "the config", "activeForm": "Parsing", "metadata": {"area": "io"}}),
    );
    assert!(!result.is_error);
    assert!(
        result
            .content
            .starts_with("Task #1 created successfully: Parse\n")
    );
    let shaped: Value = serde_json::from_str(result.content.lines().nth(1).unwrap()).unwrap();
    assert_eq!(shaped, json!({"task": {"id": "1", "subject": "Parse"}}));
    let item = &plan.items()[0];
    assert_eq!((item.id.as_str(), item.status), ("1", PlanStatus::Pending));
    assert_eq!(item.active_form.as_deref(), Some("Parsing"));
    assert!(
        matches!(event, Some(EventBody::PlanWritten(w)) if w.semantics == WriteSemantics::Upsert)
    );
    let (plan, ..) = run(&plan, TaskTool::Create, json!({"subject": "Test"}));
    assert_eq!(plan.items()[1].id.as_str(), "2");
}

#[test]
fn updates_set_fields_edges_and_metadata_and_deletes_remove() {
    let plan = three();
    let (plan, result, _) = run(
        &plan,
        TaskTool::Update,
        json!({"taskId": 3, "addBlocks": [], "addBlockedBy": ["2"], "owner": "tester", "status": "in_progress", "metadata": {"a": 1}}),
    );
    assert!(!result.is_error, "{}", result.content);
    let shaped: Value = serde_json::from_str(result.content.lines().nth(1).unwrap()).unwrap();
    assert_eq!(
        shaped["statusChange"],
        json!({"from": "pending", "to": "in_progress"})
    );
    assert_eq!(
        shaped["updatedFields"],
        json!(["owner", "status", "blockedBy", "metadata"])
    );
    let three = plan.get(&"3".parse_id()).unwrap();
    assert_eq!(three.blockers(), ["2".parse_id()]);
    assert_eq!(three.owner.as_deref(), Some("tester"));
    // addBlocks changes the other task; a null metadata key deletes it.
    let (plan, ..) = run(
        &plan,
        TaskTool::Update,
        json!({"taskId": "1", "addBlocks": ["3"], "metadata": {"x": true}}),
    );
    assert_eq!(
        plan.get(&"3".parse_id()).unwrap().blockers(),
        ["2".parse_id(), "1".parse_id()]
    );
    let (plan, ..) = run(
        &plan,
        TaskTool::Update,
        json!({"id": "1", "metadata": {"x": null}}),
    );
    assert_eq!(plan.get(&"1".parse_id()).unwrap().metadata, None);
    // A delete removes the task and every edge to it.
    let (plan, result, event) = run(
        &plan,
        TaskTool::Update,
        json!({"task_id": "2", "status": "deleted"}),
    );
    assert!(result.content.starts_with("Updated task #2 deleted"));
    assert!(
        matches!(event, Some(EventBody::PlanWritten(w)) if w.semantics == WriteSemantics::Remove)
    );
    assert!(plan.get(&"2".parse_id()).is_none());
    assert_eq!(
        plan.get(&"3".parse_id()).unwrap().blockers(),
        ["1".parse_id()]
    );
}

#[test]
fn every_rule_refuses_with_its_code_and_changes_nothing() {
    let plan = three();
    let cases = [
        (
            TaskTool::Update,
            json!({"taskId": "9", "status": "completed"}),
            RejectionCode::UnknownTask,
        ),
        (
            TaskTool::Update,
            json!({"taskId": "1", "addBlockedBy": ["1"]}),
            RejectionCode::SelfBlocked,
        ),
        (
            TaskTool::Update,
            json!({"taskId": "1", "addBlockedBy": ["7"]}),
            RejectionCode::UnknownBlocker,
        ),
        (
            TaskTool::Update,
            json!({"taskId": "1", "addBlocks": ["7"]}),
            RejectionCode::UnknownBlocker,
        ),
        (
            TaskTool::Update,
            json!({"taskId": "1", "addBlockedBy": ["2"]}),
            RejectionCode::DependencyCycle,
        ),
        (
            TaskTool::Update,
            json!({"taskId": "1", "status": "done"}),
            RejectionCode::UnknownStatus,
        ),
        (
            TaskTool::Update,
            json!({"status": "completed"}),
            RejectionCode::MissingField,
        ),
        (
            TaskTool::Update,
            json!({"taskId": "1", "addBlockedBy": "2"}),
            RejectionCode::FieldNotList,
        ),
        (
            TaskTool::Update,
            json!({"taskId": "1", "metadata": [1]}),
            RejectionCode::MetadataNotObject,
        ),
        (
            TaskTool::Create,
            json!({"description": "no subject"}),
            RejectionCode::MissingField,
        ),
        (
            TaskTool::Create,
            json!({"subject": "  "}),
            RejectionCode::EmptyContent,
        ),
        (
            TaskTool::Create,
            json!({"subject": "x".repeat(2001)}),
            RejectionCode::ContentTooLong,
        ),
        (
            TaskTool::Create,
            json!({"subject": 7}),
            RejectionCode::FieldNotString,
        ),
        (
            TaskTool::Create,
            json!([1]),
            RejectionCode::ArgumentsNotObject,
        ),
    ];
    for (tool, args, expected) in cases {
        let (after, result, event) = run(&plan, tool, args.clone());
        assert_eq!(code(&event), Some(expected), "{args}: {}", result.content);
        assert!(
            result.is_error && result.content.contains("Nothing was changed."),
            "{}",
            result.content
        );
        assert_eq!(after, plan, "{args}");
        assert!(
            matches!(&event, Some(EventBody::WriteRejected(r)) if r.tool.as_deref() == Some(tool.name()))
        );
    }
    // A cancelled task (plan_write can cancel) is not completed directly.
    let cancelled = planlog_core::rules::execute_plan_write(
        &plan,
        &json!({"steps": [{"id": "1", "content": "Parse", "status": "cancelled"}, {"id": "2", "content": "Test", "status": "pending"}, {"id": "3", "content": "Ship", "status": "pending"}]}).to_string(),
    )
    .plan
    .unwrap();
    let (_, result, event) = run(
        &cancelled,
        TaskTool::Update,
        json!({"taskId": "1", "status": "completed"}),
    );
    assert_eq!(
        code(&event),
        Some(RejectionCode::CancelledToCompleted),
        "{}",
        result.content
    );
}

#[test]
fn reads_write_nothing() {
    let plan = three();
    let (_, got, event) = run(&plan, TaskTool::Get, json!({"taskId": "2"}));
    assert!(event.is_none());
    let v: Value = serde_json::from_str(&got.content).unwrap();
    assert_eq!(v["task"]["blockedBy"], json!(["1"]));
    let (_, got, _) = run(&plan, TaskTool::Get, json!({"taskId": "1"}));
    let v: Value = serde_json::from_str(&got.content).unwrap();
    assert_eq!(v["task"]["blocks"], json!(["2"]));
    let (_, missing, event) = run(&plan, TaskTool::Get, json!({"taskId": "9"}));
    assert!(event.is_none() && !missing.is_error);
    assert_eq!(
        serde_json::from_str::<Value>(&missing.content).unwrap(),
        json!({"task": null})
    );
    let (_, list, event) = run(&plan, TaskTool::List, json!({}));
    assert!(event.is_none());
    assert_eq!(
        serde_json::from_str::<Value>(&list.content).unwrap()["tasks"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn the_session_records_task_writes_once_and_refuses_a_reused_call_id() {
    let log = Arc::new(MemoryLog::new());
    let mut s = PlanSession::builder(log.clone(), Arc::new(TestEnv::default()))
        .open_or_fresh(&sid("tasks"));
    let first = s.task_call(
        Some("c1"),
        None,
        TaskTool::Create,
        r#"{"subject": "Parse"}"#,
    );
    assert_eq!(first.status(), &WriteStatus::Stored(Seq::new(2).unwrap()));
    let again = s.task_call(
        Some("c1"),
        None,
        TaskTool::Create,
        r#"{"subject": "Parse"}"#,
    );
    assert!(
        matches!(again.status(), WriteStatus::Repeated(_)),
        "{:?}",
        again.status()
    );
    let other = s.task_call(
        Some("c1"),
        None,
        TaskTool::Create,
        r#"{"subject": "Other"}"#,
    );
    assert!(
        matches!(
            other.status(),
            WriteStatus::NotRecorded(WriteError::CallIdReused(_))
        ),
        "{:?}",
        other.status()
    );
    let read = s.task_call(Some("r1"), None, TaskTool::List, "{}");
    assert_eq!(read.status(), &WriteStatus::Read);
    assert_eq!(
        log.read(&sid("tasks"), Seq::FIRST, None).unwrap().len(),
        2,
        "reads and repeats write nothing"
    );
    assert_eq!(s.plan().items()[0].content, "Parse");
}

/// The subject line of a create's result: `Task #N created successfully: …`.
fn created_id(outcome: &planlog_core::WriteOutcome) -> String {
    let text = &outcome.result().content;
    assert!(!outcome.result().is_error, "{text}");
    text.strip_prefix("Task #")
        .and_then(|t| t.split_once(' '))
        .map(|(id, _)| id.to_owned())
        .unwrap_or_else(|| panic!("not a create result: {text}"))
}

#[test]
fn a_deleted_tasks_id_is_never_given_again_not_after_a_resume_nor_in_a_fork() {
    let log = Arc::new(MemoryLog::new());
    let id = sid("ids");
    let mut s = PlanSession::builder(log.clone(), Arc::new(TestEnv::default())).open_or_fresh(&id);
    let mut call = 0;
    let mut task = |s: &mut PlanSession, tool: TaskTool, args: Value| {
        call += 1;
        s.task_call(Some(&format!("c{call}")), None, tool, &args.to_string())
    };
    for (subject, want) in [("Parse", "1"), ("Test", "2"), ("Ship", "3")] {
        let out = task(&mut s, TaskTool::Create, json!({"subject": subject}));
        assert_eq!(created_id(&out), want);
    }
    let deleted = task(
        &mut s,
        TaskTool::Update,
        json!({"taskId": "3", "status": "deleted"}),
    );
    assert!(!deleted.result().is_error, "{}", deleted.result().content);
    let after_delete = log.head(&id).unwrap().unwrap().seq;
    // Task 3 is gone, but its id is not free again.
    let out = task(&mut s, TaskTool::Create, json!({"subject": "Release"}));
    assert_eq!(created_id(&out), "4");
    // Delete the two highest, then change another: the ids stay issued across writes.
    for gone in ["4", "2"] {
        let out = task(
            &mut s,
            TaskTool::Update,
            json!({"taskId": gone, "status": "deleted"}),
        );
        assert!(!out.result().is_error, "{}", out.result().content);
    }
    let out = task(
        &mut s,
        TaskTool::Update,
        json!({"taskId": "1", "status": "in_progress"}),
    );
    assert!(!out.result().is_error, "{}", out.result().content);
    assert_eq!(s.state().ids_issued, 4);
    assert_eq!(s.plan().len(), 1);
    // Another session on the same log, resumed from the store, knows it too.
    let mut resumed = PlanSession::builder(log.clone(), Arc::new(TestEnv::default()))
        .resume(&id)
        .unwrap();
    let out = resumed.task_call(Some("r1"), None, TaskTool::Create, r#"{"subject": "Docs"}"#);
    assert_eq!(created_id(&out), "5");
    // A fork taken right after task 3 was deleted starts from what its parent had issued.
    let mut fork = PlanSession::builder(log.clone(), Arc::new(TestEnv::default()))
        .fork(&id, after_delete)
        .unwrap();
    assert_eq!(fork.state().ids_issued, 3);
    let out = fork.task_call(
        Some("f1"),
        None,
        TaskTool::Create,
        r#"{"subject": "Other"}"#,
    );
    assert_eq!(created_id(&out), "4");
    // The events record what the state needs: the last write of the session says 5 were
    // issued only if its plan no longer shows the highest.
    let last = log.last(&id).unwrap().unwrap();
    assert_eq!(last.body.ids_issued(), None, "task 5 is in the plan");
    assert_eq!(last.format, planlog_core::events::EVENT_FORMAT);
}

#[test]
fn a_create_when_no_id_is_left_is_refused_and_changes_nothing() {
    // An id no double holds is not numbered from: it blocks nothing.
    let huge = Plan::from_items(vec![planlog_core::PlanItem::new(
        u64::MAX.to_string().parse_id(),
        "A source's own id".to_owned(),
        PlanStatus::Pending,
    )]);
    let (_, result, _) = run(&huge, TaskTool::Create, json!({"subject": "Next"}));
    assert!(!result.is_error, "{}", result.content);
    assert!(
        result.content.starts_with("Task #1 created"),
        "{}",
        result.content
    );
    let top = planlog_core::PlanItem::new(
        planlog_core::limits::MAX_TASK_NUMBER.to_string().parse_id(),
        "The last number".to_owned(),
        PlanStatus::Pending,
    );
    let plan = Plan::from_items(vec![top]);
    let (after, result, event) = run(&plan, TaskTool::Create, json!({"subject": "One more"}));
    assert!(result.is_error);
    assert_eq!(code(&event), Some(RejectionCode::NoTaskIdLeft));
    assert!(
        result.content.contains("No task id is left"),
        "{}",
        result.content
    );
    assert_eq!(after, plan);
}

/// `"3".parse_id()`: an item id in tests.
trait ParseId {
    fn parse_id(&self) -> planlog_core::ItemId;
}

impl ParseId for str {
    fn parse_id(&self) -> planlog_core::ItemId {
        planlog_core::ItemId::new(self.to_owned()).unwrap()
    }
}

#[test]
fn a_retried_task_call_gets_its_first_answer_in_the_tools_shape_and_other_arguments_are_refused() {
    let log = Arc::new(MemoryLog::new());
    let id = sid("retry");
    let mut s = PlanSession::builder(log.clone(), Arc::new(TestEnv::default())).open_or_fresh(&id);
    let create = json!({"subject": "Fetch", "description": "from the API"}).to_string();
    let first = s.task_call(Some("c1"), None, TaskTool::Create, &create);
    let again = s.task_call(Some("c1"), None, TaskTool::Create, &create);
    assert_eq!(again.result().content, first.result().content);
    assert!(
        again.result().content.starts_with("Task #1 created"),
        "{}",
        again.result().content
    );
    let update = json!({"taskId": "1", "status": "in_progress"}).to_string();
    let first = s.task_call(Some("u1"), None, TaskTool::Update, &update);
    let again = s.task_call(Some("u1"), None, TaskTool::Update, &update);
    assert_eq!(again.result().content, first.result().content);
    assert!(
        again.result().content.starts_with("Updated task #1"),
        "{}",
        again.result().content
    );
    let events = log.head(&id).unwrap().unwrap().seq;
    // The same call id with another description, or for another tool: refused, nothing written.
    let other = json!({"subject": "Fetch", "description": "from the cache"}).to_string();
    for (tool, args) in [
        (TaskTool::Create, other.as_str()),
        (TaskTool::Update, update.as_str()),
    ] {
        let out = s.task_call(Some("c1"), None, tool, args);
        assert!(out.result().is_error, "{}", out.result().content);
        assert!(
            out.result()
                .content
                .contains("already used for a call with other arguments")
                && !out.result().content.contains("plan_write"),
            "{}",
            out.result().content
        );
    }
    assert_eq!(log.head(&id).unwrap().unwrap().seq, events);
}

/// Claims (agent teams): an open, unowned task that waits for nothing is claimed (its owner
/// set, in progress); a held one is refused naming its holder; a finished or waiting one is
/// refused; claiming one's own changes nothing; only the holder releases (free again) or
/// hands over; `task_list` with `ready` lists only work free to claim.
#[test]
fn claims_take_a_free_task_once_and_only_its_holder_lets_go() {
    let plan = three();
    let text = |r: &planlog_core::ToolResult| r.content.clone();
    // Ready work: 1 and 3 (2 waits for 1).
    let (_, listed, event) = run(&plan, TaskTool::List, json!({"ready": true}));
    assert!(event.is_none(), "a read writes nothing");
    let ids: Vec<String> = serde_json::from_str::<Value>(&listed.content).unwrap()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["1", "3"]);
    // Claimed: alice holds 1, in progress.
    let (plan, r, event) = run(
        &plan,
        TaskTool::Claim,
        json!({"taskId": "1", "owner": "alice"}),
    );
    assert!(!r.is_error, "{}", text(&r));
    assert!(
        matches!(event, Some(EventBody::PlanWritten(ref w)) if w.semantics == WriteSemantics::Upsert)
    );
    let one = plan.get(&planlog_core::ItemId::new("1").unwrap()).unwrap();
    assert_eq!(
        (one.owner.as_deref(), one.status),
        (Some("alice"), PlanStatus::InProgress)
    );
    // Again by alice: nothing changes, no error.
    let (again, r, _) = run(
        &plan,
        TaskTool::Claim,
        json!({"taskId": "1", "owner": "alice"}),
    );
    assert!(!r.is_error);
    assert_eq!(again, plan);
    // By bob: refused, naming alice, the plan unchanged, the refusal an event.
    let (same, r, event) = run(
        &plan,
        TaskTool::Claim,
        json!({"taskId": "1", "owner": "bob"}),
    );
    assert!(r.is_error);
    assert!(
        text(&r).contains("task #1 is held by \"alice\""),
        "{}",
        text(&r)
    );
    assert_eq!(code(&event), Some(RejectionCode::TaskHeld));
    assert_eq!(same, plan);
    // 2 waits for 1; an unknown task; no owner given.
    let (_, r, event) = run(
        &plan,
        TaskTool::Claim,
        json!({"taskId": "2", "owner": "bob"}),
    );
    assert_eq!(
        code(&event),
        Some(RejectionCode::TaskWaiting),
        "{}",
        text(&r)
    );
    assert!(text(&r).contains("waits for task #1"), "{}", text(&r));
    let (_, _, event) = run(
        &plan,
        TaskTool::Claim,
        json!({"taskId": "9", "owner": "bob"}),
    );
    assert_eq!(code(&event), Some(RejectionCode::UnknownTask));
    let (_, r, event) = run(&plan, TaskTool::Claim, json!({"taskId": "3"}));
    assert_eq!(
        code(&event),
        Some(RejectionCode::MissingField),
        "{}",
        text(&r)
    );
    // Ready work no longer lists 1.
    let (_, listed, _) = run(&plan, TaskTool::List, json!({"ready": true}));
    assert!(
        !listed.content.contains("\"id\":\"1\""),
        "{}",
        listed.content
    );
    // Only the holder releases; bob cannot.
    let (_, r, event) = run(
        &plan,
        TaskTool::Release,
        json!({"taskId": "1", "owner": "bob"}),
    );
    assert_eq!(code(&event), Some(RejectionCode::NotTaskHolder));
    assert!(text(&r).contains("held by \"alice\""), "{}", text(&r));
    // Handed over: bob holds it, still in progress.
    let (handed, r, _) = run(
        &plan,
        TaskTool::Release,
        json!({"taskId": "1", "owner": "alice", "to": "bob"}),
    );
    assert!(!r.is_error, "{}", text(&r));
    let one = handed
        .get(&planlog_core::ItemId::new("1").unwrap())
        .unwrap();
    assert_eq!(
        (one.owner.as_deref(), one.status),
        (Some("bob"), PlanStatus::InProgress)
    );
    // Given up: free again, pending, ready.
    let (freed, r, _) = run(
        &plan,
        TaskTool::Release,
        json!({"taskId": "1", "owner": "alice"}),
    );
    assert!(!r.is_error, "{}", text(&r));
    let one = freed.get(&planlog_core::ItemId::new("1").unwrap()).unwrap();
    assert_eq!(
        (one.owner.as_deref(), one.status),
        (None, PlanStatus::Pending)
    );
    // Completed: nothing to claim.
    let (done, _, _) = run(
        &plan,
        TaskTool::Update,
        json!({"taskId": "1", "status": "completed"}),
    );
    let (_, _, event) = run(
        &done,
        TaskTool::Claim,
        json!({"taskId": "1", "owner": "bob"}),
    );
    assert_eq!(code(&event), Some(RejectionCode::TaskNotOpen));
    // And 2 is ready once 1 is completed.
    let (_, r, _) = run(
        &done,
        TaskTool::Claim,
        json!({"taskId": "2", "owner": "bob"}),
    );
    assert!(!r.is_error, "{}", text(&r));
}
