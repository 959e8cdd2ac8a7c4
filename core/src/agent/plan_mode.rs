//! Plan mode (deepseek-harness): logged collaboration state, its selection rules, its
//! config, the `exit_plan_mode` tool and its review seam, and the `/plan` command.
//!
//! The committed state is the last `mode_selected` event (false when none), so resume and
//! fork recover it from the log alone. A selection made while a turn is open waits for the
//! next request boundary; the [`crate::PlanSession`] applies it there.

use serde_json::{Value, json};

use crate::agent::tool::ToolSpec;
use crate::domain::write::ToolResult;

/// The exit tool's name.
pub const EXIT_PLAN_MODE: &str = "exit_plan_mode";

/// Told to the model when the user turns plan mode on (and its last request described the
/// default mode).
pub const NOTICE_ENTERED: &str = "The user switched this session to plan mode.";
/// Told to the model when the user turns plan mode off (and its last request described plan
/// mode).
pub const NOTICE_LEFT: &str = "The user switched this session back to the default mode.";

/// The name of the system-prompt section plan mode contributes while active.
pub const POLICY_SECTION_NAME: &str = "plan:policy";
/// Its order among the host's sections.
pub const POLICY_SECTION_ORDER: u32 = 50;

/// What `set` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOutcome {
    /// Appended now (between turns).
    Committed,
    /// A turn is open: held until the next request boundary.
    Queued,
    /// An opposite pending selection was withdrawn; the logged state already matches.
    Cancelled,
    /// Already the target (counting a pending selection).
    Noop,
}

/// The mode as a client sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModeView {
    /// The logged (committed) state.
    pub active: bool,
    /// A selection waiting for the next request boundary, if any.
    pub pending: Option<bool>,
}

/// Deployment-owned plan guidance: `{ "section": "..." }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanModeConfig {
    section: String,
}

/// A plan mode config that does not load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not a JSON object.
    #[error("plan mode config must be an object like {{\"section\": \"...\"}}")]
    NotObject,
    /// No `section`.
    #[error(
        "plan mode config has no \"section\"; give the guidance text shown while plan mode is on"
    )]
    MissingSection,
    /// `section` is not a string.
    #[error("plan mode config \"section\" must be a string")]
    SectionNotString,
    /// `section` is empty or whitespace.
    #[error(
        "plan mode config \"section\" is blank; give the guidance text shown while plan mode is on"
    )]
    BlankSection,
    /// A key other than `section`.
    #[error("plan mode config has an unknown key {0:?}; the only key is \"section\"")]
    UnknownKey(String),
}

impl PlanModeConfig {
    /// A config with this section text.
    ///
    /// # Errors
    /// [`ConfigError::BlankSection`] for blank text.
    pub fn new(section: impl Into<String>) -> Result<Self, ConfigError> {
        let section = section.into();
        if section.trim().is_empty() {
            return Err(ConfigError::BlankSection);
        }
        Ok(Self { section })
    }

    /// Loads `{ "section": "..." }`, refusing anything else.
    ///
    /// # Errors
    /// A [`ConfigError`] naming what is wrong.
    pub fn from_value(value: &Value) -> Result<Self, ConfigError> {
        let obj = value.as_object().ok_or(ConfigError::NotObject)?;
        if let Some(key) = obj.keys().find(|k| k.as_str() != "section") {
            return Err(ConfigError::UnknownKey(key.clone()));
        }
        match obj.get("section") {
            None => Err(ConfigError::MissingSection),
            Some(Value::String(s)) => Self::new(s.clone()),
            Some(_) => Err(ConfigError::SectionNotString),
        }
    }

    /// The guidance text.
    pub fn section(&self) -> &str {
        &self.section
    }
}

/// How the user answered a plan review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewOutcome {
    /// Approved: leave plan mode.
    Approve,
    /// Keep planning, with the user's feedback.
    KeepPlanning(String),
    /// The review was dismissed without an answer.
    Dismissed,
    /// There is no way to ask the user.
    NoChannel,
}

/// The seam through which a host shows a plan for review (the user-questions channel).
pub trait PlanReview {
    /// Shows `plan` (markdown) to the user and returns their answer.
    fn review(&mut self, plan: &str) -> ReviewOutcome;
}

/// The result of an `exit_plan_mode` call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExitResult {
    /// What the model gets back.
    pub result: ToolResult,
    /// True when the host must end the turn now (a dismissed review).
    pub end_turn: bool,
}

/// The `exit_plan_mode` declaration (offered only while plan mode is active).
pub fn exit_plan_mode_spec() -> ToolSpec {
    ToolSpec {
        name: EXIT_PLAN_MODE.to_owned(),
        description: "Present your complete plan to the user for review and, once they approve it, leave plan mode. \
                      \"plan\" is the whole plan as markdown, starting with a '# ' heading. If the user asks you to \
                      keep planning, revise the plan with their feedback and present it again."
            .to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "plan": {"type": "string", "description": "The complete plan in markdown, starting with a '# ' heading."}
            },
            "required": ["plan"],
            "additionalProperties": false
        }),
    }
}

