//! The spool and the dead letters: hook writes the store could not take yet, and those it will
//! never take.
//!
//! - **The spool** (`<store>.hook-spool`): every hook write the store could not take (locked
//!   by a long import, a full disk, a database that is down, earlier writes still waiting)
//!   is kept here, in order, with the time it happened, and stored by the next hook call (or
//!   `planlog drain`) before that call's own write. An entry is a recorded call (`ran`), a
//!   call planlog refused (`blocked`, with the refusal), or a fork's first plan (`fork`).
//!   Storing an entry twice (a crash between storing and forgetting it) records it once: each
//!   has a call id (the tool call's, else `hook:<entry id>`).
//! - **The dead letters** (`<store>.hook-dead`): entries the store refuses for good (the
//!   session id was retired, or is held by another session) and spool lines cut by a failed
//!   write. They are kept, never deleted, and `planlog verify` reports each as a problem.
//!
//! Both are [`LineFile`]s: framed lines, locked with a deadline, a foreign file moved aside.

use std::collections::BTreeMap;
use std::path::Path;

use planlog_core::rules::{Rejection, RejectionCode};
use planlog_core::{Seq, SessionId, Timestamp};
use serde_json::{Value, json};

use super::agent::Agent;
use super::deadline::Deadline;
use super::input::HookInput;
use super::line_file::{Line, LineFile, LineFileError, ReadLine};

/// The spool's header, and its first version's (plain JSON lines, still read).
const SPOOL_HEADERS: &[&str] = &[
    r#"{"planlog":"hook spool","version":2}"#,
    r#"{"planlog":"hook spool","version":1}"#,
];

/// The dead letters' header.
const DEAD_HEADERS: &[&str] = &[r#"{"planlog":"hook dead letters","version":1}"#];

/// What a spooled hook write does.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// Records a plan tool call that ran (`PostToolUse`, `PostToolUseFailure`).
    Ran,
    /// Records a call planlog refused before it ran (`PreToolUse`).
    Blocked(Rejection),
    /// Starts a forked session from its parent's plan at `seq`.
    Fork {
        /// The parent session.
        parent: SessionId,
        /// The parent's seq the fork starts from.
        seq: Seq,
    },
    /// Records that the agent's context was compacted (`SessionStart` with source
    /// `compact`), with what the transcript's `compact_boundary` line says when the hook
    /// could read it.
    Compacted(Compaction),
    /// Records the text put back into the agent's context (`SessionStart` after a
    /// compaction, a resume, a clear or a fork; `UserPromptSubmit`), after the compaction it
    /// follows, if any (both in one write).
    Restored {
        /// `compact`, `resume`, `clear`, `fork` or `prompt`.
        after: String,
        /// The exact text.
        text: String,
        /// The seq whose plan it shows.
        plan_at: Seq,
        /// The compaction it follows.
        compaction: Option<Compaction>,
    },
}

/// A compaction as the transcript's `compact_boundary` line says it (all `None` when the
/// hook could not read the line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Compaction {
    /// The boundary line's `uuid` (an import of the transcript knows the compaction by it).
    pub boundary: Option<String>,
    /// `manual` or `auto`.
    pub trigger: Option<String>,
    /// Tokens before.
    pub tokens_before: Option<u64>,
    /// Tokens after.
    pub tokens_after: Option<u64>,
}

impl Compaction {
    /// Its call id: the boundary line's, as an import of the transcript names it, else one
    /// of the hook entry `entry`'s own.
    pub fn call_id(&self, entry: &str) -> String {
        match &self.boundary {
            Some(uuid) => format!("compact:{uuid}"),
            None => format!("compact:hook-{entry}"),
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "boundary": self.boundary,
            "trigger": self.trigger,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
        })
    }

    fn from_json(c: &Value) -> Self {
        let text = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_owned);
        Compaction {
            boundary: text("boundary"),
            trigger: text("trigger"),
            tokens_before: c.get("tokens_before").and_then(Value::as_u64),
            tokens_after: c.get("tokens_after").and_then(Value::as_u64),
        }
    }
}

