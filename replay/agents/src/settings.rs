//! Installing planlog's hooks into an agent's hooks file, and taking them out again: Claude
//! Code's settings, Codex's `hooks.json` and Gemini CLI's `settings.json` share one shape.
//!
//! The shape: `{"hooks": {<event>: [{"matcher": "...", "hooks": [{"type": "command",
//! "command": "...", "timeout": N}]}]}}` (Gemini's timeout in milliseconds, with a `name`);
//! entries of every level merge, so planlog adds matcher groups of its own and never edits
//! anyone else's. A handler is planlog's only when its command is one install writes
//! ([`is_planlog_command`]): a program named `planlog`, then `hook <agent>`, then only options
//! planlog knows. Installing
//! removes planlog's handlers first and adds them again, so running it twice changes
//! nothing; uninstalling removes only planlog's handlers (and the groups, events and `hooks`
//! object that leaves empty). Everything else is kept as it was, keys in their order.
//!
//! Since Claude Code 2.1.233 the plan tools (TodoWrite, the Task tools) are not offered on
//! the newest models unless `CLAUDE_CODE_ENABLE_TODO_TOOLS` is `1`; without them a session
//! records nothing. Install sets it in the file's `env` (unless told to leave it) and says
//! what it was before ([`TodoTools`]), so uninstall can put it back ([`InstallRecord`]).

use serde::{Deserialize, Serialize};

use crate::claude_code::{Json, indentation};
use crate::hook::Agent;

/// The tools the tool hooks match.
pub const TOOL_MATCHER: &str = "TodoWrite|TaskCreate|TaskUpdate";

/// The `SessionStart` sources after which the plan goes back into the context.
pub const RESTORE_MATCHER: &str = "resume|clear|compact|fork";

/// The matcher of Codex's plan tool (an exact name: letters and `_` only).
pub const CODEX_TOOL_MATCHER: &str = "update_plan";

/// The `SessionStart` sources after which a Codex hook puts the plan back.
pub const CODEX_RESTORE_MATCHER: &str = "resume|clear|compact";

/// Seconds Claude Code gives one hook call before it gives up on it (a hook ends within 1 s).
pub const HOOK_TIMEOUT_SECONDS: u64 = 10;

/// The variable that turns Claude Code's plan tools on for the newest models (2.1.233+).
pub const TODO_TOOLS_VAR: &str = "CLAUDE_CODE_ENABLE_TODO_TOOLS";

/// The options `planlog hook claude-code` takes that carry a value.
const VALUE_OPTIONS: [&str; 2] = ["--db", "--event"];
/// The options `planlog hook claude-code` takes without a value.
const FLAG_OPTIONS: [&str; 2] = ["--enforce", "--audit-only"];

/// What to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSet {
    /// The command the agent runs (`planlog hook claude-code`, with options).
    pub command: String,
    /// Whose file: Claude Code's settings; Codex's `hooks.json` (the groups Codex needs:
    /// `update_plan`, SessionStart after a resume, a clear or a compaction; nothing but
    /// `hooks` added, since Codex refuses a file with any other top-level key); Gemini CLI's
    /// `settings.json` (`write_todos`, SessionStart, PreCompress, BeforeAgent, SessionEnd).
    pub agent: Agent,
    /// Block calls the rules refuse (a `PreToolUse` hook; the command carries `--enforce`).
    pub enforce: bool,
    /// Also restore the plan before every prompt (`UserPromptSubmit`).
    pub every_prompt: bool,
    /// Turn the plan tools on ([`TODO_TOOLS_VAR`] in `env`).
    pub todo_tools: bool,
}

/// Why a settings file is not changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// It is not JSON.
    #[error(
        "it is not valid JSON at line {line}, column {column} ({detail}); it was left as it is: fix it, then run this again"
    )]
    Malformed {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's words.
        detail: String,
    },
    /// Part of it has a shape Claude Code does not read either.
    #[error("{0}; it was left as it is")]
    Shape(String),
}

