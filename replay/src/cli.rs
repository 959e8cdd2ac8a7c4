//! The `planlog` command line: argument parsing and one function per command.
//!
//! Exit codes mean one thing each: 0 success; 1 the answer is "no" (plan_write rejected the
//! call, `verify` found problems); 2 the command could not run (usage, IO, store, bad input),
//! with a one-line message on stderr saying what to do.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Parser, Subcommand};
use planlog_core::{
    Event, EventLog, LogError, PlanSession, Seq, SessionId, SessionOptions, SessionState,
    UserError, WriteError, WriteStatus, format_plan, render_block, render_markdown,
};
use planlog_store::{LocationEnv, OpenOptions, PlanFiles, RedbLog, SystemEnv, resolve_store_path};

use crate::audit::{diff, history, history_from, item_lives};
use crate::export::{Format, export};
use crate::import::{self, ImportError};
use crate::output::{Out, PipeClosed, style};
use crate::verify::{Report, verify_session};

/// planlog: the plan-keeping engine for LLM agents. Every plan_write is an event in a
/// session's log; audit it, replay it, fork it.
#[derive(Debug, Parser)]
#[command(name = "planlog", version, about, long_about = None)]
pub struct Cli {
    /// The store file (default: $PLANLOG_DB, else .planlog/planlog.redb at the git repository
    /// root, else the user's data folder).
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a session and print its id.
    New {
        /// A label for the session.
        #[arg(long)]
        label: Option<String>,
    },
    /// Apply one plan_write argument object read from stdin, as the tool would.
    Write {
        /// The session (created if it does not exist).
        session: String,
        /// The tool call id (a repeated id is applied once).
        #[arg(long)]
        call_id: Option<String>,
        /// The agent turn.
        #[arg(long)]
        turn: Option<u64>,
    },
    /// Show the plan (now, or after event SEQ).
    Show {
        /// The session.
        session: String,
        /// Show the plan as it stood after this event.
        #[arg(long)]
        at: Option<u64>,
        /// The JSON array plan_write returns.
        #[arg(long, group = "form")]
        json: bool,
        /// Exactly the text injected into the model's view (empty when nothing is active).
        #[arg(long, group = "form")]
        inject: bool,
        /// The markdown plan file's text.
        #[arg(long, group = "form")]
        markdown: bool,
    },
    /// One line per event: what each write changed, each rejection's reason.
    History {
        /// The session.
        session: String,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Each item's life: when it appeared, every change, how it ended.
    Items {
        /// The session.
        session: String,
    },
    /// What changed between two seqs.
    Diff {
        /// The session.
        session: String,
        /// From this seq.
        a: u64,
        /// To this seq.
        b: u64,
    },
    /// Step through the events, printing the plan after each.
    Replay {
        /// The session.
        session: String,
        /// First seq.
        #[arg(long)]
        from: Option<u64>,
        /// Last seq.
        #[arg(long)]
        to: Option<u64>,
    },
    /// Start a new session from a session's state at a step; print its id.
    Fork {
        /// The session to fork.
        session: String,
        /// Fork after this event.
        #[arg(long, conflicts_with = "at_turn", required_unless_present = "at_turn")]
        at: Option<u64>,
        /// Fork after the last event of this turn.
        #[arg(long)]
        at_turn: Option<u64>,
        /// A label for the fork.
        #[arg(long)]
        label: Option<String>,
    },
    /// List sessions with lineage and progress.
    Sessions {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Check hash chains, seqs, recorded results, forks and the store's indexes.
    Verify {
        /// Only this session.
        session: Option<String>,
    },
    /// Delete a session and all its events; its id is retired (only the same session,
    /// restored from its export, can take it again).
    Delete {
        /// The session.
        session: String,
        /// Do not ask.
        #[arg(long)]
        yes: bool,
    },
    /// Import recorded sessions (prints the id of each session created, main first).
    Import {
        /// The source format.
        #[arg(value_enum)]
        source: Source,
        /// The file.
        file: PathBuf,
        /// Import what can be read and report the bad lines instead of refusing.
        #[arg(long)]
        skip_bad_lines: bool,
    },
    /// Export a session.
    Export {
        /// The session.
        session: String,
        /// The format.
        #[arg(long, value_enum, default_value = "jsonl")]
        format: Format,
    },
    /// Run a scripted agent session against the store and show what planlog recorded.
    Demo,
    /// Serve one session over stdio as an MCP server (tools plan_write and plan_history).
    Mcp {
        /// Resume this session (created with this id if it does not exist).
        #[arg(long, conflicts_with = "new")]
        session: Option<String>,
        /// Start a new session (the default); its id is logged on stderr.
        #[arg(long)]
        new: bool,
    },
}

/// Formats `planlog import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Source {
    /// A Claude Code transcript (TodoWrite calls).
    ClaudeCode,
    /// A Codex CLI rollout (update_plan calls).
    Codex,
    /// A planlog jsonl export.
    Planlog,
}

/// A command's failure: the exit code and the one-line message for stderr.
#[derive(Debug)]
pub struct Failure {
    /// 1 or 2.
    pub code: u8,
    /// What went wrong and what to do (empty when already reported).
    pub message: String,
}

impl Failure {
    fn usage(message: impl Into<String>) -> Self {
        Self {
            code: 2,
            message: message.into(),
        }
    }

