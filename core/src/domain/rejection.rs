//! Why a plan_write call was refused, in words the model can act on.
//!
//! A [`Rejection`] is the error for *the model*: its message says what was wrong, names the
//! offending step, and says what to send instead. Nothing changes when a call is rejected.

use serde::{Deserialize, Serialize};

use super::ids::IdError;
use super::limits::{MAX_ARGUMENTS_BYTES, MAX_CONTENT_LEN, MAX_PLAN_ITEMS};

/// The machine-readable reason of a rejection (stored in `write_rejected` events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectionCode {
    /// The arguments were not valid JSON.
    InvalidJson,
    /// The argument text was larger than plan_write reads.
    ArgumentsTooLarge,
    /// The arguments were JSON but not an object.
    ArgumentsNotObject,
    /// The arguments object had a key other than `steps`.
    UnknownArgument,
    /// `steps` was present but not an array (nor `null`).
    StepsNotArray,
    /// A step was not an object.
    StepNotObject,
    /// A step lacked `id`, `content` or `status`.
    MissingField,
    /// A step had a key other than `id`, `content`, `status`.
    UnknownField,
    /// A step field was not a string.
    FieldNotString,
    /// A step id was empty or whitespace.
    EmptyId,
    /// A step id was longer than 128 characters.
    IdTooLong,
    /// A step id held a control, line-breaking or bidi character.
    IdBadChar,
    /// A step's content was empty or whitespace.
    EmptyContent,
    /// A step's content was longer than 2,000 characters.
    ContentTooLong,
    /// A step's status was not one of the four.
    UnknownStatus,
    /// Two steps of one call had the same id.
    DuplicateId,
    /// The call had more than 200 steps.
    TooManySteps,
    /// The merged plan would have more than 200 items.
    PlanTooLarge,
    /// More than one new or pending item jumped straight to completed.
    BulkCompletion,
    /// A cancelled item was marked completed.
    CancelledToCompleted,
    /// An optional text, list or object field was longer than its limit.
    FieldTooLong,
    /// `blocked_by` was not a list.
    FieldNotList,
    /// A `blocked_by` entry was not a usable item id.
    BadBlocker,
    /// `metadata` was not a JSON object.
    MetadataNotObject,
    /// An item is blocked by an id that is not in the resulting plan.
    UnknownBlocker,
    /// An item is blocked by itself.
    SelfBlocked,
    /// The dependencies form a cycle.
    DependencyCycle,
    /// (Imports only) the recorded agent refused the call; the message is its own text.
    SourceRefused,
    /// A task call named a task id that is not in the plan.
    UnknownTask,
    /// A task_create found every numeric id used up (the session's highest id is the
    /// largest number an id can be).
    NoTaskIdLeft,
    /// A task_claim of a task someone else holds.
    TaskHeld,
    /// A task_claim of a task that is completed or cancelled.
    TaskNotOpen,
    /// A task_claim of a task that waits for tasks not completed yet.
    TaskWaiting,
    /// A task_release by someone who does not hold the task.
    NotTaskHolder,
}

impl RejectionCode {
    /// The snake_case name, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectionCode::InvalidJson => "invalid_json",
            RejectionCode::ArgumentsTooLarge => "arguments_too_large",
            RejectionCode::ArgumentsNotObject => "arguments_not_object",
            RejectionCode::UnknownArgument => "unknown_argument",
            RejectionCode::StepsNotArray => "steps_not_array",
            RejectionCode::StepNotObject => "step_not_object",
            RejectionCode::MissingField => "missing_field",
            RejectionCode::UnknownField => "unknown_field",
            RejectionCode::FieldNotString => "field_not_string",
            RejectionCode::EmptyId => "empty_id",
            RejectionCode::IdTooLong => "id_too_long",
            RejectionCode::IdBadChar => "id_bad_char",
            RejectionCode::EmptyContent => "empty_content",
            RejectionCode::ContentTooLong => "content_too_long",
            RejectionCode::UnknownStatus => "unknown_status",
            RejectionCode::DuplicateId => "duplicate_id",
            RejectionCode::TooManySteps => "too_many_steps",
            RejectionCode::PlanTooLarge => "plan_too_large",
            RejectionCode::BulkCompletion => "bulk_completion",
            RejectionCode::CancelledToCompleted => "cancelled_to_completed",
            RejectionCode::FieldTooLong => "field_too_long",
            RejectionCode::FieldNotList => "field_not_list",
            RejectionCode::BadBlocker => "bad_blocker",
            RejectionCode::MetadataNotObject => "metadata_not_object",
            RejectionCode::UnknownBlocker => "unknown_blocker",
            RejectionCode::SelfBlocked => "self_blocked",
            RejectionCode::DependencyCycle => "dependency_cycle",
            RejectionCode::SourceRefused => "source_refused",
            RejectionCode::UnknownTask => "unknown_task",
            RejectionCode::NoTaskIdLeft => "no_task_id_left",
            RejectionCode::TaskHeld => "task_held",
            RejectionCode::TaskNotOpen => "task_not_open",
            RejectionCode::TaskWaiting => "task_waiting",
            RejectionCode::NotTaskHolder => "not_task_holder",
        }
    }

    /// True for the anti-cheat rules (as opposed to malformed input).
    pub fn is_anti_cheat(self) -> bool {
        matches!(
            self,
            RejectionCode::BulkCompletion | RejectionCode::CancelledToCompleted
        )
    }
}

