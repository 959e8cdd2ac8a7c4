//! Putting the plan back into an agent's context: after a compaction, a resume, a clear or a
//! fork (Claude Code's and Codex's `SessionStart`; Gemini CLI's `SessionStart`, or the next
//! `BeforeAgent` after `/compress`; opencode's compaction; Cursor's `sessionStart`), and, when
//! installed for it, before every prompt (`UserPromptSubmit`), as the hook's context
//! ([`output`], in each agent's shape).
//!
//! The model goes on with the tool it has, so the text carries what that tool needs
//! ([`restore_text`]): progress; every task with the `#id` `TaskUpdate` takes; for a
//! whole-list tool (`TodoWrite`), the whole list, completed items included, since a model
//! that does not see them drops them from its next list. Items whose ids are decimal numbers
//! are tasks (Claude Code numbers its tasks); the others were set by whole lists (their ids
//! are planlog's and mean nothing to the model, so none is shown). Gemini CLI's tracker tasks
//! (their metadata says `tracker`) are tasks too, with the tracker's ids.
//!
//! A fork starts a new Claude Code session id. Its transcript begins with the parent's lines,
//! which carry the parent's session id: when the fork has no plan of its own yet and its
//! parent has one, the fork's session starts with the parent's plan (a spool
//! [`Kind::Fork`](super::spool::Kind::Fork) entry, written in order with every other hook
//! write). The transcript is read within bounds: at most [`FORK_LINES`] lines and
//! [`FORK_BYTES`] bytes of a regular file, never past the deadline.

use std::io::{BufRead, Read};

use planlog_core::events::EventBody;
use planlog_core::render::{PLAN_HEADER, item_line};
use planlog_core::{EventLog, LogError, Plan, PlanItem, PlanStatus, Seq, SessionId};
use serde_json::{Value, json};

use super::agent::Agent;
use super::capture::Target;
use super::deadline::Deadline;
use super::input::HookInput;
use super::spool::Compaction;
use planlog_import::SourceFormat;

/// Claude Code caps `additionalContext` at this many characters.
pub const MAX_CONTEXT_CHARS: usize = 10_000;

/// How many lines of a fork's transcript are read for its parent's session id.
pub const FORK_LINES: usize = 5_000;

/// How many bytes of a fork's transcript are read at most.
pub const FORK_BYTES: u64 = 8 * 1024 * 1024;

/// How many bytes at the end of a transcript are read for its last compaction.
pub const COMPACT_TAIL_BYTES: u64 = 1024 * 1024;

/// The context for `target`'s session: [`restore_text`] of its plan, when an item is active,
/// with the seq whose plan it shows.
///
/// # Errors
/// Store errors.
pub fn context(log: &dyn EventLog, target: &Target) -> Result<Option<(String, Seq)>, LogError> {
    let id = target.session_id();
    let Some(head) = log.head(&id)? else {
        return Ok(None);
    };
    let plan = log.state_at(&id, head.seq)?.plan;
    Ok(restore_text(&plan, &id.to_string()).map(|t| (t, head.seq)))
}

/// How many of a session's last events [`compacted_since_restored`] reads.
pub const RECENT_EVENTS: u64 = 64;

/// Whether `session`'s context was compacted since its plan was last put back: among its
/// last [`RECENT_EVENTS`] events, a compaction comes after every restore, in the log and in
/// time (Gemini CLI's next prompt after a compression; one read from the recording only now
/// may be older than a restore already made, at a resume).
///
/// # Errors
/// Store errors.
pub fn compacted_since_restored(log: &dyn EventLog, session: &SessionId) -> Result<bool, LogError> {
    let Some(head) = log.head(session)? else {
        return Ok(false);
    };
    let from =
        Seq::new(head.seq.get().saturating_sub(RECENT_EVENTS - 1).max(1)).unwrap_or(Seq::FIRST);
    let recent = log.read(session, from, Some(head.seq))?;
    let restored = recent
        .iter()
        .rev()
        .find(|e| matches!(e.body, EventBody::PlanRestored(_)));
    Ok(recent.iter().any(|e| {
        matches!(e.body, EventBody::ContextCompacted(_))
            && restored.is_none_or(|r| e.seq > r.seq && e.at >= r.at)
    }))
}

/// How old a boundary line may be and still be the compaction a hook was called for.
pub const COMPACT_FRESH: std::time::Duration = std::time::Duration::from_secs(300);

