//! `planlog mcp`: serve one session as a stdio MCP server.
//!
//! | module | what |
//! |---|---|
//! | `server` | [`server::PlanServer`], the rmcp handler: tools, resources, notifications |
//! | `spool` | [`spool::McpSpool`]: calls a server could not store before it exited, stored by the next server or `planlog drain` |
//! | `framing` | the JSON-RPC lines between stdio and rmcp: malformed `tools/call` params are answered `-32602` here |
//! | `held` | [`held::HeldArguments`]: a plan_write or task call's arguments held out of rmcp's parse, for the handler as sent |
//! | `opening` | [`opening::Opening`]: the session, open at the start or, on a store that needs long work first, once that is done while the server answers |

mod framing;
mod held;
mod opening;
mod server;
pub(crate) mod spool;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use planlog_agents::hook::{Deadline, Target as HookTarget};
use planlog_core::events::Origin;
use planlog_core::{EventLog, LogError, OperatorError, PlanSession, PlanSink, SessionId};
use planlog_import::SourceFormat;
use planlog_store::host::{AsyncPlanSession, BackgroundSink, PlanFiles, StartError, SystemEnv};

use crate::support::failure::Failure;
use crate::support::open::{SHORT_WORK, Store};
use opening::{Kept, Opening, open_later};
use spool::McpSpool;

/// Arguments of `planlog mcp`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Serve this session: resumed when it exists, created with this id by its first write
    /// otherwise. Several servers (one per agent) may serve one session at once.
    #[arg(long, conflicts_with = "new")]
    session: Option<String>,
    /// Start a new session (the default); its id is logged on stderr.
    #[arg(long)]
    new: bool,
    /// Serve the Claude Code session this server was started by (`CLAUDE_CODE_SESSION_ID`,
    /// which Claude Code gives the MCP servers it starts): the session planlog's hooks record
    /// and put back after /compact (`cc-<id>`), so a plan kept with these tools comes back
    /// too.
    #[arg(long, conflicts_with_all = ["session", "new"])]
    claude_code: bool,
    /// The tools to offer: plan (plan_write), tasks (task_create, task_update, task_get,
    /// task_list, with Claude Code's Tasks schemas), or all; plan_history always.
    #[arg(long, value_enum, default_value = "plan")]
    tools: server::Tools,
}

/// How long a call waits for another process's lock on a file store's journal. A plan_write
/// that waits longer is answered without the store: it goes on in memory, the model is told
/// it is not saved yet, and the next call stores it (as a storage failure is met). An
/// ordinary import or fork holds the lock for well under this; a long one (a transcript of
/// many thousands of events, streamed under the lock) would otherwise hold the model's tool
/// call for as long as it runs.
pub(super) const JOURNAL_WAIT: Duration = Duration::from_secs(5);

/// How long the server's first open of the store waits for another process's lock on the
/// journal before it answers its client anyway and goes on opening ([`opening`]): an agent
/// gives a starting server a few seconds (Codex: 10 s).
const START_WAIT: Duration = Duration::from_secs(1);

/// The session a server serves, and what it is created with.
#[derive(Clone)]
pub(super) struct Target {
    id: SessionId,
    /// For `--claude-code`: the label and origin of the session planlog's hooks record.
    made_as: Option<(String, Origin)>,
}

impl Target {
    fn of(args: &Args) -> Result<Self, Failure> {
        Ok(match (&args.session, args.claude_code) {
            (_, true) => {
                let session = std::env::var("CLAUDE_CODE_SESSION_ID")
                    .ok()
                    .filter(|s| !s.trim().is_empty())
                    .ok_or_else(|| {
                        Failure::cannot_run(
                            "--claude-code serves the Claude Code session that started this server, but CLAUDE_CODE_SESSION_ID is not set: start it from Claude Code (.mcp.json), or name a session with --session",
                        )
                    })?;
                let target = HookTarget::main(&session);
                let origin = Origin::Import {
                    source: SourceFormat::ClaudeCode.word().to_owned(),
                    source_session: Some(session),
                    parent: None,
                    cwd: std::env::var("CLAUDE_PROJECT_DIR").ok(),
                    transcript: None,
                };
                Self {
                    id: target.session_id(),
                    made_as: Some((target.label(), origin)),
                }
            }
            (Some(s), false) => Self {
                id: crate::support::failure::session_id(s)?,
                made_as: None,
            },
            (None, false) => Self {
                id: SessionId::from_ulid(ulid::Ulid::new()),
                made_as: None,
            },
        })
    }

    /// Opens the session on `log`. Refuse rather than degrade: a server must serve the
    /// session it was asked for. A new session is created with its first write, so a
    /// server that never gets a client leaves nothing behind. The plan file is a derived
    /// view: written on a thread of its own, never on the reply path (the append is durable
    /// before the reply; the file follows; all written at shutdown).
    pub(super) async fn open(
        &self,
        log: Arc<dyn EventLog>,
        path: &Path,
    ) -> Result<AsyncPlanSession, Failure> {
        let mut builder = PlanSession::builder(Arc::clone(&log), SystemEnv);
        if let Some((label, origin)) = &self.made_as {
            builder = builder.label(label.clone()).origin(origin.clone());
        }
        let builder = builder.sink(BackgroundSink::new(PlanFiles::beside(path)));
        AsyncPlanSession::open(builder, &self.id)
            .await
            .map_err(|e| match e {
                StartError::Log(e) => Failure::from(e),
                other => Failure::cannot_run(other.to_string()),
            })
    }
}

