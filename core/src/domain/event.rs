//! Events: the immutable records a session's log is made of, and their on-disk JSON.
//!
//! Every event has one envelope (format version, session, dense seq, ULID, time, optional
//! turn and call id, the previous event's hash and its own) around a `kind` and its `data`.
//! State-carrying events hold the whole new value, never a delta, so reading the state at any
//! seq is one lookup and replay never re-runs the merge.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::canonical::{Canonical, Hash, canonical_bytes, plain_value, to_canonical_vec};
use super::ids::{CallId, EventId, ItemId, Seq, SessionId};
use super::plan::{Plan, PlanItem};
use super::rejection::{Rejection, RejectionCode};
use super::time::Timestamp;

/// The event format this code writes. Older formats are read as they are (their events lack
/// the newer optional fields) and keep their own hash scheme; newer ones are refused.
///
/// - 1: the first format; hashed with the planlog v1 canonical JSON.
/// - 2: items may carry `description`, `active_form`, `owner`, `blocked_by`, `metadata`;
///   writes may carry `explanation` and `source`; whole-item `upsert` / `remove` writes and
///   `checkpoint_seen` events (imports); hashed with RFC 8785 (JCS).
/// - 3: plan-carrying events may carry `ids_issued` (a removed task's id is never given
///   again); hashed as format 2.
/// - 4: writes and refusals may carry `tool_call` (the call as the agent sent it and what the
///   model read back); checkpoints may carry `against` (the seq of the plan they belong
///   with); `session_described`, `context_compacted` and `plan_restored` events; hashed as
///   format 2.
pub const EVENT_FORMAT: u32 = 4;

/// The hash of an event whose canonical encoding is `bytes`: the SHA-256 of those bytes less
/// their top-level `"hash"` member, or `None` when there is no such member where canonical
/// bytes have it.
///
/// Members are sorted, and `at`/`format` always come before `hash`, so the member is never
/// the first: it is the *last* `,"hash":"` in the bytes (the keys after it, `id`, `kind`,
/// `prev`, `seq`, `session`, `turn`, hold no objects, and a string cannot hold an unescaped
/// quote). On bytes that are not canonical the answer may be wrong, never a false match of
/// other content: it is the hash of the bytes themselves.
fn hash_of_canonical(bytes: &[u8]) -> Option<Hash> {
    let (start, end) = hash_member(bytes)?;
    Some(Hash::of_parts(&[bytes.get(..start)?, bytes.get(end..)?]))
}

/// Where the top-level `"hash"` member of canonical event bytes lies: from its leading comma
/// to past its closing quote (the 64 hex digits are the 64 bytes before that quote). See
/// [`hash_of_canonical`].
pub(crate) fn hash_member(bytes: &[u8]) -> Option<(usize, usize)> {
    const KEY: &[u8] = b",\"hash\":\"";
    let start = bytes.windows(KEY.len()).rposition(|w| w == KEY)?;
    // `,"hash":"` + 64 hex digits + `"`.
    let end = start + KEY.len() + 64 + 1;
    (bytes.get(end - 1) == Some(&b'"')).then_some((start, end))
}

/// One immutable record of a session's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// The format version this event was written in.
    pub format: u32,
    /// The session whose log holds it.
    pub session: SessionId,
    /// Its position: 1 for `session_started`, then dense.
    pub seq: Seq,
    /// Globally unique id (a ULID).
    pub id: EventId,
    /// When it happened (as the host's clock, or the imported source, said).
    pub at: Timestamp,
    /// The agent turn it belongs to, when the host numbers turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// The tool call that caused it; appends are idempotent by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<CallId>,
    /// The hash of the event before it (`None` only for seq 1).
    pub prev: Option<Hash>,
    /// SHA-256 of this event's canonical encoding without this field.
    pub hash: Hash,
    /// What happened.
    #[serde(flatten)]
    pub body: EventBody,
}

