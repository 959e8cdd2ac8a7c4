//! `planlog export SESSION --format json|jsonl|markdown|html`.

use planlog_core::{LogError, Seq, UserError};
use planlog_export::{ExportError, ExportFormat, HTML_MAX_EVENTS, export_html_window, export_to};

use crate::support::failure::{Failure, find_session};
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog export`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session: its id, or any unique beginning of it.
    session: String,
    /// The format.
    #[arg(long, value_enum, default_value = "jsonl")]
    format: FormatArg,
    /// With `--format html`: the first seq the page holds (a page holds at most 5,000 events;
    /// a longer session's page holds its last 5,000 unless this says where to start).
    #[arg(long, value_name = "SEQ")]
    from: Option<u64>,
}

/// Export formats, as typed.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum FormatArg {
    /// One JSON document: the catalogue entry and every event.
    Json,
    /// One canonical event per line (round-trips through `planlog import planlog`).
    Jsonl,
    /// A human-readable report: the plan file and the history.
    Markdown,
    /// The time-travel view of `planlog ui`, as one self-contained file (works from file://).
    Html,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let log = store.for_reading()?;
    let id = find_session(&*log, &args.session)?;
    let info = log
        .session(&id)?
        .ok_or_else(|| Failure::from(LogError::from(UserError::UnknownSession(id.clone()))))?;
    let format = match args.format {
        FormatArg::Json => ExportFormat::Json,
        FormatArg::Jsonl => ExportFormat::Jsonl,
        FormatArg::Markdown => ExportFormat::Markdown,
        FormatArg::Html => ExportFormat::Html,
    };
    let mut out = Out::new();
    let mut failed = None;
    let bar = crate::support::progress::events("exporting", info.events);
    let mut emit = |text: &str| {
        out.raw(text).map_err(|e| {
            failed = Some(e);
            std::io::Error::other("output failed")
        })
    };
    let window = match (format, args.from) {
        (ExportFormat::Html, Some(from)) => Some(from),
        (ExportFormat::Html, None) if info.events > HTML_MAX_EVENTS => {
            Some(info.events - HTML_MAX_EVENTS + 1)
        }
        (_, Some(_)) => {
            return Err(Failure::cannot_run(
                "--from applies to --format html only (the other formats hold the whole session)",
            ));
        }
        (_, None) => None,
    };
    let written = match window {
        Some(from) => {
            let from = Seq::new(from)
                .map_err(|_| Failure::cannot_run("--from takes a seq, a whole number from 1"))?;
            let to = Seq::new(from.get() + HTML_MAX_EVENTS - 1).map_err(LogError::from)?;
            export_html_window(&*log, &info, from, to, &mut emit, &mut |n| bar.inc(n)).map(
                |to| {
                    eprintln!(
                        "planlog: the page holds seqs {} to {} of the session's {} events (a page holds at most {HTML_MAX_EVENTS}; --from SEQ chooses the start)",
                        from.get(),
                        to.get(),
                        info.events
                    );
                },
            )
        }
        None => export_to(&*log, &info, format, &mut emit, &mut |n| bar.inc(n)),
    };
    bar.finish_and_clear();
    match written {
        Ok(()) => Ok(out.finish()?),
        Err(ExportError::Log(e)) => Err(e.into()),
        Err(ExportError::Output(_)) => match failed {
            Some(e) => Err(e.into()),
            None => Err(Failure::cannot_run("could not write the export")),
        },
    }
}
