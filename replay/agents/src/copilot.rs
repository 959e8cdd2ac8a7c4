//! planlog inside GitHub Copilot CLI, through its hooks (a file of planlog's own,
//! `.github/hooks/planlog.json` in the project or `~/.copilot/hooks/planlog.json`).
//!
//! Copilot has no plan tool: its model keeps the todo list in a per-session SQLite database
//! that its `sql` tool edits (`todos(id, title, description, status, …)` and
//! `todo_deps(todo_id, depends_on)`, statuses `pending`, `in_progress`, `done`, `blocked`).
//! So after each `sql` call that names one of those tables (`postToolUse`), the hook reads the
//! table as it stands, read-only, and records that list with Copilot's own ids and
//! dependencies, in `cp-<session id>`; a call that changed nothing records nothing. The
//! snapshot is taken when the hook runs and kept in the hook input ([`SNAPSHOT_FIELD`]), so a
//! call spooled and stored later records what the table held then.
//!
//! Copilot's hook payloads are camelCase without the event's name (`sessionId`, `toolName`,
//! `toolArgs`, `toolResult`): planlog's hook command names the event (`--event postToolUse`)
//! and [`normalize`] turns the payload into Claude Code's field names for [`crate::hook`].
//!
//! Not confirmed by a primary source (REFERENCE-AGENTS.md §4.4; no session runs here without a
//! GitHub login): the database's path ([`database`], `session-state/<id>/session.db`), the
//! table's columns beyond `id`, `title` and `status` (read by name when present), and the
//! `sql` tool's argument names (any argument naming a table counts).
//!
//! Enforcing (`planlog install copilot --enforce`, a `preToolUse` hook): a `sql` call on the
//! todo tables is run first on a copy of the database ([`todos_after`]), and the list it would
//! leave is judged against the table as it stands ([`refusal`]): the table is the list, so no
//! catch-up is needed. A refusal is Copilot's `permissionDecision: "deny"`, its reason given
//! to the model; a call planlog cannot run on a copy is allowed, and recorded once it ran. Copilot ignores what
//! `sessionStart` and `preCompact` hooks print: a compaction is recorded, and the plan goes
//! back at the next `notification` (Copilot idle, or asking a permission), the one event
//! whose output (`additionalContext`) reaches the model.

use std::path::{Path, PathBuf};

use planlog_core::events::{ToolCall, ToolCallResult};
use planlog_core::rules::{Rejection, anti_cheat_breaches};
use planlog_core::{ItemId, Plan, PlanItem, PlanStatus};
use planlog_import::{Op, Record, Todo};
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value, json};

use crate::hook::{Entry, Target};

/// The tool whose calls a Copilot hook looks at.
pub const PLAN_TOOLS: [&str; 1] = ["sql"];

/// The events planlog's hooks file handles, in Copilot's spelling.
pub const EVENTS: [&str; 4] = ["postToolUse", "preCompact", "notification", "sessionEnd"];

/// The file install writes in Copilot's hooks folder.
pub const HOOKS_FILE: &str = "planlog.json";

/// How long Copilot waits for planlog's hook, in seconds (Copilot's unit).
pub const TIMEOUT_SEC: u64 = 10;

/// The hook input field that carries the todo list read after a `sql` call.
pub const SNAPSHOT_FIELD: &str = "todos_now";

/// The hooks file install writes: Copilot's format (`version` 1, flat handlers run by
/// `bash`, times in seconds), one handler per event of [`EVENTS`] (and `preToolUse` when
/// `enforce`), each running `command` (a shell command line) with `--event <event>`, since
/// Copilot's payloads do not name it.
pub fn hooks_file(command: &str, enforce: bool) -> String {
    let guard = enforce.then_some("preToolUse");
    let hooks: Map<String, Value> = EVENTS
        .iter()
        .copied()
        .chain(guard)
        .map(|event| {
            (
                event.to_owned(),
                json!([{"type": "command", "bash": format!("{command} --event {event}"),
                    "timeoutSec": TIMEOUT_SEC}]),
            )
        })
        .collect();
    let file = json!({"version": 1, "hooks": hooks});
    // A JSON value always serializes.
    let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
    text.push('\n');
    text
}

