//! The task tools as an MCP server declares them (`task_create`, `task_update`, `task_get`,
//! `task_list`): Claude Code's Tasks input schemas, and descriptions that say what the server
//! really does (it keeps the tasks durably, but shows them only when asked).

use serde_json::json;

use super::TaskTool;
use crate::agent::tool::ToolSpec;

/// What every task tool description ends with: who shows the tasks.
const READ_THEM: &str = "The tasks are kept durably by planlog and shared by every agent on this list, but this server does not show them to you on its own: call task_list when you start and after the conversation is compacted.";

/// The declaration of one task tool.
pub fn task_tool_spec(tool: TaskTool) -> ToolSpec {
    let ids =
        |what: &str| json!({"type": "array", "items": {"type": "string"}, "description": what});
    let (description, schema) = match tool {
        TaskTool::Create => (
            format!(
                "Create one task in the task list. It gets the next id (\"1\", \"2\", …) and starts pending; the result names its id. Give \"subject\" (what to do, in a few words), and optionally \"description\", \"activeForm\" (shown while it is in progress, such as \"Running the tests\") and \"metadata\" (a small object). Then use task_update to start, finish, change or delete it. {READ_THEM}"
            ),
            json!({
                "type": "object",
                "properties": {
                    "subject": {"type": "string", "description": "What to do, in a few words."},
                    "description": {"type": "string", "description": "More detail on the work."},
                    "activeForm": {"type": "string", "description": "The action in progressive form, shown while in progress."},
                    "metadata": {"type": "object", "description": "A small object kept as it is."}
                },
                "required": ["subject"]
            }),
        ),
        TaskTool::Update => (
            format!(
                "Change one task, named by \"taskId\": \"status\" (pending, in_progress, completed, or deleted to remove it), \"subject\", \"description\", \"activeForm\", \"owner\", \"addBlockedBy\" (ids of tasks that must be completed first), \"addBlocks\" (ids of tasks that wait for this one) and \"metadata\" (keys merged in; a null value removes a key). Only the fields you send change; the task's other fields, and every other task, stay as they are. Mark a task in_progress before you start it and completed right after you finish it. A cancelled task cannot be completed directly, and tasks cannot wait for themselves or for each other in a circle: such a call is refused, changes nothing, and the answer says why. {READ_THEM}"
            ),
            json!({
                "type": "object",
                "properties": {
                    "taskId": {"type": "string", "description": "The task's id, as task_create or task_list gave it."},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "deleted"]},
                    "subject": {"type": "string"},
                    "description": {"type": "string"},
                    "activeForm": {"type": "string"},
                    "owner": {"type": "string", "description": "Who works on it (\"\" for nobody)."},
                    "addBlockedBy": ids("Ids of tasks that must be completed before this one."),
                    "addBlocks": ids("Ids of tasks that must wait for this one."),
                    "metadata": {"type": "object", "description": "Keys merged into the task's metadata; null removes a key."}
                },
                "required": ["taskId"]
            }),
        ),
        TaskTool::Get => (
            format!(
                "Read one task: {{\"task\": {{id, subject, description, activeForm?, status, owner?, blocks, blockedBy, metadata?}}}}, or {{\"task\": null}} when there is no such task. Writes nothing. {READ_THEM}"
            ),
            json!({
                "type": "object",
                "properties": {"taskId": {"type": "string"}},
                "required": ["taskId"]
            }),
        ),
        TaskTool::List => (
            format!(
                "Read every task: {{\"tasks\": [{{id, subject, status, owner?, blockedBy}}]}}; with \"ready\": true only the tasks free to claim (pending, owned by nobody, every task they wait for completed). Writes nothing. {READ_THEM}"
            ),
            json!({"type": "object", "properties": {
                "ready": {"type": "boolean", "description": "Only ready work: pending, unowned, waiting for nothing."}
            }}),
        ),
        TaskTool::Claim => (
            format!(
                "Claim one task before you work on it, when other agents share this list: it becomes yours (\"owner\") and in progress. Only a task nobody holds, not completed or cancelled, and waiting for no unfinished task can be claimed; claiming one you hold already changes nothing. When two agents claim the same task at once exactly one gets it; the other is refused with who holds it, and should claim another ready task (task_list with \"ready\": true). {READ_THEM}"
            ),
            json!({
                "type": "object",
                "properties": {
                    "taskId": {"type": "string", "description": "The task's id."},
                    "owner": {"type": "string", "description": "Who you are: the same name in every call."}
                },
                "required": ["taskId", "owner"]
            }),
        ),
        TaskTool::Release => (
            format!(
                "Give up a task you claimed (it is pending and free again), or hand it over to another agent with \"to\" (it stays in progress, theirs). Only its holder can release it. {READ_THEM}"
            ),
            json!({
                "type": "object",
                "properties": {
                    "taskId": {"type": "string", "description": "The task's id."},
                    "owner": {"type": "string", "description": "Who you are (its holder)."},
                    "to": {"type": "string", "description": "Who gets it, to hand it over."}
                },
                "required": ["taskId", "owner"]
            }),
        ),
    };
    ToolSpec {
        name: tool.name().to_owned(),
        description,
        input_schema: schema,
    }
}

/// The four task tools' declarations.
pub fn task_tool_specs() -> Vec<ToolSpec> {
    TaskTool::ALL.into_iter().map(task_tool_spec).collect()
}
