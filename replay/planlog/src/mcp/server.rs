//! [`PlanServer`]: the MCP handler of one session, built on the official Rust SDK (rmcp).
//!
//! Tools (chosen by `--tools`): `plan_write` (the library tool's exact schema, rules and
//! results, with a description that says the model reads the plan itself), the task tools
//! `task_create`, `task_update`, `task_get`, `task_list` (Claude Code's Tasks schemas and
//! result shapes; each write one durable event, reads none), and the read-only
//! `plan_history`. Resources: `plan://current` (the injection text) and `plan://current.json`
//! (the plan as plan_write returns it), with `notifications/resources/updated` to subscribers
//! after each successful write, and when another writer changes the plan while the client is
//! idle: a file store is polled every half second once something is subscribed; a PostgreSQL
//! store wakes the server with the `NOTIFY` of each append, from any machine (and is polled
//! every two seconds besides). Every write is durable before its response is sent.
//!
//! Call ids: a client-supplied `_meta.call_id` (or `_meta["planlog/call_id"]`) is the event's
//! call id; otherwise `mcp:<this connection's ULID>:<JSON-RPC request id>`, so a request
//! retried on the same connection is applied once and a restarted server's request ids never
//! collide with an earlier run's. Protocol garbage (invalid JSON-RPC, an unknown tool,
//! arguments that are not an object, arguments over the size limit) gets an error response
//! and writes nothing; a well-formed call that breaks plan_write's rules is recorded as
//! `write_rejected` and answered with an error result the model can correct.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use planlog_core::limits::MAX_ARGUMENTS_BYTES;
use planlog_core::render::injection_text;
use planlog_core::tasks::TaskTool;
use planlog_core::tool::{PLANNING_GUIDELINE_MCP, task_tool_spec};
use planlog_core::{LogError, Plan, PlanSession, Seq, SessionState, ToolSpec, WriteStatus};
use planlog_store::PgLog;
use planlog_store::host::{AsyncPlanSession, SessionGone};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents,
    ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    Tool, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};

use planlog_audit::{HistoryEntry, history_from};

use super::held::HeldArguments;
use super::opening::Opening;

/// The injection-text resource.
pub(crate) const CURRENT: &str = "plan://current";
/// The JSON resource.
pub(crate) const CURRENT_JSON: &str = "plan://current.json";
/// The history tool's name.
pub(crate) const PLAN_HISTORY: &str = "plan_history";

/// Which tools a server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Tools {
    /// plan_write and plan_history (the default).
    Plan,
    /// The task tools (task_create, task_update, task_get, task_list) and plan_history.
    Tasks,
    /// Both.
    All,
}

impl Tools {
    fn plan(self) -> bool {
        matches!(self, Tools::Plan | Tools::All)
    }

    fn tasks(self) -> bool {
        matches!(self, Tools::Tasks | Tools::All)
    }
}

/// The server of one session.
pub(crate) struct PlanServer {
    tools: Tools,
    /// The session, on a thread of its own (blocking appends never run on the server's
    /// runtime): open when the server started, or once the store's long work is done.
    session: Opening,
    connection: String,
    subscribed: Mutex<HashSet<String>>,
    /// The plan subscribers were last told about (other writers' changes are announced on
    /// the next request that sees them).
    announced: Mutex<Plan>,
    /// Where other writers' appends are announced (a PostgreSQL store), else polled.
    changes: Option<Arc<PgLog>>,
    /// Whether the watch for other writers' changes runs (from the first subscription).
    watching: AtomicBool,
    /// This server, for the watch task it starts.
    me: Weak<PlanServer>,
    /// Tool arguments the framing layer held out of rmcp's parse ([`HeldArguments`]).
    held: HeldArguments,
}

/// How often a file store is polled for other writers' changes while something is subscribed.
const POLL: Duration = Duration::from_millis(500);
/// The longest wait for a PostgreSQL `NOTIFY` before looking anyway.
const NOTIFY_WAIT: Duration = Duration::from_secs(2);

impl std::fmt::Debug for PlanServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanServer")
            .field("connection", &self.connection)
            .finish_non_exhaustive()
    }
}

/// The session's thread stopped: an internal error for the client.
fn gone(e: SessionGone) -> McpError {
    McpError::internal_error(e.to_string(), None)
}

impl PlanServer {
    /// Serves `session` with `tools`; `changes`, for a PostgreSQL store, announces other
    /// writers' appends.
    pub(crate) fn new(
        session: Opening,
        tools: Tools,
        changes: Option<Arc<PgLog>>,
        held: HeldArguments,
    ) -> Arc<Self> {
        let announced = session
            .now()
            .map(|session| session.plan())
            .unwrap_or_default();
        Arc::new_cyclic(|me| Self {
            tools,
            session,
            connection: ulid::Ulid::new().to_string(),
            subscribed: Mutex::new(HashSet::new()),
            announced: Mutex::new(announced),
            changes,
            watching: AtomicBool::new(false),
            me: me.clone(),
            held,
        })
    }

