//! `planlog new`: create a session and print its id.

use planlog_core::PlanSession;
use planlog_store::host::SystemEnv;

use crate::support::failure::Failure;
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog new`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A label for the session.
    #[arg(long)]
    label: Option<String>,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let log = store.for_writing()?;
    let mut builder = PlanSession::builder(log, SystemEnv);
    if let Some(label) = args.label {
        builder = builder.label(label);
    }
    let session = builder.create()?;
    let mut out = Out::new();
    out.line(session.id().as_str())?;
    Ok(out.finish()?)
}