/// The compaction a `SessionStart` with source `compact` follows, as the transcript's last
/// `compact_boundary` line of the session says it, read within bounds (a regular file, its
/// last [`COMPACT_TAIL_BYTES`], the deadline). A line whose `uuid` `known` says is recorded
/// already (an earlier compaction), or older than [`COMPACT_FRESH`], is not this
/// compaction's. Without the line, a compaction that says nothing more: Claude Code 2.1
/// writes the line only after its `SessionStart` hooks have run, so a hook does not see it
/// (a later import of the transcript knows the compaction by its time, see
/// [`planlog_import::write_records`]).
pub fn last_compaction(
    input: &HookInput,
    deadline: &Deadline,
    known: &dyn Fn(&str) -> bool,
    now: planlog_core::Timestamp,
) -> Compaction {
    match read_last_compaction(input, deadline) {
        Some(found)
            if !found.compaction.boundary.as_deref().is_some_and(known)
                && found.at.is_none_or(|at| {
                    now.as_millis().saturating_sub(at.as_millis())
                        <= i64::try_from(COMPACT_FRESH.as_millis()).unwrap_or(i64::MAX)
                }) =>
        {
            found.compaction
        }
        _ => Compaction::default(),
    }
}

/// A boundary line read, with its time.
struct Boundary {
    compaction: Compaction,
    at: Option<planlog_core::Timestamp>,
}

/// The transcript's last boundary line of the session, when it has one.
fn read_last_compaction(input: &HookInput, deadline: &Deadline) -> Option<Boundary> {
    let path = input.transcript_path.as_deref()?;
    let mut file = planlog_import::open_regular(std::path::Path::new(path)).ok()?;
    let meta = file.metadata().ok()?;
    let from = meta.len().saturating_sub(COMPACT_TAIL_BYTES);
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(from)).ok()?;
    let mut reader = std::io::BufReader::new(file.take(COMPACT_TAIL_BYTES));
    let mut line = Vec::new();
    let mut found = None;
    loop {
        if deadline.passed() {
            return found;
        }
        line.clear();
        if reader.read_until(b'\n', &mut line).ok()? == 0 {
            return found;
        }
        // Most lines are not boundaries: only those that name one are parsed.
        if !line.windows(16).any(|w| w == b"compact_boundary") {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        if v.get("subtype").and_then(Value::as_str) != Some("compact_boundary")
            || v.get("sessionId").and_then(Value::as_str) != Some(input.session_id.as_str())
        {
            continue;
        }
        let meta = v.get("compactMetadata").unwrap_or(&Value::Null);
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        found = Some(Boundary {
            compaction: Compaction {
                boundary: text(&v, "uuid"),
                trigger: text(meta, "trigger"),
                tokens_before: meta.get("preTokens").and_then(Value::as_u64),
                tokens_after: meta.get("postTokens").and_then(Value::as_u64),
            },
            at: text(&v, "timestamp").and_then(|t| planlog_core::Timestamp::parse(&t).ok()),
        });
    }
}

/// Whether an item is a task of Claude Code's Tasks (its id a decimal number) rather than an
/// item of a whole list.
fn is_task(item: &PlanItem) -> bool {
    let id = item.id.as_str();
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())) || is_tracker_task(item)
}

/// Whether an item is a task of Gemini CLI's tracker (its metadata says so).
fn is_tracker_task(item: &PlanItem) -> bool {
    item.metadata
        .as_ref()
        .is_some_and(|m| m.contains_key("tracker"))
}

/// An item's mark: harness9's (`[>]`), or for an agent that escapes angle brackets in what a
/// hook adds (Gemini CLI) the words its own tool shows (`[in_progress]`).
fn mark(status: PlanStatus, words: bool) -> &'static str {
    match (status, words) {
        (PlanStatus::Pending, false) => "[ ]",
        (PlanStatus::InProgress, false) => "[>]",
        (PlanStatus::Completed, false) => "[x]",
        (PlanStatus::Cancelled, false) => "[-]",
        (PlanStatus::Pending, true) => "[pending]",
        (PlanStatus::InProgress, true) => "[in_progress]",
        (PlanStatus::Completed, true) => "[completed]",
        (PlanStatus::Cancelled, true) => "[cancelled]",
    }
}