/// One hook write.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Unique per hook call (a ULID's text); the call id of a call that has no tool call id
    /// is `hook:<id>`.
    pub id: String,
    /// When the hook ran: the recorded event's time, also when it is stored later.
    pub at: Timestamp,
    /// `CLAUDE_CODE_TASK_LIST_ID` as the hook saw it.
    pub list_id: Option<String>,
    /// The hook's input, as Claude Code sent it.
    pub raw: Value,
    /// The same, read.
    pub input: HookInput,
    /// What it does.
    pub kind: Kind,
    /// Whose hook it came from.
    pub agent: Agent,
}

impl Entry {
    /// A new entry `id` (a fresh ULID from the host's `Env`, so that this crate never seeds a
    /// random generator of its own in a hook's short life) for the hook input `raw`
    /// (already read as `input`), at `at`.
    pub fn new(
        id: ulid::Ulid,
        raw: Value,
        input: HookInput,
        list_id: Option<String>,
        at: Timestamp,
        kind: Kind,
    ) -> Self {
        Self {
            id: id.to_string(),
            at,
            list_id,
            raw,
            input,
            kind,
            agent: Agent::ClaudeCode,
        }
    }

    /// The same entry, from `agent`'s hook.
    #[must_use]
    pub fn of_agent(mut self, agent: Agent) -> Self {
        self.agent = agent;
        self
    }

    /// The entry as one JSON text.
    pub fn to_json(&self) -> String {
        let mut v = json!({
            "id": self.id,
            "at": self.at.to_string(),
            "list_id": self.list_id,
            "input": self.raw,
        });
        // Claude Code's entries are written as before agents were named.
        if self.agent != Agent::ClaudeCode {
            v["agent"] = json!(self.agent.word());
        }
        // The tool's input is kept once: as its text, byte for byte.
        if let Some(text) = &self.input.tool_input_text
            && let Some(input) = v["input"].as_object_mut()
        {
            input.remove("tool_input");
            v["arguments"] = json!(text);
        }
        match &self.kind {
            Kind::Ran => v["kind"] = json!("ran"),
            Kind::Blocked(r) => {
                v["kind"] = json!("blocked");
                v["rejection"] =
                    json!({"code": r.code, "message": r.message, "position": r.position});
            }
            Kind::Fork { parent, seq } => {
                v["kind"] = json!("fork");
                v["parent"] = json!(parent.to_string());
                v["seq"] = json!(seq.get());
            }
            Kind::Compacted(c) => {
                v["kind"] = json!("compacted");
                v["compaction"] = c.to_json();
            }
            Kind::Restored {
                after,
                text,
                plan_at,
                compaction,
            } => {
                v["kind"] = json!("restored");
                v["after"] = json!(after);
                v["text"] = json!(text);
                v["plan_at"] = json!(plan_at.get());
                if let Some(c) = compaction {
                    v["compaction"] = c.to_json();
                }
            }
        }
        v.to_string()
    }