/// What an event records. Serialized as `"kind": "...", "data": {...}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
pub enum EventBody {
    /// The first event of every session.
    SessionStarted(SessionStarted),
    /// An accepted plan_write (or an imported whole-list update).
    PlanWritten(PlanWritten),
    /// A plan_write refused by the rules: kept so an auditor sees every attempt.
    WriteRejected(WriteRejected),
    /// Plan mode switched on or off.
    ModeSelected(ModeSelected),
    /// (Imports, format 2) a full snapshot of the list the source agent recorded at a point
    /// (Claude Code's `task_reminder`): no state change, a checkpoint `verify` compares the
    /// imported plan with.
    CheckpointSeen(CheckpointSeen),
    /// (Format 4) What a session is, as the source names it (its title, agent, project, …):
    /// the whole description, each time it changes. No plan change.
    SessionDescribed(SessionDescription),
    /// (Format 4) The agent's context was compacted (Claude Code's `compact_boundary`, Codex's
    /// `compacted`). No plan change.
    ContextCompacted(ContextCompacted),
    /// (Format 4) planlog put the plan back into the agent's context (a Claude Code hook after
    /// a compaction, a resume, a clear or a fork), with the exact text. No plan change.
    PlanRestored(PlanRestored),
}

impl EventBody {
    /// What the caller submitted, as one JSON value: `{"steps": [...]}` for an accepted write,
    /// the recorded arguments for a refused one; `None` for other kinds. Two calls are the same
    /// call (a retry) exactly when their submissions are equal.
    pub fn submission(&self) -> Option<Value> {
        match self {
            EventBody::PlanWritten(w) => Some(serde_json::json!({ "steps": w.submitted })),
            EventBody::WriteRejected(r) => Some(r.submitted.clone()),
            EventBody::SessionStarted(_)
            | EventBody::ModeSelected(_)
            | EventBody::CheckpointSeen(_)
            | EventBody::SessionDescribed(_)
            | EventBody::ContextCompacted(_)
            | EventBody::PlanRestored(_) => None,
        }
    }

    /// The call as the agent sent it, and what the model read back (format 4 writes and
    /// refusals).
    pub fn tool_call(&self) -> Option<&ToolCall> {
        match self {
            EventBody::PlanWritten(w) => w.tool_call.as_ref(),
            EventBody::WriteRejected(r) => r.tool_call.as_ref(),
            _ => None,
        }
    }

    /// Takes the tool call out of the body (a reader done with the event keeps the call
    /// without copying it).
    pub fn take_tool_call(&mut self) -> Option<ToolCall> {
        match self {
            EventBody::PlanWritten(w) => w.tool_call.take(),
            EventBody::WriteRejected(r) => r.tool_call.take(),
            _ => None,
        }
    }

    /// The plan an event of this body leaves, when it carries one.
    pub fn plan(&self) -> Option<&Plan> {
        match self {
            EventBody::SessionStarted(s) => Some(&s.plan),
            EventBody::PlanWritten(w) => Some(&w.plan),
            EventBody::WriteRejected(_)
            | EventBody::ModeSelected(_)
            | EventBody::CheckpointSeen(_)
            | EventBody::SessionDescribed(_)
            | EventBody::ContextCompacted(_)
            | EventBody::PlanRestored(_) => None,
        }
    }

    /// The recorded `ids_issued` of a plan-carrying event (`None` for other events, and
    /// when the event does not record one).
    pub fn ids_issued(&self) -> Option<u64> {
        match self {
            EventBody::SessionStarted(s) => s.ids_issued,
            EventBody::PlanWritten(w) => w.ids_issued,
            EventBody::WriteRejected(_)
            | EventBody::ModeSelected(_)
            | EventBody::CheckpointSeen(_)
            | EventBody::SessionDescribed(_)
            | EventBody::ContextCompacted(_)
            | EventBody::PlanRestored(_) => None,
        }
    }

    /// Sets `ids_issued` on a plan-carrying event (other events are left as they are).
    pub fn set_ids_issued(&mut self, issued: Option<u64>) {
        match self {
            EventBody::SessionStarted(s) => s.ids_issued = issued,
            EventBody::PlanWritten(w) => w.ids_issued = issued,
            EventBody::WriteRejected(_)
            | EventBody::ModeSelected(_)
            | EventBody::CheckpointSeen(_)
            | EventBody::SessionDescribed(_)
            | EventBody::ContextCompacted(_)
            | EventBody::PlanRestored(_) => {}
        }
    }

