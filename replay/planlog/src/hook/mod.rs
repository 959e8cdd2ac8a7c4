//! `planlog hook claude-code`: the command Claude Code runs for its hook events. It reads the
//! hook's JSON on stdin and acts on `hook_event_name` (see `planlog_replay::claude_hooks`):
//!
//! - `PostToolUse` / `PostToolUseFailure` of TodoWrite, TaskCreate, TaskUpdate: the call is
//!   recorded, as it happened.
//! - `PreToolUse` of those: a call planlog's rules refuse is blocked (exit 2, the rejection
//!   message on stderr for the model) and recorded as refused; `--audit-only` never blocks.
//! - `SessionStart` (resume, clear, compact, fork) and `UserPromptSubmit`: the plan's active
//!   items go back into the model's context (JSON on stdout); a fork starts from its
//!   parent's plan.
//!
//! It never breaks the agent: bad input, a locked store or a full disk is a warning on
//! stderr and exit 0; a call that could not be stored waits in the spool beside the store
//! until the next hook call or `planlog verify` stores it.

use std::io::Read;
use std::time::Duration;

use planlog_core::{EventLog, Plan};
use planlog_replay::claude_hooks::capture::{self, Target, store_spooled};
use planlog_replay::claude_hooks::input::HookInput;
use planlog_replay::claude_hooks::spool::Spool;
use planlog_replay::claude_hooks::{PLAN_TOOLS, check, restore};
use planlog_replay::import::ImportError;
use planlog_store::{PgLog, PlanFiles, RedbLog, StoreAddress, SystemEnv};
use serde_json::Value;

use crate::support::failure::Failure;
use crate::support::open::Store;

/// The agents whose hooks planlog speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Agent {
    /// Claude Code.
    ClaudeCode,
}

/// Arguments of `planlog hook`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The agent whose hook input arrives on stdin.
    #[arg(value_enum)]
    agent: Agent,
    /// Record, but never block a call (no PreToolUse refusals).
    #[arg(long)]
    audit_only: bool,
}

/// Longest hook input read (a TodoWrite of 200 long items is far below).
const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// How long a hook waits for the store before it spools (well under Claude Code's patience).
const STORE_WAIT: Duration = Duration::from_millis(400);

/// How long a hook waits to reach a PostgreSQL store before it spools.
const PG_CONNECT_WAIT: Duration = Duration::from_secs(1);

fn warn(what: &str) {
    eprintln!("planlog hook: {what}");
}

/// Runs one hook call. Only a refused call fails (exit 2, its message already on stderr).
pub(crate) fn run(store: &Store, args: &Args) -> Result<(), Failure> {
    let Agent::ClaudeCode = args.agent;
    let mut raw = Vec::new();
    if let Err(e) = std::io::stdin().take(MAX_INPUT_BYTES).read_to_end(&mut raw) {
        warn(&format!(
            "could not read the hook input ({e}); nothing recorded"
        ));
        return Ok(());
    }
    let input = match HookInput::parse(&raw) {
        Ok(i) => i,
        Err(e) => {
            warn(&format!("{e}; nothing recorded"));
            return Ok(());
        }
    };
    let list_id = std::env::var("CLAUDE_CODE_TASK_LIST_ID").ok();
    let target = Target::of(&input, list_id.as_deref());
    let tool = input.tool_name.as_deref().unwrap_or_default();
    let plan_tool = PLAN_TOOLS.contains(&tool);
    let hooks = Hooks {
        store,
        spool: Spool::beside(&store.path),
        input: &input,
        target: &target,
    };
    match input.hook_event_name.as_str() {
        "PostToolUse" | "PostToolUseFailure" if plan_tool => {
            hooks.record(&raw, list_id.as_deref());
            Ok(())
        }
        "PreToolUse" if plan_tool && !args.audit_only => hooks.guard(tool),
        "SessionStart" if input.source.as_deref() != Some("startup") => {
            hooks.restore("SessionStart");
            Ok(())
        }
        "UserPromptSubmit" => {
            hooks.restore("UserPromptSubmit");
            Ok(())
        }
        _ => Ok(()),
    }
}

struct Hooks<'a> {
    store: &'a Store,
    spool: Spool,
    input: &'a HookInput,
    target: &'a Target,
}