/// The agent whose whole-list tool a restored session's model goes on with, by the session
/// id's prefix.
fn agent_of(session: &str) -> Agent {
    Agent::ALL
        .into_iter()
        .filter(|a| *a != Agent::ClaudeCode)
        .find(|a| session.starts_with(&format!("{}-", a.format().session_prefix())))
        .unwrap_or(Agent::ClaudeCode)
}

/// `text` as Gemini CLI shows it to the model: it escapes `<` and `>` in what a hook adds.
fn escaped(text: &str) -> String {
    text.replace('<', "&lt;").replace('>', "&gt;")
}

/// The plan as a model needs it to go on with its own plan tool, at most
/// [`MAX_CONTEXT_CHARS`] characters (`session` names where the whole plan is when it is
/// cut); `None` when no item is active (nothing to go on with).
///
/// The header, a progress line, then one section per kind of item: tasks with their ids
/// (`[>] #2 Fetch the data`), and whole-list items with the instruction to send them all
/// again, named by the session's agent (`TodoWrite`; `update_plan` for a Codex session,
/// `cx-…`; `write_todos` for a Gemini CLI session, `gm-…`, whose marks are words and whose
/// angle brackets are escaped, as Gemini shows them to the model). Each item is one line of its content (model text cannot forge a line) and its
/// annotation (open blockers, owner). When everything does not fit, active items come first
/// and completed ones are counted.
pub fn restore_text(plan: &Plan, session: &str) -> Option<String> {
    let agent = agent_of(session);
    let words = agent == Agent::Gemini;
    let text = restore_text_for(plan, session, agent, words)?;
    Some(if words { escaped(&text) } else { text })
}

fn restore_text_for(plan: &Plan, session: &str, agent: Agent, words: bool) -> Option<String> {
    let progress = plan.progress();
    if progress.active() == 0 {
        return None;
    }
    let mut head = format!(
        "{PLAN_HEADER}\nProgress: {} of {} done ({} in progress, {} pending",
        progress.completed,
        progress.total(),
        progress.in_progress,
        progress.pending
    );
    if progress.cancelled > 0 {
        head.push_str(&format!(", {} cancelled", progress.cancelled));
    }
    head.push_str(").");
    // Cursor's todo items have ids the model uses (merge: true names them), Copilot's are its
    // table's keys: all shown, in one list.
    let own_ids = matches!(agent, Agent::Cursor | Agent::Copilot);
    let (tasks, list): (Vec<&PlanItem>, Vec<&PlanItem>) =
        plan.items().iter().partition(|i| is_task(i) && !own_ids);
    let show_id = |item: &PlanItem| is_task(item) || own_ids;
    let line = |item: &PlanItem| {
        let id = if show_id(item) {
            format!("#{} ", item.id)
        } else {
            String::new()
        };
        format!("{} {id}{}", mark(item.status, words), item_line(plan, item))
    };
    let whole_list = match agent {
        Agent::Codex => {
            "The whole plan (update_plan replaces the plan: send every step again, completed ones included, in this order):"
        }
        Agent::Gemini => {
            "The whole todo list (write_todos replaces the list: send every item again, completed ones included, in this order):"
        }
        Agent::Cursor => {
            "The todo list (TodoWrite with merge: true changes the items named by id; with merge: false it replaces the list, so send every item again, completed ones included):"
        }
        Agent::Opencode => {
            "The whole todo list (todowrite replaces the list: send every item again, completed ones included, in this order):"
        }
        Agent::Copilot => {
            "The todo list (your todos table, with its ids; change it with the sql tool):"
        }
        Agent::ClaudeCode => {
            "The whole todo list (TodoWrite replaces the list: send every item again, completed ones included, in this order):"
        }
    };
    let task_words = if agent == Agent::Gemini {
        "Tasks (tracker_update_task and tracker_get_task take the id, without #):"
    } else {
        "Tasks (TaskUpdate and TaskGet take the #id):"
    };
    let sections = [(tasks, task_words), (list, whole_list)];
    let full = sections.iter().filter(|(items, _)| !items.is_empty()).fold(
        head.clone(),
        |mut out, (items, title)| {
            out.push('\n');
            out.push_str(title);
            for item in items {
                out.push('\n');
                out.push_str(&line(item));
            }
            out
        },
    );
    if full.chars().count() <= MAX_CONTEXT_CHARS {
        return Some(full);
    }
    // Too long: active items first, then completed ones while they fit, the rest counted.
    let tail = |left: usize| {
        format!(
            "\n… {left} finished items not shown (cut at {MAX_CONTEXT_CHARS} characters; the whole plan: planlog show {session})"
        )
    };
    let mut out = head;
    let mut shown = 0;
    let finished = progress.completed + progress.cancelled;
    for active in [true, false] {
        for item in plan
            .items()
            .iter()
            .filter(|i| i.status.is_active() == active)
        {
            let next = format!("\n{}", line(item));
            let room = MAX_CONTEXT_CHARS.saturating_sub(tail(finished).chars().count());
            if out.chars().count() + next.chars().count() > room {
                let cut: String = next
                    .chars()
                    .take(room.saturating_sub(out.chars().count()))
                    .collect();
                if active {
                    out.push_str(&cut);
                }
                continue;
            }
            out.push_str(&next);
            if !active {
                shown += 1;
            }
        }
    }
    out.push_str(&tail(finished - shown));
    Some(out)
}