    /// Reads an entry; a first-version line (`{"list_id", "input"}`) gets `id` and the time
    /// `now` (that version kept no time).
    fn from_json(text: &str, id: &str, now: Timestamp) -> Option<Self> {
        let v: Value = serde_json::from_str(text).ok()?;
        let mut raw = v.get("input")?.clone();
        let arguments = v
            .get("arguments")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(text) = &arguments {
            raw.as_object_mut()?
                .insert("tool_input".to_owned(), serde_json::from_str(text).ok()?);
        }
        let mut input: HookInput = serde_json::from_value(raw.clone()).ok()?;
        input.tool_input_text = arguments;
        let kind = match v.get("kind").and_then(Value::as_str).unwrap_or("ran") {
            "ran" => Kind::Ran,
            "blocked" => {
                let r = v.get("rejection")?;
                Kind::Blocked(Rejection {
                    code: serde_json::from_value::<RejectionCode>(r.get("code")?.clone()).ok()?,
                    message: r.get("message")?.as_str()?.to_owned(),
                    position: r
                        .get("position")
                        .and_then(Value::as_u64)
                        .and_then(|p| usize::try_from(p).ok()),
                })
            }
            "fork" => Kind::Fork {
                parent: SessionId::new(v.get("parent")?.as_str()?).ok()?,
                seq: Seq::new(v.get("seq")?.as_u64()?).ok()?,
            },
            "compacted" => Kind::Compacted(Compaction::from_json(v.get("compaction")?)),
            "restored" => Kind::Restored {
                after: v.get("after")?.as_str()?.to_owned(),
                text: v.get("text")?.as_str()?.to_owned(),
                plan_at: Seq::new(v.get("plan_at")?.as_u64()?).ok()?,
                compaction: v.get("compaction").map(Compaction::from_json),
            },
            _ => return None,
        };
        Some(Self {
            id: v
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| id.to_owned(), str::to_owned),
            at: v
                .get("at")
                .and_then(Value::as_str)
                .and_then(|t| Timestamp::parse(t).ok())
                .unwrap_or(now),
            list_id: v.get("list_id").and_then(Value::as_str).map(str::to_owned),
            raw,
            input,
            kind,
            agent: match v.get("agent").and_then(Value::as_str) {
                None => Agent::ClaudeCode,
                // A newer planlog's agent: not this one's to write.
                Some(word) => Agent::from_word(word)?,
            },
        })
    }

    /// The tool (or what the entry is), for messages.
    pub fn what(&self) -> String {
        match &self.kind {
            Kind::Fork { parent, seq } => {
                format!("the start of a fork of {parent} at seq {}", seq.get())
            }
            _ => format!(
                "{} call {}",
                self.input.tool_name.as_deref().unwrap_or("a"),
                self.input.tool_use_id.as_deref().unwrap_or(&self.id)
            ),
        }
    }
}

/// A spool line that is not an entry: cut by a failed write, or not planlog's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Torn {
    /// 1-based line number in the spool.
    pub line: usize,
    /// Its length in bytes.
    pub bytes: usize,
    /// Its first characters.
    pub excerpt: String,
}

/// What a spool holds (part of it, for a drain; all of it, counted, for a look).
#[derive(Debug, Default)]
pub struct Pending {
    /// Entries in order, each with its line's identity.
    pub entries: Vec<(String, Entry)>,
    /// Lines that are not entries, each with its identity.
    pub torn: Vec<(String, Torn)>,
    /// True when the read stopped before the end (more entries wait).
    pub more: bool,
}

/// The spool of one store.
#[derive(Debug, Clone)]
pub struct Spool {
    file: LineFile,
}

fn torn(line: &Line) -> Option<Torn> {
    match line {
        Line::Torn {
            line,
            bytes,
            excerpt,
        } => Some(Torn {
            line: *line,
            bytes: *bytes,
            excerpt: excerpt.clone(),
        }),
        Line::Framed(_) | Line::Plain(_) => None,
    }
}