    /// The `kind` name as stored.
    pub fn kind(&self) -> &'static str {
        match self {
            EventBody::SessionStarted(_) => "session_started",
            EventBody::PlanWritten(_) => "plan_written",
            EventBody::WriteRejected(_) => "write_rejected",
            EventBody::ModeSelected(_) => "mode_selected",
            EventBody::CheckpointSeen(_) => "checkpoint_seen",
            EventBody::SessionDescribed(_) => "session_described",
            EventBody::ContextCompacted(_) => "context_compacted",
            EventBody::PlanRestored(_) => "plan_restored",
        }
    }
}

/// Data of `session_started`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionStarted {
    /// How the session came to be.
    pub origin: Origin,
    /// A free-text label from the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The plan it starts with (empty for new sessions; the parent's plan for forks).
    pub plan: Plan,
    /// Whether plan mode is on at the start (inherited by forks).
    #[serde(default)]
    pub plan_mode: bool,
    /// (Format 3) A fork's inherited [`PlanWritten::ids_issued`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids_issued: Option<u64>,
}

/// How a session came to be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Origin {
    /// Started fresh.
    New,
    /// A replay of `parent` up to and including event `at`.
    Fork {
        /// The session forked from.
        parent: SessionId,
        /// The last parent event whose state the fork starts from.
        at: Seq,
    },
    /// A delegated sub-agent (its log lives in memory only; never stored durably).
    SubAgent {
        /// The delegating session.
        parent: SessionId,
    },
    /// Imported from a recorded transcript.
    Import {
        /// The source format (`claude-code`, `codex`, `planlog`).
        source: String,
        /// The session id in the source, when it has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source_session: Option<String>,
        /// The planlog session this one is a sub-agent sidechain of, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<SessionId>,
        /// (Format 2) The agent's working folder, when captured live (Claude Code hooks).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        /// (Format 2) The agent's transcript, when captured live.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        transcript: Option<String>,
    },
}

impl Origin {
    /// The session this one descends from, if any.
    pub fn parent(&self) -> Option<&SessionId> {
        match self {
            Origin::New => None,
            Origin::Fork { parent, .. } | Origin::SubAgent { parent } => Some(parent),
            Origin::Import { parent, .. } => parent.as_ref(),
        }
    }

    /// The parent seq a fork starts from.
    pub fn fork_seq(&self) -> Option<Seq> {
        match self {
            Origin::Fork { at, .. } => Some(*at),
            Origin::New | Origin::SubAgent { .. } | Origin::Import { .. } => None,
        }
    }
}

/// How a recorded write produced its plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteSemantics {
    /// plan_write: anti-cheat, then the merge that keeps started items.
    #[default]
    Merge,
    /// An imported TodoWrite / update_plan / todowrite / write_todos call: the submitted list
    /// replaced the plan as is, whatever planlog's rules would have said (`verify` and
    /// `history` flag breaches).
    Replace,
    /// (Format 2) An imported per-item task call (Claude Code's TaskCreate / TaskUpdate): each
    /// submitted whole item replaced the item with its id in place, or was appended.
    Upsert,
    /// (Format 2) An imported task deletion: the submitted items left the plan, and every
    /// other item's `blocked_by`.
    Remove,
}

/// Data of `plan_written`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanWritten {
    /// How `plan` was derived from `submitted`.
    #[serde(default)]
    pub semantics: WriteSemantics,
    /// What the model submitted.
    #[serde(deserialize_with = "super::plan::read_items")]
    pub submitted: Vec<PlanItem>,
    /// The plan after the write.
    pub plan: Plan,
    /// (Format 2) The agent's own note on why the plan changed (Codex's `explanation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// (Format 2) Where an imported call was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceLine>,
    /// (Format 3) The highest numeric item id this session has ever had, recorded only when
    /// it is higher than every id in `plan` (the task that had it was removed), so that the
    /// state at any seq, read from this one event, still knows it: `task_create` never gives
    /// an id at or below it again. See [`crate::SessionState::ids_issued`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids_issued: Option<u64>,
    /// (Format 4) The call as the agent sent it and what the model read back; `submitted` is
    /// the plan-shaped reading of it the rules work on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<ToolCall>,
}