/// What install did to [`TODO_TOOLS_VAR`].
#[derive(Debug, Clone, PartialEq)]
pub enum TodoTools {
    /// Set to `"1"`; `before` is what it was (`None`: not there), `env_existed` whether the
    /// file had an `env` object.
    Set {
        /// The value before.
        before: Option<Json>,
        /// Whether `env` was there.
        env_existed: bool,
    },
    /// It was `"1"` already.
    AlreadyOn,
    /// Left as it is, as asked; its value (`None`: not there).
    Left(Option<Json>),
}

/// What install changed besides the hooks, kept beside the settings file
/// (`<file>.planlog-install`) so that uninstall can put it back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InstallRecord {
    /// [`TODO_TOOLS_VAR`] before install set it: `{"before": value or null, "env_existed":
    /// bool}`; absent when install did not set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub todo_tools: Option<serde_json::Value>,
}

/// A settings file with planlog's hooks.
#[derive(Debug, Clone, PartialEq)]
pub struct Installed {
    /// The new text.
    pub text: String,
    /// What became of [`TODO_TOOLS_VAR`].
    pub todo_tools: TodoTools,
}

/// Whether `command` is one `planlog install` writes: `<…/>planlog hook <agent>`
/// (`claude-code`, `codex`, `gemini`), then only `--db VALUE`, `--enforce`, `--audit-only`. A user's own script whose name merely
/// holds the words (`notify-planlog-hook claude-code.sh`) is not.
pub fn is_planlog_command(command: &str) -> bool {
    let Some(words) = shell_words(command) else {
        return false;
    };
    let [program, hook, agent, rest @ ..] = words.as_slice() else {
        return false;
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    if name != "planlog" || hook != "hook" || Agent::from_word(agent).is_none() {
        return false;
    }
    let mut rest = rest.iter();
    while let Some(word) = rest.next() {
        if VALUE_OPTIONS.contains(&word.as_str()) {
            if rest.next().is_none() {
                return false;
            }
        } else if !FLAG_OPTIONS.contains(&word.as_str()) {
            return false;
        }
    }
    true
}

/// The words of a command line as `sh` splits the forms install writes (plain words and
/// single-quoted ones); `None` for anything else (double quotes, variables, operators).
pub(crate) fn shell_words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            '"' | '$' | '`' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => return None,
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

fn handler(agent: Agent, command: &str) -> Json {
    Json::Array(vec![match agent {
        // Gemini names its hooks (in its trust prompt and `hooksConfig.disabled`) and counts
        // their time in milliseconds.
        Agent::Gemini => Json::object([
            ("name", Json::str("planlog")),
            ("type", Json::str("command")),
            ("command", Json::str(command)),
            ("timeout", Json::Number(crate::gemini::TIMEOUT_MS.into())),
        ]),
        Agent::ClaudeCode | Agent::Codex | Agent::Opencode | Agent::Cursor | Agent::Copilot => {
            Json::object([
                ("type", Json::str("command")),
                ("command", Json::str(command)),
                ("timeout", Json::Number(HOOK_TIMEOUT_SECONDS.into())),
            ])
        }
    }])
}

fn group(agent: Agent, matcher: Option<&str>, command: &str) -> Json {
    match matcher {
        Some(m) => Json::object([
            ("matcher", Json::str(m)),
            ("hooks", handler(agent, command)),
        ]),
        None => Json::object([("hooks", handler(agent, command))]),
    }
}

/// The hook events and matcher groups planlog installs: recording (`PostToolUse`,
/// `PostToolUseFailure`), restoring (`SessionStart`), storing what waits at the end
/// (`SessionEnd`), and, when asked, blocking (`PreToolUse`) and restoring before every prompt
/// (`UserPromptSubmit`).
pub fn hooks(set: &HookSet) -> Vec<(&'static str, Json)> {
    let group = |matcher: Option<&str>| group(set.agent, matcher, &set.command);
    let mut out = Vec::new();
    match set.agent {
        Agent::Codex => {
            // Its plan tool, and the plan back after a resume, a clear or a compaction.
            if set.enforce {
                out.push(("PreToolUse", group(Some(CODEX_TOOL_MATCHER))));
            }
            out.push(("PostToolUse", group(Some(CODEX_TOOL_MATCHER))));
            out.push(("SessionStart", group(Some(CODEX_RESTORE_MATCHER))));
        }
        Agent::Gemini => {
            // Lifecycle matchers are exact strings in Gemini (`resume|clear` would match
            // nothing): planlog reads the source itself. No hook runs after a compression: a
            // compression the user asked for is marked (PreCompress) and the plan goes back
            // with the next prompt (BeforeAgent).
            if set.enforce {
                out.push(("BeforeTool", group(Some(crate::gemini::GUARD_MATCHER))));
            }
            out.push(("AfterTool", group(Some(crate::gemini::TOOL_MATCHER))));
            out.push(("SessionStart", group(None)));
            out.push(("PreCompress", group(None)));
            out.push(("BeforeAgent", group(None)));
            out.push(("SessionEnd", group(None)));
        }
        // opencode takes a plugin, not a hooks file (`crate::opencode`); Cursor's file is flat
        // ([`install_flat`]); Copilot's is a file of planlog's own (`crate::copilot`).
        Agent::Opencode | Agent::Cursor | Agent::Copilot => {}
        Agent::ClaudeCode => {
            if set.enforce {
                out.push(("PreToolUse", group(Some(TOOL_MATCHER))));
            }
            for event in ["PostToolUse", "PostToolUseFailure"] {
                out.push((event, group(Some(TOOL_MATCHER))));
            }
            out.push(("SessionStart", group(Some(RESTORE_MATCHER))));
            out.push(("SessionEnd", group(None)));
            if set.every_prompt {
                out.push(("UserPromptSubmit", group(None)));
            }
        }
    }
    out
}

/// The `hooks` object of a plugin's `hooks/hooks.json` (the same groups, in order).
pub fn hooks_object(set: &HookSet) -> Json {
    Json::Object(
        hooks(set)
            .into_iter()
            .map(|(event, g)| (event.to_owned(), Json::Array(vec![g])))
            .collect(),
    )
}

fn is_ours(handler: &Json) -> bool {
    handler
        .get("command")
        .and_then(Json::as_str)
        .is_some_and(is_planlog_command)
}

fn parse(text: Option<&str>) -> Result<Json, SettingsError> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Json::Object(Vec::new()));
    };
    match Json::parse(text) {
        Ok(v @ Json::Object(_)) => Ok(v),
        Ok(other) => Err(SettingsError::Shape(format!(
            "the settings are {}, not a JSON object",
            other.kind()
        ))),
        Err(e) => Err(SettingsError::Malformed {
            line: e.line(),
            column: e.column(),
            detail: e.to_string(),
        }),
    }
}

