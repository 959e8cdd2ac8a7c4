//! `planlog mcp`'s spool (`<store>.mcp-spool`): plan_write and task calls a server could not
//! store before it had to exit.
//!
//! A server that cannot store a call (the journal locked past [`super::JOURNAL_WAIT`] by a
//! long import, a full disk, a database that is down) goes on in memory and tells the model
//! the call is not saved yet; the next call, or `close`, stores it. When the client goes
//! away while calls still wait, they are written here, as the model sent them, instead of
//! being lost with the process. The next `planlog mcp` on the store, `planlog drain`, and a
//! server's own close store them, in order, each decided again against the plan then (as a
//! queued call is when another writer took its place), with the time it was made and its
//! call id: storing one twice (a crash between storing and forgetting it) records it once.
//! `planlog verify` reports what waits.
//!
//! A call the store refuses for good (its session was deleted) stays in the spool, never
//! dropped: `planlog drain` and `planlog verify` name it, and the rest are stored around it.
//!
//! The file is a [`LineFile`]: framed lines, locked with a deadline, a foreign file moved
//! aside, a line cut by a failed write reported and never read as a call.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use planlog_agents::hook::{Deadline, Line, LineFile, LineFileError, ReadLine};
use planlog_core::events::SessionStarted;
use planlog_core::{
    CallTool, Env, EventLog, LogError, PlanSession, PlanSink, SessionId, Timestamp, UnsavedCall,
    WriteError, WriteStatus,
};
use planlog_store::host::SystemEnv;
use serde_json::{Value, json};

