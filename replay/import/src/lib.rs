//! planlog-import: importing what agents recorded: Claude Code transcripts (TodoWrite and the
//! Tasks tools) and task folders, Codex rollouts, opencode exports, Gemini CLI chat
//! recordings, and planlog's own jsonl export.
//!
//! The root is the whole API: [`import`] a source into a log (or [`records`] it without
//! one), [`detect`] and [`walk`] to place files, the [`Record`]s parsers yield (an agent's
//! hooks make the same records, written by [`write_records`]), and the pieces an agent's live
//! capture reuses: the item ids of whole lists ([`ItemIds`]) and where their history is kept
//! between a hook's calls ([`HistoryCache`]), what a source says a session is
//! ([`Described`]), a Claude Code call's record ([`claude_code_record`]), and a call as sent
//! read again ([`agreement`]).
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | `record` | what parsers yield: source sessions, plan calls paired with their results (and the call as sent), bad lines |
//! | `describe` | what a source says a session is (title, agent, project, …), recorded where it changes |
//! | `lines` | reading jsonl one line at a time |
//! | `pairing` | holding a call until its result arrives, emitting in call order |
//! | `claude_code`, `claude_tasks`, `codex`, `opencode`, `gemini` | one parser per source format |
//! | `bad_list` | why a plan tool's input holds no list ([`BadList`]) |
//! | `detect` | telling the source format from the content ([`UnknownFormat`] when none); walking a folder; opening a file without blocking on a FIFO ([`open_regular`]) |
//! | `document` | reading one big JSON document a message at a time |
//! | `bounds` | what is kept of a call too large to keep whole |
//! | `writer` | records into events: session ids, item ids, re-imports, notes |
//! | `derived` | what an import keeps of a session's history: item ids of lists, the last checkpoint |
//! | `history_cache` | that state kept beside the store between imports ([`HistoryCache`]), so the next reads only the events since |
//! | `ids` | deriving item ids for lists that have none |
//! | `planlog` | planlog's own export, imported as is |
//! | `sent` | a call as sent, read again (`verify` holds an import's derived items to it) |
//!
//! # How an import runs
//!
//! A parser thread reads the source line by line and sends [`record::Record`]s through a small
//! bounded channel; the writer turns each into events as it arrives and the store appends them
//! in one transaction ([`EventLog::append_sealed_iter`]: each event sealed once, with its
//! bytes). Memory holds a line, the calls still waiting for their results, and each
//! session's current plan, never the file. Bytes already
//! in memory are parsed on the caller's thread first: their records are no larger than they
//! are. Any bad line, read error or store error aborts the transaction: per source file,
//! everything or nothing.
//!
//! Session ids are derived from the source (`cc-<session id>` for Claude Code, `cx-` Codex,
//! `oc-` opencode, `gm-` Gemini, `ct-<list id>` a task folder; a hash when the source's id is
//! not usable as one), and event ids from the session, seq and time, so an import is a pure
//! function of the file. Importing a source again appends only the calls not recorded yet
//! (by their call ids), so a periodic import of a whole folder is safe.

mod bad_list;
mod bounds;
mod claude_code;
mod claude_tasks;
mod codex;
mod derived;
mod describe;
mod detect;
mod document;
mod gemini;
mod gemini_tracker;
mod history_cache;
mod hooked;
mod ids;
mod lines;
mod opencode;
mod pairing;
mod planlog;
mod progress;
mod record;
mod sent;
mod writer;

use std::io::BufRead;
use std::path::{Path, PathBuf};

use planlog_core::{Env, EventLog, LogError, SessionId};

pub use bad_list::BadList;
pub use claude_code::{call_record as claude_code_record, todos_of as todo_write_items};
pub use codex::{update_plan_items, update_plan_record as codex_record};
pub use describe::Described;
pub use detect::{
    NOT_REGULAR, UnknownFormat, detect, detect_bytes, is_task_folder, open_regular, read_regular,
    walk,
};
pub use gemini::{todos_of as write_todos_items, write_todos_record as gemini_record};
pub use gemini_tracker::{TRACKER_TOOLS, tracker_record};
pub use history_cache::HistoryCache;
pub use ids::{ItemIds, Listed, Sent, similarity};
pub use lines::MAX_LINE_BYTES;
pub use opencode::{todos_of as todowrite_items, todowrite_record as opencode_record};
pub use progress::ReadProgress;
pub use record::{BadLine, Op, Record, SourceCall, SourceSession, Stamp, TaskPatch, Todo};
pub use sent::agreement;
pub use writer::{FileReport, SessionReport, Unfinished, session_id, write_records};

