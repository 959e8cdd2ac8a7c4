//! What a source says a session is (its title, agent, project, branch, model, first prompt),
//! gathered while it is read and recorded where it changes.
//!
//! A parser updates a session's [`Described`] from the lines it reads and asks for a record
//! after each line; one comes only when the description changed. The record's call id names
//! the line (`describe:line-N`), so importing a file that grows gives the same events as
//! importing it whole, and a re-import skips what it recorded before.

use std::collections::HashMap;

use planlog_core::events::SessionDescription;
use planlog_core::render::shortened;

use super::record::{Op, Record, SourceCall, Stamp};

/// How many characters of the first prompt are kept.
pub(crate) const FIRST_PROMPT_CHARS: usize = 200;

/// How many characters of a title are kept.
pub(crate) const TITLE_CHARS: usize = 200;

/// One session's description: as it stands, and as last recorded.
#[derive(Debug, Default)]
pub struct Described {
    /// As it stands.
    pub now: SessionDescription,
    sent: SessionDescription,
    /// What is known before the source says anything (the agent).
    known: SessionDescription,
}

impl Described {
    /// A description of sessions of `agent`.
    pub fn of(agent: &str) -> Self {
        let known = SessionDescription {
            agent: Some(agent.to_owned()),
            ..SessionDescription::default()
        };
        Self {
            now: known.clone(),
            sent: SessionDescription::default(),
            known,
        }
    }

    /// Sets a text field (`None` or a blank text changes nothing).
    pub fn set(field: &mut Option<String>, value: Option<&str>) {
        if let Some(v) = value.map(str::trim).filter(|v| !v.is_empty())
            && field.as_deref() != Some(v)
        {
            *field = Some(v.to_owned());
        }
    }

    /// Sets the title (shortened).
    pub fn title(&mut self, title: Option<&str>) {
        let title = title.map(|t| shortened(t.trim(), TITLE_CHARS).into_owned());
        Self::set(&mut self.now.title, title.as_deref());
    }

    /// Sets the first prompt, once (shortened).
    pub fn first_prompt(&mut self, prompt: &str) {
        if self.now.first_prompt.is_none() {
            let p = shortened(prompt.trim(), FIRST_PROMPT_CHARS).into_owned();
            Self::set(&mut self.now.first_prompt, Some(&p));
        }
    }

    /// The record of the description when it changed since the last one (read at `line`);
    /// none while the source has said nothing of it.
    pub fn record(&mut self, session: &str, line: u64, at: Stamp) -> Option<Record> {
        if self.now == self.sent || self.now == self.known {
            return None;
        }
        self.sent = self.now.clone();
        Some(Record::Call(SourceCall {
            session: session.to_owned(),
            line,
            call_id: Some(format!("describe:line-{line}")),
            at,
            turn: None,
            op: Op::Describe(self.now.clone()),
            explanation: None,
            notes: Vec::new(),
            tool_call: None,
        }))
    }
}

/// Descriptions of a source's sessions, by key.
#[derive(Debug, Default)]
pub(crate) struct Descriptions {
    agent: &'static str,
    by_key: HashMap<String, Described>,
}

impl Descriptions {
    /// Descriptions of sessions of `agent`.
    pub(crate) fn new(agent: &'static str) -> Self {
        Self {
            agent,
            by_key: HashMap::new(),
        }
    }

    /// The description of session `key`.
    pub(crate) fn of(&mut self, key: &str) -> &mut Described {
        let agent = self.agent;
        self.by_key
            .entry(key.to_owned())
            .or_insert_with(|| Described::of(agent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_comes_only_when_the_description_changed() {
        let mut d = Described::of("codex");
        assert!(
            d.record("s", 1, Stamp::Missing).is_none(),
            "nothing said yet"
        );
        d.now.project = Some("/src/app".to_owned());
        let Some(Record::Call(first)) = d.record("s", 1, Stamp::Missing) else {
            panic!("no record")
        };
        assert_eq!(first.call_id.as_deref(), Some("describe:line-1"));
        assert!(matches!(&first.op, Op::Describe(x) if x.agent.as_deref() == Some("codex")));
        assert!(d.record("s", 2, Stamp::Missing).is_none());
        d.first_prompt("  fix the bug  ");
        d.first_prompt("a later prompt");
        let Some(Record::Call(second)) = d.record("s", 3, Stamp::Missing) else {
            panic!("no record")
        };
        assert!(
            matches!(&second.op, Op::Describe(x) if x.first_prompt.as_deref() == Some("fix the bug"))
        );
    }
}
