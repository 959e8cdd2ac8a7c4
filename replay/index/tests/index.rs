//! The index against the log it is built from: marks where the log's refusals are, item texts
//! with the seqs the plans held them, a catch-up stopped half way and resumed equal to one in
//! a go, deleted sessions forgotten, a file of another store emptied, a foreign file refused.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::sync::Arc;

use planlog_core::events::EventBody;
use planlog_core::{EventLog, MemoryLog, PlanSession, Seq, SessionId, TestEnv};
use planlog_index::{Hit, Index, IndexError, MarkKind};
use serde_json::json;

/// A session of `n` writes over a few chunks of the log's scan: every fourth a refused bulk
/// completion.
fn session(log: &Arc<MemoryLog>, name: &str, n: usize) -> SessionId {
    let id = SessionId::new(name).unwrap();
    let mut s = PlanSession::builder(Arc::clone(log), Arc::new(TestEnv::default()))
        .open(&id)
        .unwrap();
    let step = |i: &str, c: String, st: &str| json!({"id": i, "content": c, "status": st});
    for k in 0..n {
        let args = match k % 4 {
            0 => {
                json!({"steps": [step("a", format!("draft {} of the parser", k / 4), "in_progress"), step("b", "b".into(), "pending")]})
            }
            1 => {
                json!({"steps": [step("a", format!("draft {} of the parser", k / 4), "completed"), step("b", "b".into(), "in_progress")]})
            }
            2 => {
                json!({"steps": [step("b", "b".into(), "completed"), step("c", "c".into(), "completed"), step("d", "d".into(), "completed")]})
            }
            _ => json!({"steps": [step("b", "b".into(), "pending")]}),
        };
        let _ = s.plan_write(Some(&format!("c{k}")), Some(k as u64), &args.to_string());
    }
    id
}

fn everything(index: &Index, id: &SessionId, last: u64) -> (Vec<planlog_index::Mark>, Vec<Hit>) {
    (
        index.marks(id, 1, last, usize::MAX).unwrap(),
        index.search("draft", 10_000).unwrap(),
    )
}

#[test]
fn the_index_says_what_the_log_holds_and_resumes_where_it_stopped() {
    let log = Arc::new(MemoryLog::new());
    let id = session(&log, "long", 4_500);
    let info = log.session(&id).unwrap().unwrap();
    let events = log.read(&id, Seq::FIRST, None).unwrap();
    let refused: Vec<u64> = events
        .iter()
        .filter(|e| matches!(e.body, EventBody::WriteRejected(_)))
        .map(|e| e.seq.get())
        .collect();
    assert!(refused.len() > 1_000);
    let dir = tempfile::tempdir().unwrap();

    // Stopped after its first chunk, then resumed.
    let halves = Index::open(&dir.path().join("a.redb"), "store").unwrap();
    let (now, read) = halves.catch_up_session(&*log, &info, &|| true).unwrap();
    assert!(now < info.events && now == read, "{now} of {}", info.events);
    assert_eq!(halves.indexed(&id).unwrap(), now);
    let done = halves
        .catch_up(&*log, std::slice::from_ref(&info), &|| false)
        .unwrap();
    assert!(done.complete() && done.events == info.events, "{done:?}");
    // In one go.
    let whole = Index::open(&dir.path().join("b.redb"), "store").unwrap();
    whole
        .catch_up(&*log, std::slice::from_ref(&info), &|| false)
        .unwrap();
    assert_eq!(
        everything(&halves, &id, info.events),
        everything(&whole, &id, info.events)
    );

    // Marks: exactly the refusals, in order; next and previous from anywhere.
    let (marks, hits) = everything(&whole, &id, info.events);
    assert!(marks.iter().all(|m| m.kind == MarkKind::Refusal));
    assert_eq!(marks.iter().map(|m| m.seq).collect::<Vec<_>>(), refused);
    let next = whole
        .next_mark(&id, refused[10], true, &[MarkKind::Refusal])
        .unwrap()
        .unwrap();
    assert_eq!(next.seq, refused[11]);
    let prev = whole
        .next_mark(&id, refused[10], false, &[MarkKind::Refusal])
        .unwrap()
        .unwrap();
    assert_eq!(prev.seq, refused[9]);
    assert!(
        whole
            .next_mark(&id, refused[10], true, &[MarkKind::Flag])
            .unwrap()
            .is_none()
    );
    let buckets = whole.buckets(&id, info.events, 7).unwrap();
    assert_eq!(
        buckets.iter().map(|b| b.counts[0]).sum::<u64>(),
        refused.len() as u64
    );
    assert_eq!(
        (buckets[0].from, buckets.last().unwrap().to),
        (1, info.events)
    );

    // Texts: each content of item a once, with the first and last seq a plan held it.
    let a: Vec<_> = hits
        .iter()
        .filter_map(|h| match h {
            Hit::Item { item, texts, .. } if item == "a" => Some(texts),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(a.len(), 1_125, "one text per draft");
    for t in a.iter().step_by(97) {
        let held = |seq: u64| {
            log.state_at(&id, Seq::new(seq).unwrap())
                .unwrap()
                .plan
                .items()
                .iter()
                .any(|i| i.content == t.content)
        };
        assert!(held(t.first) && held(t.last), "{t:?}");
        assert!(!held(t.first - 1), "{t:?} held before its first seq");
        assert!(
            t.last == info.events || !held(t.last + 1),
            "{t:?} held after its last seq"
        );
    }
    assert!(whole.search("DRAFT 17 OF", 100).unwrap().iter().any(|h| matches!(h, Hit::Item { texts, .. } if texts.iter().any(|t| t.content == "draft 17 of the parser"))));
    assert!(
        whole.search("bulk_completion", 5).unwrap().len() == 5,
        "refusals are searchable"
    );
}

#[test]
fn deleted_sessions_are_forgotten_and_another_stores_index_is_emptied() {
    let log = Arc::new(MemoryLog::new());
    let keep = session(&log, "keep", 20);
    let gone = session(&log, "gone", 20);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.redb");
    let index = Index::open(&path, "store one").unwrap();
    index
        .catch_up(&*log, &log.sessions().unwrap(), &|| false)
        .unwrap();
    let sessions_found = |index: &Index| {
        let mut s: Vec<String> = index
            .search("draft", 1_000)
            .unwrap()
            .into_iter()
            .map(|h| match h {
                Hit::Item { session, .. } | Hit::Mark { session, .. } => session,
            })
            .collect();
        s.dedup();
        s
    };
    assert_eq!(sessions_found(&index), ["gone", "keep"]);
    log.delete(&gone).unwrap();
    index
        .catch_up(&*log, &log.sessions().unwrap(), &|| false)
        .unwrap();
    assert_eq!(sessions_found(&index), ["keep"]);
    assert_eq!(index.indexed(&gone).unwrap(), 0);
    assert!(index.indexed(&keep).unwrap() > 0);
    drop(index);
    // The same file opened for another store starts empty.
    let other = Index::open(&path, "store two").unwrap();
    assert_eq!(other.indexed(&keep).unwrap(), 0);
    assert!(other.search("draft", 10).unwrap().is_empty());
}

#[test]
fn a_file_planlog_did_not_write_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.redb");
    std::fs::write(&path, "not a database\n").unwrap();
    let err = Index::open(&path, "store").unwrap_err();
    assert!(matches!(err, IndexError::File { .. }), "{err}");
    assert!(err.to_string().contains("remove it"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "not a database\n");
}