/// The spool's header.
const HEADERS: &[&str] = &[r#"{"planlog":"mcp spool","version":1}"#];

/// The spool beside one store.
#[derive(Debug, Clone)]
pub(crate) struct McpSpool {
    file: LineFile,
}

/// One waiting call, with its line's identity.
struct Waiting {
    identity: String,
    call: UnsavedCall,
}

/// What a drain did.
#[derive(Debug, Default)]
pub(crate) struct Drained {
    /// Calls stored (or found stored already).
    pub(crate) stored: usize,
    /// Calls the store refuses for good, each described; they stay in the spool.
    pub(crate) refused: Vec<String>,
    /// Lines cut by a failed write (not calls); they stay in the spool.
    pub(crate) torn: usize,
    /// Why the drain stopped before the end (the store could not take a call).
    pub(crate) stopped: Option<String>,
}

impl Drained {
    /// What still waits in the spool at `path` after this drain, and why: a line each.
    pub(crate) fn problems(&self, path: &Path) -> Vec<String> {
        let path = path.display();
        let mut out = Vec::new();
        if let Some(why) = &self.stopped {
            out.push(format!("plan calls still wait in {path}: {why}"));
        }
        for refused in &self.refused {
            out.push(format!(
                "the store refuses for good a plan call kept in {path}: {refused}"
            ));
        }
        if self.torn > 0 {
            out.push(format!(
                "{} lines of {path} were cut by a failed write and hold no call",
                self.torn
            ));
        }
        out
    }
}

/// What waits, counted (for `planlog verify`).
#[derive(Debug, Default)]
pub(crate) struct Census {
    /// Calls waiting, per session.
    pub(crate) sessions: std::collections::BTreeMap<String, usize>,
    /// All calls waiting.
    pub(crate) calls: usize,
    /// The oldest call's time.
    pub(crate) oldest: Option<Timestamp>,
    /// Lines cut by a failed write.
    pub(crate) torn: usize,
}

fn to_json(call: &UnsavedCall) -> String {
    let mut v = json!({
        "session": call.session.to_string(),
        "tool": call.tool.name(),
        "arguments": call.arguments,
        "call_id": call.call_id,
        "turn": call.turn,
        "at": call.at.to_string(),
    });
    if let Some(start) = &call.start
        && let Ok(start) = serde_json::to_value(start)
    {
        v["start"] = start;
    }
    v.to_string()
}

fn from_json(text: &str) -> Option<UnsavedCall> {
    let v: Value = serde_json::from_str(text).ok()?;
    let text = |k: &str| v.get(k).and_then(Value::as_str);
    Some(UnsavedCall {
        session: SessionId::new(text("session")?).ok()?,
        start: match v.get("start") {
            None => None,
            Some(s) => Some(serde_json::from_value::<SessionStarted>(s.clone()).ok()?),
        },
        tool: CallTool::from_name(text("tool")?)?,
        arguments: text("arguments")?.to_owned(),
        call_id: text("call_id").map(str::to_owned),
        turn: v.get("turn").and_then(Value::as_u64),
        at: Timestamp::parse(text("at")?).ok()?,
    })
}

/// The clock of a drain: each call is recorded at the time it was made.
struct MadeAt {
    at: Mutex<Timestamp>,
}

impl Env for MadeAt {
    fn now(&self) -> Timestamp {
        *self.at.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn new_ulid(&self) -> ulid::Ulid {
        SystemEnv.new_ulid()
    }

    fn pause(&self, attempt: u32) {
        SystemEnv.pause(attempt);
    }
}

/// Whether `error` is the store refusing the call for good (not a passing failure).
fn refused_for_good(error: &LogError) -> bool {
    matches!(error, LogError::User(_))
}

impl McpSpool {
    /// The spool beside the store at `store`.
    pub(crate) fn beside(store: &Path) -> Self {
        Self {
            file: LineFile::beside(store, ".mcp-spool", HEADERS, "planlog mcp spool"),
        }
    }

    /// Its path.
    pub(crate) fn path(&self) -> &Path {
        self.file.path()
    }

    /// Whether it surely holds nothing (checked without locking).
    pub(crate) fn looks_empty(&self) -> bool {
        self.file.looks_empty()
    }

    /// Adds `calls` at the end, in order, each durably before the next.
    ///
    /// # Errors
    /// The first call that could not be written: it and those after it are not kept.
    pub(crate) fn push(
        &self,
        calls: &[UnsavedCall],
        deadline: &Deadline,
    ) -> Result<(), LineFileError> {
        for call in calls {
            self.file.append(&to_json(call), deadline)?;
        }
        Ok(())
    }

    fn read(
        &self,
        lock: bool,
        deadline: &Deadline,
    ) -> Result<(Vec<Waiting>, usize), LineFileError> {
        let mut calls = Vec::new();
        let mut torn = 0;
        self.file
            .read(lock, deadline, |ReadLine { identity, line }| {
                match &line {
                    Line::Framed(text) | Line::Plain(text) => match from_json(text) {
                        Some(call) => calls.push(Waiting { identity, call }),
                        None => torn += 1,
                    },
                    Line::Torn { .. } => torn += 1,
                }
                true
            })?;
        Ok((calls, torn))
    }

    /// What waits, read without locking or writing anything.
    ///
    /// # Errors
    /// The spool cannot be read.
    pub(crate) fn census(&self) -> Result<Census, LineFileError> {
        let (calls, torn) = self.read(false, &Deadline::none())?;
        let mut census = Census {
            torn,
            ..Census::default()
        };
        for w in calls {
            *census
                .sessions
                .entry(w.call.session.to_string())
                .or_insert(0) += 1;
            census.calls += 1;
            census.oldest = census.oldest.min(Some(w.call.at)).or(Some(w.call.at));
        }
        Ok(census)
    }

    /// Stores what waits into `log`, in order, and forgets what was stored. A session's calls
    /// stop at the first the store refuses for good (the rest of that session stays behind
    /// it); the drain stops at the first the store cannot take now.
    /// `sink` (the plan files) is told each session's plan after its calls.
    pub(crate) fn drain(
        &self,
        log: &Arc<dyn EventLog>,
        sink: Option<&Arc<dyn PlanSink>>,
        deadline: &Deadline,
    ) -> Drained {
        let mut drained = Drained::default();
        if self.looks_empty() {
            return drained;
        }
        let (waiting, torn) = match self.read(true, deadline) {
            Ok(read) => read,
            Err(e) => {
                drained.stopped = Some(e.to_string());
                return drained;
            }
        };
        drained.torn = torn;
        let clock = Arc::new(MadeAt {
            at: Mutex::new(Timestamp::from_millis(0)),
        });
        let mut done = HashSet::new();
        let mut blocked: HashSet<SessionId> = HashSet::new();
        let mut open: Option<PlanSession> = None;
        for w in waiting {
            if blocked.contains(&w.call.session) {
                continue;
            }
            if open.as_ref().is_none_or(|s| *s.id() != w.call.session) {
                let mut builder = PlanSession::builder(Arc::clone(log), Arc::clone(&clock));
                if let Some(sink) = sink {
                    builder = builder.shared_sink(Arc::clone(sink));
                }
                if let Some(start) = &w.call.start {
                    builder = builder.origin(start.origin.clone());
                    if let Some(label) = &start.label {
                        builder = builder.label(label.clone());
                    }
                }
                match builder.open(&w.call.session) {
                    Ok(s) => open = Some(s),
                    Err(error) if refused_for_good(&error) => {
                        drained.refused.push(describe(&w.call, &error));
                        blocked.insert(w.call.session.clone());
                        continue;
                    }
                    Err(error) => {
                        drained.stopped = Some(error.to_string());
                        break;
                    }
                }
            }
            let Some(session) = open.as_mut() else {
                break;
            };
            *clock.at.lock().unwrap_or_else(PoisonError::into_inner) = w.call.at;
            let outcome = session.record_handed_over(&w.call);
            match outcome.status() {
                WriteStatus::Stored(_) | WriteStatus::Repeated(_) | WriteStatus::Read => {
                    drained.stored += 1;
                    done.insert(w.identity);
                }
                WriteStatus::Unsaved(error) => {
                    // Not stored: taken back out, so that dropping the session stores nothing
                    // behind the spool's back (it stays here, in order).
                    drained.stopped = Some(error.to_string());
                    let _ = session.take_unsaved();
                    break;
                }
                WriteStatus::NotRecorded(WriteError::Log(error)) if refused_for_good(error) => {
                    drained.refused.push(describe(&w.call, error));
                    blocked.insert(w.call.session.clone());
                }
                WriteStatus::NotRecorded(error) => {
                    drained.stopped = Some(error.to_string());
                    break;
                }
                other => {
                    drained.stopped = Some(format!("{other:?}"));
                    break;
                }
            }
        }
        drop(open);
        if !done.is_empty()
            && let Err(e) = self.file.remove(deadline, |id| done.contains(id))
        {
            // Stored but not forgotten: the next drain finds them recorded (same call ids).
            tracing::warn!(spool = %self.path().display(), error = %e, "could not forget the stored calls; the next drain finds them recorded");
        }
        drained
    }
}

fn describe(call: &UnsavedCall, error: &LogError) -> String {
    format!(
        "{} call {} of session {} made at {}: {error}",
        call.tool.name(),
        call.call_id.as_deref().unwrap_or("(no call id)"),
        call.session,
        call.at
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // test code
mod tests {
    use super::*;
    use planlog_core::testkit::{FaultyLog, sid};
    use planlog_core::{MemoryLog, Seq, TestEnv};

    fn plan(status: &str) -> String {
        json!({"steps": [{"id": "a", "content": "Parse", "status": status}]}).to_string()
    }

    /// `n` calls of session `s`, unsaved by a session on a log that fails every append.
    fn unsaved(s: &str, statuses: &[&str]) -> Vec<UnsavedCall> {
        let log = Arc::new(FaultyLog::new(MemoryLog::new()));
        log.fail_next(1000, false);
        let mut session = PlanSession::builder(log, Arc::new(TestEnv::default()))
            .open(&sid(s))
            .unwrap();
        for (i, status) in statuses.iter().enumerate() {
            let out = session.plan_write(Some(&format!("{s}-{i}")), None, &plan(status));
            assert!(matches!(out.status(), WriteStatus::Unsaved(_)));
        }
        session.take_unsaved()
    }

    fn statuses(log: &dyn EventLog, s: &str) -> Vec<String> {
        log.read(&sid(s), Seq::FIRST, None)
            .unwrap()
            .iter()
            .filter_map(|e| match &e.body {
                planlog_core::events::EventBody::PlanWritten(w) => {
                    Some(w.plan.items()[0].status.as_str().to_owned())
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn calls_are_stored_in_order_once_and_those_refused_for_good_stay() {
        let dir = tempfile::tempdir().unwrap();
        let spool = McpSpool::beside(&dir.path().join("store"));
        let deadline = Deadline::none();
        spool
            .push(&unsaved("gone", &["pending"]), &deadline)
            .unwrap();
        spool
            .push(&unsaved("kept", &["pending", "in_progress"]), &deadline)
            .unwrap();
        let census = spool.census().unwrap();
        assert_eq!(census.calls, 3);
        assert_eq!(census.sessions.len(), 2);

        let memory = Arc::new(MemoryLog::new());
        let log: Arc<dyn EventLog> = memory.clone();
        // "gone" was created elsewhere and deleted: its id is retired.
        PlanSession::builder(Arc::clone(&log), Arc::new(TestEnv::default()))
            .open(&sid("gone"))
            .unwrap()
            .plan_write(Some("x"), None, &plan("pending"))
            .durable()
            .unwrap();
        log.delete(&sid("gone")).unwrap();

        let drained = spool.drain(&log, None, &deadline);
        assert_eq!(drained.stored, 2);
        assert_eq!(drained.refused.len(), 1, "{:?}", drained.refused);
        assert!(drained.refused[0].contains("gone"), "{:?}", drained.refused);
        assert!(drained.stopped.is_none());
        let problems = drained.problems(spool.path());
        assert!(
            matches!(&problems[..], [p] if p.contains("refuses for good") && p.contains("gone")),
            "{problems:?}"
        );
        assert_eq!(statuses(&*log, "kept"), ["pending", "in_progress"]);
        // The refused call is kept, never dropped; draining again stores nothing twice.
        let census = spool.census().unwrap();
        assert_eq!((census.calls, census.sessions.len()), (1, 1));
        let again = spool.drain(&log, None, &deadline);
        assert_eq!((again.stored, again.refused.len()), (0, 1));
        assert_eq!(statuses(&*log, "kept"), ["pending", "in_progress"]);
    }

    #[test]
    fn a_store_that_still_fails_stops_the_drain_and_keeps_every_call() {
        let dir = tempfile::tempdir().unwrap();
        let spool = McpSpool::beside(&dir.path().join("store"));
        let deadline = Deadline::none();
        spool
            .push(&unsaved("s", &["pending", "in_progress"]), &deadline)
            .unwrap();
        let faulty = Arc::new(FaultyLog::new(MemoryLog::new()));
        faulty.fail_next(1000, false);
        let log: Arc<dyn EventLog> = faulty.clone();
        let drained = spool.drain(&log, None, &deadline);
        assert_eq!(drained.stored, 0);
        assert!(drained.stopped.is_some());
        assert_eq!(spool.census().unwrap().calls, 2);
        assert_eq!(
            faulty.inner().head(&sid("s")).unwrap(),
            None,
            "nothing stored behind the spool's back"
        );
        faulty.fail_next(0, false);
        let drained = spool.drain(&log, None, &deadline);
        assert_eq!(drained.stored, 2);
        assert!(spool.looks_empty());
        assert_eq!(statuses(&*log, "s"), ["pending", "in_progress"]);
    }

    #[test]
    fn a_cut_line_is_reported_and_never_read_as_a_call() {
        let dir = tempfile::tempdir().unwrap();
        let spool = McpSpool::beside(&dir.path().join("store"));
        let deadline = Deadline::none();
        spool.push(&unsaved("s", &["pending"]), &deadline).unwrap();
        // A write cut part way: half a line.
        let text = std::fs::read_to_string(spool.path()).unwrap();
        let cut = &text.lines().nth(1).unwrap()[..40];
        std::fs::write(spool.path(), format!("{text}{cut}")).unwrap();
        let census = spool.census().unwrap();
        assert_eq!((census.calls, census.torn), (1, 1));
        let log: Arc<dyn EventLog> = Arc::new(MemoryLog::new());
        let drained = spool.drain(&log, None, &deadline);
        assert_eq!((drained.stored, drained.torn), (1, 1));
        assert!(
            matches!(&drained.problems(spool.path())[..], [p] if p.contains("cut by a failed write")),
            "{drained:?}"
        );
        assert_eq!(statuses(&*log, "s"), ["pending"]);
    }
}
