//! Every plan_write rule of REFERENCE-BEHAVIOUR.md § plan_write as a named given/when/then
//! test, plus our stricter input checks.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // test code

mod common;

use common::{given, it, wrote};
use planlog_core::rules::RejectionCode as R;
use serde_json::json;

// ---- read mode -------------------------------------------------------------------------

#[test]
fn missing_steps_is_a_read_that_returns_the_plan() {
    given(&[wrote(&[("1", "a", "pending")])])
        .when(json!({}))
        .then_read();
}

#[test]
fn null_steps_is_a_read() {
    given(&[wrote(&[("1", "a", "in_progress")])])
        .when(json!({"steps": null}))
        .then_read();
}

#[test]
fn empty_steps_is_a_read_and_cannot_clear_the_plan() {
    let then = given(&[wrote(&[("1", "a", "pending")])])
        .when(json!({"steps": []}))
        .then_read();
    assert_eq!(
        then.exec.result.content,
        r#"[{"id":"1","content":"a","status":"pending"}]"#
    );
}

#[test]
fn read_of_an_empty_plan_returns_an_empty_array_not_null() {
    let then = given(&[]).when(json!({})).then_read();
    assert_eq!(then.exec.result.content, "[]");
}

#[test]
fn empty_argument_text_and_null_arguments_are_reads() {
    given(&[]).when_raw("").then_read();
    given(&[]).when_raw("null").then_read();
}

// ---- writes and the merge --------------------------------------------------------------

#[test]
fn first_write_creates_the_plan_in_submission_order() {
    given(&[])
        .when(json!({"steps": [
            {"id": "1", "content": "Create parser.go", "status": "pending"},
            {"id": "2", "content": "Implement load", "status": "in_progress"}
        ]}))
        .then_plan(&[
            ("1", "Create parser.go", "pending"),
            ("2", "Implement load", "in_progress"),
        ]);
}

#[test]
fn resubmitted_id_takes_new_content_and_status_at_its_old_position() {
    given(&[wrote(&[
        ("1", "a", "in_progress"),
        ("2", "b", "pending"),
        ("3", "c", "pending"),
    ])])
    .when(json!({"steps": [
        {"id": "2", "content": "b, reworded", "status": "in_progress"},
        {"id": "1", "content": "a", "status": "completed"},
        {"id": "3", "content": "c", "status": "pending"}
    ]}))
    .then_plan(&[
        ("1", "a", "completed"),
        ("2", "b, reworded", "in_progress"),
        ("3", "c", "pending"),
    ]);
}

#[test]
fn omitted_in_progress_and_completed_items_are_kept_as_they_were() {
    given(&[wrote(&[
        ("1", "a", "completed"),
        ("2", "b", "in_progress"),
        ("3", "c", "pending"),
    ])])
    .when(json!({"steps": [{"id": "3", "content": "c", "status": "in_progress"}]}))
    .then_plan(&[
        ("1", "a", "completed"),
        ("2", "b", "in_progress"),
        ("3", "c", "in_progress"),
    ]);
}

#[test]
fn omitted_pending_and_cancelled_items_are_dropped() {
    given(&[wrote(&[
        ("1", "a", "pending"),
        ("2", "b", "cancelled"),
        ("3", "c", "in_progress"),
    ])])
    .when(json!({"steps": [{"id": "3", "content": "c", "status": "completed"}]}))
    .then_plan(&[("3", "c", "completed")])
    .then_result_says("Removed, because this call left them out (pending and cancelled items you leave out are removed; in_progress and completed ones are kept): 1 (pending, \"a\"), 2 (cancelled, \"b\"). To keep an item, send it again.");
}

#[test]
fn new_ids_are_appended_in_submission_order_after_existing_items() {
    given(&[wrote(&[("1", "a", "in_progress")])])
        .when(json!({"steps": [
            {"id": "z", "content": "new z", "status": "pending"},
            {"id": "1", "content": "a", "status": "in_progress"},
            {"id": "m", "content": "new m", "status": "pending"}
        ]}))
        .then_plan(&[
            ("1", "a", "in_progress"),
            ("z", "new z", "pending"),
            ("m", "new m", "pending"),
        ]);
}