/// A refused plan_write call: for the model to correct. The plan is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Rejection {
    /// The reason, for machines.
    pub code: RejectionCode,
    /// The reason and the remedy, for the model.
    pub message: String,
    /// The 1-based position of the offending item in the call, when one item is to blame.
    pub position: Option<usize>,
}

pub(crate) const UNCHANGED: &str = "Nothing was changed.";

/// Quotes model-supplied text for a message: escaped, and cut to 60 characters.
pub(crate) fn quote(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() <= MAX {
        format!("{s:?}")
    } else {
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut:?}…")
    }
}

/// Names a step for a message: `step 3 (id "b")` or `step 3`.
fn step_name(index: usize, id: Option<&str>) -> String {
    match id {
        Some(id) => format!("step {index} (id {})", quote(id)),
        None => format!("step {index}"),
    }
}

impl Rejection {
    pub(crate) fn new(code: RejectionCode, position: Option<usize>, message: String) -> Self {
        Self {
            code,
            message,
            position,
        }
    }

    pub(crate) fn invalid_json(err: &str) -> Self {
        Self::new(
            RejectionCode::InvalidJson,
            None,
            format!(
                "The plan_write arguments are not valid JSON ({err}). {UNCHANGED} Send a JSON object \
                 such as {{\"steps\": [{{\"id\": \"1\", \"content\": \"…\", \"status\": \"pending\"}}]}}, \
                 or {{}} to read the current plan."
            ),
        )
    }

    pub(crate) fn arguments_too_large(bytes: usize) -> Self {
        Self::new(
            RejectionCode::ArgumentsTooLarge,
            None,
            format!(
                "The plan_write arguments are {bytes} bytes; the limit is {} bytes. {UNCHANGED} \
                 A plan is at most {MAX_PLAN_ITEMS} short items: send only the items you are \
                 adding or changing.",
                MAX_ARGUMENTS_BYTES
            ),
        )
    }

    pub(crate) fn arguments_not_object(found: &str) -> Self {
        Self::new(
            RejectionCode::ArgumentsNotObject,
            None,
            format!(
                "The plan_write arguments must be a JSON object, but got {found}. {UNCHANGED} Send \
                 {{\"steps\": [...]}} to write, or {{}} to read the current plan."
            ),
        )
    }

    pub(crate) fn unknown_argument(key: &str) -> Self {
        Self::new(
            RejectionCode::UnknownArgument,
            None,
            format!(
                "plan_write has no argument {}; its only argument is \"steps\". {UNCHANGED} \
                 Resend the call with just \"steps\".",
                quote(key)
            ),
        )
    }

    pub(crate) fn steps_not_array(found: &str) -> Self {
        Self::new(
            RejectionCode::StepsNotArray,
            None,
            format!(
                "\"steps\" must be an array of {{\"id\", \"content\", \"status\"}} objects, but got \
                 {found}. {UNCHANGED} Resend \"steps\" as an array, or omit it to read the plan."
            ),
        )
    }

    pub(crate) fn step_not_object(index: usize, found: &str) -> Self {
        Self::new(
            RejectionCode::StepNotObject,
            Some(index),
            format!(
                "{} must be an object {{\"id\", \"content\", \"status\"}}, but got {found}. \
                 {UNCHANGED} Resend the call with every step as such an object.",
                step_name(index, None)
            ),
        )
    }

    pub(crate) fn missing_field(index: usize, id: Option<&str>, field: &str) -> Self {
        Self::new(
            RejectionCode::MissingField,
            Some(index),
            format!(
                "{} has no {field:?}. Every step needs \"id\", \"content\" and \"status\". \
                 {UNCHANGED} Resend the call with {field:?} filled in.",
                step_name(index, id)
            ),
        )
    }

