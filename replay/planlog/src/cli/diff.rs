//! `planlog diff SESSION A B`: what changed from seq A to seq B (B before A is allowed, and
//! said).

use planlog_audit::diff;

use super::{check_seq, last_seq};
use crate::support::failure::{Failure, find_session};
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog diff`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session: its id, or any unique beginning of it.
    session: String,
    /// From this seq.
    a: u64,
    /// To this seq.
    b: u64,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let log = store.for_reading()?;
    let id = find_session(&*log, &args.session)?;
    let last = last_seq(&*log, &id)?;
    let (a, b) = (args.a, args.b);
    let (sa, sb) = (check_seq(&id, a, last)?, check_seq(&id, b, last)?);
    let changes = diff(&log.state_at(&id, sa)?, &log.state_at(&id, sb)?);
    let mut out = Out::new();
    if a > b {
        out.line(format!(
            "(backwards: from seq {a} back to seq {b}; `+` is what seq {b} had and seq {a} did not)"
        ))?;
    }
    if changes.is_empty() {
        out.line(format!("no change between seq {a} and seq {b}"))?;
    }
    for c in changes {
        out.line(c)?;
    }
    Ok(out.finish()?)
}