/// Takes planlog's handlers out of `settings`, and what that leaves empty.
fn remove_ours(settings: &mut Json) -> Result<(), SettingsError> {
    let Some(hooks) = settings.get_mut("hooks") else {
        return Ok(());
    };
    let Some(events) = hooks.entries_mut() else {
        return Err(SettingsError::Shape(
            "\"hooks\" is not an object".to_owned(),
        ));
    };
    for (event, groups) in events.iter_mut() {
        let Some(list) = groups.array_mut() else {
            return Err(SettingsError::Shape(format!(
                "\"hooks\".{event:?} is not a list of matcher groups"
            )));
        };
        for group in list.iter_mut() {
            if let Some(handlers) = group.get_mut("hooks").and_then(Json::array_mut) {
                handlers.retain(|h| !is_ours(h));
            }
        }
        list.retain(|g| match g.get("hooks") {
            Some(Json::Array(h)) => !h.is_empty(),
            _ => true,
        });
    }
    events.retain(|(_, groups)| !matches!(groups, Json::Array(g) if g.is_empty()));
    if events.is_empty() {
        settings.remove("hooks");
    }
    Ok(())
}

/// The text of `settings`, indented as `original` was, ending with a newline as it did.
fn render(settings: &Json, original: Option<&str>) -> String {
    let indent = original.map_or_else(|| "  ".to_owned(), indentation);
    let mut text = settings.render(&indent);
    if original.is_none_or(|o| o.ends_with('\n') || o.trim().is_empty()) {
        text.push('\n');
    }
    text
}

