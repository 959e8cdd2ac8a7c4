//! The journal (issue 26, its first part): an append-only file of framed records, the
//! storage the store of record is to be built on. Not yet used by [`crate::RedbLog`]; what it
//! promises is tested here, on a simulated disk that loses power ([`SimStorage`]).
//!
//! - A record is a frame (`frame`): length, CRC-32C, body. Several records appended at
//!   once are a batch: their frames, then a commit frame; a reader sees a batch's records at
//!   its commit, and never a batch without one.
//! - [`Journal::append`] writes every frame of the call in one write, then syncs: it returns
//!   (acknowledges) only after a sync that began after the write. [`Journal::write`] and
//!   [`Journal::sync`] are the two halves, for a writer that syncs outside a lock.
//! - [`Journal::open`] reads the file from the start. A frame that is not whole where no
//!   later frame says the bytes there were already durable lies in what was never synced (a
//!   torn write, writes a crash kept out of order, zeros a file system left): from there the
//!   tail is cut, durably, and said. A bad frame that a later frame says was durable is
//!   damage: an error naming its byte, and nothing is cut or skipped. Every frame carries how
//!   much of the journal its writer knew synced (`frame`).
//!
//! Not here yet (issue 26 goes on): segments, the advisory lock across processes and the
//! syncs that overlap outside it, redb as an index caught up from the journal, upgrades.
//!
//! | module | what |
//! |---|---|
//! | `crc` | CRC-32C |
//! | `frame` | a frame's bytes, read and written |
//! | `storage` | [`Storage`]: [`FileStorage`], and [`SimStorage`], a disk that loses power |

mod crc;
mod frame;
mod storage;

use std::collections::HashMap;
use std::io;

pub use storage::{Fate, FileStorage, SimStorage, Storage};

use frame::{Body, Read};

/// What went wrong with a journal, by who must act.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// The disk refused (full, gone, no permission): the operator.
    #[error("the journal's disk: {0}; nothing was acknowledged, and the journal is as it was")]
    Io(#[from] io::Error),
    /// A frame that is not one, with whole frames after it: the operator.
    #[error(
        "the journal is damaged at byte {at}: {why}; records after it exist, so it is not a torn write: nothing was skipped or cut. Keep a copy of the file and restore the store from a backup or an export"
    )]
    Damaged {
        /// Where the bad frame starts.
        at: u64,
        /// What is wrong with it.
        why: String,
    },
    /// A record over the frame limit: the caller.
    #[error("a record of {len} bytes is over the journal's limit of {max}: nothing was written")]
    TooLarge {
        /// Its size.
        len: usize,
        /// The limit.
        max: usize,
    },
}

/// What [`Journal::open`] read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Opened {
    /// Every committed record, in order.
    pub records: Vec<Vec<u8>>,
    /// The bytes cut at the tail (a torn write), and where: `(offset, bytes)`.
    pub cut: Option<(u64, u64)>,
    /// Batches whose commit is not there (ignored; their records are not in `records`).
    pub uncommitted: usize,
}

/// An open journal.
#[derive(Debug)]
pub struct Journal<S: Storage> {
    storage: S,
    /// Where the next frame goes.
    end: u64,
    /// How much of the journal is known synced (where the last sync began).
    durable: u64,
    /// The batch the next multi-record append takes.
    next_batch: u64,
}

impl<S: Storage> Journal<S> {
    /// Opens the journal in `storage`: its committed records, and its torn tail cut.
    ///
    /// # Errors
    /// [`JournalError::Damaged`] for a bad frame before the tail; [`JournalError::Io`].
    pub fn open(mut storage: S) -> Result<(Self, Opened), JournalError> {
        let len = storage.size()?;
        let mut bytes = vec![0u8; usize::try_from(len).unwrap_or(usize::MAX)];
        let n = storage.read_at(0, &mut bytes)?;
        bytes.truncate(n);
        let scan = scan(&bytes)?;
        let mut opened = Opened {
            records: scan.records,
            cut: None,
            uncommitted: scan.open_batches,
        };
        if scan.end < bytes.len() as u64 {
            storage.truncate(scan.end)?;
            storage.sync()?;
            opened.cut = Some((scan.end, bytes.len() as u64 - scan.end));
            tracing::warn!(
                "the journal ended in a torn write: {} bytes cut at byte {}",
                bytes.len() as u64 - scan.end,
                scan.end
            );
        }
        Ok((
            Self {
                storage,
                end: scan.end,
                durable: scan.end,
                next_batch: scan.max_batch + 1,
            },
            opened,
        ))
    }

