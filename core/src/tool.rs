//! The plan_write tool as an agent sees it: its spec (name, description, JSON schema) in the
//! three shapes agents declare tools in, the planning guideline for the system prompt, and
//! its execution against a plan.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::call::WriteCall;
use crate::decide::{Decision, decide};
use crate::event::{EventBody, PlanWritten, WriteRejected, WriteSemantics};
use crate::ids::MAX_ITEM_ID_LEN;
use crate::plan::{MAX_CONTENT_LEN, MAX_PLAN_ITEMS, Plan};
use crate::rejection::Rejection;

/// The tool's name.
pub const PLAN_WRITE: &str = "plan_write";

/// Largest argument text plan_write reads, in bytes (200 items of 2,000 four-byte characters,
/// JSON-escaped, fit). Larger calls are rejected without being parsed.
pub const MAX_ARGUMENTS_BYTES: usize = 4 * 1024 * 1024;

/// How much of an oversized or unparsable submission a `write_rejected` event keeps.
const KEPT_SUBMISSION_CHARS: usize = 4096;

/// The planning guideline for the system prompt (harness9's "## Planning" section). Include
/// it only when plan_write is registered.
pub const PLANNING_GUIDELINE: &str = "## Planning
For complex multi-step tasks (multi-file changes, dependent steps, explore-then-implement),
draft an execution plan with plan_write first, then execute step by step:
- Each item must map to a concrete action (create a file, implement a function, run a command).
  Vague items like \"clarify requirements\" or \"design the approach\" are forbidden.
- Mark an item in_progress before starting it, and completed immediately after finishing.
- The plan is the source of truth: even if the conversation context is compacted,
  the plan remains visible — continue from the plan.
- Simple tasks (1-2 steps, Q&A, single commands) need no planning — just execute.";

/// The tool description the model reads.
pub const PLAN_WRITE_DESCRIPTION: &str = "Keep your working plan for this session: an ordered list of concrete steps, each {\"id\", \"content\", \"status\"}.

Write: send \"steps\" with the items you are adding or changing. Partial updates are fine: an item you leave out stays in the plan, in its place, if it is in_progress or completed (started work is never dropped); a pending or cancelled item you leave out is removed. Ids are yours to choose and must stay stable for an item; new ids are appended at the end and existing items never move.

Status is one of pending, in_progress, completed, cancelled. Mark an item in_progress before you start it and completed right after you finish it. At most one item may go straight from pending (or new) to completed in one call; more is rejected as a bulk completion. To abandon an item, mark it cancelled; a cancelled item must go back to pending or in_progress before it can be completed.

Read: call without \"steps\" (or with an empty list) to get the current plan; an empty list never clears the plan.

The result is the whole plan as a JSON array. The active items are shown to you on every turn, even after the conversation is compacted: continue from them.";

/// A tool declaration: name, description and JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Tool name.
    pub name: String,
    /// What the model reads about it.
    pub description: String,
    /// JSON schema of the arguments object.
    pub input_schema: Value,
}

impl ToolSpec {
    /// The plan_write declaration.
    pub fn plan_write() -> Self {
        Self {
            name: PLAN_WRITE.to_owned(),
            description: PLAN_WRITE_DESCRIPTION.to_owned(),
            input_schema: plan_write_schema(),
        }
    }

    /// OpenAI function-calling shape: `{"type":"function","function":{name,description,parameters}}`.
    pub fn to_openai(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.input_schema,
            }
        })
    }

    /// Anthropic Messages API shape: `{name, description, input_schema}`.
    pub fn to_anthropic(&self) -> Value {
        json!({ "name": self.name, "description": self.description, "input_schema": self.input_schema })
    }

    /// MCP `tools/list` shape: `{name, description, inputSchema}`.
    pub fn to_mcp(&self) -> Value {
        json!({ "name": self.name, "description": self.description, "inputSchema": self.input_schema })
    }
}