    fn no(message: impl Into<String>) -> Self {
        Self {
            code: 1,
            message: message.into(),
        }
    }
}

impl From<LogError> for Failure {
    fn from(e: LogError) -> Self {
        Self::usage(e.to_string())
    }
}

impl From<PipeClosed> for Failure {
    fn from(_: PipeClosed) -> Self {
        // The reader went away (`| head`): not an error worth a message.
        Self {
            code: 0,
            message: String::new(),
        }
    }
}

type Result<T = ()> = std::result::Result<T, Failure>;

/// Runs the parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> u8 {
    match dispatch(cli) {
        Ok(()) => 0,
        Err(f) => {
            if !f.message.is_empty() {
                eprintln!("planlog: {}", f.message);
            }
            f.code
        }
    }
}

fn dispatch(cli: Cli) -> Result {
    let path = resolve_store_path(cli.db.as_deref(), &LocationEnv::from_process())
        .map_err(|e| Failure::usage(e.to_string()))?;
    match cli.command {
        Command::New { label } => cmd_new(&path, label),
        Command::Write {
            session,
            call_id,
            turn,
        } => cmd_write(&path, &session, call_id.as_deref(), turn),
        Command::Show {
            session,
            at,
            json,
            inject,
            markdown,
        } => cmd_show(&path, &session, at, json, inject, markdown),
        Command::History { session, json } => cmd_history(&path, &session, json),
        Command::Items { session } => cmd_items(&path, &session),
        Command::Diff { session, a, b } => cmd_diff(&path, &session, a, b),
        Command::Replay { session, from, to } => cmd_replay(&path, &session, from, to),
        Command::Fork {
            session,
            at,
            at_turn,
            label,
        } => cmd_fork(&path, &session, at, at_turn, label),
        Command::Sessions { json } => cmd_sessions(&path, json),
        Command::Verify { session } => cmd_verify(&path, session.as_deref()),
        Command::Delete { session, yes } => cmd_delete(&path, &session, yes),
        Command::Import {
            source,
            file,
            skip_bad_lines,
        } => cmd_import(&path, source, &file, skip_bad_lines),
        Command::Export { session, format } => cmd_export(&path, &session, format),
        Command::Demo => crate::demo::run(&path),
        Command::Mcp { session, new: _ } => cmd_mcp(&path, session.as_deref()),
    }
}

/// Opens the store, waiting up to `PLANLOG_LOCK_TIMEOUT_MS` (default 5000) for another
/// program that holds it exclusively.
pub(crate) fn open(path: &Path) -> Result<Arc<RedbLog>> {
    RedbLog::open_with(path, &open_options())
        .map(Arc::new)
        .map_err(Failure::from)
}

fn open_options() -> OpenOptions {
    let mut options = OpenOptions::default();
    if let Some(ms) = std::env::var("PLANLOG_LOCK_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options.lock_timeout = std::time::Duration::from_millis(ms);
    }
    options
}

fn session_id(text: &str) -> Result<SessionId> {
    SessionId::new(text).map_err(|e| Failure::usage(format!("{text:?} is not a session id: {e}")))
}

/// All events of an existing session.
fn events_of(log: &dyn EventLog, id: &SessionId) -> Result<Vec<Event>> {
    let events = log.read(id, Seq::FIRST, None)?;
    if events.is_empty() {
        return Err(LogError::from(UserError::UnknownSession(id.clone())).into());
    }
    Ok(events)
}

