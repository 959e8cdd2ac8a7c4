//! PlanSession: restore, checkpoint-before-result, idempotency, sinks, fail-open,
//! delegation, tools and plan mode.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // test code

use std::sync::{Arc, Mutex};

use planlog_core::plan_mode::{
    NOTICE_ENTERED, NOTICE_LEFT, PlanCommand, PlanModeConfig, PlanReview, ReviewOutcome,
    SetOutcome, parse_plan_command,
};
use planlog_core::testkit::{FaultyLog, sid};
use planlog_core::{
    CallTool, EventLog, LogError, MemoryLog, OperatorError, Plan, PlanSession, PlanSink, Seq,
    SessionId, SessionInfo, SessionState, TestEnv, Timestamp, WriteError, WriteStatus,
    events::EventBody,
};
use serde_json::json;

fn env() -> Arc<TestEnv> {
    Arc::new(TestEnv::default())
}

fn write(steps: serde_json::Value) -> String {
    json!({ "steps": steps }).to_string()
}

fn two_items() -> String {
    write(json!([
        {"id": "1", "content": "Write the parser", "status": "in_progress"},
        {"id": "2", "content": "Test it", "status": "pending"}
    ]))
}

#[derive(Default)]
struct RecordingSink(Mutex<Vec<(SessionId, Plan)>>);

impl PlanSink for RecordingSink {
    fn plan_written(&self, session: &SessionId, plan: &Plan, _at: Timestamp) {
        self.0.lock().unwrap().push((session.clone(), plan.clone()));
    }
}

#[test]
fn a_new_session_is_created_by_its_first_write_with_session_started_first() {
    let log = Arc::new(MemoryLog::new());
    let mut s = PlanSession::builder(log.clone(), env()).open_or_fresh(&sid("s"));
    assert!(s.plan().is_empty());
    assert_eq!(s.restore_error(), None);
    assert!(
        log.session(&sid("s")).unwrap().is_none(),
        "opening alone writes nothing"
    );
    assert_eq!(
        s.plan_write(Some("r"), None, "{}").status(),
        &WriteStatus::Read
    );
    assert!(
        log.session(&sid("s")).unwrap().is_none(),
        "a read writes nothing"
    );
    let stored = s.plan_write(Some("c1"), None, &two_items());
    assert_eq!(stored.status(), &WriteStatus::Stored(Seq::new(2).unwrap()));
    let events = log.read(&sid("s"), Seq::FIRST, None).unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e.body.kind()).collect();
    assert_eq!(kinds, ["session_started", "plan_written"]);
}

#[test]
fn create_stores_the_new_session_at_once() {
    let log = Arc::new(MemoryLog::new());
    let s = PlanSession::builder(log.clone(), env()).create().unwrap();
    let events = log.read(s.id(), Seq::FIRST, None).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].body.kind(), "session_started");
}

#[test]
fn the_write_is_in_the_log_before_the_result_returns() {
    let log = Arc::new(MemoryLog::new());
    let mut s = PlanSession::builder(log.clone(), env()).open_or_fresh(&sid("s"));
    let result = s
        .plan_write(Some("call-1"), Some(1), &two_items())
        .durable()
        .unwrap();
    assert!(!result.is_error);
    let last = log.last(&sid("s")).unwrap().unwrap();
    assert_eq!(last.call_id.as_ref().map(|c| c.as_str()), Some("call-1"));
    assert_eq!(last.turn, Some(1));
    assert_eq!(last.plan().unwrap().to_json(), result.content);
}

#[test]
fn reopening_restores_the_plan_by_replay() {
    let log = Arc::new(MemoryLog::new());
    let mut s = PlanSession::builder(log.clone(), env()).open_or_fresh(&sid("s"));
    s.plan_write(Some("c1"), None, &two_items())
        .durable()
        .unwrap();
    s.set_plan_mode(true);
    let plan = s.plan();
    drop(s); // a crash: no close
    let again = PlanSession::builder(log, env()).open_or_fresh(&sid("s"));
    assert_eq!(again.plan(), plan);
    assert!(
        again.state().plan_mode,
        "plan mode comes back from the log alone"
    );
    assert!(again.plan_text().contains("[>] Write the parser"));
}