    /// Writes `records` (one record, or a batch) and syncs: acknowledged when it returns.
    ///
    /// # Errors
    /// [`JournalError::TooLarge`], [`JournalError::Io`] (nothing acknowledged; the journal
    /// is as it was for every later append).
    pub fn append(&mut self, records: &[&[u8]]) -> Result<(), JournalError> {
        self.write(records)?;
        self.sync()
    }

    /// Writes `records` without syncing: not durable, nor acknowledged, until [`Journal::sync`]
    /// returns.
    ///
    /// # Errors
    /// As [`Journal::append`].
    pub fn write(&mut self, records: &[&[u8]]) -> Result<(), JournalError> {
        let max = frame::MAX_BODY - frame::BODY_HEAD;
        if let Some(big) = records.iter().find(|r| r.len() > max) {
            return Err(JournalError::TooLarge {
                len: big.len(),
                max,
            });
        }
        let durable = self.durable;
        let mut out = Vec::new();
        match records {
            [] => return Ok(()),
            [one] => frame::encode(durable, &Body::Record(one), &mut out),
            many => {
                let batch = self.next_batch;
                self.next_batch += 1;
                for data in many {
                    frame::encode(durable, &Body::Part { batch, data }, &mut out);
                }
                frame::encode(durable, &Body::Commit { batch }, &mut out);
            }
        }
        if let Err(e) = self.storage.write_at(self.end, &out) {
            // Whatever part of it landed is cut, so the next append starts where this did.
            let _ = self.storage.truncate(self.end);
            return Err(e.into());
        }
        self.end += out.len() as u64;
        Ok(())
    }

    /// Makes every write so far durable.
    ///
    /// # Errors
    /// [`JournalError::Io`].
    pub fn sync(&mut self) -> Result<(), JournalError> {
        let upto = self.end;
        self.storage.sync()?;
        self.durable = self.durable.max(upto);
        Ok(())
    }

    /// The storage (tests crash it).
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// The storage, to change (tests fill its disk).
    pub fn storage_mut(&mut self) -> &mut S {
        &mut self.storage
    }
}

/// What a scan of a journal's bytes found.
struct Scan {
    records: Vec<Vec<u8>>,
    /// Where the last whole frame ends.
    end: u64,
    open_batches: usize,
    max_batch: u64,
}

/// A whole frame after `from` that says bytes past `from` were durable when it was written:
/// its offset. Frames are followed one after another where they chain, byte by byte where
/// they do not.
fn durable_past(bytes: &[u8], from: usize) -> Option<usize> {
    let mut p = from + 1;
    while p < bytes.len() {
        match frame::read(&bytes[p..]) {
            Read::Frame { durable, len, .. } => {
                if durable > from as u64 {
                    return Some(p);
                }
                p += len;
            }
            _ => p += 1,
        }
    }
    None
}

/// Reads every frame of `bytes`; stops at a torn tail, fails on damage before it.
fn scan(bytes: &[u8]) -> Result<Scan, JournalError> {
    let mut records = Vec::new();
    let mut parts: HashMap<u64, Vec<Vec<u8>>> = HashMap::new();
    let mut at = 0usize;
    let mut max_batch = 0;
    while at < bytes.len() {
        match frame::read(&bytes[at..]) {
            Read::Frame { body, len, .. } => {
                match body {
                    Body::Record(data) => records.push(data.to_vec()),
                    Body::Part { batch, data } => {
                        max_batch = max_batch.max(batch);
                        parts.entry(batch).or_default().push(data.to_vec());
                    }
                    Body::Commit { batch } => {
                        max_batch = max_batch.max(batch);
                        records.extend(parts.remove(&batch).unwrap_or_default());
                    }
                }
                at += len;
            }
            Read::Short | Read::Bad { .. } => {
                // Bytes a later writer knew durable are damage, even where a flipped length
                // byte makes the frame run past the end; anything else was never synced.
                if let Some(next) = durable_past(bytes, at) {
                    let why = match frame::read(&bytes[at..]) {
                        Read::Bad { why } => why,
                        _ => "a frame runs past the end of the file".to_owned(),
                    };
                    return Err(JournalError::Damaged {
                        at: at as u64,
                        why: format!(
                            "{why}, and the frame at byte {next} was written when it was already durable"
                        ),
                    });
                }
                break;
            }
        }
    }
    Ok(Scan {
        records,
        end: at as u64,
        open_batches: parts.len(),
        max_batch,
    })
}
