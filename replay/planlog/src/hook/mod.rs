//! `planlog hook <agent>`: the command an agent runs for its hook events (Claude Code, Codex,
//! Gemini CLI, opencode through planlog's plugin, Cursor). It reads the hook's JSON on stdin
//! (Cursor's turned into Claude Code's field names, which the others share) and acts on the
//! event as [`action`] says for that agent: each agent's plan tool is recorded in the session an
//! import of its own record writes (`cc-`, `cx-`, `gm-`, `oc-`, `cu-`), the plan goes back where
//! the agent lets a hook add context, and `--enforce` blocks where planlog can catch up first
//! (Claude Code, Codex, Gemini CLI). For Claude Code:
//!
//! - `PostToolUse` / `PostToolUseFailure` of TodoWrite, TaskCreate, TaskUpdate: the call is
//!   recorded, as it happened (a call planlog's rules would refuse is flagged by `history`
//!   and `verify`, never blocked).
//! - `PreToolUse` of those, with `--enforce` only: the plan planlog has is first brought up
//!   to date from the transcript; a call the rules refuse against a plan planlog knows whole
//!   is blocked (exit 2, the rejection message on stderr for the model) and recorded as
//!   refused; against a plan planlog cannot know whole it is allowed, with a warning.
//! - `SessionStart` (resume, clear, compact, fork) and `UserPromptSubmit`: the plan goes back
//!   into the model's context (JSON on stdout); a fork starts from its parent's plan.
//! - `SessionEnd`: what waits in the spool is stored.
//! - A payload of another agent that runs the hooks of Claude Code's settings files (Copilot
//!   CLI, Cursor, Gemini CLI: [`ForeignHost`]) is never taken for a Claude Code session: a
//!   warning, exit 0.
//!
//! Every call ends within [`BUDGET`]: a write is stored, or kept in the spool (or, when the
//! store refuses it for good, in the dead letters), always behind the writes that wait.
//! Bad input, a locked store or a full disk is a warning on stderr and exit 0.

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use planlog_agents::claude_code::ForeignHost;
use planlog_agents::hook::Agent as HookAgent;
use planlog_agents::hook::{
    Compaction, DeadLetters, Deadline, Entry, HookInput, Kind, Spool, Target, check,
};
use planlog_agents::hook::{SPOOL_RESERVE, WritePath, Written, restore};
use planlog_core::{Env, EventLog, LogError, OperatorError, Plan};
use planlog_import::{self as import, HistoryCache, ImportOptions, Input, SourceFormat};
use planlog_store::host::{PlanFiles, SystemEnv};
use planlog_store::{Indexing, JournaledLog, PgLog, RedbLog, StoreAddress};
use serde_json::Value;

use crate::support::failure::Failure;
use crate::support::open::{SHORT_WORK, Store};

pub(crate) mod catch_up;
pub(crate) mod console;
pub(crate) mod warm;

use console::{answer, say_on_stderr, warn};

/// The agents whose hooks planlog speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Agent {
    /// Claude Code.
    ClaudeCode,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
    /// opencode, through planlog's plugin.
    Opencode,
    /// Cursor.
    Cursor,
    /// GitHub Copilot CLI.
    Copilot,
}

impl Agent {
    pub(crate) fn hooks(self) -> HookAgent {
        match self {
            Agent::ClaudeCode => HookAgent::ClaudeCode,
            Agent::Codex => HookAgent::Codex,
            Agent::Gemini => HookAgent::Gemini,
            Agent::Opencode => HookAgent::Opencode,
            Agent::Cursor => HookAgent::Cursor,
            Agent::Copilot => HookAgent::Copilot,
        }
    }
}

/// Arguments of `planlog hook`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The agent whose hook input arrives on stdin.
    #[arg(value_enum)]
    agent: Agent,
    /// Block a plan tool call planlog's rules refuse (PreToolUse, exit 2), after bringing the
    /// plan up to date from the transcript. Without it, such calls are recorded and flagged,
    /// never blocked.
    #[arg(long)]
    enforce: bool,
    /// Record, never block (the default; kept for settings written by older versions).
    #[arg(long, hide = true)]
    audit_only: bool,
    /// The hook event, for agents whose payload does not name it (Copilot CLI's
    /// `postToolUse`, `preCompact`, …); `planlog install` writes it.
    #[arg(long, value_name = "EVENT")]
    event: Option<String>,
}