#[test]
fn rejected_calls_are_logged_and_returned_as_errors() {
    let log = Arc::new(MemoryLog::new());
    let mut s = PlanSession::builder(log.clone(), env()).open_or_fresh(&sid("s"));
    let r = s.plan_write(
        Some("c1"),
        None,
        &write(json!([
            {"id": "1", "content": "a", "status": "completed"},
            {"id": "2", "content": "b", "status": "completed"}
        ])),
    );
    assert!(r.result().is_error);
    assert_eq!(r.status(), &WriteStatus::Stored(Seq::new(2).unwrap()));
    assert!(s.plan().is_empty());
    let last = log.last(&sid("s")).unwrap().unwrap();
    assert!(matches!(last.body, EventBody::WriteRejected(_)));
}

#[test]
fn a_repeated_call_id_returns_the_first_answer_and_applies_nothing() {
    let log = Arc::new(MemoryLog::new());
    let mut s = PlanSession::builder(log.clone(), env()).open_or_fresh(&sid("s"));
    let first = s.plan_write(Some("c1"), None, &two_items());
    assert_eq!(first.status(), &WriteStatus::Stored(Seq::new(2).unwrap()));
    let retry = s.plan_write(Some("c1"), None, &two_items());
    assert_eq!(retry.result(), first.result());
    assert_eq!(retry.status(), &WriteStatus::Repeated(Seq::new(2).unwrap()));
    assert_eq!(log.read(&sid("s"), Seq::FIRST, None).unwrap().len(), 2);
    // Also across a restart (the model's retry after a crash).
    drop(s);
    let mut s = PlanSession::builder(log.clone(), env()).open_or_fresh(&sid("s"));
    let again = s.plan_write(Some("c1"), None, &two_items());
    assert_eq!(again.result(), first.result());
    assert!(again.is_durable());
    assert_eq!(log.read(&sid("s"), Seq::FIRST, None).unwrap().len(), 2);
}

#[test]
fn a_call_id_reused_with_other_arguments_is_refused_and_applies_nothing() {
    let log = Arc::new(MemoryLog::new());
    let mut s = PlanSession::builder(log.clone(), env()).open_or_fresh(&sid("s"));
    s.plan_write(Some("c1"), None, &two_items())
        .durable()
        .unwrap();
    for other in [
        write(json!([{"id": "9", "content": "other", "status": "pending"}])),
        "not json".to_owned(),
    ] {
        let reused = s.plan_write(Some("c1"), None, &other);
        assert!(reused.result().is_error);
        assert!(
            reused.result().content.contains("already used"),
            "{}",
            reused.result().content
        );
        assert!(matches!(
            reused.status(),
            WriteStatus::NotRecorded(WriteError::CallIdReused(_))
        ));
    }
    // A read records nothing, so it cannot be confused with a recorded call: it is answered
    // as a read whatever its id.
    let read = s.plan_write(Some("c1"), None, "{}");
    assert_eq!(read.status(), &WriteStatus::Read);
    assert_eq!(log.read(&sid("s"), Seq::FIRST, None).unwrap().len(), 2);
    assert_eq!(s.plan().len(), 2);
}

#[test]
fn reads_record_nothing() {
    let log = Arc::new(MemoryLog::new());
    let mut s = PlanSession::builder(log.clone(), env()).open_or_fresh(&sid("s"));
    s.plan_write(Some("c1"), None, &two_items())
        .durable()
        .unwrap();
    let read = s.plan_write(Some("r"), None, "{}");
    assert_eq!(read.status(), &WriteStatus::Read);
    assert_eq!(read.result().content, s.plan().to_json());
    assert_eq!(log.read(&sid("s"), Seq::FIRST, None).unwrap().len(), 2);
}

