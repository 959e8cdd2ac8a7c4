//! `planlog copy --from STORE --to STORE [SESSION...]`: sessions moved between stores (a redb
//! file and a PostgreSQL database, either way) with their events byte for byte (the same ids
//! and hashes), each session in one transaction. A session the destination holds already is
//! left alone when it holds the same events (or those and newer ones, written there since),
//! gets the rest when it holds a beginning of them, and is refused when it holds something
//! else, naming the first seq where the two differ.

use planlog_core::{EventLog, LogError, Seq, SessionId, SessionInfo, UserError};
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
    let bar = crate::support::progress::events("copying", infos.iter().map(|i| i.events).sum());
    for info in &infos {
        let before = bar.position();
        let result = copy_session(&*from, &*to, &info.id, info.events, &|| bar.inc(1));
        bar.set_position(before + info.events);
        match result {
            Ok(Copied::Nothing { newer: 0 }) => already += 1,
            Ok(Copied::Nothing { newer }) => {
                already += 1;
                eprintln!(
                    "planlog: {} is in {to_shown} already, with {newer} newer events after the {} copied here; left as it is",
                    info.id, info.events
                );
            }
            Ok(Copied::Events(n)) => {
                copied += 1;
                eprintln!("planlog: copied {} ({n} events) to {to_shown}", info.id);
            }
            Err(CopyError::Other(e)) => return Err(e.into()),
            Err(CopyError::Differs(seq)) => {
                refused += 1;
                eprintln!(
                    "planlog: {} exists in {to_shown} with other content (the two differ from seq {seq} on); left as it is",
                    info.id
                );
            }
        }
    }
    bar.finish_and_clear();
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

/// What a copy of one session did.
enum Copied {
    /// Appended this many events.
    Events(u64),
    /// The destination holds every event already (and `newer` events after them).
    Nothing {
        /// Events the destination holds past the source's last.
        newer: u64,
    },
}

/// The hash of event `seq` of session `id` in `log`.
fn hash_at(
    log: &dyn EventLog,
    id: &SessionId,
    seq: u64,
) -> Result<Option<planlog_core::events::Hash>, LogError> {
    let seq = Seq::new(seq).map_err(|_| LogError::from(UserError::UnknownSession(id.clone())))?;
    Ok(log.read(id, seq, Some(seq))?.first().map(|e| e.hash))
}

/// The first seq at which the two logs of session `id` differ, looking at seqs up to `upto`
/// (`None`: they agree up to it). Each event's hash covers the one before it, so equal
/// hashes at a seq mean equal histories up to there: a binary search of single events.
fn first_difference(
    from: &dyn EventLog,
    to: &dyn EventLog,
    id: &SessionId,
    upto: u64,
) -> Result<Option<u64>, LogError> {
    if upto == 0 || hash_at(from, id, upto)? == hash_at(to, id, upto)? {
        return Ok(None);
    }
    // Invariant kept: they differ at `hi`, and agree at `lo` (0: before the first event).
    let (mut lo, mut hi) = (0, upto);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if hash_at(from, id, mid)? == hash_at(to, id, mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some(hi))
}

/// Copies what `to` lacks of session `id` (whose last seq in `from` is `last`).
fn copy_session(
    from: &dyn EventLog,
    to: &dyn EventLog,
    id: &SessionId,
    last: u64,
    read: &dyn Fn(),
) -> Result<Copied, CopyError> {
    let there = match to.head(id) {
        Ok(h) => h,
        // A deleted id: only the same session's first event may restore it (the append says).
        Err(LogError::User(UserError::SessionDeleted(_))) => None,
        Err(e) => return Err(e.into()),
    };
    let start = match there {
        None => 1,
        Some(head) => {
            let common = head.seq.get().min(last);
            if let Some(seq) = first_difference(from, to, id, common)? {
                return Err(CopyError::Differs(seq));
            }
            if head.seq.get() >= last {
                return Ok(Copied::Nothing {
                    newer: head.seq.get() - last,
                });
            }
            head.seq.get() + 1
        }
    };
    if start > last {
        return Ok(Copied::Nothing { newer: 0 });
    }
    // Streamed in chunks, appended in one transaction; what was appended to the source
    // after `last` was read is left for the next copy.
    let Ok(start) = Seq::new(start) else {
        return Ok(Copied::Nothing { newer: 0 });
    };
    let mut events = from
        .scan(id, start)
        .events()
        .take_while(|e| e.as_ref().map_or(true, |e| e.seq.get() <= last))
        .inspect(|_| read());
    Ok(Copied::Events(to.append_iter(&mut events)?))
}