fn check_seq(id: &SessionId, n: u64, last: u64) -> Result<Seq> {
    match Seq::new(n) {
        Ok(seq) if n <= last => Ok(seq),
        _ => Err(LogError::from(UserError::SeqOutOfRange {
            session: id.clone(),
            seq: n,
            last,
        })
        .into()),
    }
}

/// The last seq of an existing session, from the catalogue (one lookup, whatever its length).
fn last_seq(log: &dyn EventLog, id: &SessionId) -> Result<u64> {
    log.session(id)?
        .map(|info| info.events)
        .ok_or_else(|| Failure::from(LogError::from(UserError::UnknownSession(id.clone()))))
}

fn cmd_new(path: &Path, label: Option<String>) -> Result {
    let log = open(path)?;
    let session = PlanSession::create(
        log,
        Arc::new(SystemEnv),
        SessionOptions {
            label,
            ..SessionOptions::default()
        },
    )?;
    Out::new().line(session.id().as_str())?;
    Ok(())
}

fn cmd_write(path: &Path, session: &str, call_id: Option<&str>, turn: Option<u64>) -> Result {
    let id = session_id(session)?;
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| Failure::usage(format!("cannot read stdin as UTF-8 text ({e}); pipe one plan_write argument object, e.g. '{{\"steps\": [...]}}'")))?;
    match serde_json::from_str::<serde_json::Value>(&input) {
        Ok(serde_json::Value::Object(_)) => {}
        Ok(_) => {
            return Err(Failure::usage(
                "stdin must hold one JSON object (the plan_write arguments), e.g. '{\"steps\": [...]}' or '{}' to read",
            ));
        }
        Err(e) => {
            return Err(Failure::usage(format!(
                "stdin is not JSON ({e}); pipe one plan_write argument object, e.g. '{{\"steps\": [...]}}' or '{{}}' to read"
            )));
        }
    }
    let log = open(path)?;
    let options = SessionOptions {
        sinks: vec![Arc::new(PlanFiles::beside(path))],
        ..SessionOptions::default()
    };
    // Refuse rather than degrade: the CLI must not quietly start another session.
    let mut plan = PlanSession::try_open(log, id.clone(), Arc::new(SystemEnv), options)
        .map_err(|e| retired_hint(&id, e))?;
    let outcome = plan.plan_write(call_id, turn, &input);
    match outcome.status() {
        WriteStatus::Read | WriteStatus::Stored(_) | WriteStatus::Repeated(_) => {}
        WriteStatus::Unsaved(_) => {
            // One more try before giving up: a process that exits cannot keep it in memory.
            plan.close().map_err(|e| {
                Failure::usage(format!(
                    "the plan write could not be stored ({e}); nothing was written, run the same command again once the store is writable"
                ))
            })?;
        }
        WriteStatus::NotRecorded(WriteError::CallIdReused(call)) => {
            return Err(Failure::usage(format!(
                "call id {call} was already used in session {id} for a different plan_write call; nothing was written (give this call a new --call-id)"
            )));
        }
        WriteStatus::NotRecorded(WriteError::Log(e)) => {
            return Err(retired_hint(&id, e.clone()));
        }
        WriteStatus::NotRecorded(e) => return Err(Failure::usage(e.to_string())),
        _ => {}
    }
    let result = outcome.into_result();
    Out::new().line(&result.content)?;
    if result.is_error {
        Err(Failure {
            code: 1,
            message: String::new(),
        })
    } else {
        Ok(())
    }
}

/// The CLI's words for a session the library refused: what to type next.
fn retired_hint(id: &SessionId, e: LogError) -> Failure {
    match e {
        LogError::User(UserError::SessionDeleted(_)) => Failure::usage(format!(
            "session {id} was deleted and its id is retired; use another session id, or restore the deleted session from its export with `planlog import planlog FILE`"
        )),
        other => Failure::from(other),
    }
}