#[test]
fn sinks_see_successful_writes_only() {
    let sink = Arc::new(RecordingSink::default());
    let mut s = PlanSession::builder(MemoryLog::new(), env())
        .shared_sink(sink.clone())
        .open(&sid("s"))
        .unwrap();
    assert!(s.plan_write(None, None, "{}").is_durable());
    let refused = s.plan_write(
        None,
        None,
        &write(json!([{"id": "1", "content": "", "status": "pending"}])),
    );
    assert!(refused.result().is_error);
    assert!(sink.0.lock().unwrap().is_empty());
    s.plan_write(None, None, &two_items()).durable().unwrap();
    assert_eq!(sink.0.lock().unwrap().len(), 1);
}

#[test]
fn storage_failures_keep_the_session_working_and_close_stores_the_rest() {
    let log = Arc::new(FaultyLog::new(MemoryLog::new()));
    let mut s = PlanSession::builder(log.clone(), env()).open_or_fresh(&sid("s"));
    s.plan_write(
        Some("c0"),
        None,
        "{\"steps\":[{\"id\":\"0\",\"content\":\"Plan\",\"status\":\"in_progress\"}]}",
    )
    .durable()
    .unwrap();
    log.fail_next(2, false);
    let first = s.plan_write(Some("c1"), None, &two_items());
    assert!(!first.result().is_error);
    assert!(matches!(first.status(), WriteStatus::Unsaved(_)));
    let second = s.plan_write(
        Some("c2"),
        None,
        &write(json!([{"id": "1", "content": "Write the parser", "status": "completed"}])),
    );
    assert!(!second.result().is_error);
    assert!(matches!(second.status(), WriteStatus::Unsaved(_)));
    assert!(matches!(
        second.clone().durable(),
        Err(WriteError::Unsaved { .. })
    ));
    assert_eq!(s.unsaved(), 2);
    // A retry of an unsaved call gets its answer, still unsaved.
    let retry = s.plan_write(Some("c1"), None, &two_items());
    assert_eq!(retry.result(), first.result());
    assert!(matches!(retry.status(), WriteStatus::Unsaved(_)));
    assert_eq!(
        s.plan().progress().completed,
        1,
        "the session went on in memory"
    );
    s.close().unwrap();
    s.close().unwrap();
    assert_eq!(s.unsaved(), 0);
    let stored = log.read(&sid("s"), Seq::FIRST, None).unwrap();
    assert_eq!(stored.len(), 4);
    assert_eq!(planlog_core::fold(&stored).plan, s.plan());
}

