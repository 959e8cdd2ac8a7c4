//! The task tools (`task_create`, `task_update`, `task_get`, `task_list`; Claude Code's
//! `TaskCreate`, …; and planlog's own `task_claim`, `task_release` for agent teams) as agents
//! call them: their declarations, their JSON, and one call run.
//! The rules and the decision are the domain's (`domain::task`).
//!
//! | module | what |
//! |---|---|
//! | `spec` | the declarations an MCP server lists: Claude Code's Tasks input schemas |
//! | `wire` | reading a call's arguments (leniently, as Claude Code does); results in Claude Code's shapes |
//! | `run` | one call run: the result a model reads and the event that records it |

mod run;
mod spec;
mod wire;

pub use run::execute_task_tool;
pub use spec::{task_tool_spec, task_tool_specs};
pub use wire::{parse_task_call, task_json, write_result};

/// The task tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskTool {
    /// Add one task (`task_create`, Claude Code's `TaskCreate`).
    Create,
    /// Change or delete one task (`task_update`, `TaskUpdate`).
    Update,
    /// Read one task (`task_get`, `TaskGet`).
    Get,
    /// Read every task (`task_list`, `TaskList`), or only the ready ones.
    List,
    /// Claim one task (`task_claim`; planlog's own, no Claude Code tool).
    Claim,
    /// Give up or hand over a claimed task (`task_release`; planlog's own).
    Release,
}

impl TaskTool {
    /// Every task tool.
    pub const ALL: [TaskTool; 6] = [
        TaskTool::Create,
        TaskTool::Update,
        TaskTool::Get,
        TaskTool::List,
        TaskTool::Claim,
        TaskTool::Release,
    ];

    /// The tool named `name`, in planlog's (`task_create`) or Claude Code's (`TaskCreate`)
    /// spelling.
    pub fn from_name(name: &str) -> Option<TaskTool> {
        TaskTool::ALL
            .into_iter()
            .find(|t| t.name() == name || t.claude_name() == name)
    }

    /// planlog's name (MCP).
    pub fn name(self) -> &'static str {
        match self {
            TaskTool::Create => "task_create",
            TaskTool::Update => "task_update",
            TaskTool::Get => "task_get",
            TaskTool::List => "task_list",
            TaskTool::Claim => "task_claim",
            TaskTool::Release => "task_release",
        }
    }

    /// Claude Code's name (planlog's own tools, which Claude Code has not, keep planlog's).
    pub fn claude_name(self) -> &'static str {
        match self {
            TaskTool::Create => "TaskCreate",
            TaskTool::Update => "TaskUpdate",
            TaskTool::Get => "TaskGet",
            TaskTool::List => "TaskList",
            TaskTool::Claim => "task_claim",
            TaskTool::Release => "task_release",
        }
    }

    /// True for the tools that change the plan.
    pub fn writes(self) -> bool {
        matches!(
            self,
            TaskTool::Create | TaskTool::Update | TaskTool::Claim | TaskTool::Release
        )
    }
}