#[test]
fn partial_update_of_two_items_keeps_all_eight_in_order() {
    // The incident the merge exists for: 8 items, the model resends only 2 of them.
    let eight: Vec<(String, String, &str)> = (1..=8)
        .map(|i| {
            (
                i.to_string(),
                format!("step {i}"),
                if i <= 3 {
                    "completed"
                } else if i == 4 {
                    "in_progress"
                } else {
                    "completed"
                },
            )
        })
        .collect();
    let eight_ref: Vec<(&str, &str, &str)> = eight
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), *c))
        .collect();
    let mut expected = eight_ref.clone();
    expected[3].2 = "completed";
    expected[4].2 = "in_progress";
    given(&[wrote(&eight_ref)])
        .when(json!({"steps": [
            {"id": "4", "content": "step 4", "status": "completed"},
            {"id": "5", "content": "step 5", "status": "in_progress"}
        ]}))
        .then_plan(&expected);
}

#[test]
fn result_of_a_write_is_the_whole_merged_plan_as_json() {
    let then = given(&[wrote(&[("1", "a", "completed")])])
        .when(json!({"steps": [{"id": "2", "content": "b", "status": "pending"}]}))
        .then_plan(&[("1", "a", "completed"), ("2", "b", "pending")]);
    assert_eq!(
        then.exec.result.content,
        r#"[{"id":"1","content":"a","status":"completed"},{"id":"2","content":"b","status":"pending"}]"#
    );
}

// ---- anti-cheat --------------------------------------------------------------------------

#[test]
fn one_new_item_straight_to_completed_is_allowed() {
    given(&[])
        .when(json!({"steps": [{"id": "1", "content": "a", "status": "completed"}]}))
        .then_plan(&[("1", "a", "completed")]);
}

#[test]
fn one_pending_item_straight_to_completed_is_allowed() {
    given(&[wrote(&[("1", "a", "pending"), ("2", "b", "pending")])])
        .when(json!({"steps": [{"id": "1", "content": "a", "status": "completed"}]}))
        .then_plan(&[("1", "a", "completed")]);
}