#[test]
fn unsaved_calls_handed_over_are_recorded_later_once_and_in_order() {
    let log = Arc::new(FaultyLog::new(MemoryLog::new()));
    let mut s = PlanSession::builder(log.clone(), env())
        .label("handed over")
        .open(&sid("h"))
        .unwrap();
    log.fail_next(100, false);
    let first = s.plan_write(Some("c1"), Some(1), &two_items());
    let second = s.plan_write(
        Some("c2"),
        Some(2),
        &write(json!([{"id": "1", "content": "Write the parser", "status": "completed"}])),
    );
    assert!(matches!(first.status(), WriteStatus::Unsaved(_)));
    assert!(matches!(second.status(), WriteStatus::Unsaved(_)));
    let shown = s.plan();
    let calls = s.take_unsaved();
    assert_eq!(s.unsaved(), 0, "nothing is left for close or drop");
    assert_eq!(
        s.plan(),
        Plan::new(),
        "the session shows its stored plan again"
    );
    s.close().unwrap();
    assert_eq!(log.head(&sid("h")).unwrap(), None, "nothing was stored");
    assert_eq!(calls.len(), 2, "the session's creation is not a call");
    assert_eq!(calls[0].call_id.as_deref(), Some("c1"));
    assert_eq!(calls[0].turn, Some(1));
    assert_eq!(calls[0].arguments, two_items());
    assert_eq!(calls[0].tool, CallTool::PlanWrite);
    assert_eq!(calls[1].call_id.as_deref(), Some("c2"));
    let start = calls[0]
        .start
        .clone()
        .expect("the session did not exist yet");
    assert_eq!(start.label.as_deref(), Some("handed over"));
    assert!(calls[0].at < calls[1].at);

    // Later, another session on the healthy log records them.
    log.fail_next(0, false);
    let mut later = PlanSession::builder(log.clone(), env())
        .label(start.label.clone().unwrap())
        .origin(start.origin.clone())
        .open(&sid("h"))
        .unwrap();
    for call in &calls {
        assert!(matches!(
            later.record_handed_over(call).status(),
            WriteStatus::Stored(_)
        ));
    }
    assert_eq!(later.plan(), shown);
    // Recording them again (a crash between storing and forgetting them) records nothing.
    for call in &calls {
        assert!(matches!(
            later.record_handed_over(call).status(),
            WriteStatus::Repeated(_)
        ));
    }
    let stored = log.read(&sid("h"), Seq::FIRST, None).unwrap();
    assert_eq!(stored.len(), 3);
    assert!(
        matches!(&stored[0].body, EventBody::SessionStarted(s) if s.label.as_deref() == Some("handed over"))
    );
    assert_eq!(
        stored
            .iter()
            .map(|e| e.call_id.as_ref().map(|c| c.as_str().to_owned()))
            .collect::<Vec<_>>(),
        vec![None, Some("c1".to_owned()), Some("c2".to_owned())]
    );
    assert_eq!(CallTool::from_name("plan_write"), Some(CallTool::PlanWrite));
    assert_eq!(
        CallTool::from_name("task_get"),
        None,
        "reads are never unsaved"
    );
    assert_eq!(
        CallTool::from_name(CallTool::Task(planlog_core::tasks::TaskTool::Update).name()),
        Some(CallTool::Task(planlog_core::tasks::TaskTool::Update))
    );
}

/// A log whose reads all fail (a damaged or unreachable store).
struct Unreadable(MemoryLog);

impl EventLog for Unreadable {
    fn append(
        &self,
        e: &planlog_core::events::Event,
    ) -> Result<planlog_core::log::Appended, LogError> {
        self.0.append(e)
    }
    fn append_all(
        &self,
        e: &[planlog_core::events::Event],
    ) -> Result<Vec<planlog_core::log::Appended>, LogError> {
        self.0.append_all(e)
    }
    fn read(
        &self,
        s: &SessionId,
        f: Seq,
        t: Option<Seq>,
    ) -> Result<Vec<planlog_core::events::Event>, LogError> {
        self.0.read(s, f, t)
    }
    fn last(&self, s: &SessionId) -> Result<Option<planlog_core::events::Event>, LogError> {
        self.0.last(s)
    }
    fn head(&self, s: &SessionId) -> Result<Option<planlog_core::events::Head>, LogError> {
        if s.as_str() == "damaged" {
            return Err(OperatorError::Corrupt {
                path: "store.redb".into(),
                session: Some(s.clone()),
                seq: None,
                detail: "bad page".into(),
            }
            .into());
        }
        self.0.head(s)
    }
    fn session(&self, s: &SessionId) -> Result<Option<SessionInfo>, LogError> {
        self.0.session(s)
    }
    fn sessions(&self) -> Result<Vec<SessionInfo>, LogError> {
        self.0.sessions()
    }
    fn find_call(&self, s: &SessionId, c: &planlog_core::CallId) -> Result<Option<Seq>, LogError> {
        self.0.find_call(s, c)
    }
    fn delete(&self, s: &SessionId) -> Result<(), LogError> {
        self.0.delete(s)
    }
    fn state_at(&self, s: &SessionId, at: Seq) -> Result<SessionState, LogError> {
        self.0.state_at(s, at)
    }
}

#[test]
fn an_unreadable_log_degrades_to_an_empty_plan_in_a_new_session_with_a_flag() {
    let log = Arc::new(Unreadable(MemoryLog::new()));
    let mut s = PlanSession::builder(log.clone(), env()).open_or_fresh(&sid("damaged"));
    assert!(s.plan().is_empty());
    let flag = s.restore_error().unwrap();
    assert!(
        flag.contains("damaged") && flag.contains("bad page"),
        "{flag}"
    );
    assert_ne!(
        s.id().as_str(),
        "damaged",
        "the unreadable session is never written over"
    );
    s.plan_write(None, None, &two_items()).durable().unwrap();
    assert_eq!(log.0.read(s.id(), Seq::FIRST, None).unwrap().len(), 2);
}