/// Whether `text` is a hooks file planlog wrote: every handler in it runs planlog's Copilot
/// hook (install replaces and uninstall removes only those).
pub fn is_planlog_hooks_file(text: &str) -> bool {
    let Ok(file) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    let Some(hooks) = file.get("hooks").and_then(Value::as_object) else {
        return false;
    };
    let mut handlers = hooks
        .values()
        .flat_map(|list| list.as_array().map(Vec::as_slice).unwrap_or_default())
        .peekable();
    handlers.peek().is_some()
        && handlers.all(|h| {
            h.get("bash").and_then(Value::as_str).is_some_and(|c| {
                crate::settings::is_planlog_command(c) && c.contains(" hook copilot")
            })
        })
}

/// Copilot's payload for `event` in Claude Code's field names: `session_id`, `tool_name`,
/// `tool_input` (`toolArgs`, parsed when it is a JSON string), `tool_response`
/// (`toolResult`), `transcript_path`, and `hook_event_name` set to `event` (Claude Code's
/// capitalisation: `PostToolUse`). A payload that names its event already (Copilot's "VS Code
/// compatible" spelling) keeps it. Everything else is kept.
pub fn normalize(mut payload: Value, event: Option<&str>) -> Value {
    let Some(obj) = payload.as_object_mut() else {
        return payload;
    };
    for (from, to) in [
        ("sessionId", "session_id"),
        ("toolName", "tool_name"),
        ("toolResult", "tool_response"),
        ("transcriptPath", "transcript_path"),
    ] {
        if !obj.contains_key(to)
            && let Some(v) = obj.remove(from)
        {
            obj.insert(to.to_owned(), v);
        }
    }
    if !obj.contains_key("tool_input")
        && let Some(args) = obj.remove("toolArgs")
    {
        let parsed = match &args {
            Value::String(s) => serde_json::from_str(s).unwrap_or(args),
            _ => args,
        };
        obj.insert("tool_input".to_owned(), parsed);
    }
    if !obj.contains_key("hook_event_name")
        && let Some(event) = event
    {
        obj.insert(
            "hook_event_name".to_owned(),
            Value::String(capitalised(event)),
        );
    }
    payload
}

/// `postToolUse` as Claude Code spells it: `PostToolUse`.
fn capitalised(event: &str) -> String {
    let mut chars = event.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Whether a `sql` call's input names Copilot's todo tables (`todos`, `todo_deps`), in any
/// argument and any case.
pub fn touches_todos(input: &Value) -> bool {
    input.to_string().to_ascii_lowercase().contains("todo")
}

/// Copilot's folder: `$COPILOT_HOME`, else `~/.copilot`.
pub fn home(env_home: Option<&Path>, copilot_home: Option<&Path>) -> Option<PathBuf> {
    copilot_home
        .map(Path::to_path_buf)
        .or_else(|| env_home.map(|h| h.join(".copilot")))
}

/// The database of session `id` under Copilot's folder `home` (`None` for an id that is not
/// a plain name: it must not lead out of the folder).
pub fn database(home: &Path, id: &str) -> Option<PathBuf> {
    let plain = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    plain.then(|| home.join("session-state").join(id).join("session.db"))
}

/// Copilot's todo list in the database `db`, read-only: each row of `todos` (in the order
/// they were made) as `{id, title, description?, status, depends_on: [...]}`.
///
/// # Errors
/// What went wrong, in words for the hook's warning (no database, no `todos` table, a
/// database another process holds locked past a short wait).
pub fn todos_in(db: &Path) -> Result<Value, String> {
    if !db.is_file() {
        return Err(format!("{} is not there", db.display()));
    }
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("cannot open {}: {e}", db.display()))?;
    conn.busy_timeout(std::time::Duration::from_millis(300))
        .map_err(|e| e.to_string())?;
    let columns = column_names(&conn, "todos")?;
    if !columns.iter().any(|c| c == "id") {
        return Err(format!("{} has no todos table with an id", db.display()));
    }
    let order = if columns.iter().any(|c| c == "created_at") {
        "created_at, rowid"
    } else {
        "rowid"
    };
    let mut stmt = conn
        .prepare(&format!("SELECT * FROM todos ORDER BY {order}"))
        .map_err(|e| e.to_string())?;
    let mut rows = stmt.query([]).map_err(|e| e.to_string())?;
    let mut items: Vec<Map<String, Value>> = Vec::new();
    while let Some(row) = rows.next().map_err(|e| e.to_string())? {
        let mut item = Map::new();
        for (i, name) in columns.iter().enumerate() {
            if let Ok(Some(text)) = row.get::<_, Option<String>>(i) {
                item.insert(name.clone(), Value::String(text));
            }
        }
        item.insert("depends_on".to_owned(), json!([]));
        items.push(item);
    }
    if column_names(&conn, "todo_deps")?
        .iter()
        .any(|c| c == "depends_on")
    {
        let mut stmt = conn
            .prepare("SELECT todo_id, depends_on FROM todo_deps ORDER BY rowid")
            .map_err(|e| e.to_string())?;
        let deps = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| e.to_string())?;
        for dep in deps {
            let (todo, on) = dep.map_err(|e| e.to_string())?;
            if let Some(Value::Array(list)) = items
                .iter_mut()
                .find(|i| i.get("id").and_then(Value::as_str) == Some(todo.as_str()))
                .and_then(|i| i.get_mut("depends_on"))
            {
                list.push(Value::String(on));
            }
        }
    }
    Ok(Value::Array(items.into_iter().map(Value::Object).collect()))
}