fn cmd_show(
    path: &Path,
    session: &str,
    at: Option<u64>,
    json: bool,
    inject: bool,
    markdown: bool,
) -> Result {
    let id = session_id(session)?;
    let log = open(path)?;
    let last = last_seq(&*log, &id)?;
    let seq = check_seq(&id, at.unwrap_or(last), last)?;
    let state = log.state_at(&id, seq)?;
    let mut out = Out::new();
    if json {
        out.line(state.plan.to_json())?;
    } else if inject {
        let text = format_plan(&state.plan);
        if !text.is_empty() {
            out.line(text)?;
        }
    } else if markdown {
        let event = log.read(&id, seq, Some(seq))?;
        let updated = event
            .first()
            .map(|e| e.at)
            .ok_or_else(|| Failure::usage(format!("session {id} has no event {seq}")))?;
        out.raw(render_markdown(&state.plan, &id, updated))?;
    } else {
        out.line(render_block(&state.plan, style()))?;
        if state.plan_mode {
            out.line("(plan mode on)")?;
        }
    }
    Ok(())
}

fn cmd_history(path: &Path, session: &str, json: bool) -> Result {
    let id = session_id(session)?;
    let log = open(path)?;
    let events = events_of(&*log, &id)?;
    let mut out = Out::new();
    for entry in history(&events) {
        if json {
            out.line(serde_json::to_string(&entry).unwrap_or_default())?;
        } else {
            out.line(entry.line())?;
        }
    }
    Ok(())
}

fn cmd_items(path: &Path, session: &str) -> Result {
    let id = session_id(session)?;
    let log = open(path)?;
    let events = events_of(&*log, &id)?;
    let mut out = Out::new();
    let lives = item_lives(&events);
    if lives.is_empty() {
        out.line("(no items)")?;
    }
    for life in lives {
        out.line(format!(
            "{} {:?}",
            life.id,
            planlog_core::render::one_line(&life.first_content)
        ))?;
        for (seq, what) in &life.steps {
            out.line(format!("  seq {seq:>4}  {what}"))?;
        }
        out.line(format!("  {}", life.end))?;
    }
    Ok(())
}

fn cmd_diff(path: &Path, session: &str, a: u64, b: u64) -> Result {
    let id = session_id(session)?;
    let log = open(path)?;
    let last = last_seq(&*log, &id)?;
    let (sa, sb) = (check_seq(&id, a, last)?, check_seq(&id, b, last)?);
    let changes = diff(&log.state_at(&id, sa)?, &log.state_at(&id, sb)?);
    let mut out = Out::new();
    if changes.is_empty() {
        out.line(format!("no change between seq {a} and seq {b}"))?;
    }
    for c in changes {
        out.line(c)?;
    }
    Ok(())
}

fn cmd_replay(path: &Path, session: &str, from: Option<u64>, to: Option<u64>) -> Result {
    let id = session_id(session)?;
    let log = open(path)?;
    let last = last_seq(&*log, &id)?;
    let from = from
        .map(|n| check_seq(&id, n, last))
        .transpose()?
        .unwrap_or(Seq::FIRST);
    let to = to.map(|n| check_seq(&id, n, last)).transpose()?;
    let before = match from.prev() {
        Some(p) => log.state_at(&id, p)?,
        None => SessionState::default(),
    };
    let events = log.read(&id, from, to)?;
    let mut out = Out::new();
    let entries = history_from(before.clone(), &events);
    let mut state = before;
    for (e, entry) in events.iter().zip(entries) {
        state = planlog_core::apply(state, &e.body);
        out.line(entry.line())?;
        for line in render_block(&state.plan, style()).lines() {
            out.line(format!("      {line}"))?;
        }
        if state.plan_mode {
            out.line("      (plan mode on)")?;
        }
    }
    Ok(())
}

fn cmd_fork(
    path: &Path,
    session: &str,
    at: Option<u64>,
    at_turn: Option<u64>,
    label: Option<String>,
) -> Result {
    let id = session_id(session)?;
    let log = open(path)?;
    let seq = match (at, at_turn) {
        (Some(n), _) => check_seq(&id, n, last_seq(&*log, &id)?)?,
        (None, Some(turn)) => events_of(&*log, &id)?
            .iter()
            .filter(|e| e.turn.is_some_and(|t| t <= turn))
            .map(|e| e.seq)
            .next_back()
            .ok_or_else(|| {
                Failure::usage(format!(
                    "session {id} has no event in turn {turn} or before; use --at SEQ"
                ))
            })?,
        (None, None) => return Err(Failure::usage("give --at SEQ or --at-turn N")),
    };
    let options = SessionOptions {
        label,
        ..SessionOptions::default()
    };
    let fork = PlanSession::fork(log, &id, seq, Arc::new(SystemEnv), options)?;
    Out::new().line(fork.id().as_str())?;
    Ok(())
}