impl Spool {
    /// The spool beside the store at `store`.
    pub fn beside(store: &Path) -> Spool {
        Spool {
            file: LineFile::beside(store, ".hook-spool", SPOOL_HEADERS, "hook spool"),
        }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Whether it surely holds nothing (checked without locking: the common case).
    pub fn looks_empty(&self) -> bool {
        self.file.looks_empty()
    }

    /// Adds `entry` at the end, durably.
    ///
    /// # Errors
    /// The spool cannot be locked by `deadline`, or written (nothing of the entry is kept).
    pub fn push(&self, entry: &Entry, deadline: &Deadline) -> Result<(), LineFileError> {
        self.file.append(&entry.to_json(), deadline)
    }

    fn collect(line: ReadLine, now: Timestamp, out: &mut Pending, max: usize) -> bool {
        if out.entries.len() >= max {
            out.more = true;
            return false;
        }
        let text = match &line.line {
            Line::Framed(t) | Line::Plain(t) => t,
            Line::Torn { .. } => {
                if let Some(t) = torn(&line.line) {
                    out.torn.push((line.identity, t));
                }
                return true;
            }
        };
        match Entry::from_json(text, &line.identity, now) {
            Some(e) => out.entries.push((line.identity, e)),
            None => {
                let n = match &line.line {
                    Line::Framed(t) | Line::Plain(t) => t.len(),
                    Line::Torn { bytes, .. } => *bytes,
                };
                out.torn.push((
                    line.identity,
                    Torn {
                        line: 0,
                        bytes: n,
                        excerpt: text.chars().take(80).collect(),
                    },
                ));
            }
        }
        true
    }

    /// The first `max` entries (and the torn lines among them), read under the spool's lock
    /// (waiting at most until `deadline`). `now` is the time of first-version entries.
    ///
    /// # Errors
    /// The spool cannot be locked or read.
    pub fn pending(
        &self,
        max: usize,
        now: Timestamp,
        deadline: &Deadline,
    ) -> Result<Pending, LineFileError> {
        let mut out = Pending::default();
        self.file
            .read(true, deadline, |l| Self::collect(l, now, &mut out, max))?;
        Ok(out)
    }

    /// Forgets the lines whose identity is in `done` (stored, or moved to the dead letters);
    /// returns how many lines remain.
    ///
    /// # Errors
    /// The spool cannot be locked or rewritten; it is then unchanged.
    pub fn forget(
        &self,
        done: &std::collections::HashSet<String>,
        deadline: &Deadline,
    ) -> Result<usize, LineFileError> {
        self.file.remove(deadline, |id| done.contains(id))
    }

    /// What waits, counted per planlog session (`cc-…`, `cx-…`, `gm-…`: where each entry
    /// goes), and per agent, without locking or writing anything (for `planlog verify`).
    ///
    /// # Errors
    /// The spool cannot be read.
    pub fn census(&self) -> Result<Census, LineFileError> {
        let mut census = Census::default();
        self.look(|line| match line {
            Ok(e) => {
                *census
                    .sessions
                    .entry(e.target().session_id().to_string())
                    .or_insert(0) += 1;
                *census.agents.entry(e.agent.name()).or_insert(0) += 1;
                census.entries += 1;
                census.oldest = census.oldest.min(Some(e.at)).or(Some(e.at));
            }
            Err(()) => census.torn += 1,
        })?;
        Ok(census)
    }

    /// How many entries waiting for `session` change its plan when stored (calls that ran,
    /// a fork's start; not a refusal, a compaction or a restore), read as
    /// [`Spool::census`] reads (no lock, nothing written): a plan read from the store is
    /// the session's plan only when none wait.
    ///
    /// # Errors
    /// The spool cannot be read.
    pub fn plan_changes_waiting(&self, session: &SessionId) -> Result<usize, LineFileError> {
        let mut waiting = 0;
        self.look(|line| {
            if let Ok(e) = line
                && matches!(e.kind, Kind::Ran | Kind::Fork { .. })
                && e.target().session_id() == *session
            {
                waiting += 1;
            }
        })?;
        Ok(waiting)
    }

    /// Each line of the spool, an entry or (`Err`) a torn line, read without the lock and
    /// writing nothing (what [`Spool::census`] and [`Spool::plan_changes_waiting`] count).
    fn look(&self, mut each: impl FnMut(Result<Entry, ()>)) -> Result<(), LineFileError> {
        let now = Timestamp::from_millis(0);
        self.file.read(false, &Deadline::none(), |l| {
            let mut one = Pending::default();
            Self::collect(l, now, &mut one, 1);
            for (_, e) in one.entries {
                each(Ok(e));
            }
            for _ in one.torn {
                each(Err(()));
            }
            true
        })
    }
}

/// What a spool holds, counted.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Census {
    /// Entries waiting.
    pub entries: usize,
    /// Lines that are not entries.
    pub torn: usize,
    /// Entries per planlog session id.
    pub sessions: BTreeMap<String, usize>,
    /// Entries per agent (its name).
    pub agents: BTreeMap<&'static str, usize>,
    /// When the oldest waiting entry happened.
    pub oldest: Option<Timestamp>,
}