fn set_todo_tools(settings: &mut Json, set: &HookSet) -> Result<TodoTools, SettingsError> {
    let current = settings
        .get("env")
        .and_then(|e| e.get(TODO_TOOLS_VAR))
        .cloned();
    if !set.todo_tools {
        return Ok(TodoTools::Left(current));
    }
    if current.as_ref().and_then(Json::as_str) == Some("1") {
        return Ok(TodoTools::AlreadyOn);
    }
    let env_existed = settings.get("env").is_some();
    if !env_existed {
        settings.set("env", Json::Object(Vec::new()));
    }
    match settings.get_mut("env") {
        Some(env @ Json::Object(_)) => {
            env.set(TODO_TOOLS_VAR, Json::str("1"));
        }
        Some(other) => {
            return Err(SettingsError::Shape(format!(
                "\"env\" is {}, not an object",
                other.kind()
            )));
        }
        None => {}
    }
    Ok(TodoTools::Set {
        before: current,
        env_existed,
    })
}

/// `text` (a settings file's content, `None` when there is none) with planlog's hooks, and
/// the plan tools turned on unless `set` says to leave them.
///
/// # Errors
/// [`SettingsError`] when the file is not JSON or not of Claude Code's shape.
pub fn install(text: Option<&str>, set: &HookSet) -> Result<Installed, SettingsError> {
    let mut settings = parse(text)?;
    remove_ours(&mut settings)?;
    if settings.get("hooks").is_none() {
        settings.set("hooks", Json::Object(Vec::new()));
    }
    let Some(events) = settings.get_mut("hooks") else {
        return Err(SettingsError::Shape("\"hooks\" is missing".to_owned()));
    };
    if !matches!(events, Json::Object(_)) {
        return Err(SettingsError::Shape(
            "\"hooks\" is not an object".to_owned(),
        ));
    }
    for (event, group) in hooks(set) {
        match events.get_mut(event) {
            Some(list) => {
                let Some(list) = list.array_mut() else {
                    return Err(SettingsError::Shape(format!(
                        "\"hooks\".{event:?} is not a list of matcher groups"
                    )));
                };
                list.push(group);
            }
            None => {
                events.set(event, Json::Array(vec![group]));
            }
        }
    }
    let todo_tools = set_todo_tools(&mut settings, set)?;
    Ok(Installed {
        text: render(&settings, text),
        todo_tools,
    })
}

/// The record of what [`install`] changed besides the hooks (`None`: nothing to put back).
pub fn record(installed: &Installed) -> Option<InstallRecord> {
    match &installed.todo_tools {
        TodoTools::Set {
            before,
            env_existed,
        } => Some(InstallRecord {
            todo_tools: Some(serde_json::json!({
                "before": before.as_ref().map_or(serde_json::Value::Null, |b| serde_json::to_value(b).unwrap_or_default()),
                "env_existed": env_existed,
            })),
        }),
        TodoTools::AlreadyOn | TodoTools::Left(_) => None,
    }
}

/// What uninstall did to [`TODO_TOOLS_VAR`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restored {
    /// Install had not changed it.
    Untouched,
    /// Put back as it was (the text of the value, or `None`: removed).
    PutBack(Option<String>),
    /// Someone changed it since install: left as it is now.
    ChangedSince(String),
}

