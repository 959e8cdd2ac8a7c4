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
//! Not here yet (issue 26 goes on): segments, redb as an index caught up from the journal,
//! the store's writes moved onto it, upgrades.
//!
//! | module | what |
//! |---|---|
//! | `chains` | [`check_chains`]: a journal's records verified as events and hash chains, without redb |
//! | `crc` | CRC-32C |
//! | `frame` | a frame's bytes, read and written |
//! | `storage` | [`Storage`]: [`FileStorage`], and [`SimStorage`], a disk that loses power |
//! | `shared` | [`SharedJournal`]: one file shared by threads (group commit) and processes (a lock for the write, the sync outside it) |

mod chains;
mod crc;
mod frame;
mod shared;
mod storage;

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;

pub use chains::{BrokenChain, Chains, check_chains};
pub use shared::SharedJournal;
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

/// Refuses a record over the frame limit.
pub(crate) fn check_sizes(records: &[&[u8]]) -> Result<(), JournalError> {
    let max = frame::MAX_BODY - frame::BODY_HEAD;
    match records.iter().find(|r| r.len() > max) {
        Some(big) => Err(JournalError::TooLarge {
            len: big.len(),
            max,
        }),
        None => Ok(()),
    }
}

impl JournalError {
    /// The same error again, for each append of a group commit it failed.
    pub(crate) fn again(&self) -> JournalError {
        match self {
            JournalError::Io(e) => JournalError::Io(io::Error::new(e.kind(), e.to_string())),
            JournalError::Damaged { at, why } => JournalError::Damaged {
                at: *at,
                why: why.clone(),
            },
            JournalError::TooLarge { len, max } => JournalError::TooLarge {
                len: *len,
                max: *max,
            },
        }
    }
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
        let scan = scan(&bytes, 0)?;
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

    /// Reads what other writers appended since this journal last looked, cutting a torn
    /// frame at the end (a writer that died mid-write): the records committed there. Called
    /// under the lock that orders writers, before writing.
    ///
    /// # Errors
    /// [`JournalError::Damaged`], [`JournalError::Io`].
    pub fn catch_up(&mut self) -> Result<Vec<Vec<u8>>, JournalError> {
        let size = self.storage.size()?;
        if size <= self.end {
            if size < self.end {
                // Cut by another writer (a torn tail this one had not seen): start there.
                self.end = size;
            }
            return Ok(Vec::new());
        }
        let mut bytes = vec![0u8; usize::try_from(size - self.end).unwrap_or(usize::MAX)];
        let n = self.storage.read_at(self.end, &mut bytes)?;
        bytes.truncate(n);
        let scan = scan(&bytes, self.end)?;
        if scan.end < self.end + bytes.len() as u64 {
            // Overwritten by the next frame anyway; cut so no stale byte follows it.
            self.storage.truncate(scan.end)?;
            tracing::warn!(
                "the journal ended in a torn write: cut at byte {}",
                scan.end
            );
        }
        self.end = scan.end;
        self.next_batch = self.next_batch.max(scan.max_batch + 1);
        Ok(scan.records)
    }

    /// Where the next frame goes (the journal's length as this writer knows it).
    pub fn end(&self) -> u64 {
        self.end
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
        check_sizes(records)?;
        let mut out = Vec::new();
        self.encode(records, &mut out);
        self.write_encoded(&out)
    }

    /// Appends the frames of one append of `records` (one record, or a batch with its commit)
    /// to `out`, taking a batch id when it is a batch. Sizes are checked already.
    pub(crate) fn encode(&mut self, records: &[&[u8]], out: &mut Vec<u8>) {
        let durable = self.durable;
        match records {
            [] => {}
            [one] => frame::encode(durable, &Body::Record(Cow::Borrowed(one)), out),
            many => {
                let batch = self.next_batch;
                self.next_batch += 1;
                for data in many {
                    let data = Cow::Borrowed(*data);
                    frame::encode(durable, &Body::Part { batch, data }, out);
                }
                frame::encode(durable, &Body::Commit { batch }, out);
            }
        }
    }

    /// Writes encoded frames at the end, in one write.
    pub(crate) fn write_encoded(&mut self, out: &[u8]) -> Result<(), JournalError> {
        if out.is_empty() {
            return Ok(());
        }
        if let Err(e) = self.storage.write_at(self.end, out) {
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
        self.synced(upto);
        Ok(())
    }

    /// Says a sync that began when the journal was `upto` bytes long has ended (a sync made
    /// outside this value, by [`SharedJournal`]).
    pub(crate) fn synced(&mut self, upto: u64) {
        self.durable = self.durable.max(upto);
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
/// they do not. `bytes` start at byte `base` of the journal.
fn durable_past(bytes: &[u8], from: usize, base: u64) -> Option<usize> {
    let mut p = from + 1;
    while p < bytes.len() {
        match frame::read(&bytes[p..]) {
            Read::Frame { durable, len, .. } => {
                if durable > base + from as u64 {
                    return Some(p);
                }
                p += len;
            }
            _ => p += 1,
        }
    }
    None
}

/// Reads every frame of `bytes`, which start at byte `base` of the journal; stops at a torn
/// tail, fails on damage before it.
fn scan(bytes: &[u8], base: u64) -> Result<Scan, JournalError> {
    let mut records = Vec::new();
    let mut parts: HashMap<u64, Vec<Vec<u8>>> = HashMap::new();
    let mut at = 0usize;
    let mut max_batch = 0;
    while at < bytes.len() {
        match frame::read(&bytes[at..]) {
            Read::Frame { body, len, .. } => {
                match body {
                    Body::Record(data) => records.push(data.into_owned()),
                    Body::Part { batch, data } => {
                        max_batch = max_batch.max(batch);
                        parts.entry(batch).or_default().push(data.into_owned());
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
                if let Some(next) = durable_past(bytes, at, base) {
                    let why = match frame::read(&bytes[at..]) {
                        Read::Bad { why } => why,
                        _ => "a frame runs past the end of the file".to_owned(),
                    };
                    return Err(JournalError::Damaged {
                        at: base + at as u64,
                        why: format!(
                            "{why}, and the frame at byte {} was written when it was already durable",
                            base + next as u64
                        ),
                    });
                }
                break;
            }
        }
    }
    Ok(Scan {
        records,
        end: base + at as u64,
        open_batches: parts.len(),
        max_batch,
    })
}