/// Checks `exit_plan_mode` arguments: returns the plan text, or the error for the model.
pub(crate) fn parse_exit_arguments(arguments: &str) -> Result<String, String> {
    const HOW: &str = "Call exit_plan_mode with {\"plan\": \"# Title\\n...\"}: the complete plan as markdown, starting with a '# ' heading.";
    let value: Value = serde_json::from_str(arguments)
        .map_err(|e| format!("The arguments are not valid JSON ({e}). {HOW}"))?;
    let obj = value
        .as_object()
        .ok_or_else(|| format!("The arguments must be an object. {HOW}"))?;
    if let Some(key) = obj.keys().find(|k| k.as_str() != "plan") {
        return Err(format!("exit_plan_mode has no argument {key:?}. {HOW}"));
    }
    let plan = match obj.get("plan") {
        Some(Value::String(s)) => s,
        Some(_) => return Err(format!("\"plan\" must be a string. {HOW}")),
        None => return Err(format!("\"plan\" is missing. {HOW}")),
    };
    if !plan.trim_start().starts_with("# ") {
        return Err(format!(
            "The plan must be a markdown document that starts with a '# ' heading. {HOW}"
        ));
    }
    Ok(plan.clone())
}

/// A `/plan` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanCommand {
    /// `/plan`: enter plan mode.
    Enter,
    /// `/plan off`: leave plan mode (also cancels a pending entry).
    Off,
    /// `/plan <message>`: enter plan mode, then send the message as the next user message.
    EnterWith(String),
}

/// Parses a user line as a `/plan` command; `None` when it is not one.
pub fn parse_plan_command(line: &str) -> Option<PlanCommand> {
    let rest = line.trim().strip_prefix("/plan")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None; // "/planet" is not "/plan"
    }
    match rest.trim() {
        "" => Some(PlanCommand::Enter),
        "off" => Some(PlanCommand::Off),
        message => Some(PlanCommand::EnterWith(message.to_owned())),
    }
}

/// What a `/plan` command answers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandReply {
    /// Shown to the user.
    pub reply: String,
    /// A message to send next as an ordinary user message (for `/plan <message>`).
    pub steer: Option<String>,
}

/// The user-facing reply to a selection of `target` that had `outcome`.
pub(crate) fn reply_for(target: bool, outcome: SetOutcome) -> String {
    match (target, outcome) {
        (true, SetOutcome::Committed) => "Plan mode is on.".into(),
        (true, SetOutcome::Queued) => "Plan mode turns on at the agent's next step.".into(),
        (true, SetOutcome::Cancelled) => {
            "The pending exit was cancelled; plan mode stays on.".into()
        }
        (true, SetOutcome::Noop) => "Plan mode is already on.".into(),
        (false, SetOutcome::Committed) => "Plan mode is off.".into(),
        (false, SetOutcome::Queued) => "Plan mode turns off at the agent's next step.".into(),
        (false, SetOutcome::Cancelled) => {
            "The pending entry was cancelled; plan mode stays off.".into()
        }
        (false, SetOutcome::Noop) => "Plan mode is already off.".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_loads_only_a_non_blank_string_section() {
        assert_eq!(
            PlanModeConfig::from_value(&json!({"section": "Plan first."}))
                .map(|c| c.section().to_owned()),
            Ok("Plan first.".into())
        );
        assert_eq!(
            PlanModeConfig::from_value(&json!({})),
            Err(ConfigError::MissingSection)
        );
        assert_eq!(
            PlanModeConfig::from_value(&json!({"section": "  "})),
            Err(ConfigError::BlankSection)
        );
        assert_eq!(
            PlanModeConfig::from_value(&json!({"section": 3})),
            Err(ConfigError::SectionNotString)
        );
        assert_eq!(
            PlanModeConfig::from_value(&json!({"section": "x", "order": 1})),
            Err(ConfigError::UnknownKey("order".into()))
        );
        assert_eq!(
            PlanModeConfig::from_value(&json!("x")),
            Err(ConfigError::NotObject)
        );
    }

    #[test]
    fn plan_commands_parse() {
        assert_eq!(parse_plan_command("/plan"), Some(PlanCommand::Enter));
        assert_eq!(parse_plan_command("  /plan off "), Some(PlanCommand::Off));
        assert_eq!(
            parse_plan_command("/plan refactor the loader"),
            Some(PlanCommand::EnterWith("refactor the loader".into()))
        );
        assert_eq!(parse_plan_command("/planet"), None);
        assert_eq!(parse_plan_command("plan"), None);
        assert_eq!(
            parse_plan_command("/plan offer a fix"),
            Some(PlanCommand::EnterWith("offer a fix".into()))
        );
    }

    #[test]
    fn exit_arguments_need_a_markdown_heading() {
        assert_eq!(
            parse_exit_arguments(r##"{"plan": "# Refactor\n1. a"}"##),
            Ok("# Refactor\n1. a".into())
        );
        for bad in [
            r#"{"plan": "1. a"}"#,
            r###"{"plan": "## Sub"}"###,
            r#"{}"#,
            r#"{"plan": 1}"#,
            "nope",
            r##"{"plan": "# x", "extra": 1}"##,
        ] {
            let err = parse_exit_arguments(bad).unwrap_err();
            assert!(err.contains("'# ' heading"), "{bad}: {err}");
        }
    }
}