impl Hooks<'_> {
    /// The store, opened to answer within the hook's budget.
    fn open(&self) -> Result<std::sync::Arc<dyn EventLog>, String> {
        match &self.store.address {
            StoreAddress::File(_) => self
                .store
                .open_with(
                    RedbLog::options()
                        .lock_timeout(STORE_WAIT)
                        .write_wait(STORE_WAIT),
                )
                .map_err(|e| e.to_string()),
            StoreAddress::Postgres(url) => PgLog::open_within(url, PG_CONNECT_WAIT)
                .map(|log| std::sync::Arc::new(log) as std::sync::Arc<dyn EventLog>)
                .map_err(|e| e.to_string()),
        }
    }

    /// Stores what the spool holds; `false` when the store still refuses.
    fn drain(&self, log: &dyn EventLog) -> bool {
        match store_spooled(log, &SystemEnv, &self.spool) {
            Ok(0) => true,
            Ok(n) => {
                tracing::info!(
                    stored = n,
                    "stored hook calls that were waiting in the spool"
                );
                true
            }
            Err(e) => {
                warn(&format!(
                    "earlier hook calls still wait in {} ({e})",
                    self.spool.path().display()
                ));
                false
            }
        }
    }

    fn spool(&self, raw: &[u8], list_id: Option<&str>, why: &str) {
        let value: Value = serde_json::from_slice(raw).unwrap_or(Value::Null);
        match self.spool.push(&value, list_id) {
            Ok(()) => warn(&format!(
                "could not store the call ({why}); it waits in {} and is stored by the next hook call or `planlog verify`",
                self.spool.path().display()
            )),
            Err(e) => warn(&format!(
                "could not store the call ({why}) nor spool it ({e}); it is lost to planlog (importing the transcript later recovers it)"
            )),
        }
    }

    fn record(&self, raw: &[u8], list_id: Option<&str>) {
        let log = match self.open() {
            Ok(l) => l,
            Err(why) => return self.spool(raw, list_id, &why),
        };
        if !self.drain(&*log) {
            return self.spool(raw, list_id, "earlier calls are not stored yet");
        }
        let Some(records) =
            capture::ran(self.input, self.target, planlog_core::Env::now(&SystemEnv))
        else {
            return;
        };
        match capture::write(&*log, &SystemEnv, self.target, &records) {
            Ok(_) => self.write_plan_file(&*log),
            Err(ImportError::Store(e)) => self.spool(raw, list_id, &e.to_string()),
            Err(e) => warn(&format!("{e}; nothing recorded")),
        }
    }

    fn write_plan_file(&self, log: &dyn EventLog) {
        let id = self.target.session_id();
        if let Ok(Some(last)) = log.last(&id)
            && let Ok(state) = log.state_at(&id, last.seq)
        {
            PlanFiles::beside(&self.store.path).write_or_warn(&id, &state.plan, last.at);
        }
    }

    fn plan(&self, log: &dyn EventLog) -> Result<Plan, String> {
        let id = self.target.session_id();
        match log.head(&id).map_err(|e| e.to_string())? {
            Some(head) => log
                .state_at(&id, head.seq)
                .map(|s| s.plan)
                .map_err(|e| e.to_string()),
            None => Ok(Plan::new()),
        }
    }

    fn guard(&self, tool: &str) -> Result<(), Failure> {
        let input = self.input.tool_input.clone().unwrap_or(Value::Null);
        let log = match self.open() {
            Ok(l) => l,
            Err(why) => {
                warn(&format!(
                    "could not check the call against planlog's rules ({why}); allowing it"
                ));
                return Ok(());
            }
        };
        self.drain(&*log);
        let plan = match self.plan(&*log) {
            Ok(p) => p,
            Err(why) => {
                warn(&format!(
                    "could not read the plan ({why}); allowing the call"
                ));
                return Ok(());
            }
        };
        let Some(rejection) = check(&plan, tool, &input) else {
            return Ok(());
        };
        let message = rejection.message.clone();
        let records = capture::blocked(
            self.input,
            self.target,
            planlog_core::Env::now(&SystemEnv),
            rejection,
        );
        if let Err(e) = capture::write(&*log, &SystemEnv, self.target, &records) {
            warn(&format!("the refusal could not be recorded ({e})"));
        }
        // Exit 2 blocks the call; Claude Code shows stderr to the model.
        eprintln!("{message}");
        Err(Failure {
            code: 2,
            message: String::new(),
        })
    }

    fn restore(&self, event: &str) {
        let log = match self.open() {
            Ok(l) => l,
            Err(why) => {
                return warn(&format!(
                    "could not read the plan ({why}); nothing restored"
                ));
            }
        };
        self.drain(&*log);
        if self.input.source.as_deref() == Some("fork")
            && let Err(e) = restore::continue_fork(
                &*log,
                &SystemEnv,
                self.input,
                self.target,
                planlog_core::Env::now(&SystemEnv),
            )
        {
            warn(&format!(
                "could not start the fork from its parent's plan ({e})"
            ));
        }
        match restore::context(&*log, self.target) {
            Ok(Some(text)) => println!("{}", restore::output(event, &text)),
            Ok(None) => {}
            Err(e) => warn(&format!("could not read the plan ({e}); nothing restored")),
        }
    }
}