impl Args {
    /// The command line `planlog install` writes (after the program): `hook AGENT` with
    /// `--db STORE`, `--enforce`, `--audit-only` and `--event EVENT` each at most once, `--db`
    /// before `hook` too; read without building the whole CLI's grammar, which cost a hook
    /// call 0.16 ms (BENCHMARKS.md § "A hook's command line read without clap"). The store
    /// named and the arguments, or `None` for any other line (clap then reads it, and says
    /// what is wrong with it).
    pub(crate) fn installed(words: &[String]) -> Option<(Option<PathBuf>, Args)> {
        let mut db = None;
        let mut agent = None;
        let mut hook = false;
        let mut enforce = false;
        let mut audit_only = false;
        let mut event = None;
        let mut words = words.iter();
        while let Some(word) = words.next() {
            match word.as_str() {
                "--db" if db.is_none() => {
                    db = Some(PathBuf::from(value(words.next())?));
                }
                "hook" if !hook => hook = true,
                "--enforce" if hook && !enforce => enforce = true,
                "--audit-only" if hook && !audit_only => audit_only = true,
                "--event" if hook && event.is_none() => event = Some(value(words.next())?.clone()),
                other if hook && agent.is_none() && !other.starts_with('-') => {
                    agent = Some(<Agent as clap::ValueEnum>::from_str(other, false).ok()?);
                }
                _ => return None,
            }
        }
        let agent = agent?;
        Some((
            db,
            Args {
                agent,
                enforce,
                audit_only,
                event,
            },
        ))
    }

    /// The command line [`Args::installed`] reads back as these arguments (after the
    /// program, without `--db`).
    pub(crate) fn words(&self) -> Vec<String> {
        let agent = clap::ValueEnum::to_possible_value(&self.agent)
            .map(|v| v.get_name().to_owned())
            .unwrap_or_default();
        let mut words = vec!["hook".to_owned(), agent];
        if self.enforce {
            words.push("--enforce".to_owned());
        }
        if self.audit_only {
            words.push("--audit-only".to_owned());
        }
        if let Some(event) = &self.event {
            words.extend(["--event".to_owned(), event.clone()]);
        }
        words
    }
}

/// An option's value, when there is one that is not itself an option.
fn value(word: Option<&String>) -> Option<&String> {
    word.filter(|w| !w.is_empty() && !w.starts_with('-'))
}

/// Longest hook input read (a TodoWrite of 200 long items is far below).
pub(crate) const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// The most a hook call takes, start to end, whatever happens around it.
pub(crate) const BUDGET: Duration = Duration::from_secs(1);

/// Time kept for starting and ending the process, outside the work.
const PROCESS_MARGIN: Duration = Duration::from_millis(50);

/// How long one wait for the store may take (opening it, a write another process holds).
const STORE_WAIT: Duration = Duration::from_millis(300);

/// How long a catch-up waits for a transcript the agent has not written yet before the plan
/// counts as not known whole.
const TRANSCRIPT_WAIT: Duration = Duration::from_millis(300);

/// Copilot's todo table, for a `sql` call on it: after it ran, the table as it stands, read
/// now and kept in the input (a call spooled and stored later records what the table held
/// then); before it runs, when enforcing, the table now and as the call would leave it.
fn copilot_snapshot(value: &mut Value, enforce: bool, env: &CallEnv) {
    use planlog_agents::copilot;
    let event = value["hook_event_name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let judged = event == "PreToolUse" && enforce;
    let touched = (event == "PostToolUse" || judged)
        && value["tool_name"] == "sql"
        && copilot::touches_todos(&value["tool_input"]);
    if !touched {
        return;
    }
    let copilot_home = env
        .copilot_home
        .as_ref()
        .filter(|v| !v.as_os_str().is_empty());
    let Some(dir) = copilot::home(env.home.as_deref(), copilot_home.map(PathBuf::as_path)) else {
        return warn(
            "no HOME or COPILOT_HOME: Copilot's todo list cannot be found; nothing recorded",
        );
    };
    let id = value["session_id"].as_str().unwrap_or_default();
    let Some(db) = copilot::database(&dir, id) else {
        return warn(&format!(
            "the session id {id:?} names no folder; nothing recorded"
        ));
    };
    match copilot::todos_in(&db) {
        Ok(todos) => value[copilot::SNAPSHOT_FIELD] = todos,
        Err(why) if judged => {
            return warn(&format!(
                "could not read Copilot's todo list ({why}); the call is allowed"
            ));
        }
        Err(why) => {
            return warn(&format!(
                "could not read Copilot's todo list ({why}); nothing recorded"
            ));
        }
    }
    if judged {
        match copilot::todos_after(&db, &value["tool_input"]) {
            Ok(after) => value["todos_after"] = after,
            Err(why) => warn(&format!(
                "could not work out what the call would leave ({why}); it is allowed, and recorded once it has run"
            )),
        }
    }
}

/// One hook call: its input and what it takes from its process's environment. A warm
/// `planlog hook-server` runs it for a hook's process as that process would ([`warm`]).
#[derive(Debug)]
pub(crate) struct Call {
    /// The hook's JSON, as read from stdin (at most [`MAX_INPUT_BYTES`] + 1 bytes).
    pub(crate) raw: Vec<u8>,
    /// The environment the call reads.
    pub(crate) env: CallEnv,
    /// The first id of the call's entries; the next ones count up from it. A call run again
    /// with the same seed (its warm server went away mid-call) makes the same call ids,
    /// which the store keeps once.
    pub(crate) seed: ulid::Ulid,
    /// When storing must be done by (spooling what could not be stored may take
    /// [`SPOOL_RESERVE`] more): [`BUDGET`] from the hook's start, less the process's margin.
    pub(crate) deadline: Deadline,
}

/// What a hook call reads from its process's environment (sent whole to a warm server).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct CallEnv {
    /// The working folder: a relative transcript path is read from it.
    pub(crate) cwd: PathBuf,
    /// `HOME` (Copilot's folder).
    pub(crate) home: Option<PathBuf>,
    /// `COPILOT_HOME`.
    pub(crate) copilot_home: Option<PathBuf>,
    /// `CLAUDE_CODE_TASK_LIST_ID`: the shared task list a Tasks call writes.
    pub(crate) task_list_id: Option<String>,
}