#[test]
fn try_open_reports_an_unreadable_log_instead_of_degrading() {
    let log = Arc::new(Unreadable(MemoryLog::new()));
    let err = PlanSession::builder(log.clone(), env())
        .open(&sid("damaged"))
        .unwrap_err();
    assert!(err.to_string().contains("bad page"), "{err}");
    assert!(log.0.sessions().unwrap().is_empty(), "nothing was started");
    let mut ok = PlanSession::builder(log, env()).open(&sid("fine")).unwrap();
    ok.plan_write(None, None, &two_items()).durable().unwrap();
    assert_eq!(ok.head().map(|h| h.seq.get()), Some(2));
}

#[test]
fn a_fork_starts_from_the_parent_state_and_diverges() {
    let log: Arc<dyn EventLog> = Arc::new(MemoryLog::new());
    let mut parent = PlanSession::builder(log.clone(), env()).open_or_fresh(&sid("p"));
    parent
        .plan_write(Some("c1"), None, &two_items())
        .durable()
        .unwrap();
    parent.set_plan_mode(true);
    parent
        .plan_write(
            Some("c2"),
            None,
            &write(json!([{"id": "1", "content": "Write the parser", "status": "completed"}])),
        )
        .durable()
        .unwrap();
    let mut fork = PlanSession::builder(log.clone(), env())
        .fork(&sid("p"), Seq::new(3).unwrap())
        .unwrap();
    assert_eq!(
        fork.plan(),
        log.state_at(&sid("p"), Seq::new(3).unwrap()).unwrap().plan
    );
    assert!(fork.state().plan_mode);
    fork.plan_write(
        None,
        None,
        &write(json!([{"id": "3", "content": "Other route", "status": "pending"}])),
    )
    .durable()
    .unwrap();
    assert_eq!(
        parent.plan().len(),
        1,
        "the omitted pending item was dropped in the parent only"
    );
    let ids: Vec<String> = fork
        .plan()
        .items()
        .iter()
        .map(|i| i.id.to_string())
        .collect();
    assert_eq!(
        ids,
        ["1", "3"],
        "the fork kept its started item and dropped its own omitted pending one"
    );
    let info = log.session(fork.id()).unwrap().unwrap();
    assert_eq!(info.origin.parent(), Some(&sid("p")));
    assert_eq!(info.origin.fork_seq(), Seq::new(3).ok());
}

#[test]
fn a_sub_agent_plans_alone_in_memory() {
    let log = Arc::new(MemoryLog::new());
    let sink = Arc::new(RecordingSink::default());
    let mut parent = PlanSession::builder(log.clone(), env())
        .shared_sink(sink.clone())
        .open(&sid("p"))
        .unwrap();
    parent
        .plan_write(None, None, &two_items())
        .durable()
        .unwrap();
    let before = log.read(&sid("p"), Seq::FIRST, None).unwrap();
    let mut child = parent.delegate(&["read_file", "plan_write"]).unwrap();
    assert!(
        child.plan().is_empty(),
        "the child cannot read the parent's plan"
    );
    assert!(
        !child
            .plan_write(
                None,
                None,
                &write(json!([{"id": "c", "content": "child work", "status": "in_progress"}]))
            )
            .result()
            .is_error
    );
    assert!(!parent.plan_text().contains("child work"));
    assert_eq!(log.read(&sid("p"), Seq::FIRST, None).unwrap(), before);
    assert_eq!(
        log.sessions().unwrap().len(),
        1,
        "nothing of the child reaches the parent's store"
    );
    assert_eq!(
        sink.0.lock().unwrap().len(),
        1,
        "no plan file for the child"
    );
    assert!(matches!(
        child.delegate(&["plan_write"]),
        Err(planlog_core::DelegationError::Nested)
    ));
    let mut no_tool = parent.delegate(&["read_file"]).unwrap();
    assert!(no_tool.tools().is_empty());
    assert!(
        no_tool
            .plan_write(None, None, &two_items())
            .result()
            .is_error
    );
}