    /// The session, waiting for a store still opening ([`Opening::get`]); `Err`: the tool
    /// result that says why there is none (nothing was recorded).
    async fn session(&self) -> Result<AsyncPlanSession, CallToolResult> {
        self.session
            .get()
            .await
            .map_err(|why| CallToolResult::error(vec![ContentBlock::text(why)]))
    }

    /// Whether tool `name` takes its arguments as text (plan_write and the task tools): the
    /// framing layer may hold them out of rmcp's parse for it.
    pub(crate) fn takes_text(name: &str) -> bool {
        name == "plan_write" || TaskTool::from_name(name).is_some()
    }

    /// A call's arguments as text: as the client sent them when they were held, else the
    /// object rmcp parsed, written out.
    fn arguments_text(&self, request: &mut CallToolRequestParams) -> String {
        let arguments = request.arguments.take();
        self.held
            .take(arguments.as_ref())
            .unwrap_or_else(|| Value::Object(arguments.unwrap_or_default()).to_string())
    }

    /// Follows other writers' appends while the client is idle, telling subscribers of each
    /// change to the plan; runs until the server's runtime stops.
    async fn watch(self: Arc<Self>, peer: rmcp::Peer<RoleServer>) {
        let Some(session) = self.session.now() else {
            return;
        };
        loop {
            match &self.changes {
                Some(pg) => {
                    let pg = Arc::clone(pg);
                    let _ =
                        tokio::task::spawn_blocking(move || pg.wait_for_change(NOTIFY_WAIT)).await;
                }
                None => tokio::time::sleep(POLL).await,
            }
            let idle = self
                .subscribed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_empty();
            if idle {
                continue;
            }
            match session.refresh().await {
                Err(_) => return,
                Ok(Err(error)) => {
                    tracing::debug!(session = %session.id(), %error, "could not look for other writers' changes; trying again");
                    continue;
                }
                Ok(Ok(_)) => self.announce(&peer).await,
            }
        }
    }

    /// Catches `session` up with what other writers appended.
    async fn refresh(session: &AsyncPlanSession) -> Result<(), McpError> {
        if let Err(error) = session.refresh().await.map_err(gone)? {
            tracing::warn!(session = %session.id(), %error, "could not catch up with the store; answering from what this server knows");
        }
        Ok(())
    }