/// Runs the server until the client goes away.
pub(crate) fn serve(store: &Store, args: &Args) -> Result<(), Failure> {
    let target = Target::of(args)?;
    let spool = Arc::new(McpSpool::beside(&store.path));
    let files: Arc<dyn PlanSink> = Arc::new(PlanFiles::beside(&store.path));
    // The first open does what a few seconds allow; past that, the server answers its
    // client while a thread goes on opening.
    let first = match store.for_serving(START_WAIT, Some(SHORT_WORK)) {
        Ok(log) => Ok(log),
        Err(LogError::Operator(OperatorError::NeedsTime { work, .. })) => {
            Err(format!("the store needs {work} first"))
        }
        Err(LogError::Operator(OperatorError::Locked { .. })) => {
            Err("another process holds the store's journal (a long import or fork)".to_owned())
        }
        Err(e) => return Err(e.into()),
    };
    // The store, closed by this thread before the server returns (below).
    let kept = Kept::default();
    // Calls an earlier server could not store before it exited go first, in order.
    if let Ok(log) = &first {
        kept.keep(log);
        drain_spool(&spool, log, &files, JOURNAL_WAIT);
    }
    // Opened outside the async runtime: the blocking PostgreSQL client runs one of its own.
    let changes = store.change_listener();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::cannot_run(format!("cannot start the async runtime: {e}")))?;
    // The listener is dropped outside the runtime too (its client blocks on close).
    let listener = changes.clone();
    let shown = store.shown();
    let mut opener = None;
    let served = runtime.block_on(async {
        let session = match first {
            Ok(log) => {
                let opened = target.open(log, &store.path).await?;
                let events = opened
                    .call(|s| s.last_seq())
                    .await
                    .map_err(|e| Failure::cannot_run(e.to_string()))?;
                eprintln!(
                    "planlog mcp: serving session {} ({events} events) in {shown} (audit it with: planlog --db {shown} history {})",
                    target.id, target.id
                );
                Opening::ready(opened)
            }
            Err(why) => {
                eprintln!(
                    "planlog mcp: {why}; serving session {} in {shown} meanwhile: its tool calls wait for the store (at most {} s each)",
                    target.id,
                    opening::CALL_WAIT.as_secs()
                );
                let (session, done) = Opening::later(target.id.clone(), why);
                opener = Some(open_later(
                    store.clone(),
                    target.clone(),
                    Arc::clone(&spool),
                    Arc::clone(&files),
                    (done, kept.clone()),
                ));
                session
            }
        };
        let held = held::HeldArguments::new();
        let server = server::PlanServer::new(session, args.tools, changes, held.clone());
        let served = async {
            use rmcp::ServiceExt;
            let holds = |tool: &str| server::PlanServer::takes_text(tool);
            let service = Arc::clone(&server)
                .serve(framing::stdio(held, holds))
                .await
                .map_err(|e| e.to_string())?;
            service.waiting().await.map(|_| ()).map_err(|e| e.to_string())
        }
        .await;
        if let Err(error) = server.close().await {
            // The store still cannot take them: keep them for the next server or
            // `planlog drain` instead of losing them with this process.
            let calls = server.take_unsaved().await;
            spool
                .push(&calls, &Deadline::after(JOURNAL_WAIT))
                .map_err(|e| {
                    Failure::cannot_run(format!(
                        "{} plan calls could not be stored ({error}) nor kept in {} ({e}); they are lost",
                        calls.len(),
                        spool.path().display()
                    ))
                })?;
            eprintln!(
                "planlog mcp: {} plan calls could not be stored ({error}); they wait in {} and are stored, in order, by the next `planlog mcp` on this store or by `planlog drain`",
                calls.len(),
                spool.path().display()
            );
        } else if let Some(log) = kept.log() {
            drain_spool(&spool, &log, &files, JOURNAL_WAIT);
        }
        served.map_err(|e| Failure::cannot_run(format!("MCP connection failed: {e}")))
    });
    drop(runtime);
    drop(listener);
    // The store's long work, if still under way, is finished rather than cut off (a process
    // that ends during an index write leaves the file needing a repair); it stops trying
    // when it waits for a lock.
    if let Some(opener) = opener {
        opener.finish();
    }
    kept.close();
    served
}

/// Stores what waits in the spool, saying on stderr what could not be.
pub(super) fn drain_spool(
    spool: &McpSpool,
    log: &Arc<dyn EventLog>,
    files: &Arc<dyn PlanSink>,
    wait: std::time::Duration,
) {
    if spool.looks_empty() {
        return;
    }
    let drained = spool.drain(log, Some(files), &Deadline::after(wait));
    if drained.stored > 0 {
        eprintln!(
            "planlog mcp: stored {} plan calls that waited in {}",
            drained.stored,
            spool.path().display()
        );
    }
    for problem in drained.problems(spool.path()) {
        eprintln!("planlog mcp: {problem}");
    }
}