/// What recorded a source planlog imports: an agent's transcript format, a Claude Code task
/// folder, or planlog's own export. (Not to be confused with the event format an event is
/// encoded in, the store format of a redb file, or the export formats.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceFormat {
    /// A Claude Code transcript (`~/.claude/projects/<project>/<session>.jsonl`): TodoWrite
    /// and the Tasks tools (TaskCreate, TaskUpdate), `task_reminder` checkpoints, sidechains.
    ClaudeCode,
    /// A Claude Code task folder (`~/.claude/tasks/<list-id>/`, one JSON file per task).
    ClaudeCodeTasks,
    /// A Codex CLI rollout (`~/.codex/sessions/…/rollout-*.jsonl`): update_plan.
    Codex,
    /// An `opencode export` JSON document: todowrite.
    Opencode,
    /// A Gemini CLI chat recording (`~/.gemini/tmp/<project>/chats/session-*.json[l]`):
    /// write_todos.
    Gemini,
    /// planlog's own jsonl export.
    Planlog,
    /// A Cursor conversation, captured live by planlog's hooks (`cu-<conversation id>`).
    /// planlog has no importer for Cursor's files: it is not in [`SourceFormat::ALL`].
    Cursor,
    /// A GitHub Copilot CLI session, captured live by planlog's hooks (`cp-<session id>`).
    /// planlog has no importer for Copilot's files: it is not in [`SourceFormat::ALL`].
    Copilot,
}

impl SourceFormat {
    /// Every format, in the order they are listed to people.
    pub const ALL: [SourceFormat; 6] = [
        SourceFormat::ClaudeCode,
        SourceFormat::ClaudeCodeTasks,
        SourceFormat::Codex,
        SourceFormat::Opencode,
        SourceFormat::Gemini,
        SourceFormat::Planlog,
    ];

    /// The word for it on the command line and in `origin.source`.
    pub fn word(self) -> &'static str {
        match self {
            SourceFormat::ClaudeCode => "claude-code",
            SourceFormat::ClaudeCodeTasks => "claude-code-tasks",
            SourceFormat::Codex => "codex",
            SourceFormat::Opencode => "opencode",
            SourceFormat::Gemini => "gemini",
            SourceFormat::Planlog => "planlog",
            SourceFormat::Cursor => "cursor",
            SourceFormat::Copilot => "copilot",
        }
    }

    /// What it is, for people.
    pub fn describe(self) -> &'static str {
        match self {
            SourceFormat::ClaudeCode => "a Claude Code transcript",
            SourceFormat::ClaudeCodeTasks => "a Claude Code task folder",
            SourceFormat::Codex => "a Codex CLI rollout",
            SourceFormat::Opencode => "an opencode export",
            SourceFormat::Gemini => "a Gemini CLI chat recording",
            SourceFormat::Planlog => "a planlog jsonl export",
            SourceFormat::Cursor => "a Cursor conversation (captured live; no importer)",
            SourceFormat::Copilot => "a Copilot CLI session (captured live; no importer)",
        }
    }

    /// The format named by `word`.
    pub fn from_word(word: &str) -> Option<SourceFormat> {
        SourceFormat::ALL.into_iter().find(|f| f.word() == word)
    }

    /// The prefix of the session ids an import of this format creates.
    pub fn session_prefix(self) -> &'static str {
        match self {
            SourceFormat::ClaudeCode => "cc",
            SourceFormat::ClaudeCodeTasks => "ct",
            SourceFormat::Codex => "cx",
            SourceFormat::Opencode => "oc",
            SourceFormat::Gemini => "gm",
            SourceFormat::Planlog => "pl",
            SourceFormat::Cursor => "cu",
            SourceFormat::Copilot => "cp",
        }
    }

    /// Whether this agent's hooks see its plan calls without the call id its recording gives
    /// them (Gemini CLI's `AfterTool`): an import then finds a call a hook recorded by its
    /// tool, arguments and time.
    pub fn hooks_lack_call_ids(self) -> bool {
        matches!(self, SourceFormat::Gemini)
    }

    /// The words of every format, for messages.
    pub fn all_words() -> String {
        SourceFormat::ALL.map(SourceFormat::word).join(", ")
    }
}