    /// Tells subscribers when the plan changed since they were last told (by this server's
    /// writes or another writer's, seen on this request).
    async fn announce(&self, peer: &rmcp::Peer<RoleServer>) {
        // Nobody to tell: no copy of the plan to compare (a subscription starts from the
        // plan as it is then).
        if self
            .subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
        {
            return;
        }
        let Some(session) = self.session.now() else {
            return;
        };
        let now = session.plan();
        {
            let mut announced = self
                .announced
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if *announced == now {
                return;
            }
            *announced = now;
        }
        let subscribed: Vec<String> = self
            .subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        for uri in subscribed {
            if let Err(error) = peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.clone()))
                .await
            {
                tracing::warn!(%uri, %error, "could not send a resource update notification");
            }
        }
    }

    /// Stores anything a failed append left in memory (on shutdown).
    ///
    /// # Errors
    /// The storage error, when events still cannot be stored.
    pub(crate) async fn close(&self) -> Result<(), planlog_core::LogError> {
        // Never opened: nothing was taken in, nothing to store.
        let Some(session) = self.session.now() else {
            return Ok(());
        };
        match session.close().await {
            Ok(result) => result,
            Err(e) => Err(planlog_core::OperatorError::Io {
                path: String::new(),
                action: "closing the session".to_owned(),
                source: planlog_core::StorageError::new(e),
            }
            .into()),
        }
    }

    /// Takes the calls still unsaved out of the session (to be spooled when `close` could
    /// not store them).
    pub(crate) async fn take_unsaved(&self) -> Vec<planlog_core::UnsavedCall> {
        let Some(session) = self.session.now() else {
            return Vec::new();
        };
        session
            .call(PlanSession::take_unsaved)
            .await
            .unwrap_or_default()
    }

    fn call_id(
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        connection: &str,
    ) -> String {
        // rmcp hands `_meta` over in the request or in the context, depending on the version.
        let supplied = |m: &serde_json::Map<String, Value>| {
            m.get("call_id")
                .or_else(|| m.get("planlog/call_id"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        request
            .meta
            .as_ref()
            .and_then(|m| supplied(m))
            .or_else(|| supplied(&context.meta))
            // The id as JSON: the string "100" and the number 100 are different requests.
            .unwrap_or_else(|| {
                let id = serde_json::to_string(&context.id)
                    .unwrap_or_else(|_| format!("{:?}", context.id));
                format!("mcp:{connection}:{id}")
            })
    }

    /// A plan_write call, its `arguments` as text (the session's to parse).
    async fn plan_write(
        &self,
        request: &CallToolRequestParams,
        arguments: String,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let call_id = Self::call_id(request, context, &self.connection);
        if arguments.len() > MAX_ARGUMENTS_BYTES {
            return Err(McpError::invalid_params(
                format!(
                    "plan_write arguments are {} bytes; the limit is {MAX_ARGUMENTS_BYTES}. Nothing was written.",
                    arguments.len()
                ),
                None,
            ));
        }
        let session = match self.session().await {
            Ok(session) => session,
            Err(none) => return Ok(none),
        };
        let outcome = session
            .plan_write(Some(&call_id), None, &arguments)
            .await
            .map_err(gone)?;
        let result = match outcome.status() {
            // Only said when it is true: storage failed and the call waits in memory.
            WriteStatus::Unsaved(error) => {
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "The plan update could not be saved to disk yet ({error}); planlog keeps it in memory and stores it with the next call. The plan is now: {}",
                    session.plan().to_json()
                ))])
            }
            _ => {
                let result = outcome.into_result();
                let block = vec![ContentBlock::text(result.content)];
                if result.is_error {
                    CallToolResult::error(block)
                } else {
                    CallToolResult::success(block)
                }
            }
        };
        Ok(result)
    }

    /// A task tool's call, its `arguments` as text.
    async fn task_call(
        &self,
        tool: TaskTool,
        request: &CallToolRequestParams,
        arguments: String,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if arguments.len() > MAX_ARGUMENTS_BYTES {
            return Err(McpError::invalid_params(
                format!(
                    "{} arguments are {} bytes; the limit is {MAX_ARGUMENTS_BYTES}. Nothing was written.",
                    tool.name(),
                    arguments.len()
                ),
                None,
            ));
        }
        let call_id = Self::call_id(request, context, &self.connection);
        let session = match self.session().await {
            Ok(session) => session,
            Err(none) => return Ok(none),
        };
        let outcome = session
            .task_call(Some(&call_id), None, tool, &arguments)
            .await
            .map_err(gone)?;
        Ok(match outcome.status() {
            WriteStatus::Unsaved(error) => {
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "The task change could not be saved to disk yet ({error}); planlog keeps it in memory and stores it with the next call."
                ))])
            }
            _ => {
                let result = outcome.into_result();
                let block = vec![ContentBlock::text(result.content)];
                if result.is_error {
                    CallToolResult::error(block)
                } else {
                    CallToolResult::success(block)
                }
            }
        })
    }

    async fn plan_history(
        &self,
        request: &CallToolRequestParams,
    ) -> Result<CallToolResult, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        if let Some(key) = args
            .keys()
            .find(|k| !matches!(k.as_str(), "from" | "limit"))
        {
            return Err(McpError::invalid_params(
                format!("plan_history has no argument {key:?}; it takes \"from\" and \"limit\""),
                None,
            ));
        }
        let number = |key: &str| match args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_u64().filter(|n| *n >= 1).map(Some).ok_or_else(|| {
                McpError::invalid_params(
                    format!("{key:?} must be a whole number of at least 1"),
                    None,
                )
            }),
        };
        let from = number("from")?.unwrap_or(1);
        let limit = number("limit")?.unwrap_or(50).min(500);
        let session = match self.session().await {
            Ok(session) => session,
            Err(none) => return Ok(none),
        };
        Self::refresh(&session).await?;
        // Only the window is read: the state before it is one lookup, and a checkpoint in it
        // finds the plan it belongs with by seq.
        let read = session
            .call(move |s| -> Result<Vec<String>, LogError> {
                let last = s.last_seq();
                if !s.exists() || from > last {
                    return Ok(Vec::new());
                }
                let (start, end) = (Seq::new(from)?, Seq::new((from + limit - 1).min(last))?);
                let before = match Seq::new(from - 1) {
                    Ok(previous) => s.state_at(previous)?,
                    Err(_) => SessionState::default(),
                };
                let events = s.read(start, Some(end))?;
                let earlier = |seq| s.state_at(seq).ok().map(|state| state.plan);
                Ok(history_from(before, &events, &earlier)
                    .iter()
                    .map(HistoryEntry::line)
                    .collect())
            })
            .await
            .map_err(gone)?;
        let lines = read.map_err(|e| McpError::internal_error(e.to_string(), None))?;
        Ok(CallToolResult::success(vec![ContentBlock::text(
            if lines.is_empty() {
                "(no events in that range)".to_owned()
            } else {
                lines.join("\n")
            },
        )]))
    }
}