/// (Format 4) A tool call as the agent made it, and what came back to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The agent's tool, by its own name (`TodoWrite`, `TaskUpdate`, `update_plan`,
    /// `todowrite`, `write_todos`, `plan_write`, `task_create`, …).
    pub tool: String,
    /// The arguments as the agent sent them: the source's own text where it keeps one (Codex's
    /// arguments string, a Claude Code transcript's input JSON as written), else the JSON of
    /// the input. Over 64 KiB, an excerpt with its size and SHA-256.
    pub arguments: String,
    /// What came back, when the source says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ToolCallResult>,
}

/// (Format 4) What a tool call returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallResult {
    /// Whether it was an error.
    pub is_error: bool,
    /// The text the model read, when the source holds it (a live Claude Code hook sees the
    /// tool's structured answer, not the text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The tool's structured answer, when the source gives one and not the text (a Claude
    /// Code hook's `tool_response`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
}

/// (Format 4) What a session is, as its source names it: each field `None` when the source
/// does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionDescription {
    /// The title people know it by (a title the user gave, else one the agent made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The agent (`claude-code`, `codex`, `opencode`, `gemini`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The agent's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// How the agent was started (`cli`, `claude-vscode`, `codex_exec`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entrypoint: Option<String>,
    /// The project folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The git branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The first thing the user asked, shortened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_prompt: Option<String>,
}

impl SessionDescription {
    /// Whether nothing is known.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// (Format 4) Data of `context_compacted`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextCompacted {
    /// `manual` (asked for) or `auto`, when the source says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// The context's size in tokens before, when the source says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<u64>,
    /// And after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_after: Option<u64>,
    /// Where an imported compaction was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceLine>,
}

/// (Format 4) Data of `plan_restored`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanRestored {
    /// What the agent had just done: `compact`, `resume`, `clear`, `fork` (Claude Code's
    /// `SessionStart` source), or `prompt` (before a prompt).
    pub after: String,
    /// The exact text put into the context.
    pub text: String,
    /// The seq whose plan the text shows (the session's last event when it was made).
    pub plan_at: Seq,
}

/// Where an imported event was read from, and anything the importer had to note about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceLine {
    /// The 1-based line (or record) of the source file.
    pub line: u64,
    /// What the importer noted (an unreadable or backwards timestamp, an unknown status, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Data of `checkpoint_seen` (format 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointSeen {
    /// The list as the source recorded it, in its order.
    pub items: Vec<PlanItem>,
    /// Where it was read from.
    pub source: SourceLine,
    /// Plan items the source's list does not cover, so not compared with it (a Claude Code
    /// TodoWrite list kept in the same session as its tasks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub besides: Vec<ItemId>,
    /// (Format 4) The seq whose plan this list belongs with, when that is not the event
    /// before it: a checkpoint imported after the calls a hook recorded live is compared with
    /// the plan after the last call that came before it in the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<Seq>,
}

/// Data of `write_rejected`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteRejected {
    /// The arguments as submitted (the raw text when it was not JSON).
    pub submitted: Value,
    /// Why, for machines.
    pub code: RejectionCode,
    /// Why and what to do, as the model was told.
    pub message: String,
    /// The 1-based position of the offending item in the call, when one is to blame (stored
    /// as `step`, its name in event format 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "step")]
    pub position: Option<usize>,
    /// (Format 2) Where an imported refusal was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceLine>,
    /// (Format 2) The tool the submission was for, when not plan_write: a task tool
    /// (`task_create`, `task_update`), or an agent's own tool a hook refused (`TodoWrite`,
    /// `TaskCreate`, `TaskUpdate`). `verify` re-runs that tool's rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// (Format 4) The call as the agent sent it and what the model read back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<ToolCall>,
}