#[test]
fn exit_plan_mode_is_offered_only_in_plan_mode() {
    let mut s = PlanSession::builder(Arc::new(MemoryLog::new()), env()).open_or_fresh(&sid("s"));
    let names = |s: &PlanSession| s.tools().into_iter().map(|t| t.name).collect::<Vec<_>>();
    assert_eq!(names(&s), ["plan_write"]);
    assert_eq!(s.set_plan_mode(true), SetOutcome::Committed);
    assert_eq!(names(&s), ["plan_write", "exit_plan_mode"]);
}

#[test]
fn selections_during_a_turn_wait_for_the_before_request() {
    let log = Arc::new(MemoryLog::new());
    let mut s = PlanSession::builder(log.clone(), env())
        .plan_mode(PlanModeConfig::new("Plan only; do not edit files.").unwrap())
        .open(&sid("s"))
        .unwrap();
    s.turn_opened();
    assert_eq!(s.before_request().notice, None);
    assert_eq!(s.set_plan_mode(true), SetOutcome::Queued);
    assert_eq!(s.set_plan_mode(true), SetOutcome::Noop, "already pending");
    assert!(!s.plan_mode().active);
    assert_eq!(s.policy_section(), None);
    let step = s.before_request();
    assert_eq!(step.notice.as_deref(), Some(NOTICE_ENTERED));
    assert!(s.plan_mode().active);
    assert_eq!(s.policy_section(), Some("Plan only; do not edit files."));
    assert_eq!(s.before_request().notice, None, "told once");
    // Queue an exit, then withdraw it.
    assert_eq!(s.set_plan_mode(false), SetOutcome::Queued);
    assert_eq!(s.set_plan_mode(true), SetOutcome::Cancelled);
    assert_eq!(s.plan_mode().pending, None);
    s.turn_closed();
    assert_eq!(s.set_plan_mode(false), SetOutcome::Committed);
    s.turn_opened();
    assert_eq!(s.before_request().notice.as_deref(), Some(NOTICE_LEFT));
    let kinds: Vec<_> = log
        .read(&sid("s"), Seq::FIRST, None)
        .unwrap()
        .iter()
        .map(|e| e.body.kind())
        .collect();
    assert_eq!(kinds, ["session_started", "mode_selected", "mode_selected"]);
}

#[test]
fn no_notice_when_the_model_never_saw_the_other_mode() {
    let mut s = PlanSession::builder(Arc::new(MemoryLog::new()), env()).open_or_fresh(&sid("s"));
    assert_eq!(s.set_plan_mode(true), SetOutcome::Committed);
    s.turn_opened();
    assert_eq!(
        s.before_request().notice,
        None,
        "the first request already describes plan mode"
    );
}

#[test]
fn a_failed_mode_append_stays_pending_for_the_next_boundary() {
    let log = Arc::new(FaultyLog::new(MemoryLog::new()));
    let mut s = PlanSession::builder(log.clone(), env()).open_or_fresh(&sid("s"));
    s.turn_opened();
    s.before_request();
    s.set_plan_mode(true);
    log.fail_next(1, false);
    s.before_request();
    assert_eq!(s.plan_mode().pending, Some(true));
    assert!(!s.plan_mode().active);
    assert_eq!(s.before_request().notice.as_deref(), Some(NOTICE_ENTERED));
    assert!(s.plan_mode().active);
}

struct Answer(ReviewOutcome, Vec<String>);

impl PlanReview for Answer {
    fn review(&mut self, plan: &str) -> ReviewOutcome {
        self.1.push(plan.to_owned());
        self.0.clone()
    }
}