    pub(crate) fn unknown_field(index: usize, id: Option<&str>, field: &str) -> Self {
        Self::new(
            RejectionCode::UnknownField,
            Some(index),
            format!(
                "{} has an unknown field {f}; a step has only \"id\", \"content\" and \
                 \"status\". {UNCHANGED} Resend the call without {f}.",
                step_name(index, id),
                f = quote(field)
            ),
        )
    }

    pub(crate) fn field_not_string(
        index: usize,
        id: Option<&str>,
        field: &str,
        found: &str,
    ) -> Self {
        Self::new(
            RejectionCode::FieldNotString,
            Some(index),
            format!(
                "{}: {field:?} must be a string, but got {found}. {UNCHANGED} Resend the call with \
                 {field:?} as a string.",
                step_name(index, id)
            ),
        )
    }

    pub(crate) fn bad_id(index: usize, err: &IdError) -> Self {
        let (code, what) = match err {
            IdError::Empty { .. } => (RejectionCode::EmptyId, "has an empty id".to_owned()),
            IdError::TooLong { len, max, .. } => (
                RejectionCode::IdTooLong,
                format!("has an id of {len} characters; the limit is {max}"),
            ),
            IdError::BadChar { found, .. } => (
                RejectionCode::IdBadChar,
                format!("has an id containing {found:?}, which ids may not hold"),
            ),
            IdError::ZeroSeq => (RejectionCode::EmptyId, "has an invalid id".to_owned()),
        };
        // The id itself is not echoed: it may be huge or hold control characters.
        let name = step_name(index, None);
        Self::new(
            code,
            Some(index),
            format!(
                "{name} {what}. {UNCHANGED} Give every step a short, unique, printable id such as \
                 \"1\" or \"write-parser\", and resend the call."
            ),
        )
    }

    pub(crate) fn empty_content(index: usize, id: &str) -> Self {
        Self::new(
            RejectionCode::EmptyContent,
            Some(index),
            format!(
                "{} has empty content. {UNCHANGED} Describe the concrete action (create a file, \
                 implement a function, run a command) and resend the call.",
                step_name(index, Some(id))
            ),
        )
    }

    pub(crate) fn content_too_long(index: usize, id: &str, len: usize) -> Self {
        Self::new(
            RejectionCode::ContentTooLong,
            Some(index),
            format!(
                "{} has content of {len} characters; the limit is {MAX_CONTENT_LEN}. {UNCHANGED} \
                 Shorten it to one concrete action (split it into several steps if needed) and \
                 resend the call.",
                step_name(index, Some(id))
            ),
        )
    }

    pub(crate) fn unknown_status(index: usize, id: &str, status: &str) -> Self {
        Self::new(
            RejectionCode::UnknownStatus,
            Some(index),
            format!(
                "{} has status {}, which is not a status. Use one of: pending, \
                 in_progress, completed, cancelled. {UNCHANGED} Resend the call with a valid status.",
                step_name(index, Some(id)),
                quote(status)
            ),
        )
    }

    pub(crate) fn duplicate_id(index: usize, id: &str, first: usize) -> Self {
        Self::new(
            RejectionCode::DuplicateId,
            Some(index),
            format!(
                "{} repeats the id of step {first}; ids must be unique within a call. {UNCHANGED} \
                 Give each step its own id (to change an item, send it once with its new content \
                 and status) and resend the call.",
                step_name(index, Some(id))
            ),
        )
    }

    pub(crate) fn too_many_steps(count: usize) -> Self {
        Self::new(
            RejectionCode::TooManySteps,
            None,
            format!(
                "The call has {count} steps; a plan holds at most {MAX_PLAN_ITEMS}. {UNCHANGED} \
                 Merge small steps into concrete actions and resend at most {MAX_PLAN_ITEMS}."
            ),
        )
    }

    pub(crate) fn plan_too_large(count: usize) -> Self {
        Self::new(
            RejectionCode::PlanTooLarge,
            None,
            format!(
                "This call would make the plan {count} items long; a plan holds at most \
                 {MAX_PLAN_ITEMS}. {UNCHANGED} Mark pending items you no longer need as cancelled \
                 (and leave them out of later calls, so they are dropped), or add fewer new items."
            ),
        )
    }

    pub(crate) fn bulk_completion(steps: &[(usize, &str)]) -> Self {
        let names: Vec<String> = steps
            .iter()
            .map(|(i, id)| step_name(*i, Some(*id)))
            .collect();
        Self::bulk_completion_of(&names, steps.get(1).map(|(i, _)| *i))
    }

    /// A bulk completion in a whole-list tool whose items have no ids the model can see
    /// (Claude Code's TodoWrite): each item named by its 1-based position in the list and its
    /// text (`item 2 ("Fix the bug")`), since a position alone is easy to misread.
    pub fn bulk_completion_by_text(items: &[(usize, &str)]) -> Self {
        let names: Vec<String> = items
            .iter()
            .map(|(i, text)| format!("item {i} ({})", quote(text)))
            .collect();
        Self::bulk_completion_of(&names, items.get(1).map(|(i, _)| *i))
    }