/// The statements of a `sql` call: its `query` (or `sql`, `statement`) argument, else its only
/// text argument.
pub fn statements(input: &Value) -> Option<&str> {
    let obj = input.as_object()?;
    ["query", "sql", "statement"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str))
        .or_else(|| {
            let mut texts = obj.values().filter_map(Value::as_str);
            match (texts.next(), texts.next()) {
                (Some(only), None) => Some(only),
                _ => None,
            }
        })
}

/// How long the statements of a call are given on the copy before planlog gives up judging it.
const SIMULATION_BUDGET: std::time::Duration = std::time::Duration::from_millis(500);

/// Copilot's todo list as it would be after the `sql` call `input` ran on the database `db`:
/// the statements run on a copy in a temporary folder (the database and its write-ahead log),
/// where only reading and changing the copy's own tables is allowed (no `ATTACH`, no
/// `PRAGMA`, no `VACUUM`, no virtual tables), for at most half a second, then read as
/// [`todos_in`] reads a database. The real database is only read.
///
/// # Errors
/// Why it cannot say (no statements, statements that fail or do anything else, the time
/// spent): the call is then not judged.
pub fn todos_after(db: &Path, input: &Value) -> Result<Value, String> {
    use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
    let sql = statements(input).ok_or("the call names no statements")?;
    if sql.to_ascii_lowercase().contains("vacuum") {
        return Err("VACUUM is not run on a copy".to_owned());
    }
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary folder: {e}"))?;
    let copy = dir.path().join("session.db");
    std::fs::copy(db, &copy).map_err(|e| format!("cannot copy {}: {e}", db.display()))?;
    let wal = db.with_extension("db-wal");
    if wal.is_file() {
        std::fs::copy(&wal, copy.with_extension("db-wal"))
            .map_err(|e| format!("cannot copy {}: {e}", wal.display()))?;
    }
    {
        let mut conn = Connection::open_with_flags(
            &copy,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| e.to_string())?;
        conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_ATTACHED, 0)
            .map_err(|e| e.to_string())?;
        conn.authorizer(Some(|ctx: AuthContext<'_>| match ctx.action {
            AuthAction::Attach { .. }
            | AuthAction::Detach { .. }
            | AuthAction::Pragma { .. }
            | AuthAction::CreateVtable { .. }
            | AuthAction::DropVtable { .. }
            | AuthAction::Unknown { .. } => Authorization::Deny,
            _ => Authorization::Allow,
        }))
        .map_err(|e| e.to_string())?;
        let started = std::time::Instant::now();
        conn.progress_handler(1000, Some(move || started.elapsed() > SIMULATION_BUDGET))
            .map_err(|e| e.to_string())?;
        conn.execute_batch(sql)
            .map_err(|e| format!("the statements do not run on a copy: {e}"))?;
    }
    todos_in(&copy)
}

/// The columns of `table` (none when there is no such table).
fn column_names(conn: &Connection, table: &str) -> Result<Vec<String>, String> {
    let mut stmt = conn
        .prepare("SELECT name FROM pragma_table_info(?1)")
        .map_err(|e| e.to_string())?;
    let names = stmt
        .query_map([table], |r| r.get::<_, String>(0))
        .map_err(|e| e.to_string())?;
    names
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())
}