/// `text` without planlog's hooks, and [`TODO_TOOLS_VAR`] put back as `record` says it was.
///
/// # Errors
/// [`SettingsError`] when the file is not JSON or not of Claude Code's shape.
pub fn uninstall(
    text: &str,
    record: Option<&InstallRecord>,
) -> Result<(String, Restored), SettingsError> {
    let mut settings = parse(Some(text))?;
    remove_ours(&mut settings)?;
    let restored = match record.and_then(|r| r.todo_tools.as_ref()) {
        None => Restored::Untouched,
        Some(was) => {
            let now = settings
                .get("env")
                .and_then(|e| e.get(TODO_TOOLS_VAR))
                .cloned();
            if now.as_ref().and_then(Json::as_str) != Some("1") {
                Restored::ChangedSince(now.map_or_else(|| "removed".to_owned(), |v| v.render("")))
            } else {
                let before: Option<Json> = was
                    .get("before")
                    .filter(|b| !b.is_null())
                    .and_then(|b| serde_json::from_value(b.clone()).ok());
                let env_existed =
                    was.get("env_existed").and_then(serde_json::Value::as_bool) != Some(false);
                if let Some(env) = settings.get_mut("env") {
                    match &before {
                        Some(b) => {
                            env.set(TODO_TOOLS_VAR, b.clone());
                        }
                        None => {
                            env.remove(TODO_TOOLS_VAR);
                        }
                    }
                }
                if !env_existed
                    && matches!(settings.get("env"), Some(Json::Object(e)) if e.is_empty())
                {
                    settings.remove("env");
                }
                Restored::PutBack(before.map(|b| b.render("")))
            }
        }
    };
    Ok((render(&settings, Some(text)), restored))
}

/// The entries of a flat hooks file (Cursor's `hooks.json`: `{"version": 1, "hooks":
/// {<event>: [{"command", "matcher"?}]}}`, no matcher groups) planlog adds for `agent`.
fn flat_entries(agent: Agent, command: &str) -> Vec<(&'static str, Json)> {
    let entry = |matcher: Option<&str>| match matcher {
        Some(m) => Json::object([("command", Json::str(command)), ("matcher", Json::str(m))]),
        None => Json::object([("command", Json::str(command))]),
    };
    match agent {
        Agent::Cursor => vec![
            ("postToolUse", entry(Some(crate::cursor::TOOL_MATCHER))),
            ("sessionStart", entry(None)),
            ("preCompact", entry(None)),
        ],
        _ => Vec::new(),
    }
}

/// Takes planlog's entries out of a flat hooks file, and the events that leaves empty.
fn remove_ours_flat(settings: &mut Json) -> Result<(), SettingsError> {
    let Some(hooks) = settings.get_mut("hooks") else {
        return Ok(());
    };
    let Some(events) = hooks.entries_mut() else {
        return Err(SettingsError::Shape(
            "\"hooks\" is not an object".to_owned(),
        ));
    };
    for (event, entries) in events.iter_mut() {
        let Some(list) = entries.array_mut() else {
            return Err(SettingsError::Shape(format!(
                "\"hooks\".{event:?} is not a list of hooks"
            )));
        };
        list.retain(|e| !is_ours(e));
    }
    events.retain(|(_, entries)| !matches!(entries, Json::Array(e) if e.is_empty()));
    Ok(())
}