fn cmd_sessions(path: &Path, json: bool) -> Result {
    let log = open(path)?;
    let mut out = Out::new();
    let sessions = log.sessions()?;
    if json {
        for info in &sessions {
            out.line(serde_json::to_string(info).unwrap_or_default())?;
        }
        return Ok(());
    }
    if sessions.is_empty() {
        out.line("(no sessions; `planlog new` or `planlog demo` creates one)")?;
        return Ok(());
    }
    out.line(format!(
        "{:<26}  {:<24}  {:>6}  {:>9}  {:<4}  LINEAGE / LABEL",
        "ID", "CREATED", "EVENTS", "DONE", "MODE"
    ))?;
    for info in sessions {
        let lineage = match (&info.origin, info.origin.parent()) {
            (planlog_core::Origin::Fork { parent, at }, _) => format!("fork of {parent} at {at}"),
            (planlog_core::Origin::Import { source, .. }, Some(p)) => {
                format!("{source} import, sub-agent of {p}")
            }
            (planlog_core::Origin::Import { source, .. }, None) => format!("{source} import"),
            (_, _) => String::new(),
        };
        let label = info
            .label
            .as_deref()
            .map(|l| format!("\"{}\"", planlog_core::render::one_line(l)));
        let described = [Some(lineage).filter(|l| !l.is_empty()), label]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        out.line(format!(
            "{:<26}  {:<24}  {:>6}  {:>9}  {:<4}  {described}",
            info.id,
            info.created,
            info.events,
            format!("{}/{}", info.progress.completed, info.progress.total()),
            if info.plan_mode { "plan" } else { "-" },
        ))?;
    }
    Ok(())
}

fn cmd_verify(path: &Path, session: Option<&str>) -> Result {
    let only = session.map(session_id).transpose()?;
    if !path.exists() {
        return Err(Failure::usage(format!(
            "no store at {}; pass --db PATH",
            path.display()
        )));
    }
    let mut report = Report::default();
    let mut out = Out::new();
    let mut file_damaged = false;
    // First redb's own check of every page, then the events themselves.
    let integrity = RedbLog::open_with(
        path,
        &OpenOptions {
            check_integrity: true,
            ..OpenOptions::default()
        },
    );
    let log = match integrity {
        Ok(log) => Arc::new(log),
        Err(LogError::Operator(planlog_core::OperatorError::Corrupt { detail, .. })) => {
            out.line(format!(
                "problem: store file {}: damaged ({detail})",
                path.display()
            ))?;
            file_damaged = true;
            RedbLog::open(path).map(Arc::new).map_err(|e| {
                Failure::no(format!(
                    "the store cannot be opened to name the damage: {e}"
                ))
            })?
        }
        Err(e) => return Err(e.into()),
    };
    let sessions: Vec<_> =
        match &only {
            Some(id) => vec![log.session(id)?.ok_or_else(|| {
                Failure::from(LogError::from(UserError::UnknownSession(id.clone())))
            })?],
            None => log.sessions()?,
        };
    let total: u64 = sessions.iter().map(|s| s.events).sum();
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("verifying {bar:30} {pos}/{len} events")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    for info in &sessions {
        verify_session(&*log, &info.id, &mut report, &mut |n| bar.inc(n));
    }
    bar.finish_and_clear();
    for note in &report.notes {
        out.line(format!("note: {note}"))?;
    }
    for problem in &report.problems {
        out.line(format!("problem: {problem}"))?;
    }
    let problems = report.problems.len() + usize::from(file_damaged);
    out.line(format!(
        "{} sessions, {} events checked: {problems} problems, {} notes",
        report.sessions,
        report.events,
        report.notes.len()
    ))?;
    if problems == 0 {
        Ok(())
    } else {
        Err(Failure {
            code: 1,
            message: String::new(),
        })
    }
}