/// The items of a snapshot [`todos_in`] read: the title as the text, Copilot's id, its
/// dependencies as blockers; `done` is completed, `blocked` pending (noted).
pub fn todos_of(snapshot: &Value, notes: &mut Vec<String>) -> Vec<Todo> {
    let text = |t: &Value, key: &str| {
        t.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    snapshot
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|t| {
            let id = text(t, "id");
            let status = match text(t, "status").as_deref() {
                Some("done" | "completed") => PlanStatus::Completed,
                Some("in_progress") => PlanStatus::InProgress,
                Some("cancelled") => PlanStatus::Cancelled,
                Some("pending") | None => PlanStatus::Pending,
                Some(other) => {
                    notes.push(format!(
                        "todo {:?}: status {other:?} kept as pending",
                        id.as_deref().unwrap_or_default()
                    ));
                    PlanStatus::Pending
                }
            };
            let blocked_by: Vec<String> = t
                .get("depends_on")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .filter_map(|d| d.as_str().map(str::to_owned))
                .collect();
            Todo {
                content: text(t, "title").or_else(|| id.clone()).unwrap_or_default(),
                id,
                status,
                description: text(t, "description"),
                blocked_by: (!blocked_by.is_empty()).then_some(blocked_by),
                ..Todo::default()
            }
        })
        .collect()
}

/// The items of a snapshot, with Copilot's ids (a row whose id is no item id is left out).
fn items_of(snapshot: &Value) -> Vec<PlanItem> {
    todos_of(snapshot, &mut Vec::new())
        .into_iter()
        .filter_map(|t| {
            let id = ItemId::new(t.id?).ok()?;
            Some(PlanItem::new(id, t.content, t.status))
        })
        .collect()
}

/// planlog's refusal of a `sql` call that would take Copilot's list from `now` to `after`
/// (snapshots as [`todos_in`] reads them): a bulk completion, or a cancelled item completed.
pub fn refusal(now: &Value, after: &Value) -> Option<Rejection> {
    let before = Plan::from_items(items_of(now));
    anti_cheat_breaches(&before, &items_of(after))
        .into_iter()
        .find_map(|b| b.rejection())
}

