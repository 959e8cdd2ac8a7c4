//! `planlog copy --from STORE --to STORE [SESSION...]`: sessions moved between stores (a redb
//! file and a PostgreSQL database, either way) with their events byte for byte (the same ids
//! and hashes), each session in one transaction. A session the destination holds already is
//! left alone when it holds the same events, gets the rest when it holds a beginning of them,
//! and is refused when it holds something else.

use planlog_core::{EventLog, LogError, Seq, SessionId, SessionInfo, UserError, events::Event};
use planlog_store::StoreAddress;

use super::session_id;
use crate::support::failure::Failure;
use crate::support::open::Store;

/// Arguments of `planlog copy`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The store to copy from (a path or a postgres:// URL).
    #[arg(long, value_name = "STORE")]
    from: String,
    /// The store to copy to (created when it is a missing file).
    #[arg(long, value_name = "STORE")]
    to: String,
    /// Only these sessions (default: all).
    sessions: Vec<String>,
}

/// Events are read and written this many at a time.
const CHUNK: u64 = 2_000;

fn open(text: &str) -> Result<(String, std::sync::Arc<dyn EventLog>), Failure> {
    let address = StoreAddress::parse(text).map_err(|e| Failure::cannot_run(e.to_string()))?;
    let shown = address.shown();
    let log = address.open()?;
    Ok((shown, log))
}

pub(crate) fn run(_store: &Store, args: Args) -> Result<(), Failure> {
    let (from_shown, from) = open(&args.from)?;
    let (to_shown, to) = open(&args.to)?;
    let mut infos: Vec<SessionInfo> = if args.sessions.is_empty() {
        from.sessions()?
    } else {
        args.sessions
            .iter()
            .map(|s| {
                let id = session_id(s)?;
                from.session(&id)?
                    .ok_or_else(|| Failure::from(LogError::from(UserError::UnknownSession(id))))
            })
            .collect::<Result<_, _>>()?
    };
    // Parents before their forks (the order they were made in).
    infos.sort_by_key(|i| i.created);
    let (mut copied, mut already, mut refused) = (0, 0, 0);
    for info in &infos {
        match copy_session(&*from, &*to, &info.id, info.events) {
            Ok(0) => already += 1,
            Ok(n) => {
                copied += 1;
                eprintln!("planlog: copied {} ({n} events) to {to_shown}", info.id);
            }
            Err(CopyError::Other(e)) => return Err(e.into()),
            Err(CopyError::Differs(seq)) => {
                refused += 1;
                eprintln!(
                    "planlog: {} exists in {to_shown} with other content (they differ at seq {seq}); left as it is",
                    info.id
                );
            }
        }
    }
    eprintln!(
        "planlog: {copied} sessions copied from {from_shown} to {to_shown}, {already} already there{}",
        if refused > 0 {
            format!(", {refused} refused")
        } else {
            String::new()
        }
    );
    if refused > 0 {
        return Err(Failure::no(format!(
            "{refused} sessions exist in {to_shown} with other content and were not copied"
        )));
    }
    Ok(())
}

enum CopyError {
    /// The destination holds another history (differing at this seq).
    Differs(u64),
    Other(LogError),
}

impl From<LogError> for CopyError {
    fn from(e: LogError) -> Self {
        Self::Other(e)
    }
}

/// Copies what `to` lacks of session `id` (whose last seq in `from` is `last`); returns how
/// many events were appended.
fn copy_session(
    from: &dyn EventLog,
    to: &dyn EventLog,
    id: &SessionId,
    last: u64,
) -> Result<u64, CopyError> {
    let there = match to.head(id) {
        Ok(h) => h,
        // A deleted id: only the same session's first event may restore it (the append says).
        Err(LogError::User(UserError::SessionDeleted(_))) => None,
        Err(e) => return Err(e.into()),
    };
    let start = match there {
        None => 1,
        Some(head) if head.seq.get() > last => {
            let ours = from.read(id, Seq::FIRST, None)?;
            let theirs = to.read(id, Seq::FIRST, None)?;
            let at = ours
                .iter()
                .zip(&theirs)
                .position(|(a, b)| a.hash != b.hash)
                .map_or(last + 1, |i| i as u64 + 1);
            return Err(CopyError::Differs(at));
        }
        Some(head) => {
            let ours = from.read(id, head.seq, Some(head.seq))?;
            if ours.first().map(|e| e.hash) != Some(head.hash) {
                return Err(CopyError::Differs(head.seq.get()));
            }
            head.seq.get() + 1
        }
    };
    if start > last {
        return Ok(0);
    }
    // Streamed in chunks, appended in one transaction.
    let mut next = start;
    let mut buffer: std::collections::VecDeque<Event> = std::collections::VecDeque::new();
    let mut events = std::iter::from_fn(|| {
        if buffer.is_empty() && next <= last {
            let (a, b) = (next, (next + CHUNK - 1).min(last));
            match Seq::new(a).and_then(|a| Seq::new(b).map(|b| (a, b))) {
                Ok((a, b)) => match from.read(id, a, Some(b)) {
                    Ok(chunk) => buffer.extend(chunk),
                    Err(e) => return Some(Err(e)),
                },
                Err(_) => return None,
            }
            next = b + 1;
        }
        buffer.pop_front().map(Ok)
    });
    Ok(to.append_iter(&mut events)?)
}