/// One dead letter.
#[derive(Debug, Clone, PartialEq)]
pub struct DeadLetter {
    /// When it was moved here.
    pub dead_at: Timestamp,
    /// Why the store will never take it.
    pub why: String,
    /// The entry (absent for a torn spool line).
    pub entry: Option<Value>,
    /// What a torn line started with.
    pub torn: Option<String>,
}

impl DeadLetter {
    /// One line describing it, for `verify`.
    pub fn describe(&self) -> String {
        match (&self.entry, &self.torn) {
            (Some(e), _) => {
                let input = e.get("input");
                let field = |k: &str| input.and_then(|i| i.get(k)).and_then(Value::as_str);
                format!(
                    "the {} call {} of Claude Code session {} ({}): {}",
                    field("tool_name").unwrap_or("hook"),
                    field("tool_use_id")
                        .or_else(|| e.get("id").and_then(Value::as_str))
                        .unwrap_or("?"),
                    field("session_id").unwrap_or("?"),
                    e.get("at").and_then(Value::as_str).unwrap_or("?"),
                    self.why
                )
            }
            (None, Some(t)) => format!("a spool line cut by a failed write ({t:?}…): {}", self.why),
            (None, None) => self.why.clone(),
        }
    }
}

/// The dead letters of one store.
#[derive(Debug, Clone)]
pub struct DeadLetters {
    file: LineFile,
}

impl DeadLetters {
    /// The dead letters beside the store at `store`.
    pub fn beside(store: &Path) -> Self {
        Self {
            file: LineFile::beside(store, ".hook-dead", DEAD_HEADERS, "hook dead letters"),
        }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Keeps `entry`, which the store refused for good because `why`.
    ///
    /// # Errors
    /// The file cannot be locked by `deadline`, or written.
    pub fn add_entry(
        &self,
        entry: &Entry,
        why: &str,
        now: Timestamp,
        deadline: &Deadline,
    ) -> Result<(), LineFileError> {
        let entry: Value = serde_json::from_str(&entry.to_json()).unwrap_or(Value::Null);
        let line = json!({"dead_at": now.to_string(), "why": why, "entry": entry});
        self.file.append(&line.to_string(), deadline)
    }

    /// Keeps a torn spool line's description.
    ///
    /// # Errors
    /// The file cannot be locked by `deadline`, or written.
    pub fn add_torn(
        &self,
        torn: &Torn,
        now: Timestamp,
        deadline: &Deadline,
    ) -> Result<(), LineFileError> {
        let line = json!({
            "dead_at": now.to_string(),
            "why": format!("a hook write to the spool was cut part way ({} bytes; a full disk or a killed process): the call it held could not be stored; importing the session's transcript recovers it", torn.bytes),
            "torn": torn.excerpt,
        });
        self.file.append(&line.to_string(), deadline)
    }

    /// Every dead letter, in order (read without locking or writing).
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn list(&self) -> Result<Vec<DeadLetter>, LineFileError> {
        let mut out = Vec::new();
        self.file.read(false, &Deadline::none(), |l| {
            let letter = match &l.line {
                Line::Framed(t) | Line::Plain(t) => {
                    serde_json::from_str::<Value>(t).ok().map(|v| DeadLetter {
                        dead_at: v
                            .get("dead_at")
                            .and_then(Value::as_str)
                            .and_then(|t| Timestamp::parse(t).ok())
                            .unwrap_or(Timestamp::from_millis(0)),
                        why: v
                            .get("why")
                            .and_then(Value::as_str)
                            .unwrap_or("no reason kept")
                            .to_owned(),
                        entry: v.get("entry").cloned(),
                        torn: v.get("torn").and_then(Value::as_str).map(str::to_owned),
                    })
                }
                Line::Torn { .. } => None,
            };
            out.push(letter.unwrap_or_else(|| DeadLetter {
                dead_at: Timestamp::from_millis(0),
                why: "a line of the dead letters file that cannot be read".to_owned(),
                entry: None,
                torn: None,
            }));
            true
        })?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, kind: Kind) -> Entry {
        let raw = json!({"hook_event_name": "PostToolUse", "session_id": "s", "tool_use_id": id});
        Entry::new(
            ulid::Ulid::new(),
            raw.clone(),
            serde_json::from_value(raw).unwrap(),
            None,
            Timestamp::parse("2026-12-01T10:00:00.000Z").unwrap(),
            kind,
        )
    }

    #[test]
    fn entries_of_every_kind_round_trip_in_order_with_their_time() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::beside(&dir.path().join("planlog.redb"));
        let blocked = Kind::Blocked(Rejection {
            code: RejectionCode::BulkCompletion,
            message: "no".to_owned(),
            position: Some(2),
        });
        let fork = Kind::Fork {
            parent: SessionId::new("cc-parent").unwrap(),
            seq: Seq::new(3).unwrap(),
        };
        let written = [entry("a", Kind::Ran), entry("b", blocked), entry("c", fork)];
        for e in &written {
            spool.push(e, &Deadline::none()).unwrap();
        }
        let now = Timestamp::from_millis(0);
        let got = spool.pending(10, now, &Deadline::none()).unwrap();
        let entries: Vec<Entry> = got.entries.into_iter().map(|(_, e)| e).collect();
        assert_eq!(entries, written);
        assert!(!got.more);
        let two = spool.pending(2, now, &Deadline::none()).unwrap();
        assert_eq!(two.entries.len(), 2);
        assert!(two.more);
        assert_eq!(spool.census().unwrap().entries, 3);
    }

