//! Events: on-disk JSON, the hash chain, decoding, format versions, and the fold.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // test code

use planlog_core::testkit::{item, seal_after, sid, started, written};
use planlog_core::{
    PlanStatus, Seq, SessionState, apply,
    events::{DecodeError, EVENT_FORMAT, Event, EventBody, ModeSelected, Origin},
    fold,
};

fn chain() -> Vec<Event> {
    let s = sid("01JDXSESSION");
    let mut events = vec![seal_after(None, &s, None, started(Origin::New))];
    events.push(seal_after(
        events.last(),
        &s,
        Some("call_1"),
        written(vec![item("1", "Write parser", PlanStatus::InProgress)]),
    ));
    events.push(seal_after(
        events.last(),
        &s,
        None,
        EventBody::ModeSelected(ModeSelected { active: true }),
    ));
    events
}

#[test]
fn event_json_is_the_documented_on_disk_format() {
    let e = &chain()[1];
    let json = String::from_utf8(e.encode()).unwrap();
    insta::assert_snapshot!(json);
}

#[test]
fn encode_decode_round_trips_and_is_canonical() {
    for e in chain() {
        let bytes = e.encode();
        let back = Event::decode(&bytes).unwrap();
        assert_eq!(back, e);
        assert_eq!(back.encode(), bytes);
    }
}

#[test]
fn decode_checks_stored_bytes_and_other_encodings_of_a_valid_event() {
    let e = &chain()[1];
    let bytes = String::from_utf8(e.encode()).unwrap();
    // Canonical bytes with their content changed: refused.
    let changed = bytes.replace("Write parser", "Write parsed");
    assert_ne!(changed, bytes);
    assert!(matches!(
        Event::decode(changed.as_bytes()),
        Err(DecodeError::HashMismatch)
    ));
    // The same event in another member order (not canonical): encoded again, accepted.
    let v: serde_json::Value = serde_json::from_str(&bytes).unwrap();
    let mut members: Vec<(String, serde_json::Value)> =
        v.as_object().unwrap().clone().into_iter().collect();
    members.reverse();
    let reordered = format!(
        "{{{}}}",
        members
            .iter()
            .map(|(k, v)| format!("{}:{v}", serde_json::Value::from(k.as_str())))
            .collect::<Vec<_>>()
            .join(",")
    );
    assert_ne!(reordered, bytes);
    assert_eq!(&Event::decode(reordered.as_bytes()).unwrap(), e);
    // Reordered and changed: refused on that path too.
    let both = reordered.replace("Write parser", "Write parsed");
    assert!(matches!(
        Event::decode(both.as_bytes()),
        Err(DecodeError::HashMismatch)
    ));
}

#[test]
fn each_event_links_to_the_hash_of_the_one_before() {
    let events = chain();
    assert_eq!(events[0].prev, None);
    for pair in events.windows(2) {
        assert_eq!(pair[1].prev, Some(pair[0].hash));
        assert!(pair[1].hash_is_valid());
    }
}

#[test]
fn any_change_to_content_breaks_the_hash() {
    let mut e = chain()[1].clone();
    e.turn = Some(99);
    assert!(!e.hash_is_valid());
    let mut bytes = chain()[1].encode();
    let pos = bytes
        .windows(12)
        .position(|w| w == b"Write parser")
        .unwrap();
    bytes[pos] = b'w';
    assert_eq!(Event::decode(&bytes), Err(DecodeError::HashMismatch));
}

#[test]
fn newer_formats_are_refused_with_a_clear_error() {
    let mut v: serde_json::Value = serde_json::from_slice(&chain()[0].encode()).unwrap();
    v["format"] = serde_json::json!(EVENT_FORMAT + 1);
    let err = Event::decode(v.to_string().as_bytes()).unwrap_err();
    assert!(matches!(err, DecodeError::NewerFormat { .. }));
    assert!(err.to_string().contains("upgrade planlog"));
}

#[test]
fn garbage_bytes_are_an_error_not_a_panic() {
    for bytes in [
        &b""[..],
        b"{",
        b"[]",
        b"{\"format\":1}",
        b"\xff\xfe",
        b"{\"format\":\"1\"}",
    ] {
        assert!(Event::decode(bytes).is_err());
    }
}

#[test]
fn the_fold_replaces_whole_values_and_ignores_rejections() {
    let events = chain();
    let state = fold(&events);
    assert_eq!(
        state.plan.items(),
        [item("1", "Write parser", PlanStatus::InProgress)]
    );
    assert!(state.plan_mode);
    let rejected = EventBody::WriteRejected(planlog_core::events::WriteRejected {
        submitted: serde_json::json!({}),
        code: planlog_core::rules::RejectionCode::BulkCompletion,
        message: "no".into(),
        position: None,
        source: None,
        tool: None,
        tool_call: None,
    });
    assert_eq!(apply(state.clone(), &rejected), state);
    let fork_start = EventBody::SessionStarted(planlog_core::events::SessionStarted {
        origin: Origin::Fork {
            parent: sid("p"),
            at: Seq::new(3).unwrap(),
        },
        label: Some("try b".into()),
        plan: state.plan.clone(),
        plan_mode: true,
        ids_issued: None,
    });
    assert_eq!(apply(SessionState::default(), &fork_start), state);
}

mod encode_checked {
    use super::*;
    use planlog_core::PlanItem;
    use proptest::prelude::*;

    /// Content that looks like the hash member, in every place a writer controls.
    fn tricky() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(r#"","hash":""#.to_owned()),
            Just(r#",\"hash\":\"0000""#.to_owned()),
            Just("hash".to_owned()),
            "[ -~]{0,24}",
        ]
    }

    proptest! {
        /// One encoding checks the hash exactly as `hash_is_valid` does, whatever the content
        /// (metadata objects with a `hash` key included), and tampering is caught.
        #[test]
        fn equals_encode_and_hash_is_valid(
            content in tricky(),
            key in tricky(),
            value in tricky(),
            call in proptest::option::of("[a-z0-9_]{1,12}"),
            tamper in any::<bool>(),
        ) {
            let s = sid("s");
            let first = seal_after(None, &s, None, started(Origin::New));
            let mut meta = serde_json::Map::new();
            meta.insert(key.clone(), serde_json::json!({"hash": value.clone(), key: [value]}));
            let it = PlanItem::new(planlog_core::ItemId::try_from("1".to_owned()).unwrap(), content, PlanStatus::Pending).with_metadata(meta);
            let mut e = seal_after(Some(&first), &s, call.as_deref(), written(vec![it]));
            if tamper {
                e.turn = Some(e.turn.unwrap_or(0) + 1);
            }
            let checked = e.encode_checked();
            prop_assert_eq!(checked.is_some(), e.hash_is_valid());
            prop_assert_eq!(checked.is_some(), !tamper);
            if let Some(bytes) = checked {
                prop_assert_eq!(bytes, e.encode());
            }
        }
    }
}