/// `text` (a flat hooks file, `None` when there is none) with planlog's entries for `agent`
/// running `command`: planlog's earlier ones taken out, the user's kept in their order,
/// `version` 1 when the file had none.
///
/// # Errors
/// [`SettingsError`] when the file is not JSON or not of that shape.
pub fn install_flat(
    text: Option<&str>,
    agent: Agent,
    command: &str,
) -> Result<String, SettingsError> {
    let mut settings = parse(text)?;
    remove_ours_flat(&mut settings)?;
    if settings.get("version").is_none() {
        let mut with_version = Json::object([("version", Json::Number(1.into()))]);
        if let Some(entries) = settings.entries_mut() {
            for (k, v) in entries.drain(..) {
                with_version.set(&k, v);
            }
        }
        settings = with_version;
    }
    if settings.get("hooks").is_none() {
        settings.set("hooks", Json::Object(Vec::new()));
    }
    let Some(events) = settings.get_mut("hooks") else {
        return Err(SettingsError::Shape("\"hooks\" is missing".to_owned()));
    };
    for (event, entry) in flat_entries(agent, command) {
        match events.get_mut(event) {
            Some(list) => match list.array_mut() {
                Some(list) => list.push(entry),
                None => {
                    return Err(SettingsError::Shape(format!(
                        "\"hooks\".{event:?} is not a list of hooks"
                    )));
                }
            },
            None => {
                events.set(event, Json::Array(vec![entry]));
            }
        }
    }
    Ok(render(&settings, text))
}