impl std::fmt::Display for SourceFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// What is imported: a file or folder, or bytes in memory (tests, fuzzing).
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// A file (or, for [`SourceFormat::ClaudeCodeTasks`], a folder).
    Path(&'a Path),
    /// Bytes, with a name for messages and labels.
    Bytes {
        /// The name (a file name).
        name: &'a str,
        /// The content.
        bytes: &'a [u8],
    },
}

impl Input<'_> {
    /// The name shown in messages.
    pub fn shown(&self) -> String {
        match self {
            Input::Path(p) => p.display().to_string(),
            Input::Bytes { name, .. } => (*name).to_owned(),
        }
    }

    /// The last part of the name (for the `imported from …` label).
    pub fn file_name(&self) -> String {
        match self {
            Input::Path(p) => p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            Input::Bytes { name, .. } => Path::new(name)
                .file_name()
                .map_or_else(|| (*name).to_owned(), |n| n.to_string_lossy().into_owned()),
        }
    }

    /// The path, for inputs that are files.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Input::Path(p) => Some(p),
            Input::Bytes { .. } => None,
        }
    }

    /// Opens the content for reading.
    ///
    /// # Errors
    /// The file cannot be opened.
    pub fn open(&self) -> Result<Box<dyn BufRead + Send + '_>, std::io::Error> {
        match self {
            Input::Path(p) => {
                let file = detect::open_regular(p)?;
                Ok(progress::wrap(Box::new(std::io::BufReader::with_capacity(
                    64 * 1024,
                    file,
                ))))
            }
            Input::Bytes { bytes, .. } => Ok(Box::new(*bytes)),
        }
    }
}

/// How an import treats what it cannot use, how long it may take, and where it keeps what it
/// derived from a session's history.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Import what can be read and report the bad lines, instead of refusing the source.
    pub skip_bad_lines: bool,
    /// Give up at this instant ([`ImportError::TimedOut`], nothing written): a hook catching
    /// up from a transcript must answer within its budget.
    pub deadline: Option<std::time::Instant>,
    /// Counts the source's bytes as they are read (a progress bar shows it against the
    /// file's size).
    pub progress: Option<ReadProgress>,
    /// Where what the import derives from a stored session's history is kept for the next
    /// import of the session (a hook's next call), so that one reads only the events after
    /// it. `None`: the history is read back each time it is needed.
    pub history: Option<HistoryCache>,
}

/// Why an import wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A line of the source cannot be used (the user must fix it, or skip bad lines).
    #[error("{file}: {}{}; nothing was imported from it", shown_line(.line), .line.why)]
    BadLine {
        /// The source.
        file: String,
        /// The first bad line.
        line: BadLine,
        /// Whether skipping bad lines could import the rest (not for planlog's chained
        /// events, where every later event depends on the bad one).
        skippable: bool,
    },
    /// The source could not be read.
    #[error("cannot read {file}: {detail}")]
    Read {
        /// The source.
        file: String,
        /// Why.
        detail: String,
    },
    /// The source is not of the format it was named as.
    #[error("{file} is not {}: {why}{}; nothing was imported", .format.describe(), match .looks_like { Some(f) => format!(" (it looks like {} ({f}))", f.describe()), None => String::new() })]
    WrongFormat {
        /// The source.
        file: String,
        /// The format it was named as.
        format: SourceFormat,
        /// Why it is not.
        why: String,
        /// The format it looks like, if any.
        looks_like: Option<SourceFormat>,
    },
    /// The format was left out and the content does not say.
    #[error(
        "cannot tell the format of {file}: {why}; planlog imports {}",
        SourceFormat::all_words()
    )]
    Unknown {
        /// The source.
        file: String,
        /// Why not.
        why: UnknownFormat,
    },
    /// A planlog export holds a history that could never have been written (verify's checks).
    #[error("{file}: {problem}{}; nothing was imported", if *.more > 0 { format!(" (and {} more problems)", .more) } else { String::new() })]
    Forged {
        /// The source.
        file: String,
        /// The first problem found.
        problem: String,
        /// How many more.
        more: usize,
    },
    /// A planlog export holds a session that already exists here.
    #[error("session {0} already exists in this store with another history")]
    Exists(SessionId),
    /// A planlog export holds events of a session but not its first one.
    #[error(
        "{file}: session {session} starts at seq {first} in this file, without its session_started: the export was cut; export the whole session again; nothing was imported"
    )]
    Cut {
        /// The source.
        file: String,
        /// The session.
        session: SessionId,
        /// Its first seq in the file.
        first: u64,
    },
    /// The session id an import derives is taken by a session that is not this source's.
    #[error(
        "session {session} already exists in this store and is not the import of {format} session {key:?}; nothing was imported"
    )]
    Clash {
        /// The session.
        session: SessionId,
        /// The source format.
        format: SourceFormat,
        /// The source session's key.
        key: String,
    },
    /// The import ran past its deadline ([`ImportOptions::deadline`]).
    #[error("{file}: the import ran out of time; nothing was imported")]
    TimedOut {
        /// The source.
        file: String,
    },
    /// The store refused the batch.
    #[error(transparent)]
    Store(#[from] LogError),
}