#[test]
fn exit_plan_mode_outcomes() {
    let plan = json!({"plan": "# Refactor the loader\n1. Split parse and load"}).to_string();
    let mut s = PlanSession::builder(Arc::new(MemoryLog::new()), env()).open_or_fresh(&sid("s"));
    let outside = s.exit_plan_mode(&plan, &mut Answer(ReviewOutcome::Approve, vec![]));
    assert!(
        outside.result.is_error
            && outside
                .result
                .content
                .contains("only available in plan mode")
    );
    s.set_plan_mode(true);
    s.turn_opened();
    s.before_request();
    let no_heading = s.exit_plan_mode(
        &json!({"plan": "just do it"}).to_string(),
        &mut Answer(ReviewOutcome::Approve, vec![]),
    );
    assert!(no_heading.result.is_error && no_heading.result.content.contains("'# ' heading"));
    let keep = s.exit_plan_mode(
        &plan,
        &mut Answer(ReviewOutcome::KeepPlanning("add tests".into()), vec![]),
    );
    assert!(keep.result.is_error && keep.result.content.contains("add tests") && !keep.end_turn);
    let none = s.exit_plan_mode(&plan, &mut Answer(ReviewOutcome::NoChannel, vec![]));
    assert!(none.result.is_error);
    let dismissed = s.exit_plan_mode(&plan, &mut Answer(ReviewOutcome::Dismissed, vec![]));
    assert_eq!(
        (dismissed.result.content.as_str(), dismissed.end_turn),
        (r#"{"approved":false}"#, true)
    );
    assert!(s.plan_mode().active, "still planning after all of those");
    let mut approve = Answer(ReviewOutcome::Approve, vec![]);
    let ok = s.exit_plan_mode(&plan, &mut approve);
    assert_eq!(ok.result.content, r#"{"approved":true}"#);
    assert_eq!(
        approve.1,
        ["# Refactor the loader\n1. Split parse and load"]
    );
    assert!(
        s.plan_mode().active,
        "plan guidance stays for the rest of the batch"
    );
    assert_eq!(
        s.before_request().notice,
        None,
        "an approved exit is silent"
    );
    assert!(!s.plan_mode().active);
}

#[test]
fn plan_commands_select_and_steer() {
    let mut s = PlanSession::builder(Arc::new(MemoryLog::new()), env()).open_or_fresh(&sid("s"));
    let r = s.run_plan_command(parse_plan_command("/plan split the loader").unwrap());
    assert_eq!(
        (r.reply.as_str(), r.steer.as_deref()),
        ("Plan mode is on.", Some("split the loader"))
    );
    assert_eq!(
        s.run_plan_command(PlanCommand::Enter).reply,
        "Plan mode is already on."
    );
    s.turn_opened();
    assert_eq!(
        s.run_plan_command(PlanCommand::Off).reply,
        "Plan mode turns off at the agent's next step."
    );
    assert_eq!(
        s.run_plan_command(PlanCommand::Enter).reply,
        "The pending exit was cancelled; plan mode stays on."
    );
}

#[test]
fn resume_refuses_a_session_that_does_not_exist_and_open_creates_it_on_first_write() {
    let log = Arc::new(MemoryLog::new());
    let err = PlanSession::builder(log.clone(), env())
        .resume(&sid("typo"))
        .unwrap_err();
    assert!(
        matches!(
            err,
            LogError::User(planlog_core::UserError::UnknownSession(_))
        ),
        "{err}"
    );
    assert!(
        log.sessions().unwrap().is_empty(),
        "a mistyped resume starts nothing"
    );
    let mut s = PlanSession::builder(log.clone(), env())
        .open(&sid("real"))
        .unwrap();
    s.plan_write(None, None, &two_items()).durable().unwrap();
    let resumed = PlanSession::builder(log, env())
        .resume(&sid("real"))
        .unwrap();
    assert_eq!(resumed.plan(), s.plan());
}

#[test]
fn a_log_shared_by_arc_clone_is_accepted_as_is() {
    // `Arc::clone(&log)` with `log: Arc<MemoryLog>` (or Arc<RedbLog>) needs no coercion.
    let log = Arc::new(MemoryLog::new());
    let s = PlanSession::builder(Arc::clone(&log), env())
        .create()
        .unwrap();
    assert!(log.session(s.id()).unwrap().is_some());
    let shared: Arc<dyn EventLog> = log;
    PlanSession::builder(shared, env()).create().unwrap();
}

#[test]
fn fork_at_and_state_at_travel_on_the_session_itself() {
    let log = Arc::new(MemoryLog::new());
    let mut s = PlanSession::builder(log.clone(), env())
        .open(&sid("s"))
        .unwrap();
    s.plan_write(Some("c1"), None, &two_items())
        .durable()
        .unwrap();
    s.plan_write(
        Some("c2"),
        None,
        &write(json!([{"id": "1", "content": "Write the parser", "status": "completed"}])),
    )
    .durable()
    .unwrap();
    let then = s.state_at(Seq::new(2).unwrap()).unwrap();
    assert_eq!(
        then.plan.items()[0].status,
        planlog_core::PlanStatus::InProgress
    );
    let fork = s.fork_at(Seq::new(2).unwrap(), Some("retry")).unwrap();
    assert_eq!(fork.plan(), then.plan);
    let info = log.session(fork.id()).unwrap().unwrap();
    assert_eq!(info.label.as_deref(), Some("retry"));
    assert_eq!(info.origin.fork_seq(), Seq::new(2).ok());
    assert!(s.fork_at(Seq::new(9).unwrap(), None).is_err());
}

#[test]
fn a_review_is_two_steps_and_the_session_is_free_in_between() {
    let mut s = PlanSession::builder(MemoryLog::new(), env())
        .open(&sid("s"))
        .unwrap();
    // Not in plan mode: refused at once.
    assert!(s.begin_review(r##"{"plan": "# P"}"##).is_err());
    s.set_plan_mode(true);
    s.before_request();
    let pending = s.begin_review(r##"{"plan": "# Plan\n1. a"}"##).unwrap();
    assert_eq!(pending.plan(), "# Plan\n1. a");
    // Meanwhile the session keeps working.
    s.plan_write(None, None, &two_items()).durable().unwrap();
    let exit = s.finish_review(pending, ReviewOutcome::Approve);
    assert_eq!(exit.result.content, r#"{"approved":true}"#);
    assert!(
        s.plan_mode().active,
        "leaves plan mode at the next request boundary"
    );
    s.before_request();
    assert!(!s.plan_mode().active);
    // A bad call is refused without a review.
    s.set_plan_mode(true);
    s.before_request();
    let refused = s.begin_review(r#"{"plan": "no heading"}"#).unwrap_err();
    assert!(refused.result.is_error);
}

#[test]
fn a_request_boundary_opens_the_turn_when_the_host_forgot_to() {
    let mut s = PlanSession::builder(MemoryLog::new(), env())
        .open(&sid("s"))
        .unwrap();
    s.before_request(); // no turn_opened
    assert_eq!(
        s.set_plan_mode(true),
        SetOutcome::Queued,
        "not switched mid-turn"
    );
    assert!(!s.plan_mode().active);
    s.before_request();
    assert!(s.plan_mode().active);
    s.turn_closed();
    assert_eq!(s.set_plan_mode(false), SetOutcome::Committed);
}

#[test]
fn tool_results_convert_to_each_vendors_shape() {
    let ok = planlog_core::ToolResult {
        is_error: false,
        content: "[]".into(),
    };
    let bad = planlog_core::ToolResult {
        is_error: true,
        content: "Rejected.".into(),
    };
    assert_eq!(
        ok.to_openai("call_1"),
        json!({"role": "tool", "tool_call_id": "call_1", "content": "[]"})
    );
    assert_eq!(bad.to_openai("call_2")["content"], "Error: Rejected.");
    assert_eq!(
        bad.to_anthropic("toolu_1"),
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "Rejected.", "is_error": true})
    );
    assert_eq!(
        ok.to_mcp(),
        json!({"content": [{"type": "text", "text": "[]"}], "isError": false})
    );
}
