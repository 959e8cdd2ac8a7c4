//! `planlog export SESSION --format json|jsonl|markdown|html`.

use planlog_core::{LogError, UserError};
use planlog_export::{ExportError, ExportFormat, export_to};

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
    let written = export_to(&*log, &info, format, &mut |text| {
        out.raw(text).map_err(|e| {
            failed = Some(e);
            std::io::Error::other("output failed")
        })
    });
    match written {
        Ok(()) => Ok(out.finish()?),
        Err(ExportError::Log(e)) => Err(e.into()),
        Err(ExportError::Output(_)) => match failed {
            Some(e) => Err(e.into()),
            None => Err(Failure::cannot_run("could not write the export")),
        },
    }
}