/// `text` (a flat hooks file) without planlog's entries.
///
/// # Errors
/// [`SettingsError`] when the file is not JSON or not of that shape.
pub fn uninstall_flat(text: &str) -> Result<String, SettingsError> {
    let mut settings = parse(Some(text))?;
    remove_ours_flat(&mut settings)?;
    Ok(render(&settings, Some(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> HookSet {
        HookSet {
            agent: Agent::ClaudeCode,
            command: "planlog hook claude-code".to_owned(),
            enforce: false,
            every_prompt: false,
            todo_tools: true,
        }
    }

    fn value(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn install_keeps_other_hooks_settings_and_key_order_twice_is_once_and_uninstall_restores() {
        let original = "{\n    \"model\": \"opus\",\n    \"env\": {\"ZED\": \"1\", \"ANTHROPIC_API_KEY\": \"k\"},\n    \"hooks\": {\n        \"PostToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\"}]}],\n        \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-planlog-hook claude-code.sh\"}]}]\n    },\n    \"apiKeyHelper\": \"x\"\n}\n";
        let once = install(Some(original), &set()).unwrap();
        let twice = install(Some(&once.text), &set()).unwrap();
        assert_eq!(once.text, twice.text);
        assert_eq!(twice.todo_tools, TodoTools::AlreadyOn);
        assert!(once.text.starts_with("{\n    \"model\": \"opus\",\n    \"env\": {\n        \"ZED\": \"1\",\n        \"ANTHROPIC_API_KEY\": \"k\",\n        \"CLAUDE_CODE_ENABLE_TODO_TOOLS\": \"1\""), "{}", once.text);
        assert!(
            once.text.trim_end().ends_with("\"apiKeyHelper\": \"x\"\n}"),
            "{}",
            once.text
        );
        let v = value(&once.text);
        assert_eq!(v["hooks"]["PostToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(v["hooks"]["PostToolUse"][1]["matcher"], TOOL_MATCHER);
        assert!(
            v["hooks"].get("PreToolUse").is_none(),
            "no blocking by default"
        );
        assert_eq!(
            v["hooks"]["Stop"][0]["hooks"][0]["command"],
            "notify-planlog-hook claude-code.sh"
        );
        let record = record(&once).unwrap();
        let (back, restored) = uninstall(&twice.text, Some(&record)).unwrap();
        assert_eq!(restored, Restored::PutBack(None));
        assert_eq!(value(&back), value(original));
        let order = |text: &str, keys: &[&str]| {
            let at: Vec<usize> = keys
                .iter()
                .map(|k| text.find(&format!("\"{k}\"")).unwrap())
                .collect();
            at.windows(2).all(|w| w[0] < w[1])
        };
        assert!(
            order(
                &back,
                &[
                    "model",
                    "env",
                    "ZED",
                    "ANTHROPIC_API_KEY",
                    "hooks",
                    "apiKeyHelper"
                ]
            ),
            "{back}"
        );
        assert!(
            back.starts_with("{\n    \"model\""),
            "the file's indentation: {back}"
        );
    }

    #[test]
    fn the_plan_tools_setting_is_put_back_as_it_was() {
        // It said "0": install turns it on, uninstall puts "0" back.
        let off = r#"{"env": {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "0"}}"#;
        let on = install(Some(off), &set()).unwrap();
        assert_eq!(value(&on.text)["env"][TODO_TOOLS_VAR], "1");
        let (back, restored) = uninstall(&on.text, record(&on).as_ref()).unwrap();
        assert_eq!(restored, Restored::PutBack(Some("\"0\"".to_owned())));
        assert_eq!(value(&back), value(off));
        // No env at all: it goes again, env too.
        let on = install(None, &set()).unwrap();
        let (back, _) = uninstall(&on.text, record(&on).as_ref()).unwrap();
        assert_eq!(value(&back), serde_json::json!({}));
        // Changed by the user since: left alone.
        let changed = on.text.replace(
            "\"CLAUDE_CODE_ENABLE_TODO_TOOLS\": \"1\"",
            "\"CLAUDE_CODE_ENABLE_TODO_TOOLS\": \"0\"",
        );
        let (_, restored) = uninstall(&changed, record(&on).as_ref()).unwrap();
        assert_eq!(restored, Restored::ChangedSince("\"0\"".to_owned()));
        // Asked to leave it.
        let left = install(
            Some(off),
            &HookSet {
                todo_tools: false,
                ..set()
            },
        )
        .unwrap();
        assert_eq!(left.todo_tools, TodoTools::Left(Some(Json::str("0"))));
        assert_eq!(value(&left.text)["env"][TODO_TOOLS_VAR], "0");
    }

    #[test]
    fn only_commands_install_writes_are_planlogs() {
        for ours in [
            "planlog hook claude-code",
            "/home/me/.cargo/bin/planlog hook claude-code --db /x/planlog.redb --enforce",
            "'/opt/my tools/planlog' hook claude-code --audit-only --db 'postgres://u@h/db'",
            "planlog hook codex --db /x/planlog.redb",
            "planlog hook cursor",
            "planlog hook gemini --enforce",
            "planlog hook copilot --db /x/planlog.redb --event postToolUse",
        ] {
            assert!(is_planlog_command(ours), "{ours}");
        }
        for theirs in [
            "notify-planlog-hook claude-code.sh",
            "planlog hook claude-code && rm -rf /",
            "planlog hook claude-code --unknown",
            "planlog hook copilot --event",
            "planlog hook aider",
            "my-planlog hook claude-code",
            "planlog hook claude-code --db",
            "\"$CLAUDE_PROJECT_DIR\"/planlog hook claude-code",
        ] {
            assert!(!is_planlog_command(theirs), "{theirs}");
        }
    }

    #[test]
    fn enforcing_and_every_prompt_add_their_hooks() {
        let all = install(
            None,
            &HookSet {
                enforce: true,
                every_prompt: true,
                ..set()
            },
        )
        .unwrap();
        let v = value(&all.text);
        assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], TOOL_MATCHER);
        assert!(v["hooks"]["UserPromptSubmit"].is_array());
        assert!(v["hooks"]["SessionEnd"].is_array());
        let (back, _) = uninstall(&all.text, record(&all).as_ref()).unwrap();
        assert_eq!(value(&back), serde_json::json!({}));
    }

    #[test]
    fn malformed_or_misshapen_settings_are_refused_with_where() {
        let e = install(Some("{\n  \"hooks\": {,}\n}"), &set()).unwrap_err();
        assert!(matches!(e, SettingsError::Malformed { line: 2, .. }), "{e}");
        assert!(e.to_string().contains("line 2, column"));
        assert!(install(Some("[1]"), &set()).is_err());
        assert!(install(Some(r#"{"hooks": []}"#), &set()).is_err());
        assert!(install(Some(r#"{"hooks": {"Stop": {}}}"#), &set()).is_err());
        assert!(install(Some(r#"{"env": []}"#), &set()).is_err());
    }
}