/// The JSON schema of plan_write's arguments.
pub fn plan_write_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "steps": {
                "type": "array",
                "description": "Items to add or change. Omit (or send []) to read the current plan.",
                "maxItems": MAX_PLAN_ITEMS,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {
                            "type": "string",
                            "description": "Stable id you choose for the item, unique in the plan.",
                            "minLength": 1,
                            "maxLength": MAX_ITEM_ID_LEN
                        },
                        "content": {
                            "type": "string",
                            "description": "One concrete action.",
                            "minLength": 1,
                            "maxLength": MAX_CONTENT_LEN
                        },
                        "status": {
                            "type": "string",
                            "enum": ["pending", "in_progress", "completed", "cancelled"]
                        }
                    },
                    "required": ["id", "content", "status"],
                    "additionalProperties": false
                }
            }
        },
        "additionalProperties": false
    })
}

/// What goes back to the model for one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// True for an error result the model should correct.
    pub is_error: bool,
    /// The text: the plan as a JSON array, or the rejection message.
    pub content: String,
}

/// One plan_write call worked out against the current plan: the result for the model, and
/// the event to record (none for reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execution {
    /// What the model gets back.
    pub result: ToolResult,
    /// The event to append before the result is returned (`plan_written` or
    /// `write_rejected`); `None` for a read.
    pub event: Option<EventBody>,
    /// The new plan when the call wrote one.
    pub plan: Option<Plan>,
}

/// Runs plan_write's rules on `arguments` (the raw JSON text) against `current`. Pure.
pub fn execute_plan_write(current: &Plan, arguments: &str) -> Execution {
    if arguments.len() > MAX_ARGUMENTS_BYTES {
        let rejection = Rejection::arguments_too_large(arguments.len());
        return rejected(kept_text(arguments), &rejection);
    }
    let value = if arguments.trim().is_empty() {
        // Some hosts send an empty string for "no arguments": that is a read.
        Value::Object(serde_json::Map::new())
    } else {
        match serde_json::from_str::<Value>(arguments) {
            Ok(value) => value,
            Err(e) => {
                return rejected(
                    kept_text(arguments),
                    &Rejection::invalid_json(&e.to_string()),
                );
            }
        }
    };
    let call = match WriteCall::from_value(&value) {
        Ok(call) => call,
        Err(rejection) => return rejected(value, &rejection),
    };
    match decide(current, &call) {
        Ok(Decision::Read) => Execution {
            result: ToolResult {
                is_error: false,
                content: current.to_json(),
            },
            event: None,
            plan: None,
        },
        Ok(Decision::Write { submitted, plan }) => Execution {
            result: ToolResult {
                is_error: false,
                content: plan.to_json(),
            },
            event: Some(EventBody::PlanWritten(PlanWritten {
                semantics: WriteSemantics::Merge,
                submitted,
                plan: plan.clone(),
            })),
            plan: Some(plan),
        },
        Err(rejection) => rejected(value, &rejection),
    }
}

fn rejected(submitted: Value, rejection: &Rejection) -> Execution {
    Execution {
        result: ToolResult {
            is_error: true,
            content: rejection.message.clone(),
        },
        event: Some(EventBody::WriteRejected(WriteRejected::new(
            submitted, rejection,
        ))),
        plan: None,
    }
}

/// The submission as a string, cut to a size worth keeping in the log.
fn kept_text(arguments: &str) -> Value {
    if arguments.chars().count() <= KEPT_SUBMISSION_CHARS {
        Value::String(arguments.to_owned())
    } else {
        let cut: String = arguments.chars().take(KEPT_SUBMISSION_CHARS).collect();
        Value::String(format!("{cut}… [cut: {} {CUT_MARK}", arguments.len()))
    }
}

/// The end of a kept submission that was cut to size.
const CUT_MARK: &str = "bytes in all]";

/// True when a `write_rejected` submission is a cut excerpt (of oversized or unparsable
/// arguments), so re-running plan_write on it cannot reproduce the rejection.
pub fn is_cut_submission(submitted: &Value) -> bool {
    submitted
        .as_str()
        .is_some_and(|s| s.chars().count() > KEPT_SUBMISSION_CHARS && s.ends_with(CUT_MARK))
}