impl WriteRejected {
    /// The event data for `rejection` of `submitted`.
    pub fn new(submitted: Value, rejection: &Rejection) -> Self {
        Self {
            submitted,
            code: rejection.code,
            message: rejection.message.clone(),
            position: rejection.position,
            source: None,
            tool: None,
            tool_call: None,
        }
    }
}

/// Data of `mode_selected`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeSelected {
    /// Plan mode on (true) or off.
    pub active: bool,
}

/// An event before the log places it: what happened, and in which call and turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventDraft {
    /// The agent turn, when known.
    pub turn: Option<u64>,
    /// The tool call id, when the event comes from a call.
    pub call_id: Option<CallId>,
    /// What happened.
    pub body: EventBody,
}

impl EventDraft {
    /// A draft with no turn and no call id.
    pub fn new(body: EventBody) -> Self {
        Self {
            turn: None,
            call_id: None,
            body,
        }
    }
}

/// Where an event goes: its session, seq, id, time and the hash of the event before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The session.
    pub session: SessionId,
    /// The seq it takes (last + 1).
    pub seq: Seq,
    /// A fresh ULID from the host.
    pub id: EventId,
    /// The time from the host.
    pub at: Timestamp,
    /// The hash of event `seq - 1` (`None` for seq 1).
    pub prev: Option<Hash>,
}

impl Placement {
    /// The placement right after `last` (or at seq 1 when the session has no events).
    pub fn after(last: Option<&Event>, session: SessionId, id: EventId, at: Timestamp) -> Self {
        Self::after_head(last.map(Head::of), session, id, at)
    }

    /// The placement right after a log that ends at `head` (seq 1 when `None`).
    pub fn after_head(head: Option<Head>, session: SessionId, id: EventId, at: Timestamp) -> Self {
        match head {
            Some(last) => Self {
                session,
                seq: last.seq.next(),
                id,
                at,
                prev: Some(last.hash),
            },
            None => Self {
                session,
                seq: Seq::FIRST,
                id,
                at,
                prev: None,
            },
        }
    }
}

/// Where a session's log ends: its last seq and that event's hash. Enough to check an append
/// and to place the next event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The last seq.
    pub seq: Seq,
    /// The last event's hash.
    pub hash: Hash,
}

impl Head {
    /// The head a log has once `event` is its last event.
    pub fn of(event: &Event) -> Self {
        Self {
            seq: event.seq,
            hash: event.hash,
        }
    }
}

/// Why stored bytes are not an event this code can use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not JSON, or JSON of the wrong shape.
    #[error("malformed event: {0}")]
    Malformed(String),
    /// Written by a newer planlog.
    #[error(
        "event format {found} is newer than this planlog understands (up to {supported}); upgrade planlog"
    )]
    NewerFormat {
        /// The format found.
        found: u64,
        /// The newest this code reads.
        supported: u32,
    },
    /// The stored hash does not match the content.
    #[error(
        "hash mismatch: the event's content does not match its recorded hash (tampered or damaged)"
    )]
    HashMismatch,
}

impl Event {
    /// Seals a draft at a placement, computing its hash ([`SealedEvent::seal`], its
    /// canonical bytes let go).
    ///
    /// [`SealedEvent::seal`]: crate::events::SealedEvent::seal
    pub fn seal(placement: Placement, draft: EventDraft) -> Self {
        super::sealed::SealedEvent::seal(placement, draft).into_event()
    }

    /// The event of `draft` at `placement`, its `hash` not computed yet (a placeholder).
    pub(crate) fn placed(placement: Placement, draft: EventDraft) -> Self {
        Event {
            format: EVENT_FORMAT,
            session: placement.session,
            seq: placement.seq,
            id: placement.id,
            at: placement.at,
            turn: draft.turn,
            call_id: draft.call_id,
            prev: placement.prev,
            hash: Hash::of(&[]),
            body: draft.body,
        }
    }

