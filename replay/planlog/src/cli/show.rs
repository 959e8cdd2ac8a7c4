//! `planlog show SESSION`: the plan now or after event SEQ, in one of four forms.

use planlog_core::render::{injection_text, render_block, render_markdown};

use super::{check_seq, last_seq};
use crate::support::failure::{Failure, find_session};
use crate::support::open::Store;
use crate::support::output::{Out, style};

/// Arguments of `planlog show`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session: its id, or any unique beginning of it.
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
}

/// How the plan is shown.
enum Form {
    Block,
    Json,
    Inject,
    Markdown,
}

impl Args {
    fn form(&self) -> Form {
        match (self.json, self.inject, self.markdown) {
            (true, _, _) => Form::Json,
            (_, true, _) => Form::Inject,
            (_, _, true) => Form::Markdown,
            _ => Form::Block,
        }
    }
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let log = store.for_reading()?;
    let id = find_session(&*log, &args.session)?;
    let last = last_seq(&*log, &id)?;
    let seq = check_seq(&id, args.at.unwrap_or(last), last)?;
    let state = log.state_at(&id, seq)?;
    let mut out = Out::new();
    match args.form() {
        Form::Json => out.line(state.plan.to_json())?,
        Form::Inject => {
            let text = injection_text(&state.plan);
            if !text.is_empty() {
                out.line(text)?;
            }
        }
        Form::Markdown => {
            let event = log.read(&id, seq, Some(seq))?;
            let updated = event
                .first()
                .map(|e| e.at)
                .ok_or_else(|| Failure::cannot_run(format!("session {id} has no event {seq}")))?;
            out.raw(render_markdown(&state.plan, &id, updated))?;
        }
        Form::Block => {
            out.line(render_block(&state.plan, style()))?;
            if state.plan_mode {
                out.line("(plan mode on)")?;
            }
        }
    }
    Ok(out.finish()?)
}
