//! Isolation: no API path lets a sub-agent session read or write its parent's plan or the
//! durable store, and no session id can name a file outside the store's plan folder.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::sync::Arc;

use planlog_core::plan_mode::{PlanCommand, PlanReview, ReviewOutcome};
use planlog_core::{EventLog, PlanSession, Seq, SessionId, TestEnv};
use planlog_store::RedbLog;
use planlog_store::host::PlanFiles;
use proptest::prelude::*;
use serde_json::json;

struct Approve;

impl PlanReview for Approve {
    fn review(&mut self, _plan: &str) -> ReviewOutcome {
        ReviewOutcome::Approve
    }
}

#[test]
fn every_sub_agent_api_leaves_the_parent_and_the_store_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("planlog.redb");
    let log = Arc::new(RedbLog::open(&store).unwrap());
    let files = PlanFiles::beside(&store);
    let mut parent = PlanSession::builder(log.clone(), TestEnv::default())
        .sink(files.clone())
        .open(&SessionId::new("parent").unwrap())
        .unwrap();
    parent
        .plan_write(
            Some("p1"),
            Some(1),
            &json!({"steps": [{"id": "1", "content": "parent work", "status": "in_progress"}]})
                .to_string(),
        )
        .durable()
        .unwrap();
    let parent_events = log.read(parent.id(), Seq::FIRST, None).unwrap();
    let parent_plan = parent.plan();
    let parent_file = std::fs::read_to_string(files.path_for(parent.id())).unwrap();

    let mut child = parent.delegate(&["plan_write"]).unwrap();
    // Reads see only the child's own (empty) plan.
    assert!(
        child.plan().is_empty()
            && child.plan_text().is_empty()
            && child.shared_plan().read().is_empty()
    );
    assert!(!Arc::ptr_eq(&child.shared_plan(), &parent.shared_plan()));
    assert_eq!(child.inject(&["hi".to_owned()], |t| t), ["hi"]);
    // Writes of every kind, including ids the parent uses.
    child
        .plan_write(
            Some("p1"),
            None,
            &json!({"steps": [{"id": "1", "content": "child overwrite?", "status": "completed"}]})
                .to_string(),
        )
        .durable()
        .unwrap();
    child.plan_write(None, None, "{}").durable().unwrap();
    child.plan_write(None, None, "garbage").durable().unwrap();
    child.set_plan_mode(true);
    child.turn_opened();
    child.before_request();
    child.exit_plan_mode(&json!({"plan": "# x"}).to_string(), &mut Approve);
    child.run_plan_command(PlanCommand::Enter);
    child.turn_closed();
    assert!(child.delegate(&["plan_write"]).is_err());
    child.close().unwrap();
    let child_id = child.id().clone();
    drop(child);

    assert_eq!(parent.plan(), parent_plan);
    assert!(!parent.state().plan_mode);
    assert_eq!(
        log.read(parent.id(), Seq::FIRST, None).unwrap(),
        parent_events
    );
    assert_eq!(
        log.sessions().unwrap().len(),
        1,
        "nothing of the child in the durable store"
    );
    assert_eq!(log.last(&child_id).unwrap(), None);
    assert_eq!(
        std::fs::read_to_string(files.path_for(parent.id())).unwrap(),
        parent_file
    );
    assert!(
        !files.path_for(&child_id).exists(),
        "no plan file for the child"
    );
    assert_eq!(std::fs::read_dir(files.dir()).unwrap().count(), 1);
}

proptest! {
    #[test]
    fn no_session_id_names_a_path_outside_the_plan_folder(s in "\\PC{0,80}|[./\\\\a-zA-Z0-9_-]{0,70}") {
        let files = PlanFiles::new("/store/plans");
        if let Ok(id) = SessionId::new(s.clone()) {
            let path = files.path_for(&id);
            prop_assert_eq!(path.parent(), Some(std::path::Path::new("/store/plans")));
            prop_assert!(path.file_name().unwrap().to_string_lossy().ends_with(".md"));
            prop_assert!(!id.as_str().contains(['/', '\\', '.', '\0']));
        }
    }
}
