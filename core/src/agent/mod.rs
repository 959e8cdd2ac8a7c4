//! The agent-loop layer: what a host calls around the domain. Pure like the domain (no IO,
//! clock or randomness of its own), but about agents rather than plans: the session a loop
//! drives, plan mode, auto-continue, how the plan is shown (to the model and to people), and
//! the tool declarations in each vendor's shape.
//!
//! Layering (each module uses only the domain and the modules listed above it):
//!
//! | module | what |
//! |---|---|
//! | `tool` | the plan_write declaration and its vendor shapes |
//! | `task_tool` | the task tools as agents call them: declarations (for MCP servers), their JSON (Claude Code's Tasks schemas), one call run |
//! | `render` | injection text, terminal block, status bar, markdown plan file |
//! | `view` | the plan injected into the outbound model request |
//! | `shared_plan` | [`SharedPlan`](crate::SharedPlan): the current plan for UI threads |
//! | `sink` | [`PlanSink`](crate::PlanSink): fed after writes (the markdown plan file) |
//! | `plan_mode` | plan mode's config, selection outcomes, `exit_plan_mode` and its review, `/plan` |
//! | `auto_continue` | harness9's auto-continue state machine (for hosts that run it) |
//! | `session` | [`PlanSession`](crate::PlanSession): restore, plan_write (with its write path in `session::recorder`), injection, delegation, plan mode |

pub(crate) mod auto_continue;
pub(crate) mod plan_mode;
pub(crate) mod render;
pub(crate) mod session;
pub(crate) mod shared_plan;
pub(crate) mod sink;
pub(crate) mod task_tool;
pub(crate) mod tool;
pub(crate) mod view;