/// The record of a `sql` call that ran (`PostToolUse` with the snapshot the hook read; `None`
/// for any other input): the list as Copilot's table holds it, with the call as sent and the
/// text the model read.
pub(crate) fn ran(entry: &Entry, target: &Target, tool: &str) -> Option<Record> {
    let input = &entry.input;
    if tool != "sql" || input.hook_event_name != "PostToolUse" {
        return None;
    }
    let snapshot = input.todos_now.as_ref()?;
    let mut notes = Vec::new();
    let todos = todos_of(snapshot, &mut notes);
    let mut call = entry.call(target, Op::Snapshot(todos));
    call.notes = notes;
    call.tool_call = Some(ToolCall {
        tool: tool.to_owned(),
        arguments: input.arguments(),
        result: input.tool_response.as_ref().map(|r| ToolCallResult {
            is_error: false,
            text: Some(
                r.get("textResultForLlm")
                    .and_then(Value::as_str)
                    .map_or_else(|| r.to_string(), str::to_owned),
            ),
            structured: None,
        }),
    });
    Some(Record::Call(call))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;

    #[test]
    fn camel_case_payloads_take_claude_codes_names_and_the_event() {
        let v = normalize(
            json!({"sessionId": "s1", "timestamp": 1764583511204u64, "cwd": "/src/app",
                "toolName": "sql", "toolArgs": "{\"query\":\"UPDATE todos SET status = 'done'\"}",
                "toolResult": {"resultType": "success", "textResultForLlm": "1 row affected"}}),
            Some("postToolUse"),
        );
        assert_eq!(v["hook_event_name"], "PostToolUse");
        assert_eq!(v["session_id"], "s1");
        assert_eq!(v["tool_name"], "sql");
        assert_eq!(v["tool_input"]["query"], "UPDATE todos SET status = 'done'");
        assert_eq!(v["tool_response"]["textResultForLlm"], "1 row affected");
        // An object stays an object; a named event stays.
        let v = normalize(
            json!({"hook_event_name": "PostToolUse", "sessionId": "s", "toolArgs": {"query": "x"}}),
            Some("preCompact"),
        );
        assert_eq!(v["hook_event_name"], "PostToolUse");
        assert_eq!(v["tool_input"]["query"], "x");
    }

    #[test]
    fn a_call_is_judged_on_what_it_would_leave_the_real_table_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("session.db");
        Connection::open(&db)
            .unwrap()
            .execute_batch(
                "PRAGMA journal_mode = WAL;
                 CREATE TABLE todos (id TEXT PRIMARY KEY, title TEXT, status TEXT);
                 INSERT INTO todos VALUES ('a', 'A', 'pending'), ('b', 'B', 'pending'), ('c', 'C', 'cancelled');",
            )
            .unwrap();
        let now = todos_in(&db).unwrap();
        let after = |query: &str| todos_after(&db, &json!({ "query": query })).unwrap();
        let both = after("UPDATE todos SET status = 'done' WHERE id IN ('a', 'b')");
        let r = refusal(&now, &both).unwrap();
        assert_eq!(r.code, planlog_core::rules::RejectionCode::BulkCompletion);
        assert!(
            refusal(
                &now,
                &after("UPDATE todos SET status = 'done' WHERE id = 'a'")
            )
            .is_none()
        );
        let revived = after("UPDATE todos SET status = 'done' WHERE id = 'c'");
        assert_eq!(
            refusal(&now, &revived).unwrap().code,
            planlog_core::rules::RejectionCode::CancelledToCompleted
        );
        // The real table (and its write-ahead log) is as it was.
        assert_eq!(todos_in(&db).unwrap(), now);
        // The statements' argument under another name, or the only text argument.
        assert_eq!(statements(&json!({"sql": "x"})), Some("x"));
        assert_eq!(statements(&json!({"db": 1, "stmt": "y"})), Some("y"));
        assert_eq!(statements(&json!({"a": "x", "b": "y"})), None);
        // What cannot be run on a copy says why.
        assert!(todos_after(&db, &json!({"query": "NOT SQL"})).is_err());
        assert!(todos_after(&db, &json!({"query": "PRAGMA writable_schema = 1"})).is_err());
        assert!(todos_after(&db, &json!({})).is_err());
    }

    #[test]
    fn a_session_id_that_is_not_a_plain_name_has_no_database() {
        let home = Path::new("/h/.copilot");
        assert_eq!(
            database(home, "a3c1-e2f0").unwrap(),
            Path::new("/h/.copilot/session-state/a3c1-e2f0/session.db")
        );
        for bad in ["", "..", "../x", "a/b", "a b"] {
            assert!(database(home, bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_table_is_read_with_its_ids_statuses_and_dependencies() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("session.db");
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE todos (id TEXT PRIMARY KEY, title TEXT, description TEXT, status TEXT, created_at TEXT, updated_at TEXT);
             CREATE TABLE todo_deps (todo_id TEXT, depends_on TEXT);
             INSERT INTO todos VALUES ('parser-tests', 'Write parser tests', NULL, 'done', '2026-12-01 10:00:00', NULL);
             INSERT INTO todos VALUES ('parser', 'Implement parser', 'the whole grammar', 'in_progress', '2026-12-01 10:00:01', NULL);
             INSERT INTO todos VALUES ('ship', 'Ship it', NULL, 'blocked', '2026-12-01 10:00:02', NULL);
             INSERT INTO todo_deps VALUES ('ship', 'parser');
             INSERT INTO todo_deps VALUES ('parser', 'parser-tests');",
        )
        .unwrap();
        drop(conn);
        let snapshot = todos_in(&db).unwrap();
        let mut notes = Vec::new();
        let todos = todos_of(&snapshot, &mut notes);
        let seen: Vec<(&str, &str, PlanStatus, Option<Vec<String>>)> = todos
            .iter()
            .map(|t| {
                (
                    t.id.as_deref().unwrap(),
                    t.content.as_str(),
                    t.status,
                    t.blocked_by.clone(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                (
                    "parser-tests",
                    "Write parser tests",
                    PlanStatus::Completed,
                    None
                ),
                (
                    "parser",
                    "Implement parser",
                    PlanStatus::InProgress,
                    Some(vec!["parser-tests".to_owned()])
                ),
                (
                    "ship",
                    "Ship it",
                    PlanStatus::Pending,
                    Some(vec!["parser".to_owned()])
                ),
            ]
        );
        assert_eq!(todos[1].description.as_deref(), Some("the whole grammar"));
        assert_eq!(notes, ["todo \"ship\": status \"blocked\" kept as pending"]);
        // Read-only: the file is as it was; a file that is no database, or none, is an error.
        assert!(todos_in(&dir.path().join("none.db")).is_err());
        std::fs::write(dir.path().join("junk.db"), "not sqlite").unwrap();
        assert!(todos_in(&dir.path().join("junk.db")).is_err());
        let empty = dir.path().join("empty.db");
        Connection::open(&empty)
            .unwrap()
            .execute_batch("CREATE TABLE other (x)")
            .unwrap();
        assert!(todos_in(&empty).unwrap_err().contains("no todos table"));
    }
}
