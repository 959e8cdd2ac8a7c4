//! Installing planlog's hooks into a Claude Code settings file, and taking them out again.
//!
//! Claude Code's shape: `{"hooks": {<event>: [{"matcher": "...", "hooks": [{"type":
//! "command", "command": "...", "timeout": N}]}]}}`; entries of every level merge, so
//! planlog adds matcher groups of its own and never edits anyone else's. A handler is
//! planlog's when its command runs `planlog … hook claude-code`. Installing removes
//! planlog's handlers first and adds them again, so running it twice changes nothing;
//! uninstalling removes only planlog's handlers (and the groups, events and `hooks` object
//! that leaves empty). Everything else is kept as it was, in meaning (keys may come out in
//! another order).

use serde_json::{Map, Value, json};

/// The tools the tool hooks match.
pub const TOOL_MATCHER: &str = "TodoWrite|TaskCreate|TaskUpdate";

/// What a hook command names: the part that marks a handler as planlog's.
pub const HOOK_WORDS: &str = "hook claude-code";

/// Seconds Claude Code gives one hook call before it gives up on it.
pub const HOOK_TIMEOUT_SECONDS: u64 = 10;

/// What to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSet {
    /// The command Claude Code runs (`planlog hook claude-code`, with options).
    pub command: String,
    /// Also restore the plan before every prompt (`UserPromptSubmit`).
    pub every_prompt: bool,
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

/// The `hooks` object planlog installs.
pub fn hooks(set: &HookSet) -> Value {
    let handler =
        json!([{"type": "command", "command": set.command, "timeout": HOOK_TIMEOUT_SECONDS}]);
    let group = |matcher: Option<&str>| match matcher {
        Some(m) => json!({"matcher": m, "hooks": handler}),
        None => json!({"hooks": handler}),
    };
    let mut out = Map::new();
    for event in ["PreToolUse", "PostToolUse", "PostToolUseFailure"] {
        out.insert(event.to_owned(), json!([group(Some(TOOL_MATCHER))]));
    }
    out.insert(
        "SessionStart".to_owned(),
        json!([group(Some("resume|clear|compact|fork"))]),
    );
    if set.every_prompt {
        out.insert("UserPromptSubmit".to_owned(), json!([group(None)]));
    }
    Value::Object(out)
}

/// Whether a handler is planlog's.
fn is_ours(handler: &Value) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| c.contains("planlog") && c.contains(HOOK_WORDS))
}

fn parse(text: Option<&str>) -> Result<Map<String, Value>, SettingsError> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Map::new());
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(SettingsError::Shape(format!(
            "the settings are {}, not a JSON object",
            match other {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                _ => "not an object",
            }
        ))),
        Err(e) => Err(SettingsError::Malformed {
            line: e.line(),
            column: e.column(),
            detail: e.to_string(),
        }),
    }
}

/// Takes planlog's handlers out of `settings`, and what that leaves empty.
fn remove_ours(settings: &mut Map<String, Value>) -> Result<(), SettingsError> {
    let Some(hooks) = settings.get_mut("hooks") else {
        return Ok(());
    };
    let Some(events) = hooks.as_object_mut() else {
        return Err(SettingsError::Shape(
            "\"hooks\" is not an object".to_owned(),
        ));
    };
    for (event, groups) in events.iter_mut() {
        let Some(list) = groups.as_array_mut() else {
            return Err(SettingsError::Shape(format!(
                "\"hooks\".{event:?} is not a list of matcher groups"
            )));
        };
        for group in list.iter_mut() {
            if let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                handlers.retain(|h| !is_ours(h));
            }
        }
        list.retain(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_none_or(|h| !h.is_empty())
        });
    }
    events.retain(|_, groups| groups.as_array().is_none_or(|g| !g.is_empty()));
    if events.is_empty() {
        settings.remove("hooks");
    }
    Ok(())
}

fn render(settings: Map<String, Value>) -> String {
    let mut text =
        serde_json::to_string_pretty(&Value::Object(settings)).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}

/// `text` (a settings file's content, `None` when there is none) with planlog's hooks.
///
/// # Errors
/// [`SettingsError`] when the file is not JSON or not of Claude Code's shape.
pub fn install(text: Option<&str>, set: &HookSet) -> Result<String, SettingsError> {
    let mut settings = parse(text)?;
    remove_ours(&mut settings)?;
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(events) = hooks.as_object_mut() else {
        return Err(SettingsError::Shape(
            "\"hooks\" is not an object".to_owned(),
        ));
    };
    if let Value::Object(ours) = self::hooks(set) {
        for (event, groups) in ours {
            let list = events
                .entry(event)
                .or_insert_with(|| Value::Array(Vec::new()));
            if let (Some(list), Value::Array(groups)) = (list.as_array_mut(), groups) {
                list.extend(groups);
            }
        }
    }
    Ok(render(settings))
}

/// `text` without planlog's hooks.
///
/// # Errors
/// [`SettingsError`] when the file is not JSON or not of Claude Code's shape.
pub fn uninstall(text: &str) -> Result<String, SettingsError> {
    let mut settings = parse(Some(text))?;
    remove_ours(&mut settings)?;
    Ok(render(settings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> HookSet {
        HookSet {
            command: "planlog hook claude-code".to_owned(),
            every_prompt: false,
        }
    }

    fn value(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn install_keeps_other_hooks_and_settings_twice_is_once_and_uninstall_restores() {
        let original = r#"{"model": "opus", "env": {"A": "1"},
            "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}],
                      "Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}"#;
        let once = install(Some(original), &set()).unwrap();
        let twice = install(Some(&once), &set()).unwrap();
        assert_eq!(once, twice);
        let v = value(&once);
        assert_eq!(v["model"], "opus");
        assert_eq!(v["hooks"]["PostToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(v["hooks"]["PostToolUse"][0]["matcher"], "Bash");
        assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], TOOL_MATCHER);
        assert!(v["hooks"].get("UserPromptSubmit").is_none());
        assert_eq!(value(&uninstall(&twice).unwrap()), value(original));
    }

    #[test]
    fn empty_or_missing_settings_get_just_the_hooks_and_lose_them_again() {
        for start in [None, Some(""), Some("{}")] {
            let installed = install(
                start,
                &HookSet {
                    every_prompt: true,
                    ..set()
                },
            )
            .unwrap();
            assert!(value(&installed)["hooks"]["UserPromptSubmit"].is_array());
            assert_eq!(value(&uninstall(&installed).unwrap()), json!({}));
        }
    }

    #[test]
    fn malformed_or_misshapen_settings_are_refused_with_where() {
        let e = install(Some("{\n  \"hooks\": {,}\n}"), &set()).unwrap_err();
        assert!(matches!(e, SettingsError::Malformed { line: 2, .. }), "{e}");
        assert!(e.to_string().contains("line 2, column"));
        assert!(install(Some("[1]"), &set()).is_err());
        assert!(install(Some(r#"{"hooks": []}"#), &set()).is_err());
        assert!(install(Some(r#"{"hooks": {"Stop": {}}}"#), &set()).is_err());
    }
}