    fn bulk_completion_of(names: &[String], position: Option<usize>) -> Self {
        Self::new(
            RejectionCode::BulkCompletion,
            position,
            format!(
                "Rejected as a bulk completion: {} go straight to completed without having been \
                 in_progress; at most one item may do that per call. {UNCHANGED} Mark an item \
                 in_progress before you start it and completed right after you finish it, one \
                 item at a time; if you really finished one of these just now, mark only that one \
                 completed.",
                names.join(", ")
            ),
        )
    }

    pub(crate) fn cancelled_to_completed(index: usize, id: &str) -> Self {
        Self::new(
            RejectionCode::CancelledToCompleted,
            Some(index),
            format!(
                "{} was cancelled and cannot be marked completed directly. {UNCHANGED} If you are \
                 doing it after all, restore it to pending or in_progress first, then mark it \
                 completed once the work is done.",
                step_name(index, Some(id))
            ),
        )
    }
}

impl Rejection {
    pub(crate) fn field_too_long(
        index: usize,
        id: &str,
        field: &str,
        len: usize,
        max: usize,
    ) -> Self {
        Self::new(
            RejectionCode::FieldTooLong,
            Some(index),
            format!(
                "{}: {field:?} is {len} long; the limit is {max}. {UNCHANGED} Shorten it (keep \
                 details in the files you write, not in the plan) and resend the call.",
                step_name(index, Some(id))
            ),
        )
    }

    pub(crate) fn field_not_list(index: usize, id: &str, field: &str, found: &str) -> Self {
        Self::new(
            RejectionCode::FieldNotList,
            Some(index),
            format!(
                "{}: {field:?} must be a list of item ids, such as [\"1\", \"2\"], but got {found}. \
                 {UNCHANGED} Resend the call with {field:?} as a list ([] to clear it).",
                step_name(index, Some(id))
            ),
        )
    }

    pub(crate) fn bad_blocker(index: usize, id: &str) -> Self {
        Self::new(
            RejectionCode::BadBlocker,
            Some(index),
            format!(
                "{}: every \"blocked_by\" entry must be the id (a string) of an item in the plan. \
                 {UNCHANGED} Resend the call with the ids of the items this one waits for.",
                step_name(index, Some(id))
            ),
        )
    }

    pub(crate) fn metadata_not_object(index: usize, id: &str, found: &str) -> Self {
        Self::new(
            RejectionCode::MetadataNotObject,
            Some(index),
            format!(
                "{}: \"metadata\" must be a JSON object, but got {found}. {UNCHANGED} Resend the \
                 call with an object ({{}} to clear it) or without \"metadata\".",
                step_name(index, Some(id))
            ),
        )
    }

    pub(crate) fn unknown_blocker(item: &str, blocker: &str) -> Self {
        Self::new(
            RejectionCode::UnknownBlocker,
            None,
            format!(
                "Item {} is blocked by {}, which is not in the plan after this call (a pending or \
                 cancelled item you leave out is removed). {UNCHANGED} Keep {} in the plan, or \
                 resend {} with a \"blocked_by\" that names only items in the plan.",
                quote(item),
                quote(blocker),
                quote(blocker),
                quote(item)
            ),
        )
    }

    pub(crate) fn self_blocked(item: &str) -> Self {
        Self::new(
            RejectionCode::SelfBlocked,
            None,
            format!(
                "Item {} is blocked by itself, so it could never start. {UNCHANGED} Remove {} from \
                 its own \"blocked_by\" and resend the call.",
                quote(item),
                quote(item)
            ),
        )
    }

    pub(crate) fn dependency_cycle(cycle: &[&str]) -> Self {
        // The circle, closed: a waits for b waits for a.
        let path: Vec<String> = cycle
            .iter()
            .chain(cycle.first())
            .map(|id| quote(id))
            .collect();
        Self::new(
            RejectionCode::DependencyCycle,
            None,
            format!(
                "These items block each other in a circle, so none of them could start: {}. \
                 {UNCHANGED} Decide which one comes first, remove it from the \"blocked_by\" of \
                 the item it waits for, and resend the call.",
                path.join(" waits for ")
            ),
        )
    }

    /// The refusal an imported agent recorded, in its own words (imports only).
    pub fn source_refused(text: &str) -> Self {
        Self::new(RejectionCode::SourceRefused, None, text.to_owned())
    }
}

/// Describes a JSON value's type for messages ("a number", "null", …).
pub(crate) fn json_type(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