fn cmd_delete(path: &Path, session: &str, yes: bool) -> Result {
    let id = session_id(session)?;
    let log = open(path)?;
    let info = log
        .session(&id)?
        .ok_or_else(|| Failure::from(LogError::from(UserError::UnknownSession(id.clone()))))?;
    if !yes {
        if !std::io::stdin().is_terminal() {
            return Err(Failure::usage(format!(
                "refusing to delete session {id} without --yes when not run interactively"
            )));
        }
        eprint!(
            "Delete session {id} and its {} events? This cannot be undone: the id {id} is retired (nothing can be written under it again; only this same session, restored from an export made with `planlog export {id} --format jsonl`, can take it back). [y/N] ",
            info.events
        );
        let mut answer = String::new();
        std::io::stdin()
            .read_line(&mut answer)
            .map_err(|e| Failure::usage(e.to_string()))?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            return Err(Failure::usage("not deleted"));
        }
    }
    log.delete(&id)?;
    let plan_file = PlanFiles::beside(path).path_for(&id);
    if plan_file.exists()
        && let Err(e) = std::fs::remove_file(&plan_file)
    {
        tracing::warn!(file = %plan_file.display(), error = %e, "could not remove the deleted session's plan file");
    }
    Out::new().line(format!("deleted {id}"))?;
    Ok(())
}

fn cmd_import(path: &Path, source: Source, file: &Path, skip_bad_lines: bool) -> Result {
    let shown = file.display().to_string();
    let bytes =
        std::fs::read(file).map_err(|e| Failure::usage(format!("cannot read {shown}: {e}")))?;
    let text = String::from_utf8_lossy(&bytes);
    let log = open(path)?;
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.set_message(format!("importing {shown}"));
    spinner.enable_steady_tick(std::time::Duration::from_millis(100));
    let result = match source {
        Source::ClaudeCode => import::import_parsed(
            &*log,
            &SystemEnv,
            "claude-code",
            &shown,
            import::claude::parse(&text),
            skip_bad_lines,
        ),
        Source::Codex => import::import_parsed(
            &*log,
            &SystemEnv,
            "codex",
            &shown,
            import::codex::parse(&text),
            skip_bad_lines,
        ),
        Source::Planlog => import::planlog::import(&*log, &shown, &text, skip_bad_lines),
    };
    spinner.finish_and_clear();
    let imported = result.map_err(|e| match e {
        ImportError::Store(e) => Failure::from(e),
        other => Failure::usage(other.to_string()),
    })?;
    for bad in &imported.skipped {
        eprintln!("planlog: skipped {shown} line {}: {}", bad.line, bad.why);
    }
    let mut out = Out::new();
    for id in &imported.sessions {
        out.line(id.as_str())?;
    }
    eprintln!(
        "planlog: imported {} plan calls into {} sessions",
        imported.calls,
        imported.sessions.len()
    );
    Ok(())
}

fn cmd_export(path: &Path, session: &str, format: Format) -> Result {
    let id = session_id(session)?;
    let log = open(path)?;
    let events = events_of(&*log, &id)?;
    let info = log
        .session(&id)?
        .ok_or_else(|| Failure::from(LogError::from(UserError::UnknownSession(id.clone()))))?;
    Out::new().raw(export(&info, &events, format))?;
    Ok(())
}

fn cmd_mcp(path: &Path, session: Option<&str>) -> Result {
    let log = open(path)?;
    let id = match session {
        Some(s) => session_id(s)?,
        None => SessionId::from_ulid(ulid::Ulid::new()),
    };
    let options = SessionOptions {
        sinks: vec![Arc::new(PlanFiles::beside(path))],
        ..SessionOptions::default()
    };
    // Refuse rather than degrade: a server must serve the session it was asked for. A new
    // session is created with its first write, so a server that never gets a client leaves
    // nothing behind.
    let session = PlanSession::try_open(log.clone(), id.clone(), Arc::new(SystemEnv), options)
        .map_err(|e| retired_hint(&id, e))?;
    let events = session.last_seq();
    eprintln!(
        "planlog mcp: serving session {id} ({events} events) in {} (audit it with: planlog --db {} history {id})",
        path.display(),
        path.display()
    );
    let server = Arc::new(crate::mcp::PlanServer::new(session, log));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("cannot start the async runtime: {e}")))?;
    let served = runtime.block_on(async {
        use rmcp::ServiceExt;
        let service = Arc::clone(&server)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| e.to_string())?;
        service
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    server.close()?;
    served.map_err(|e| Failure::usage(format!("MCP connection failed: {e}")))
}

/// The terminal block in the colour stdout gets (for the demo).
pub(crate) fn block(plan: &planlog_core::Plan) -> String {
    render_block(plan, style())
}
