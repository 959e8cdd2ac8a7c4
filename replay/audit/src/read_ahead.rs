//! Reading a session ahead of its reader: decoding events is most of a read, so reader
//! threads decode the next chunks while the caller works on the last one, and the caller
//! gets them in order.

use planlog_core::events::Event;
use planlog_core::{EventLog, LogError, Seq, SessionId};

/// Threads that read ahead (each takes every other chunk).
const READERS: usize = 2;

/// Calls `f` with each chunk of `session` from `from` on, in order, the chunks read and decoded
/// on two threads of their own meanwhile (each holds at most the one chunk it is handing
/// over). Stops after an error (passed to `f`) or when `f` says `false`.
pub fn read_ahead(
    log: &dyn EventLog,
    session: &SessionId,
    from: Seq,
    f: &mut dyn FnMut(Result<Vec<Event>, LogError>) -> bool,
) {
    read_ahead_map(log, session, from, &|chunk| chunk, f);
}

/// [`read_ahead`], with `work` done to each chunk on the thread that read it: `f` gets what
/// `work` made of each chunk, in order. A chunk's events are then decoded, worked on and
/// freed on one thread, and the caller's thread only takes the results (for `history`, its
/// lines). Reading stops after the chunk that was an error (`f` gets what `work` made of it).
pub fn read_ahead_map<T: Send>(
    log: &dyn EventLog,
    session: &SessionId,
    from: Seq,
    work: &(dyn Fn(Result<Vec<Event>, LogError>) -> T + Sync),
    f: &mut dyn FnMut(T) -> bool,
) {
    std::thread::scope(|scope| {
        let readers: Vec<_> = (0..READERS)
            .map(|first| {
                let (tx, rx) = std::sync::mpsc::sync_channel::<(bool, T)>(0);
                scope.spawn(move || {
                    for chunk in log.scan(session, from).strided(first, READERS) {
                        let stop = chunk.is_err();
                        if tx.send((stop, work(chunk))).is_err() || stop {
                            return;
                        }
                    }
                });
                rx
            })
            .collect();
        // A reader whose scan ended closes its channel: the session ends there.
        for k in 0.. {
            let Ok((stop, made)) = readers[k % READERS].recv() else {
                break;
            };
            if !f(made) || stop {
                break;
            }
        }
        // Dropping the receivers ends the readers at their next send.
        drop(readers);
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;
    use planlog_core::MemoryLog;
    use planlog_core::events::Origin;
    use planlog_core::testkit::{item, seal_after, sid, started, written};

    /// Sessions of every length around the chunk size, read ahead from several seqs: the
    /// chunks, in the order given, are the session's events from there, each once.
    #[test]
    fn chunks_come_in_order_whatever_the_length() {
        let chunk = planlog_core::limits::SCAN_CHUNK;
        for n in [
            1,
            chunk - 1,
            chunk,
            chunk + 1,
            2 * chunk,
            2 * chunk + 1,
            5 * chunk + 7,
        ] {
            let log = MemoryLog::new();
            let s = sid("s");
            let mut prev = seal_after(None, &s, None, started(Origin::New));
            log.append(&prev).unwrap();
            for i in 1..n {
                let e = seal_after(
                    Some(&prev),
                    &s,
                    None,
                    written(vec![item(
                        "1",
                        &format!("w{i}"),
                        planlog_core::PlanStatus::Pending,
                    )]),
                );
                log.append(&e).unwrap();
                prev = e;
            }
            for from in [1, 2, chunk, n] {
                let from = Seq::new(from.min(n)).unwrap();
                let mut seqs = Vec::new();
                read_ahead(&log, &s, from, &mut |c| {
                    seqs.extend(c.unwrap().iter().map(|e| e.seq.get()));
                    true
                });
                assert_eq!(
                    seqs,
                    (from.get()..=n).collect::<Vec<_>>(),
                    "n {n} from {from:?}"
                );
            }
            // Stopping early stops.
            let mut calls = 0;
            read_ahead(&log, &s, Seq::FIRST, &mut |_| {
                calls += 1;
                false
            });
            assert_eq!(calls, 1);
        }
    }
}