#[test]
fn bulk_completion_of_new_items_is_rejected_and_state_kept() {
    let msg = given(&[wrote(&[("0", "x", "in_progress")])])
        .when(json!({"steps": [
            {"id": "1", "content": "a", "status": "completed"},
            {"id": "2", "content": "b", "status": "completed"}
        ]}))
        .then_rejected(R::BulkCompletion);
    assert!(
        msg.contains(r#"step 1 (id "1")"#) && msg.contains(r#"step 2 (id "2")"#),
        "{msg}"
    );
}

#[test]
fn bulk_completion_of_pending_items_is_rejected() {
    given(&[wrote(&[
        ("1", "a", "pending"),
        ("2", "b", "pending"),
        ("3", "c", "pending"),
    ])])
    .when(json!({"steps": [
        {"id": "1", "content": "a", "status": "completed"},
        {"id": "2", "content": "b", "status": "completed"},
        {"id": "3", "content": "c", "status": "completed"}
    ]}))
    .then_rejected(R::BulkCompletion);
}

#[test]
fn new_and_pending_direct_completions_count_together() {
    given(&[wrote(&[("1", "a", "pending")])])
        .when(json!({"steps": [
            {"id": "1", "content": "a", "status": "completed"},
            {"id": "2", "content": "b", "status": "completed"}
        ]}))
        .then_rejected(R::BulkCompletion);
}

#[test]
fn in_progress_to_completed_is_not_counted_however_many() {
    given(&[wrote(&[
        ("1", "a", "in_progress"),
        ("2", "b", "in_progress"),
        ("3", "c", "in_progress"),
    ])])
    .when(json!({"steps": [
        {"id": "1", "content": "a", "status": "completed"},
        {"id": "2", "content": "b", "status": "completed"},
        {"id": "3", "content": "c", "status": "completed"}
    ]}))
    .then_plan(&[
        ("1", "a", "completed"),
        ("2", "b", "completed"),
        ("3", "c", "completed"),
    ]);
}

#[test]
fn resubmitted_completed_items_are_not_counted() {
    given(&[wrote(&[
        ("1", "a", "completed"),
        ("2", "b", "completed"),
        ("3", "c", "pending"),
    ])])
    .when(json!({"steps": [
        {"id": "1", "content": "a", "status": "completed"},
        {"id": "2", "content": "b", "status": "completed"},
        {"id": "3", "content": "c", "status": "completed"}
    ]}))
    .then_plan(&[
        ("1", "a", "completed"),
        ("2", "b", "completed"),
        ("3", "c", "completed"),
    ]);
}

#[test]
fn cancelled_to_completed_is_rejected_at_once() {
    let msg = given(&[wrote(&[("1", "a", "cancelled")])])
        .when(json!({"steps": [{"id": "1", "content": "a", "status": "completed"}]}))
        .then_rejected(R::CancelledToCompleted);
    assert!(
        msg.contains("restore it to pending or in_progress first"),
        "{msg}"
    );
}

#[test]
fn cancelled_to_completed_wins_over_a_bulk_completion_in_the_same_call() {
    // harness9 returns at the cancelled step during its walk; the bulk check comes after.
    given(&[wrote(&[("c", "x", "cancelled")])])
        .when(json!({"steps": [
            {"id": "1", "content": "a", "status": "completed"},
            {"id": "2", "content": "b", "status": "completed"},
            {"id": "c", "content": "x", "status": "completed"}
        ]}))
        .then_rejected(R::CancelledToCompleted);
}

#[test]
fn cancelled_item_restored_to_pending_then_completed_through_in_progress_is_allowed() {
    let start = wrote(&[("1", "a", "cancelled")]);
    let restored = wrote(&[("1", "a", "in_progress")]);
    given(std::slice::from_ref(&start))
        .when(json!({"steps": [{"id": "1", "content": "a", "status": "in_progress"}]}))
        .then_plan(&[("1", "a", "in_progress")]);
    given(&[start, restored])
        .when(json!({"steps": [{"id": "1", "content": "a", "status": "completed"}]}))
        .then_plan(&[("1", "a", "completed")]);
}

#[test]
fn reopening_a_completed_item_is_allowed() {
    given(&[wrote(&[("1", "a", "completed")])])
        .when(json!({"steps": [{"id": "1", "content": "a, again", "status": "pending"}]}))
        .then_plan(&[("1", "a, again", "pending")]);
}

#[test]
fn one_direct_completion_beside_many_finished_items_is_allowed() {
    given(&[wrote(&[
        ("1", "a", "in_progress"),
        ("2", "b", "in_progress"),
        ("3", "c", "pending"),
    ])])
    .when(json!({"steps": [
        {"id": "1", "content": "a", "status": "completed"},
        {"id": "2", "content": "b", "status": "completed"},
        {"id": "3", "content": "c", "status": "completed"}
    ]}))
    .then_plan(&[
        ("1", "a", "completed"),
        ("2", "b", "completed"),
        ("3", "c", "completed"),
    ]);
}

#[test]
fn preserved_items_are_not_checked_by_anti_cheat() {
    // Item 1 was completed honestly before; omitting it is no completion in this call.
    given(&[wrote(&[("1", "a", "completed"), ("2", "b", "pending")])])
        .when(json!({"steps": [{"id": "2", "content": "b", "status": "completed"}]}))
        .then_plan(&[("1", "a", "completed"), ("2", "b", "completed")]);
}

#[test]
fn cancelling_is_the_way_to_abandon_an_item() {
    given(&[wrote(&[("1", "a", "in_progress")])])
        .when(json!({"steps": [{"id": "1", "content": "a", "status": "cancelled"}]}))
        .then_plan(&[("1", "a", "cancelled")]);
}

// ---- stricter input checks ---------------------------------------------------------------

#[test]
fn empty_or_blank_id_is_rejected_naming_the_step() {
    for id in ["", "   "] {
        let msg = given(&[])
            .when(json!({"steps": [
                {"id": "ok", "content": "a", "status": "pending"},
                {"id": id, "content": "b", "status": "pending"}
            ]}))
            .then_rejected(R::EmptyId);
        assert!(msg.starts_with("step 2 "), "{msg}");
    }
}

#[test]
fn empty_or_blank_content_is_rejected() {
    for content in ["", " \n\t"] {
        let msg = given(&[])
            .when(json!({"steps": [{"id": "x", "content": content, "status": "pending"}]}))
            .then_rejected(R::EmptyContent);
        assert!(msg.starts_with(r#"step 1 (id "x")"#), "{msg}");
    }
}

#[test]
fn unknown_status_is_rejected_listing_the_allowed_ones() {
    let msg = given(&[])
        .when(json!({"steps": [{"id": "1", "content": "a", "status": "done"}]}))
        .then_rejected(R::UnknownStatus);
    assert!(
        msg.contains("pending, in_progress, completed, cancelled"),
        "{msg}"
    );
    assert!(msg.contains(r#""done""#), "{msg}");
}

#[test]
fn duplicate_id_within_a_call_is_rejected() {
    let msg = given(&[])
        .when(json!({"steps": [
            {"id": "1", "content": "a", "status": "pending"},
            {"id": "1", "content": "b", "status": "pending"}
        ]}))
        .then_rejected(R::DuplicateId);
    assert!(msg.contains("step 2") && msg.contains("step 1"), "{msg}");
}

#[test]
fn steps_that_are_not_an_array_are_rejected() {
    for bad in [json!("1,2"), json!({"id": "1"}), json!(3), json!(true)] {
        given(&[])
            .when(json!({"steps": bad}))
            .then_rejected(R::StepsNotArray);
    }
}

#[test]
fn a_step_that_is_not_an_object_is_rejected() {
    given(&[])
        .when(json!({"steps": ["do it"]}))
        .then_rejected(R::StepNotObject);
}

#[test]
fn a_step_missing_a_field_is_rejected_naming_the_field() {
    for field in ["id", "content", "status"] {
        let mut step = json!({"id": "1", "content": "a", "status": "pending"});
        step.as_object_mut().unwrap().remove(field);
        let msg = given(&[])
            .when(json!({"steps": [step]}))
            .then_rejected(R::MissingField);
        assert!(msg.contains(&format!("no {field:?}")), "{msg}");
    }
}

#[test]
fn unknown_step_fields_are_rejected() {
    let msg = given(&[])
        .when(json!({"steps": [{"id": "1", "content": "a", "status": "pending", "priority": "high"}]}))
        .then_rejected(R::UnknownField);
    assert!(msg.contains(r#""priority""#), "{msg}");
}

#[test]
fn unknown_arguments_are_rejected() {
    given(&[])
        .when(json!({"todos": []}))
        .then_rejected(R::UnknownArgument);
}

#[test]
fn non_string_fields_are_rejected() {
    given(&[])
        .when(json!({"steps": [{"id": 1, "content": "a", "status": "pending"}]}))
        .then_rejected(R::FieldNotString);
    given(&[])
        .when(json!({"steps": [{"id": "1", "content": null, "status": "pending"}]}))
        .then_rejected(R::FieldNotString);
}

#[test]
fn arguments_that_are_not_json_or_not_an_object_are_rejected() {
    let then = given(&[]).when_raw("{\"steps\": [");
    assert_eq!(then.submitted(), Some(&json!("{\"steps\": [")));
    then.then_rejected(R::InvalidJson);
    given(&[])
        .when(json!([1, 2]))
        .then_rejected(R::ArgumentsNotObject);
}

#[test]
fn more_than_200_steps_in_a_call_are_rejected() {
    let steps: Vec<_> = (0..201)
        .map(|i| json!({"id": i.to_string(), "content": "x", "status": "pending"}))
        .collect();
    given(&[])
        .when(json!({"steps": steps}))
        .then_rejected(R::TooManySteps);
    let steps: Vec<_> = (0..200)
        .map(|i| json!({"id": i.to_string(), "content": "x", "status": "pending"}))
        .collect();
    let then = given(&[]).when(json!({"steps": steps}));
    assert!(!then.exec.result.is_error);
}

#[test]
fn a_merge_that_would_pass_200_items_is_rejected() {
    let kept: Vec<(String, &str, &str)> = (0..150)
        .map(|i| (format!("old{i}"), "x", "completed"))
        .collect();
    let kept_ref: Vec<(&str, &str, &str)> =
        kept.iter().map(|(a, b, c)| (a.as_str(), *b, *c)).collect();
    let steps: Vec<_> = (0..51)
        .map(|i| json!({"id": format!("new{i}"), "content": "x", "status": "pending"}))
        .collect();
    let msg = given(&[wrote(&kept_ref)])
        .when(json!({"steps": steps}))
        .then_rejected(R::PlanTooLarge);
    assert!(msg.contains("201 items"), "{msg}");
}

#[test]
fn content_over_2000_characters_is_rejected_and_2000_accepted() {
    let long = "é".repeat(2001);
    given(&[])
        .when(json!({"steps": [{"id": "1", "content": long, "status": "pending"}]}))
        .then_rejected(R::ContentTooLong);
    let max = "é".repeat(2000);
    assert!(
        !given(&[])
            .when(json!({"steps": [{"id": "1", "content": max, "status": "pending"}]}))
            .exec
            .result
            .is_error
    );
}

#[test]
fn id_over_128_characters_is_rejected_and_128_accepted() {
    given(&[])
        .when(json!({"steps": [{"id": "x".repeat(129), "content": "a", "status": "pending"}]}))
        .then_rejected(R::IdTooLong);
    assert!(
        !given(&[])
            .when(json!({"steps": [{"id": "x".repeat(128), "content": "a", "status": "pending"}]}))
            .exec
            .result
            .is_error
    );
}

#[test]
fn ids_with_control_characters_are_rejected() {
    given(&[])
        .when(json!({"steps": [{"id": "1\n[ ] forged", "content": "a", "status": "pending"}]}))
        .then_rejected(R::IdBadChar);
}

#[test]
fn oversized_arguments_are_rejected_unparsed_and_kept_short() {
    let huge = format!(
        "{{\"steps\": \"{}\"}}",
        "x".repeat(planlog_core::limits::MAX_ARGUMENTS_BYTES)
    );
    let then = given(&[]).when_raw(&huge);
    let kept = then.submitted().and_then(|v| v.as_str()).unwrap().len();
    assert!(kept < 5000, "kept {kept} bytes");
    assert!(
        planlog_core::rules::is_cut_submission(then.submitted().unwrap()),
        "verify must know it cannot re-run this"
    );
    let short = given(&[]).when_raw("{\"steps\": [");
    assert!(!planlog_core::rules::is_cut_submission(
        short.submitted().unwrap()
    ));
    then.then_rejected(R::ArgumentsTooLarge);
}

#[test]
fn input_checks_come_before_anti_cheat() {
    // A malformed second step is reported even though the first would be a fine completion.
    given(&[])
        .when(json!({"steps": [
            {"id": "1", "content": "a", "status": "completed"},
            {"id": "2", "content": "b", "status": "finished"}
        ]}))
        .then_rejected(R::UnknownStatus);
}

#[test]
fn a_large_refused_submission_is_kept_as_an_excerpt_with_its_size_and_hash() {
    // Valid JSON of 3 MB, refused for its content length: it must not be stored whole.
    let content = "y".repeat(3 * 1024 * 1024);
    let args = json!({"steps": [{"id": "1", "content": content, "status": "pending"}]}).to_string();
    let then = given(&[]).when_raw(&args);
    let kept = then
        .submitted()
        .and_then(|v| v.as_str())
        .unwrap()
        .to_owned();
    assert!(kept.len() < 5000, "kept {} bytes", kept.len());
    let hash = planlog_core::events::Hash::of(args.as_bytes()).to_string();
    assert!(
        kept.ends_with(&format!(
            "[cut: {} bytes in all, sha256 {hash}]",
            args.len()
        )),
        "{}",
        &kept[kept.len() - 120..]
    );
    assert!(planlog_core::rules::is_cut_submission(
        then.submitted().unwrap()
    ));
    // A short refused submission is kept whole, as it was sent.
    let short =
        given(&[]).when(json!({"steps": [{"id": "1", "content": "", "status": "pending"}]}));
    assert!(short.submitted().unwrap().is_object());
    assert!(!planlog_core::rules::is_cut_submission(
        short.submitted().unwrap()
    ));
    then.then_rejected(R::ContentTooLong);
}

// ---- dependencies, owners and the other optional fields (event format 2) ----------------

fn id(s: &str) -> planlog_core::ItemId {
    planlog_core::ItemId::new(s).unwrap()
}

#[test]
fn optional_fields_are_kept_when_left_out_replaced_when_sent_and_cleared_when_empty() {
    let then = given(&[]).when(json!({"steps": [
        {"id": "1", "content": "Parse", "status": "in_progress", "owner": "alice",
         "description": "YAML in", "active_form": "Parsing", "metadata": {"priority": "high"}},
        {"id": "2", "content": "Load", "status": "pending", "blocked_by": ["1"]}
    ]}));
    let first = then.plan().clone();
    assert_eq!(first.items()[0].owner.as_deref(), Some("alice"));
    assert_eq!(first.items()[1].blockers(), [id("1")]);
    // Left out: kept (a status update does not lose the owner or the dependency).
    let after = planlog_core::events::EventBody::PlanWritten(planlog_core::events::PlanWritten {
        semantics: planlog_core::events::WriteSemantics::Merge,
        submitted: first.items().to_vec(),
        plan: first.clone(),
        explanation: None,
        source: None,
        ids_issued: None,
        tool_call: None,
    });
    let kept = given(std::slice::from_ref(&after)).when(json!({"steps": [
        {"id": "1", "content": "Parse", "status": "completed"},
        {"id": "2", "content": "Load", "status": "in_progress"}
    ]}));
    let plan = kept.plan();
    assert_eq!(plan.items()[0].owner.as_deref(), Some("alice"));
    assert_eq!(plan.items()[0].description.as_deref(), Some("YAML in"));
    assert_eq!(plan.items()[1].blockers(), [id("1")]);
    // Sent: replaced; empty: cleared.
    let changed = given(std::slice::from_ref(&after)).when(json!({"steps": [
        {"id": "1", "content": "Parse", "status": "in_progress", "owner": "", "metadata": {}},
        {"id": "2", "content": "Load", "status": "pending", "blocked_by": [], "owner": "bob"}
    ]}));
    let plan = changed.plan();
    assert_eq!(plan.items()[0].owner, None);
    assert_eq!(plan.items()[0].metadata, None);
    assert_eq!(plan.items()[0].active_form.as_deref(), Some("Parsing"));
    assert_eq!(plan.items()[1].blocked_by, None);
    assert_eq!(plan.items()[1].owner.as_deref(), Some("bob"));
}

#[test]
fn a_harness9_style_call_is_unchanged_by_the_new_fields() {
    let then =
        given(&[]).when(json!({"steps": [{"id": "1", "content": "a", "status": "pending"}]}));
    assert_eq!(
        then.exec.result.content,
        r#"[{"id":"1","content":"a","status":"pending"}]"#
    );
}

#[test]
fn a_blocker_missing_from_the_resulting_plan_is_rejected() {
    given(&[])
        .when(json!({"steps": [{"id": "1", "content": "a", "status": "pending", "blocked_by": ["nope"]}]}))
        .then_rejected(R::UnknownBlocker);
    // Leaving out a pending blocker removes it, so its dependant would dangle.
    let msg = given(&[wrote(&[("b", "blocker", "pending")])])
        .when(json!({"steps": [{"id": "x", "content": "dependant", "status": "pending", "blocked_by": ["b"]}]}))
        .then_rejected(R::UnknownBlocker);
    assert!(msg.contains("Keep \"b\" in the plan"), "{msg}");
    let prior = planlog_core::events::EventBody::PlanWritten(planlog_core::events::PlanWritten {
        semantics: planlog_core::events::WriteSemantics::Merge,
        submitted: vec![],
        plan: planlog_core::Plan::from_items(vec![
            it("b", "blocker", "pending"),
            it("x", "dependant", "pending").with_blocked_by(vec![id("b")]),
        ]),
        explanation: None,
        source: None,
        ids_issued: None,
        tool_call: None,
    });
    let msg = given(&[prior])
        .when(json!({"steps": [{"id": "x", "content": "dependant", "status": "in_progress"}]}))
        .then_rejected(R::UnknownBlocker);
    assert!(
        msg.contains("a pending or cancelled item you leave out is removed"),
        "{msg}"
    );
}

#[test]
fn an_item_blocked_by_itself_is_rejected() {
    given(&[])
        .when(json!({"steps": [{"id": "1", "content": "a", "status": "pending", "blocked_by": ["1"]}]}))
        .then_rejected(R::SelfBlocked);
}

#[test]
fn a_dependency_cycle_is_rejected() {
    let msg = given(&[])
        .when(json!({"steps": [
            {"id": "a", "content": "A", "status": "pending", "blocked_by": ["c"]},
            {"id": "b", "content": "B", "status": "pending", "blocked_by": ["a"]},
            {"id": "c", "content": "C", "status": "pending", "blocked_by": ["b"]}
        ]}))
        .then_rejected(R::DependencyCycle);
    assert!(msg.contains("waits for"), "{msg}");
}

#[test]
fn starting_a_blocked_item_is_allowed_and_flagged() {
    let prior = planlog_core::events::EventBody::PlanWritten(planlog_core::events::PlanWritten {
        semantics: planlog_core::events::WriteSemantics::Merge,
        submitted: vec![],
        plan: planlog_core::Plan::from_items(vec![
            it("1", "first", "pending"),
            it("2", "second", "pending").with_blocked_by(vec![id("1")]),
        ]),
        explanation: None,
        source: None,
        ids_issued: None,
        tool_call: None,
    });
    let then = given(std::slice::from_ref(&prior)).when(json!({"steps": [
        {"id": "1", "content": "first", "status": "pending"},
        {"id": "2", "content": "second", "status": "in_progress"}
    ]}));
    let after = then.plan().clone();
    let before = planlog_core::events::fold_bodies(std::slice::from_ref(&prior)).plan;
    let flags = planlog_core::rules::blocked_starts(&before, &after);
    assert_eq!(flags.len(), 1);
    assert_eq!(flags[0].describe(), "started while blocked: 2 waits for 1");
}

#[test]
fn a_dependency_problem_an_import_left_does_not_block_later_calls() {
    // An imported plan whose item waits for a task the source deleted.
    let imported =
        planlog_core::events::EventBody::PlanWritten(planlog_core::events::PlanWritten {
            semantics: planlog_core::events::WriteSemantics::Replace,
            submitted: vec![],
            plan: planlog_core::Plan::from_items(vec![
                it("1", "a", "pending").with_blocked_by(vec![id("gone")]),
            ]),
            explanation: None,
            source: None,
            ids_issued: None,
            tool_call: None,
        });
    given(&[imported])
        .when(json!({"steps": [{"id": "2", "content": "b", "status": "pending"}]}))
        .plan();
}
