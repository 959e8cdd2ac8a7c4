//! How values are stored: events as their canonical JSON (self-checking through their hash),
//! catalogue entries as JSON followed by a SHA-256 of that JSON, so damage to either is
//! reported instead of shown.

use planlog_core::{
    LogError, OperatorError, Seq, SessionId, SessionInfo,
    events::{Event, EventBody, Hash},
};

/// The marks an event leaves in a store's index: whether it carries a plan (the state at a
/// seq reads its plan from the last such event), and the plan mode it sets, if any.
pub(crate) fn marks_of(body: &EventBody) -> (bool, Option<bool>) {
    match body {
        EventBody::SessionStarted(start) => (true, Some(start.plan_mode)),
        EventBody::PlanWritten(_) => (true, None),
        EventBody::ModeSelected(m) => (false, Some(m.active)),
        EventBody::WriteRejected(_)
        | EventBody::CheckpointSeen(_)
        | EventBody::SessionDescribed(_)
        | EventBody::ContextCompacted(_)
        | EventBody::PlanRestored(_) => (false, None),
    }
}

/// Decodes a stored event and checks it is the one its key names.
pub(crate) fn decode_event(
    path: &str,
    session: &SessionId,
    seq: u64,
    bytes: &[u8],
) -> Result<Event, LogError> {
    let event = Event::decode(bytes).map_err(|e| corrupt(path, session, seq, e.to_string()))?;
    if &event.session != session || event.seq.get() != seq {
        return Err(corrupt(
            path,
            session,
            seq,
            format!(
                "stored under ({session}, {seq}) but is ({}, {})",
                event.session, event.seq
            ),
        ));
    }
    Ok(event)
}

/// A catalogue entry as stored: JSON, then the 32-byte SHA-256 of the JSON.
pub(crate) fn encode_info(info: &SessionInfo) -> Vec<u8> {
    let mut bytes = match serde_json::to_vec(info) {
        Ok(bytes) => bytes,
        // Invariant: SessionInfo is plain data with string keys; an empty entry must never
        // be stored in its place.
        Err(e) => panic!("invariant broken: a catalogue entry is not plain JSON data ({e})"),
    };
    let digest = Hash::of(&bytes);
    bytes.extend_from_slice(digest.as_bytes());
    bytes
}

/// Decodes a catalogue entry, checking its digest.
pub(crate) fn decode_info(
    path: &str,
    session: &str,
    bytes: &[u8],
) -> Result<SessionInfo, LogError> {
    let damaged = |detail: String| -> LogError {
        OperatorError::Corrupt {
            path: path.to_owned(),
            session: SessionId::new(session).ok(),
            seq: None,
            detail: format!("catalogue entry: {detail}"),
        }
        .into()
    };
    let split = bytes
        .len()
        .checked_sub(32)
        .ok_or_else(|| damaged("too short".into()))?;
    let (json, digest) = bytes.split_at(split);
    if Hash::of(json).as_bytes() != digest {
        return Err(damaged("checksum mismatch".into()));
    }
    let info: SessionInfo = serde_json::from_slice(json).map_err(|e| damaged(e.to_string()))?;
    if info.id.as_str() != session {
        return Err(damaged(format!(
            "stored under {session} but names {}",
            info.id
        )));
    }
    Ok(info)
}

/// A damaged-store error at (session, seq).
pub(crate) fn corrupt(path: &str, session: &SessionId, seq: u64, detail: String) -> LogError {
    OperatorError::Corrupt {
        path: path.to_owned(),
        session: Some(session.clone()),
        seq: Seq::new(seq).ok(),
        detail,
    }
    .into()
}