    #[test]
    fn a_first_version_spool_is_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::beside(&dir.path().join("planlog.redb"));
        std::fs::write(
            spool.path(),
            "{\"planlog\":\"hook spool\",\"version\":1}\n{\"list_id\":\"team\",\"input\":{\"hook_event_name\":\"PostToolUse\",\"session_id\":\"s\",\"tool_use_id\":\"x\"}}\n",
        )
        .unwrap();
        let now = Timestamp::parse("2026-12-01T11:00:00.000Z").unwrap();
        let got = spool.pending(10, now, &Deadline::none()).unwrap();
        assert_eq!(got.entries.len(), 1);
        let (_, e) = &got.entries[0];
        assert_eq!(
            (e.list_id.as_deref(), e.at, &e.kind),
            (Some("team"), now, &Kind::Ran)
        );
        // A new entry goes after it, and the old header stays readable.
        spool
            .push(&entry("y", Kind::Ran), &Deadline::none())
            .unwrap();
        assert_eq!(
            spool
                .pending(10, now, &Deadline::none())
                .unwrap()
                .entries
                .len(),
            2
        );
    }

    #[test]
    fn dead_letters_keep_what_and_why() {
        let dir = tempfile::tempdir().unwrap();
        let dead = DeadLetters::beside(&dir.path().join("planlog.redb"));
        let now = Timestamp::from_millis(0);
        dead.add_entry(
            &entry("a", Kind::Ran),
            "session cc-s was deleted",
            now,
            &Deadline::none(),
        )
        .unwrap();
        dead.add_torn(
            &Torn {
                line: 3,
                bytes: 10,
                excerpt: "0123456789".to_owned(),
            },
            now,
            &Deadline::none(),
        )
        .unwrap();
        let list = dead.list().unwrap();
        assert_eq!(list.len(), 2);
        assert!(
            list[0]
                .describe()
                .contains("call a of Claude Code session s"),
            "{}",
            list[0].describe()
        );
        assert!(list[0].describe().ends_with("session cc-s was deleted"));
        assert!(list[1].describe().contains("cut by a failed write"));
    }
}