impl CallEnv {
    /// This process's.
    pub(crate) fn from_process() -> Self {
        Self {
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            home: std::env::var_os("HOME").map(PathBuf::from),
            copilot_home: std::env::var_os("COPILOT_HOME").map(PathBuf::from),
            task_list_id: std::env::var("CLAUDE_CODE_TASK_LIST_ID").ok(),
        }
    }
}

/// The hook input on stdin, at most [`MAX_INPUT_BYTES`] + 1 bytes of it (more is refused by
/// [`run`]).
pub(crate) fn read_input() -> std::io::Result<Vec<u8>> {
    let mut raw = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut raw)?;
    Ok(raw)
}

/// Runs the hook call on this process's stdin: handed to the store's warm
/// `planlog hook-server` when one answers ([`warm`]), else run here, which then starts one
/// for the calls after it.
pub(crate) fn call(store: &Store, args: &Args) -> Result<(), Failure> {
    // Storing must be done by here; spooling what could not be stored may take the reserve.
    let deadline = Deadline::after(BUDGET.saturating_sub(PROCESS_MARGIN + SPOOL_RESERVE));
    let raw = match read_input() {
        Ok(raw) => raw,
        Err(e) => {
            warn(&format!(
                "could not read the hook input ({e}); nothing recorded"
            ));
            return Ok(());
        }
    };
    let call = Call {
        raw,
        env: CallEnv::from_process(),
        seed: SystemEnv.new_ulid(),
        deadline,
    };
    warm::call(store, args, call)
}

/// How a call gets its store: opened for the call ([`open`], a hook's own process), or a
/// handle a warm server keeps between calls (`warm::held`).
pub(crate) type Opener<'a> =
    dyn Fn(&Store, &Deadline) -> Result<Arc<dyn EventLog>, LogError> + Sync + 'a;

/// `planlog hook-server`: serves the store's hook calls from a warm process ([`warm`]).
pub(crate) fn serve_warm(store: &Store) -> Result<(), Failure> {
    #[cfg(target_os = "linux")]
    return match &store.address {
        StoreAddress::File(_) => warm::serve(store),
        StoreAddress::Postgres(_) => Err(Failure::cannot_run(
            "a hook server serves a store file; hooks on a database run in their own processes",
        )),
    };
    #[cfg(not(target_os = "linux"))]
    Err(Failure::cannot_run("a hook server runs on Linux only"))
}