fn tool(spec: ToolSpec) -> Tool {
    let schema = spec.input_schema.as_object().cloned().unwrap_or_default();
    Tool::new(spec.name, spec.description, Arc::new(schema))
}

/// The `plan_history` declaration.
pub(crate) fn plan_history_spec() -> ToolSpec {
    ToolSpec {
        name: PLAN_HISTORY.to_owned(),
        description: "Read-only: the session's plan events, one line each (seq, time, kind, turn, call id, what changed or why a write was rejected). Use it to look back at how the plan evolved.".to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "from": {"type": "integer", "minimum": 1, "description": "First seq (default 1)."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 500, "description": "Most lines to return (default 50)."}
            },
            "additionalProperties": false
        }),
    }
}

impl ServerHandler for PlanServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new("planlog", env!("CARGO_PKG_VERSION")))
        .with_instructions(if self.tools.plan() {
            PLANNING_GUIDELINE_MCP.to_owned()
        } else {
            "Keep your working plan as tasks (task_create, task_update). planlog keeps them durably and shares them with every agent on this list, but does not put them into your context: call task_list when you start and after any compaction, then continue from it.".to_owned()
        })
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut tools = Vec::new();
        if self.tools.plan() {
            tools.push(tool(ToolSpec::plan_write_mcp()));
        }
        if self.tools.tasks() {
            tools.extend(TaskTool::ALL.into_iter().map(|t| tool(task_tool_spec(t))));
        }
        tools.push(tool(plan_history_spec()));
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // Held arguments are taken back first, whichever way the call goes.
        let text = if Self::takes_text(request.name.as_ref()) {
            self.arguments_text(&mut request)
        } else {
            String::new()
        };
        let task = TaskTool::from_name(request.name.as_ref())
            .filter(|t| self.tools.tasks() && t.name() == request.name.as_ref());
        if let Some(t) = task {
            let result = self.task_call(t, &request, text, &context).await?;
            self.announce(&context.peer).await;
            return Ok(result.into());
        }
        match request.name.as_ref() {
            "plan_write" if self.tools.plan() => {
                let result = self.plan_write(&request, text, &context).await?;
                self.announce(&context.peer).await;
                Ok(result.into())
            }
            PLAN_HISTORY => {
                let result = self.plan_history(&request).await?;
                self.announce(&context.peer).await;
                Ok(result.into())
            }
            other => Err(McpError::invalid_params(
                format!(
                    "unknown tool {other:?}; this server has {}",
                    match self.tools {
                        Tools::Plan => "plan_write and plan_history",
                        Tools::Tasks =>
                            "task_create, task_update, task_get, task_list and plan_history",
                        Tools::All =>
                            "plan_write, task_create, task_update, task_get, task_list and plan_history",
                    }
                ),
                None,
            )),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let id = self.session.id().clone();
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(CURRENT, "current plan")
                .with_description(format!("The active items of session {id} exactly as injected into the model's view (empty when nothing is active)")),
            Resource::new(CURRENT_JSON, "current plan (JSON)").with_description(format!("The whole plan of session {id} as the JSON array plan_write returns")),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let session = self
            .session
            .get()
            .await
            .map_err(|why| McpError::internal_error(why, None))?;
        Self::refresh(&session).await?;
        let plan = session.plan();
        self.announce(&context.peer).await;
        let contents = match request.uri.as_str() {
            CURRENT => {
                ResourceContents::text(injection_text(&plan), CURRENT).with_mime_type("text/plain")
            }
            CURRENT_JSON => ResourceContents::text(plan.to_json(), CURRENT_JSON)
                .with_mime_type("application/json"),
            other => {
                return Err(McpError::resource_not_found(
                    format!("no resource {other:?}; try {CURRENT} or {CURRENT_JSON}"),
                    None,
                ));
            }
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if request.uri != CURRENT && request.uri != CURRENT_JSON {
            return Err(McpError::resource_not_found(
                format!("no resource {:?}", request.uri),
                None,
            ));
        }
        let session = self
            .session
            .get()
            .await
            .map_err(|why| McpError::internal_error(why, None))?;
        {
            let mut subscribed = self
                .subscribed
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if subscribed.is_empty() {
                // Changes are told from here on: compared with the plan as it is now.
                *self
                    .announced
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = session.plan();
            }
            subscribed.insert(request.uri);
        }
        if !self.watching.swap(true, Ordering::SeqCst)
            && let Some(me) = self.me.upgrade()
        {
            tokio::spawn(me.watch(context.peer.clone()));
        }
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&request.uri);
        Ok(())
    }
}