    /// The canonical JSON of this event with its `hash` field removed.
    fn canonical_without_hash(&self) -> Vec<u8> {
        let mut value = plain_value(self, "an event");
        if let Value::Object(map) = &mut value {
            map.remove("hash");
        }
        to_canonical_vec(&value, self.canonical())
    }

    /// The canonical JSON this event's format uses (see [`Canonical`]).
    fn canonical(&self) -> Canonical {
        if self.format <= 1 {
            Canonical::PlanlogV1
        } else {
            Canonical::Jcs
        }
    }

    /// SHA-256 over the canonical encoding without `hash`.
    pub fn compute_hash(&self) -> Hash {
        if self.canonical() == Canonical::Jcs {
            // The encoding with `hash`, hashed less its `hash` member (see
            // [`hash_of_canonical`]): one encoding, no `Value` to take the member out of.
            if let Some(hash) = hash_of_canonical(&self.encode()) {
                return hash;
            }
        }
        Hash::of(&self.canonical_without_hash())
    }

    /// True when the recorded hash matches the content.
    pub fn hash_is_valid(&self) -> bool {
        self.compute_hash() == self.hash
    }

    /// The canonical bytes stored on disk (sorted keys, compact JSON, hash included).
    pub fn encode(&self) -> Vec<u8> {
        canonical_bytes(self, self.canonical(), "an event")
    }

    /// [`Event::encode`] and [`Event::hash_is_valid`] with one encoding instead of two: the
    /// canonical bytes, or `None` when the recorded hash does not match the content.
    ///
    /// The canonical encoding without `hash` is the canonical encoding with its top-level
    /// `"hash"` member cut out (members are sorted, and `at`/`format` always come before
    /// `hash`, so the member is never the first). That member is the *last* `,"hash":"` in the
    /// bytes: the keys after it (`id`, `kind`, `prev`, `seq`, `session`, `turn`) hold no
    /// objects, and a string cannot hold an unescaped quote. Tested against `hash_is_valid`.
    pub fn encode_checked(&self) -> Option<Vec<u8>> {
        let bytes = self.encode();
        (hash_of_canonical(&bytes)? == self.hash).then_some(bytes)
    }

    /// Decodes stored bytes, upgrading older formats and checking the hash.
    ///
    /// # Errors
    /// [`DecodeError`] when the bytes are not an event, come from a newer format, or do not
    /// match their hash.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        // The common case, straight into the event (no intermediate `Value`): an event of a
        // format this planlog writes or reads. Anything else takes the slow path below,
        // which tells a newer format from damage.
        if let Some(event) =
            super::event_decode::fast(bytes).or_else(|| serde_json::from_slice::<Event>(bytes).ok())
            && (1..=EVENT_FORMAT).contains(&event.format)
        {
            // Bytes planlog stored are the event's canonical encoding: their hash, less the
            // hash member, is checked as they are (no re-encoding). Other bytes of a valid event
            // (another key order, say) are encoded again and checked.
            if hash_of_canonical(bytes) != Some(event.hash) && !event.hash_is_valid() {
                return Err(DecodeError::HashMismatch);
            }
            return Ok(event);
        }
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| DecodeError::Malformed(e.to_string()))?;
        let format = value
            .get("format")
            .and_then(Value::as_u64)
            .ok_or_else(|| DecodeError::Malformed("no \"format\" number".to_owned()))?;
        if format == 0 || format > u64::from(EVENT_FORMAT) {
            return Err(DecodeError::NewerFormat {
                found: format,
                supported: EVENT_FORMAT,
            });
        }
        // Every format up to this one reads as it is: format 1 lacks the optional fields of
        // format 2, which default to absent. An event keeps its own format (and hash scheme).
        let event: Event =
            serde_json::from_value(value).map_err(|e| DecodeError::Malformed(e.to_string()))?;
        if !event.hash_is_valid() {
            return Err(DecodeError::HashMismatch);
        }
        Ok(event)
    }

    /// The plan this event leaves, when it carries one.
    pub fn plan(&self) -> Option<&Plan> {
        self.body.plan()
    }
}