/// Runs one hook call. Only a call refused while enforcing fails (exit 2, its message
/// already on stderr).
pub(crate) fn run(
    store: &Store,
    args: &Args,
    call: Call,
    open: &Opener<'_>,
) -> Result<(), Failure> {
    let agent = args.agent.hooks();
    let Call {
        mut raw,
        env,
        seed,
        deadline,
    } = call;
    if raw.len() as u64 > MAX_INPUT_BYTES {
        warn(&format!(
            "the hook input is over planlog's limit of {} MiB; nothing recorded (importing the transcript later records the call, if it fits)",
            MAX_INPUT_BYTES / (1024 * 1024)
        ));
        return Ok(());
    }
    let mut value: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    // Cursor's and Copilot's payloads, in Claude Code's field names.
    if agent == HookAgent::Cursor && value.is_object() {
        value = planlog_agents::cursor::normalize(value);
        raw = serde_json::to_vec(&value).unwrap_or(raw);
    }
    if agent == HookAgent::Copilot && value.is_object() {
        value = planlog_agents::copilot::normalize(value, args.event.as_deref());
        copilot_snapshot(&mut value, args.enforce, &env);
        raw = serde_json::to_vec(&value).unwrap_or(raw);
    }
    if let Some(host) = ForeignHost::of(&value).filter(|_| agent == HookAgent::ClaudeCode) {
        let capture = match host {
            ForeignHost::Cursor => "`planlog install cursor` records Cursor's own".to_owned(),
            ForeignHost::GeminiCli => {
                "`planlog install gemini` records Gemini CLI's own".to_owned()
            }
            ForeignHost::CopilotCli => {
                "`planlog install copilot` records Copilot CLI's own".to_owned()
            }
        };
        warn(&format!(
            "a {0} hook payload ({0} also runs the hooks in Claude Code's settings files), not a Claude Code session; nothing recorded ({capture})",
            host.name()
        ));
        return Ok(());
    }
    let input = match HookInput::parse(&raw) {
        Ok(i) => i.with_transcript_from(&env.cwd),
        Err(e) => {
            warn(&format!("{e}; nothing recorded"));
            return Ok(());
        }
    };
    let Some(action) = action(agent, &input, args.enforce) else {
        // Nothing to do: the store is not even opened.
        return Ok(());
    };
    // Nothing to store and nothing stored yet: a session that never planned leaves no store.
    let spool = Spool::beside(&store.path);
    let no_store = matches!(store.address, StoreAddress::File(_)) && !store.path.exists();
    match action {
        Action::Drain if spool.looks_empty() => return Ok(()),
        Action::Restore(_) | Action::Compacted if no_store && spool.looks_empty() => {
            return Ok(());
        }
        _ => {}
    }
    let list_id = env.task_list_id;
    // Entry ids counted up from the call's seed (`Call::seed`).
    let next_id = std::cell::Cell::new(seed);
    let opened = open(store, &deadline);
    // The store needs work longer than a hook may do: the call waits in the spool (below),
    // and a process of its own does the work, then stores what waits (`catch_up`).
    let needs_time = matches!(
        &opened,
        Err(LogError::Operator(OperatorError::NeedsTime { .. }))
    );
    let target = Target::of_agent(agent, &input, list_id.as_deref());
    // The plan is put back all the same when the store reads without that work.
    let reading = (needs_time && matches!(action, Action::Restore(_)))
        .then(|| reading_meanwhile(store, &target.session_id(), &deadline))
        .flatten();
    let log = opened
        .as_ref()
        .map(|l| &**l as &dyn EventLog)
        .map_err(ToString::to_string);
    let hooks = Hooks {
        store,
        path: WritePath::new(
            log.clone(),
            &SystemEnv,
            spool,
            DeadLetters::beside(&store.path),
            deadline,
        )
        .with_history(HistoryCache::beside(&store.path)),
        log: log.ok().or(reading.as_deref()),
        target,
        entry: |kind| {
            let id = next_id.get();
            next_id.set(id.increment().unwrap_or_else(|| SystemEnv.new_ulid()));
            Entry::new(
                id,
                value.clone(),
                input.clone(),
                list_id.clone(),
                SystemEnv.now(),
                kind,
            )
            .of_agent(agent)
        },
        input: &input,
        deadline,
    };
    let done = match action {
        Action::Record => {
            hooks.record();
            Ok(())
        }
        Action::Guard => hooks.guard(input.tool_name.as_deref().unwrap_or_default()),
        Action::Restore(event) => {
            hooks.restore(event);
            Ok(())
        }
        Action::Drain => {
            hooks.drain();
            Ok(())
        }
        Action::Compacted => {
            hooks.compacted();
            Ok(())
        }
    };
    // Started after this call's write joined the spool, so the drain finds it there.
    if needs_time {
        let spool = hooks.path.spool().path().display();
        match catch_up::start(&store.path) {
            Ok(pid) => warn(&format!(
                "`planlog drain` (process {pid}) now does that work in the background, then stores what waits in {spool} (its output goes nowhere: if calls keep waiting, run `planlog drain` to see why)"
            )),
            Err(why) => warn(&format!(
                "{why}; `planlog drain` does that work, then stores what waits in {spool}"
            )),
        }
    }
    done
}

/// The plan a session has after its event `event`: the event's own when it carries one (a
/// plan call, the usual last event of a session the hooks write), else the session's state
/// at it (a read of the plan mark before it).
fn plan_after(log: &dyn EventLog, event: planlog_core::events::Event) -> Result<Plan, LogError> {
    use planlog_core::events::EventBody;
    match event.body {
        EventBody::PlanWritten(written) => Ok(written.plan),
        EventBody::SessionStarted(started) => Ok(started.plan),
        _ => log.state_at(&event.session, event.seq).map(|s| s.plan),
    }
}