/// The hook output that adds `text` to `agent`'s model context for `event`: Cursor reads a
/// top-level `additional_context`, Copilot (its `notification`) `additionalContext`; the
/// others Claude Code's `hookSpecificOutput`.
pub fn output(agent: Agent, event: &str, text: &str) -> String {
    match agent {
        Agent::Cursor => json!({ "additional_context": text }).to_string(),
        Agent::Copilot => json!({ "additionalContext": text }).to_string(),
        _ => json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
            .to_string(),
    }
}

/// The parent session id of a forked session: the first `sessionId` in its transcript that
/// is not its own, read within bounds (a regular file, [`FORK_LINES`] lines, [`FORK_BYTES`]
/// bytes, the deadline).
pub fn fork_parent(input: &HookInput, deadline: &Deadline) -> Option<String> {
    let path = input.transcript_path.as_deref()?;
    let file = planlog_import::open_regular(std::path::Path::new(path)).ok()?;
    let mut reader = std::io::BufReader::new(file.take(FORK_BYTES));
    let mut line = Vec::new();
    for _ in 0..FORK_LINES {
        if deadline.passed() {
            return None;
        }
        line.clear();
        if reader.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        let Ok(v) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        if let Some(s) = v
            .get("sessionId")
            .and_then(Value::as_str)
            .filter(|s| *s != input.session_id)
        {
            return Some(s.to_owned());
        }
    }
    None
}

/// Where a fork that has no plan yet starts: its parent's session and last seq, when the
/// parent has a plan. `None` when there is nothing to continue from (not a fork planlog can
/// place, the fork's session has begun, the parent has no plan).
///
/// # Errors
/// Store errors.
pub fn fork_start(
    log: &dyn EventLog,
    input: &HookInput,
    target: &Target,
    deadline: &Deadline,
) -> Result<Option<(SessionId, Seq)>, LogError> {
    if target.format != SourceFormat::ClaudeCode || log.head(&target.session_id())?.is_some() {
        return Ok(None);
    }
    let Some(parent) = fork_parent(input, deadline) else {
        return Ok(None);
    };
    let parent = Target::main(&parent).session_id();
    let Some(head) = log.head(&parent)? else {
        return Ok(None);
    };
    if log.state_at(&parent, head.seq)?.plan.is_empty() {
        return Ok(None);
    }
    Ok(Some((parent, head.seq)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use planlog_core::testkit::item;

    #[test]
    fn nothing_active_is_nothing_to_restore() {
        let plan = Plan::from_items(vec![item("1", "a", PlanStatus::Completed)]);
        assert_eq!(restore_text(&plan, "s"), None);
    }

    #[test]
    fn a_long_plan_keeps_every_active_item_and_counts_what_it_leaves_out() {
        let mut items: Vec<PlanItem> = (1..=150)
            .map(|n| {
                item(
                    &format!("t{n}"),
                    &format!("finished step {n} {}", "x".repeat(100)),
                    PlanStatus::Completed,
                )
            })
            .collect();
        items.push(item("t151", "still to do", PlanStatus::Pending));
        let text = restore_text(&Plan::from_items(items), "cc-s").unwrap();
        assert!(
            text.chars().count() <= MAX_CONTEXT_CHARS,
            "{}",
            text.chars().count()
        );
        assert!(text.contains("[ ] still to do"));
        assert!(text.contains("finished items not shown"), "{text}");
        assert!(text.contains("planlog show cc-s"));
    }
}
