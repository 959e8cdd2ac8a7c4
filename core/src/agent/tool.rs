//! The plan_write tool as an agent declares it: its name, the description the model reads, its
//! JSON schema, the planning guideline for the system prompt, and the vendor shapes tools are
//! declared in (OpenAI, Anthropic, MCP).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::domain::limits::{
    MAX_CONTENT_LEN, MAX_DESCRIPTION_LEN, MAX_ITEM_ID_LEN, MAX_OWNER_LEN, MAX_PLAN_ITEMS,
};

/// The tool's name.
pub const PLAN_WRITE: &str = "plan_write";

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

Write: send \"steps\" with the items you are adding or changing. The plan is merged with what you send, not replaced by it: a step whose id is in the plan replaces that item's content and status, in its place; a step with a new id is added at the end; existing items never move. An item you leave out is kept if it is in_progress or completed (started work is never dropped), and REMOVED if it is pending or cancelled. So to change one item, send that item (id, content and the new status) together with every pending item you want to keep; in_progress and completed items need not be sent again. The result names any item the call removed. Ids are yours to choose and must stay stable for an item.

Status is one of pending, in_progress, completed, cancelled. Mark an item in_progress before you start it and completed right after you finish it. At most one item may go straight from pending (or new) to completed in one call; more is rejected as a bulk completion. To abandon an item, mark it cancelled; a cancelled item must go back to pending or in_progress before it can be completed.

Optional per item: \"description\", \"active_form\" (what to show while it is in progress), \"owner\", \"blocked_by\" (ids of items that must be completed first) and \"metadata\" (a small object). A field you send replaces the item's value (\"\", [] or {} clears it); a field you leave out keeps it. An item cannot wait for itself, for an id that is not in the plan, or in a circle.

Read: call without \"steps\" (or with an empty list) to get the current plan; an empty list never clears the plan.

The result is the whole plan as a JSON array. The active items are shown to you on every turn, even after the conversation is compacted: continue from them.";

/// How plan_write's description ends where the host injects the plan (the library).
const SHOWN_EVERY_TURN: &str = "The result is the whole plan as a JSON array. The active items are shown to you on every turn, even after the conversation is compacted: continue from them.";

/// How it ends over MCP, where the server cannot put anything into the model's context.
const READ_IT_YOURSELF: &str = "The result is the whole plan as a JSON array. This server does not show you the plan on its own: read it (a call without \"steps\", or the plan://current resource) when you start and after the conversation is compacted, then continue from its active items.";

/// The planning guideline for an MCP client's system prompt (the server's instructions):
/// the same rules, and the truth about who shows the plan.
pub const PLANNING_GUIDELINE_MCP: &str = "## Planning
For complex multi-step tasks (multi-file changes, dependent steps, explore-then-implement),
draft an execution plan with plan_write first, then execute step by step:
- Each item must map to a concrete action (create a file, implement a function, run a command).
  Vague items like \"clarify requirements\" or \"design the approach\" are forbidden.
- Mark an item in_progress before starting it, and completed immediately after finishing.
- The plan is the source of truth and is kept durably by the server, but this server does not
  put it into your context: read it (plan_write without steps, or the plan://current resource)
  when you start and after any compaction, then continue from it.
- Simple tasks (1-2 steps, Q&A, single commands) need no planning — just execute.";

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
    /// The plan_write declaration, for a host that injects the plan on every turn (the
    /// library's [`crate::PlanSession`]).
    pub fn plan_write() -> Self {
        Self {
            name: PLAN_WRITE.to_owned(),
            description: PLAN_WRITE_DESCRIPTION.to_owned(),
            input_schema: plan_write_schema(),
        }
    }

    /// The plan_write declaration over MCP: the same tool, but the description says what an
    /// MCP server really does (it cannot inject the plan; the model reads it).
    pub fn plan_write_mcp() -> Self {
        Self {
            description: PLAN_WRITE_DESCRIPTION.replace(SHOWN_EVERY_TURN, READ_IT_YOURSELF),
            ..Self::plan_write()
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
                        },
                        "description": {
                            "type": "string",
                            "description": "Optional: more detail on the work (\"\" clears it).",
                            "maxLength": MAX_DESCRIPTION_LEN
                        },
                        "active_form": {
                            "type": "string",
                            "description": "Optional: the action in progressive form, shown while in progress (\"Running the tests\").",
                            "maxLength": MAX_CONTENT_LEN
                        },
                        "owner": {
                            "type": "string",
                            "description": "Optional: who works on it.",
                            "maxLength": MAX_OWNER_LEN
                        },
                        "blocked_by": {
                            "type": "array",
                            "description": "Optional: ids of items that must be completed first ([] clears it).",
                            "items": {"type": "string", "minLength": 1, "maxLength": MAX_ITEM_ID_LEN},
                            "maxItems": MAX_PLAN_ITEMS
                        },
                        "metadata": {
                            "type": "object",
                            "description": "Optional: a small JSON object kept as it is ({} clears it)."
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

impl crate::domain::write::ToolResult {
    /// An OpenAI Chat Completions tool message answering call `tool_call_id`:
    /// `{"role": "tool", "tool_call_id", "content"}`. OpenAI tool messages have no error
    /// flag, so an error result's text starts with `Error: `.
    pub fn to_openai(&self, tool_call_id: &str) -> Value {
        let content = if self.is_error {
            format!("Error: {}", self.content)
        } else {
            self.content.clone()
        };
        json!({ "role": "tool", "tool_call_id": tool_call_id, "content": content })
    }

    /// An Anthropic Messages API `tool_result` content block answering `tool_use_id`:
    /// `{"type": "tool_result", "tool_use_id", "content", "is_error"}`.
    pub fn to_anthropic(&self, tool_use_id: &str) -> Value {
        json!({
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": self.content,
            "is_error": self.is_error,
        })
    }

    /// An MCP `tools/call` result: `{"content": [{"type": "text", "text"}], "isError"}`.
    pub fn to_mcp(&self) -> Value {
        json!({
            "content": [{ "type": "text", "text": self.content }],
            "isError": self.is_error,
        })
    }
}