/// What `agent`'s hook event `input` asks for (`None`: nothing).
fn action(agent: HookAgent, input: &HookInput, enforce: bool) -> Option<Action> {
    let tool = input.tool_name.as_deref().unwrap_or_default();
    let plan_tool = agent.plan_tools().contains(&tool);
    let event = input.hook_event_name.as_str();
    let resumed = input.source.as_deref() != Some("startup");
    Some(match agent {
        HookAgent::ClaudeCode | HookAgent::Codex => match event {
            "PostToolUse" | "PostToolUseFailure" if plan_tool => Action::Record,
            "PreToolUse" if plan_tool && enforce => Action::Guard,
            "SessionStart" if resumed => Action::Restore("SessionStart"),
            "UserPromptSubmit" => Action::Restore("UserPromptSubmit"),
            "SessionEnd" => Action::Drain,
            _ => return None,
        },
        // Gemini runs no hook after compressing: a compression the user asked for is marked
        // (an automatic PreCompress fires before every model call, compressing or not), and
        // the next prompt puts the plan back.
        HookAgent::Gemini => match event {
            "AfterTool" if plan_tool => Action::Record,
            "BeforeTool" if plan_tool && enforce => Action::Guard,
            "SessionStart" if resumed => Action::Restore("SessionStart"),
            "PreCompress" if input.trigger.as_deref() == Some("manual") => Action::Compacted,
            "BeforeAgent" => Action::Restore("BeforeAgent"),
            "SessionEnd" => Action::Drain,
            _ => return None,
        },
        // planlog's plugin sends these (in Claude Code's field names): a todowrite that ran,
        // one about to run (enforcing; with opencode's own list as it stands, the witness
        // planlog's record is checked against), and the compaction about to summarize the
        // session (the plan goes into its context).
        HookAgent::Opencode => match event {
            "PostToolUse" if plan_tool => Action::Record,
            "PreToolUse" if plan_tool && enforce => Action::Guard,
            "PreCompact" => Action::Restore("PreCompact"),
            _ => return None,
        },
        // Copilot ignores what its hooks print (sessionStart, preCompact): nothing is put
        // back; a compaction is on record. Its rules run on SQL, which planlog does not judge.
        // Its `notification` (idle, a permission asked) is the one event whose output reaches
        // the model: after a compaction, the plan goes back there.
        HookAgent::Copilot => match event {
            // Only with the table read after the call (a call on other tables has none).
            "PostToolUse" if plan_tool && input.todos_now.is_some() => Action::Record,
            "PreCompact" => Action::Compacted,
            "Notification" => Action::Restore("Notification"),
            // Judged on Copilot's own table, as the call would leave it (no catch-up needed:
            // the table is the list).
            "PreToolUse" if plan_tool && enforce && input.todos_after.is_some() => Action::Guard,
            "SessionEnd" => Action::Drain,
            _ => return None,
        },
        // Cursor honours `additional_context` at `sessionStart`, nothing after a compaction.
        HookAgent::Cursor => match event {
            "postToolUse" if plan_tool => Action::Record,
            "preToolUse" if plan_tool && enforce => {
                warn(
                    "enforcing is not offered for Cursor; the call is allowed and will be recorded",
                );
                return None;
            }
            "sessionStart" => Action::Restore("sessionStart"),
            "preCompact" => Action::Compacted,
            "sessionEnd" => Action::Drain,
            _ => return None,
        },
    })
}

/// What a hook event asks for.
enum Action {
    /// Record the plan tool call that ran.
    Record,
    /// Judge the plan tool call about to run (enforcing).
    Guard,
    /// Put the plan back into the context, for this event.
    Restore(&'static str),
    /// Store what waits in the spool.
    Drain,
    /// Record that the agent's context is being compacted, to put the plan back at the next
    /// prompt (Gemini CLI).
    Compacted,
}

/// The store opened for reading only, to put `session`'s plan back while the store waits for
/// work longer than a hook may do ([`OperatorError::NeedsTime`]): when reading needs no such
/// work (a store of the older layout reads as it is; an index behind by at most
/// [`SHORT_WORK`] of journal) and no call of the session waits in the spool (the stored
/// plan would be behind it, and a plan put back must be the plan). `None` otherwise, said.
fn reading_meanwhile(
    store: &Store,
    session: &planlog_core::SessionId,
    deadline: &Deadline,
) -> Option<Arc<dyn EventLog>> {
    if let Some(why) = behind_the_spool(&Spool::beside(&store.path), session) {
        warn(&format!(
            "{why} while the store is brought up to date; nothing restored"
        ));
        return None;
    }
    let wait = deadline.at_most(STORE_WAIT);
    match JournaledLog::options()
        .index_options(RedbLog::options().lock_timeout(wait))
        .read_only(true)
        .lock_wait(wait)
        .catch_up_limit(SHORT_WORK)
        .open_any(&store.path, false)
    {
        Ok(log) => Some(log),
        Err(e) => {
            warn(&format!(
                "the store cannot be read before that work either ({e}); nothing restored"
            ));
            None
        }
    }
}

/// Why the stored plan of `session` is not the plan, if a plan call of it waits in `spool`
/// (or the spool cannot be read): a plan put back must be the plan.
fn behind_the_spool(spool: &Spool, session: &planlog_core::SessionId) -> Option<String> {
    match spool.plan_changes_waiting(session) {
        Ok(0) => None,
        Ok(waiting) => Some(format!(
            "{waiting} plan calls of this session wait in the spool: the stored plan is behind them"
        )),
        Err(e) => Some(format!("cannot read the spool ({e})")),
    }
}

/// The store, opened to answer within the hook's budget (`Err`: why it could not be;
/// [`OperatorError::NeedsTime`] when it needs work longer than a hook may do).
pub(crate) fn open(store: &Store, deadline: &Deadline) -> Result<Arc<dyn EventLog>, LogError> {
    let wait = deadline.at_most(STORE_WAIT);
    match &store.address {
        StoreAddress::File(_) => {
            // A hook's process is short-lived: its append costs the journal's write and sync,
            // and the index is brought up to date by a longer-lived process (or by a hook once
            // enough records wait: `planlog_store::LAZY_LIMIT`).
            Ok(Arc::new(open_file(store, deadline, Indexing::Lazy)?))
        }
        StoreAddress::Postgres(url) => PgLog::open_within(url, wait.max(Duration::from_millis(50)))
            .map(|log| Arc::new(log) as Arc<dyn EventLog>),
    }
}

/// The file store a hook call writes, indexed as `indexing` says: every wait within
/// `deadline` (at most [`STORE_WAIT`]), no work over [`SHORT_WORK`]
/// (`OperatorError::NeedsTime`), a store of the older layout upgraded, the default store's
/// folder kept out of git.
pub(crate) fn open_file(
    store: &Store,
    deadline: &Deadline,
    indexing: Indexing,
) -> Result<JournaledLog, LogError> {
    let wait = deadline.at_most(STORE_WAIT);
    let log = JournaledLog::options()
        .index_options(RedbLog::options().lock_timeout(wait).write_wait(wait))
        .lock_wait(wait)
        .catch_up_limit(SHORT_WORK)
        .indexing(indexing)
        .open(&store.path)?;
    store.keep_out_of_git();
    Ok(log)
}

struct Hooks<'a, F: Fn(Kind) -> Entry> {
    store: &'a Store,
    path: WritePath<'a>,
    log: Option<&'a dyn EventLog>,
    target: Target,
    entry: F,
    input: &'a HookInput,
    deadline: Deadline,
}