fn shown_line(line: &BadLine) -> String {
    if line.line == 0 {
        String::new()
    } else {
        format!("line {}: ", line.line)
    }
}

/// How many times an import re-reads its source after another writer appended to one of its
/// sessions first (two imports of the same source at once).
pub(crate) const CONFLICT_ATTEMPTS: usize = 8;

/// Imports one source, all or nothing, as one transaction: a transcript's records go through
/// the writer; a planlog export ([`SourceFormat::Planlog`]) is checked event by event, as verify
/// checks a store, and taken in as it is.
///
/// # Errors
/// [`ImportError`]: a bad line (unless skipped), an unreadable source, a session id taken by
/// another session, a store error. Nothing is written then.
pub fn import(
    log: &dyn EventLog,
    env: &dyn Env,
    format: SourceFormat,
    input: Input<'_>,
    options: ImportOptions,
) -> Result<FileReport, ImportError> {
    if format == SourceFormat::Planlog {
        return planlog::import(log, input, options);
    }
    let mut attempt = 0;
    loop {
        attempt += 1;
        match writer::write(log, env, format, input, options.clone()) {
            // Another import of the same source (or a live writer) appended first: read the
            // source again; what it recorded is skipped now.
            Err(ImportError::Store(LogError::Conflict { session, .. }))
                if attempt < CONFLICT_ATTEMPTS =>
            {
                tracing::debug!(%session, attempt, "import raced another writer; reading the source again");
                env.pause(attempt as u32);
            }
            other => return other,
        }
    }
}

/// Runs the parser of `format` on `input`, sending every record to `emit` (which returns
/// `false` to stop the parser early).
pub fn parse(format: SourceFormat, input: Input<'_>, emit: &mut dyn FnMut(Record) -> bool) {
    let mut emit = Emit(emit);
    let _stopped = match format {
        SourceFormat::ClaudeCode => claude_code::parse(input, &mut emit),
        SourceFormat::ClaudeCodeTasks => claude_tasks::parse(input, &mut emit),
        SourceFormat::Codex => codex::parse(input, &mut emit),
        SourceFormat::Opencode => opencode::parse(input, &mut emit),
        SourceFormat::Gemini => gemini::parse(input, &mut emit),
        // planlog's own events are not records; its importer reads them itself.
        SourceFormat::Planlog => Ok(()),
        SourceFormat::Cursor => emit.send(Record::Bad(BadLine {
            line: 0,
            why: "planlog has no importer for Cursor's files: its hooks capture Cursor live (`planlog install cursor`)".to_owned(),
        })),
        SourceFormat::Copilot => emit.send(Record::Bad(BadLine {
            line: 0,
            why: "planlog has no importer for Copilot CLI's files: its hooks capture Copilot live (`planlog install copilot`)".to_owned(),
        })),
    };
}

/// Every record of `input` (tests and fuzzing; an import never holds them all).
pub fn records(format: SourceFormat, input: Input<'_>) -> Vec<Record> {
    let mut out = Vec::new();
    parse(format, input, &mut |r| {
        out.push(r);
        true
    });
    out
}

/// The parser stopped because the writer stopped reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// Where a parser sends its records.
pub struct Emit<'a>(&'a mut dyn FnMut(Record) -> bool);

impl Emit<'_> {
    /// Sends one record.
    ///
    /// # Errors
    /// [`Stopped`] when the reader stopped; the parser returns at once.
    pub fn send(&mut self, record: Record) -> Result<(), Stopped> {
        if (self.0)(record) {
            Ok(())
        } else {
            Err(Stopped)
        }
    }

    /// Reports a read error and stops.
    pub fn unreadable(&mut self, e: &std::io::Error) -> Result<(), Stopped> {
        self.send(Record::Unreadable(e.to_string()))?;
        Err(Stopped)
    }
}

/// One source found under a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The file (or task folder).
    pub path: PathBuf,
    /// Its format, or why it has none planlog knows.
    pub format: Result<SourceFormat, UnknownFormat>,
}