impl<F: Fn(Kind) -> Entry> Hooks<'_, F> {
    /// Writes `entry` through the ordered path, saying on stderr what became of it.
    fn write(&self, entry: &Entry) -> Written {
        let written = self.path.write(entry);
        match &written {
            Written::Stored | Written::Nothing => {}
            Written::Spooled { why } => warn(&format!(
                "could not store the call now ({why}); it waits in {} and is stored, in order, by the next hook call or `planlog drain`",
                self.path.spool().path().display()
            )),
            Written::Dead { why } => warn(&format!(
                "the store refuses this call for good ({why}); it is kept in the dead letters beside the store, and `planlog verify` reports it"
            )),
            Written::Lost { why } => warn(&format!(
                "the call could not be stored or kept ({why}); importing the session's transcript later records it"
            )),
        }
        written
    }

    /// Stores what waits in the spool; true when all of it was (else said, as a warning).
    fn drain(&self) -> bool {
        let drained = self.path.drain();
        if drained.stored > 0 {
            tracing::info!(
                stored = drained.stored,
                "stored hook calls that were waiting in the spool"
            );
        }
        match drained.stopped {
            None => true,
            Some(why) => {
                warn(&format!(
                    "earlier hook calls still wait in {} ({why})",
                    self.path.spool().path().display()
                ));
                false
            }
        }
    }

    fn record(&self) {
        self.catch_up_before_a_flag();
        if self.write(&(self.entry)(Kind::Ran)) == Written::Stored
            && let Some(log) = self.log
        {
            self.write_plan_file(log);
        }
    }

    /// A call that breaks the rules against the plan planlog has may break them only
    /// because planlog missed calls before it: a disk so full that the spool could not take
    /// them either, a hook that did not run, hooks installed mid-session. Recorded as it
    /// stands, three missed completions and this one would read as one bulk completion the
    /// agent never made. So the transcript is read first, as enforcing does (the missed
    /// calls land before this one, in the agent's order), and the call is flagged only if it
    /// still breaks the rules. A call within the rules reads nothing more; without a
    /// transcript the call is recorded as before.
    fn catch_up_before_a_flag(&self) {
        let Some(log) = self.log else { return };
        // Only where the transcript's calls carry the ids the hooks record (Claude Code's
        // `tool_use_id`, Codex's `call_id`), so that the call read there and the one this
        // hook writes are one call. Gemini's hooks get no call id; opencode's "catch-up" only
        // compares lists; a shared task list has no transcript.
        if !matches!(
            self.target.format,
            SourceFormat::ClaudeCode | SourceFormat::Codex
        ) {
            return;
        }
        let tool = self.input.tool_name.as_deref().unwrap_or_default();
        let input = self.input.tool_input.clone().unwrap_or(Value::Null);
        let flagged = self
            .plan(log)
            .is_ok_and(|plan| check(&plan, tool, &input).is_some());
        if flagged && let Err(why) = self.catch_up(log) {
            tracing::debug!(%why, "the call breaks the rules; the transcript could not be read first");
        }
    }

    fn write_plan_file(&self, log: &dyn EventLog) {
        let id = self.target.session_id();
        if let Ok(Some(last)) = log.last(&id) {
            let at = last.at;
            let Ok(plan) = plan_after(log, last) else {
                return;
            };
            // Said as the hook's other warnings are (`planlog hook: …`): the plan file is
            // stale, and why.
            let files = PlanFiles::beside(&self.store.path);
            if let Err(e) = files.write(&id, &plan, at) {
                warn(&format!(
                    "could not write the plan file {} ({e}); the plan itself is stored, only this view is stale",
                    files.path_for(&id).display()
                ));
            }
        }
    }

    fn plan(&self, log: &dyn EventLog) -> Result<Plan, LogError> {
        let id = self.target.session_id();
        match log.last(&id)? {
            Some(last) => plan_after(log, last),
            // A new session's, or a deleted one's (its error, from the head).
            None => log.head(&id).map(|_| Plan::new()),
        }
    }

    /// Brings the session up to date from its transcript (import's semantics: the plan
    /// calls not recorded yet are appended). `Err` says why planlog cannot know the whole
    /// plan.
    fn catch_up(&self, log: &dyn EventLog) -> Result<(), String> {
        if self.target.format == SourceFormat::ClaudeCodeTasks {
            return Err("the task list is shared with other sessions".to_owned());
        }
        // opencode's record is read through opencode alone; its list as it stands came with
        // the call instead: planlog judges only when its record says the same.
        if self.target.format == SourceFormat::Opencode {
            let plan = self.plan(log).map_err(|e| e.to_string())?;
            return planlog_agents::opencode::same_list(&plan, self.input.todos_now.as_ref());
        }
        let path = self
            .input
            .transcript_path
            .as_deref()
            .filter(|p| !p.is_empty())
            .ok_or("the hook input names no transcript")?;
        // The agent writes its transcript behind its calls: one not written yet is waited
        // for a moment before planlog says it cannot know the whole plan.
        let started = std::time::Instant::now();
        let wait = self.deadline.at_most(TRANSCRIPT_WAIT);
        while !std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0)
            && started.elapsed() < wait
        {
            std::thread::sleep(Duration::from_millis(25));
        }
        let options = ImportOptions {
            deadline: Some(self.deadline.instant()),
            history: Some(HistoryCache::beside(&self.store.path)),
            ..ImportOptions::default()
        };
        let report = import::import(
            log,
            &SystemEnv,
            self.target.format,
            Input::Path(path.as_ref()),
            options,
        )
        .map_err(|e| e.to_string())?;
        let id = self.target.session_id();
        if report.sessions.iter().any(|s| s.id == id) {
            Ok(())
        } else {
            Err(format!("the transcript {path} does not hold this session"))
        }
    }

    fn guard(&self, tool: &str) -> Result<(), Failure> {
        if self.target.format == SourceFormat::Copilot {
            return self.copilot_guard();
        }
        let input = self.input.tool_input.clone().unwrap_or(Value::Null);
        let allow = |why: &str| {
            warn(&format!(
                "could not check the call against the whole plan ({why}); it is allowed, and flagged once recorded if the rules would refuse it"
            ));
            Ok(())
        };
        let Some(log) = self.log else {
            return allow("the store cannot be opened");
        };
        if let Some(why) = self.path.drain().stopped {
            return allow(&format!("earlier hook calls are not stored yet: {why}"));
        }
        let judge = || -> Result<_, String> {
            let plan = self.plan(log).map_err(|e| e.to_string())?;
            Ok(check(&plan, tool, &input))
        };
        let rejection = match judge() {
            Ok(None) => return Ok(()),
            Ok(Some(_)) => {
                // Refused against what planlog has: first make sure it has everything.
                if let Err(why) = self.catch_up(log) {
                    return allow(&why);
                }
                match judge() {
                    Ok(None) => return Ok(()),
                    Ok(Some(r)) => r,
                    Err(why) => return allow(&why),
                }
            }
            Err(why) => return allow(&why),
        };
        let message = rejection.message.clone();
        self.write(&(self.entry)(Kind::Blocked(rejection)));
        // Exit 2 blocks the call; Claude Code shows stderr to the model.
        say_on_stderr(&message);
        Err(Failure {
            code: 2,
            message: String::new(),
        })
    }

    /// Copilot's `sql` call about to run, judged on its todo table now and as the call would
    /// leave it: a refusal is on record and answered as Copilot's `permissionDecision` (exit
    /// 0; Copilot gives the reason to the model).
    fn copilot_guard(&self) -> Result<(), Failure> {
        let (Some(now), Some(after)) = (&self.input.todos_now, &self.input.todos_after) else {
            return Ok(());
        };
        let Some(rejection) = planlog_agents::copilot::refusal(now, after) else {
            return Ok(());
        };
        self.drain();
        let message = rejection.message.clone();
        self.write(&(self.entry)(Kind::Blocked(rejection)));
        answer(
            &serde_json::json!({"permissionDecision": "deny", "permissionDecisionReason": message})
                .to_string(),
        );
        Ok(())
    }

    /// Records a compaction in a session planlog has (Gemini CLI's `PreCompress`).
    fn compacted(&self) {
        self.drain();
        let compaction = Compaction {
            trigger: self.input.trigger.clone(),
            ..Compaction::default()
        };
        self.write(&(self.entry)(Kind::Compacted(compaction)));
    }

    fn restore(&self, event: &str) {
        let after = match event {
            "UserPromptSubmit" => "prompt".to_owned(),
            "BeforeAgent" | "Notification" => "compact".to_owned(),
            _ => self
                .input
                .source
                .clone()
                .unwrap_or_else(|| "start".to_owned()),
        };
        // The compaction this event follows, for the record: known already when the store
        // has its boundary's call id (without a store, none is; a compaction recorded twice
        // has one call id, and is kept once).
        let compaction = |log: Option<&dyn EventLog>| {
            (matches!(event, "SessionStart" | "PreCompact") && after == "compact").then(|| {
                let session = self.target.session_id();
                let known = |uuid: &str| {
                    log.zip(planlog_core::CallId::new(format!("compact:{uuid}")).ok())
                        .and_then(|(log, c)| log.find_call(&session, &c).ok().flatten())
                        .is_some()
                };
                restore::last_compaction(self.input, &self.deadline, &known, SystemEnv.now())
            })
        };
        let Some(log) = self.log else {
            // The compaction goes on record all the same, through the spool.
            if let Some(c) = compaction(None) {
                self.write(&(self.entry)(Kind::Compacted(c)));
            }
            return warn("could not open the store; nothing restored");
        };
        // A plan call of the session still waiting after the drain (the store would not take
        // it in time): the stored plan is behind it.
        if !self.drain()
            && let Some(why) = behind_the_spool(self.path.spool(), &self.target.session_id())
        {
            if let Some(c) = compaction(Some(log)) {
                self.write(&(self.entry)(Kind::Compacted(c)));
            }
            return warn(&format!("{why}; nothing restored"));
        }
        // Gemini's next prompt after a compression, Copilot's next notification: only then is
        // the plan put back. Gemini runs no hook after a compression it decides on its own, so
        // its recording is read first (an import knows a compression there).
        if matches!(event, "BeforeAgent" | "Notification") {
            let session = self.target.session_id();
            if event == "BeforeAgent"
                && matches!(log.head(&session), Ok(Some(_)))
                && let Err(why) = self.catch_up(log)
            {
                warn(&format!(
                    "could not read the recording for a compression Gemini ran on its own ({why})"
                ));
            }
            match restore::compacted_since_restored(log, &session) {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    return warn(&format!(
                        "could not read the session ({e}); nothing restored"
                    ));
                }
            }
        }
        // On record where it happened, before what is put back (in one write with it).
        let compaction = compaction(Some(log));
        let mut text = None;
        if self.input.source.as_deref() == Some("fork") {
            match restore::fork_start(log, self.input, &self.target, &self.deadline) {
                Ok(Some((parent, seq))) => {
                    let written = self.write(&(self.entry)(Kind::Fork {
                        parent: parent.clone(),
                        seq,
                    }));
                    if written != Written::Stored {
                        // Not stored yet: the fork's plan is its parent's all the same (not
                        // recorded as restored: the fork's session is not there yet).
                        text = log
                            .state_at(&parent, seq)
                            .ok()
                            .and_then(|s| {
                                restore::restore_text(
                                    &s.plan,
                                    &self.target.session_id().to_string(),
                                )
                            })
                            .map(|t| (t, None));
                    }
                }
                Ok(None) => {}
                Err(e) => warn(&format!(
                    "could not start the fork from its parent's plan ({e})"
                )),
            }
        }
        let text = match text {
            Some(t) => Some(t),
            None => match restore::context(log, &self.target) {
                Ok(t) => t.map(|(text, seq)| (text, Some(seq))),
                Err(e) => return warn(&format!("could not read the plan ({e}); nothing restored")),
            },
        };
        match text {
            Some((text, plan_at)) => {
                // On record: what was put back, and from which seq's plan.
                match plan_at {
                    Some(plan_at) => {
                        self.write(&(self.entry)(Kind::Restored {
                            after,
                            text: text.clone(),
                            plan_at,
                            compaction,
                        }));
                    }
                    None => {
                        if let Some(c) = compaction {
                            self.write(&(self.entry)(Kind::Compacted(c)));
                        }
                    }
                }
                answer(&restore::output(self.target.agent(), event, &text));
            }
            None => {
                if let Some(c) = compaction {
                    self.write(&(self.entry)(Kind::Compacted(c)));
                }
            }
        }
    }
}
