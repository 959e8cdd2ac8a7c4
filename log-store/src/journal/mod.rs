//! The journal (issue 26): an append-only file of framed records, the store of record of
//! [`crate::JournaledLog`]. What it promises is tested on a simulated disk that loses power
//! ([`SimStorage`]).
//!
//! - A record is a frame (`frame`): length, CRC-32C, body. Several records appended at
//!   once are a batch: their frames, then a commit frame; a reader sees a batch's records at
//!   its commit, and never a batch without one.
//! - [`Journal::append`] writes every frame of the call in one write, then syncs: it returns
//!   (acknowledges) only after a sync that began after the write. [`Journal::write`] and
//!   [`Journal::sync`] are the two halves, for a writer that syncs outside a lock.
//! - On a file the journal keeps zeros written past its end ([`PREALLOCATE`]), and an append
//!   overwrites them: its sync then writes the data, not the file's size (on an ext4 with a
//!   journal, 0.6 x an append that grows the file: BENCHMARKS.md § "Appends over zeros").
//!   Zeros to the end of the file are where the journal ends, never a torn write to cut.
//! - [`Journal::open`] reads the file from the start. A frame that is not whole where no
//!   later frame says the bytes there were already durable lies in what was never synced (a
//!   torn write, writes a crash kept out of order): from there the tail is cut, durably,
//!   and said, its bytes first copied beside the file (damage to the last write synced
//!   looks the same at the very end; only where the copy fails, a full disk, does the cut
//!   go ahead without it). A bad frame that a later frame says was durable is
//!   damage: an error naming its byte, and nothing is cut or skipped. Every frame carries how
//!   much of the journal its writer knew synced (`frame`). A file without one whole frame
//!   whose first bytes no torn first write of planlog's could have left is another
//!   program's: [`JournalError::NotOurs`], and nothing is cut.
//!
//! Not here: segment files (the journal is one file; `JournaledLog::compact` rewrites it to
//! reclaim deleted sessions' space).
//!
//! | module | what |
//! |---|---|
//! | `chains` | [`check_chains`]: a journal's records verified as events and hash chains, without redb |
//! | `crc` | CRC-32C |
//! | `frame` | a frame's bytes, read and written |
//! | `record` | [`Record`]: what a record means, an event or a tombstone |
//! | `storage` | [`Storage`]: [`FileStorage`], and [`SimStorage`], a disk that loses power |
//! | `shared` | [`SharedJournal`]: one file shared by threads (group commit) and processes (a lock for the write, the sync outside it) |
//! | `lock_wait` | a bounded wait for another process's lock, woken when it is let go (a helper thread blocks in `flock`) |

mod chains;
mod crc;
mod frame;
mod lock_wait;
mod record;
mod shared;
mod storage;

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;

pub use chains::{BrokenChain, Chains, check_chains};
pub use crc::crc32c;
pub use record::{Record, tombstone};
pub use shared::SharedJournal;
pub(crate) use shared::lock_within;
pub(crate) use storage::sync_folder_of;
pub use storage::{Fate, FileStorage, SimStorage, Storage, cuts_kept_beside};

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
    /// The record an index places at byte `at` cannot be read there: the journal is
    /// damaged at that place, or the index is wrong about it. Which one, only a read of the
    /// journal from its start tells (rebuilding the index does it): the operator.
    #[error(
        "the record the index places at byte {at} of the journal cannot be read: {why}; the journal is damaged there, or the index is wrong"
    )]
    Unreadable {
        /// Where the index says the record's frame starts.
        at: u64,
        /// What is wrong there.
        why: String,
    },
    /// A file without one whole frame whose bytes no torn first write of planlog's could
    /// have left (a file another program wrote, where the journal goes): the operator.
    #[error(
        "the file holds bytes planlog did not write (no frame planlog writes, nor the start of one a crash could have cut short): nothing was cut. If it is not planlog's journal, move it away; if it is, keep a copy and restore the store from a backup or an export"
    )]
    NotOurs,
    /// A record over the frame limit: the caller.
    #[error("a record of {len} bytes is over the journal's limit of {max}: nothing was written")]
    TooLarge {
        /// Its size.
        len: usize,
        /// The limit.
        max: usize,
    },
}

/// Whether `head` (a file's first bytes) could begin a journal: empty, a whole frame, or the
/// start of one; never a file that begins with a frame's checksum or length wrong.
pub(crate) fn starts_like_a_journal(head: &[u8]) -> bool {
    !matches!(frame::read(head), Read::Bad { .. })
}

/// Whether `head` (a file's first bytes) begins with a whole frame: a journal planlog wrote,
/// whatever follows (a file without one is another program's, or planlog's first write torn:
/// [`Journal::open`] tells which).
pub(crate) fn begins_with_a_frame(head: &[u8]) -> bool {
    matches!(frame::read(head), Read::Frame { .. })
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
            JournalError::Unreadable { at, why } => JournalError::Unreadable {
                at: *at,
                why: why.clone(),
            },
            JournalError::NotOurs => JournalError::NotOurs,
            JournalError::TooLarge { len, max } => JournalError::TooLarge {
                len: *len,
                max: *max,
            },
        }
    }
}

/// A committed record and where it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Where the record's frame starts ([`Journal::read_record`] reads it there).
    pub at: u64,
    /// Where the frame that made it visible ends (its own, or its batch's commit): a
    /// reader that has read the journal this far has read this record.
    pub upto: u64,
    /// The record.
    pub data: Vec<u8>,
}

impl AsRef<[u8]> for Located {
    fn as_ref(&self) -> &[u8] {
        &self.data
    }
}

/// What [`Journal::open`] read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Opened {
    /// Every committed record, in order.
    pub records: Vec<Located>,
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
    /// Opened for reading only: a torn tail is passed over, never cut.
    read_only: bool,
    /// The file's length as this journal last knew it: past `end`, zeros it wrote to
    /// overwrite ([`PREALLOCATE`]).
    allocated: u64,
}

/// How far past its end a journal on a file keeps zeros written (at least; in steps of
/// this). An append then overwrites bytes the file has, and its `fdatasync` writes the data
/// and flushes the disk's cache, but no inode: measured on this machine's ext4, a 1,900-byte
/// write and `fdatasync` took ~130 µs over zeros against ~210 µs past the end of the file
/// (BENCHMARKS.md § "Appends over zeros"). The zeros are where the journal ends: a frame
/// cannot begin with a zero length, and a scan that meets zeros to the end of the file has
/// met the end, not a torn write (nothing is cut).
pub const PREALLOCATE: u64 = 64 * 1024;

/// How far the zeros kept past a write that reaches `end` run: to the next step of
/// [`PREALLOCATE`] after `end` (the journal's rule, and the benchmark probes').
pub fn zeros_kept_to(end: u64) -> u64 {
    (end / PREALLOCATE + 1) * PREALLOCATE
}

impl<S: Storage> Journal<S> {
    /// Opens the journal in `storage`: its committed records, and its torn tail cut.
    ///
    /// # Errors
    /// [`JournalError::Damaged`] for a bad frame before the tail; [`JournalError::Io`].
    pub fn open(storage: S) -> Result<(Self, Opened), JournalError> {
        Self::open_at(storage, 0, false)
    }

    /// Opens the journal in `storage` reading it from byte `from` (a point a reader reached
    /// before: the start of a frame), for reading only or not. Read-write, a torn tail is cut
    /// durably; read-only, it is passed over.
    ///
    /// # Errors
    /// [`JournalError::Damaged`] for a bad frame before the tail, or a `from` past the end
    /// (the journal lost bytes a reader had read); [`JournalError::Io`].
    pub fn open_at(storage: S, from: u64, read_only: bool) -> Result<(Self, Opened), JournalError> {
        let mut records = Vec::new();
        let (journal, mut opened) = Self::open_with(storage, from, read_only, &mut |r| {
            records.push(r);
            Ok(())
        })?;
        opened.records = records;
        Ok((journal, opened))
    }

    /// [`Journal::open_at`] giving each committed record to `on` as it is read (a long
    /// journal is read a chunk at a time, never whole); the [`Opened`] it returns has no
    /// records.
    ///
    /// # Errors
    /// As [`Journal::open_at`], and `on`'s.
    pub fn open_with(
        mut storage: S,
        from: u64,
        read_only: bool,
        on: &mut dyn FnMut(Located) -> Result<(), JournalError>,
    ) -> Result<(Self, Opened), JournalError> {
        let len = storage.size()?;
        if from > len {
            return Err(JournalError::Damaged {
                at: len,
                why: format!(
                    "the journal ends at byte {len}, but byte {from} was read before: it lost records"
                ),
            });
        }
        let scan = scan(&storage, from, on)?;
        let mut opened = Opened {
            records: Vec::new(),
            cut: None,
            uncommitted: scan.open_batches,
        };
        if scan.end == 0 && scan.len > 0 {
            refuse_if_not_torn(&storage)?;
        }
        let mut allocated = len;
        if scan.end < scan.len && !scan.zeros_after && !read_only {
            cut_tail(&mut storage, scan.end, scan.len)?;
            storage.sync()?;
            allocated = scan.end;
            opened.cut = Some((scan.end, scan.len - scan.end));
        }
        Ok((
            Self {
                storage,
                end: scan.end,
                durable: scan.end,
                next_batch: scan.max_batch + 1,
                read_only,
                allocated,
            },
            opened,
        ))
    }

    /// The record whose frame starts at `at` (a [`Located::at`]).
    ///
    /// # Errors
    /// [`JournalError::Unreadable`] when no whole record frame starts there;
    /// [`JournalError::Io`].
    pub fn read_record(&self, at: u64) -> Result<Vec<u8>, JournalError> {
        read_record_in(&self.storage, at)
    }

    /// Reads what other writers appended since this journal last looked, cutting a torn
    /// frame at the end (a writer that died mid-write): the records committed there. Called
    /// under the lock that orders writers, before writing.
    ///
    /// # Errors
    /// [`JournalError::Damaged`], [`JournalError::Io`].
    pub fn catch_up(&mut self) -> Result<Vec<Located>, JournalError> {
        let mut records = Vec::new();
        self.catch_up_with(&mut |r| {
            records.push(r);
            Ok(())
        })?;
        Ok(records)
    }

    /// [`Journal::catch_up`] giving each record to `on` as it is read (another writer's
    /// batch may be long: nothing here holds it).
    ///
    /// # Errors
    /// As [`Journal::catch_up`], and `on`'s.
    pub fn catch_up_with(
        &mut self,
        on: &mut dyn FnMut(Located) -> Result<(), JournalError>,
    ) -> Result<(), JournalError> {
        let size = self.storage.size()?;
        self.allocated = size;
        if size <= self.end {
            if size < self.end {
                // Cut by another writer (a torn tail this one had not seen): start there.
                self.end = size;
            }
            return Ok(());
        }
        // Zeros where the next frame would begin: nothing was appended since (writers
        // append where the frames end; torn writes a crash left are seen on opening).
        let mut head = [0u8; frame::HEADER];
        let n = self.storage.read_at(self.end, &mut head)?;
        if n == head.len() && head == [0; frame::HEADER] {
            return Ok(());
        }
        let scan = scan_by(&self.storage, self.end, CATCH_UP_CHUNK, Reading::Live, on)?;
        if scan.end == 0 && scan.len > 0 {
            refuse_if_not_torn(&self.storage)?;
        }
        if scan.end < scan.len && !scan.zeros_after && !self.read_only {
            // Overwritten by the next frame anyway; cut so no stale byte follows it.
            cut_tail(&mut self.storage, scan.end, scan.len)?;
            self.allocated = scan.end;
        }
        self.end = scan.end;
        self.next_batch = self.next_batch.max(scan.max_batch + 1);
        Ok(())
    }

    /// Starts a batch whose records are encoded one at a time ([`Journal::encode_part`]), for
    /// a batch too long to hold: its id.
    pub(crate) fn begin_batch(&mut self) -> u64 {
        let batch = self.next_batch;
        self.next_batch += 1;
        batch
    }

    /// Appends the frame of one record of `batch` to `out`.
    pub(crate) fn encode_part(&self, batch: u64, data: &[u8], out: &mut Vec<u8>) {
        let data = Cow::Borrowed(data);
        frame::encode(self.durable, &Body::Part { batch, data }, out);
    }

    /// Appends the commit frame of `batch` to `out`.
    pub(crate) fn encode_commit(&self, batch: u64, out: &mut Vec<u8>) {
        frame::encode(self.durable, &Body::Commit { batch }, out);
    }

    /// Cuts what this writer wrote after byte `at` (a batch given up before its commit),
    /// under the lock that orders writers.
    ///
    /// # Errors
    /// [`JournalError::Io`].
    pub(crate) fn cut_to(&mut self, at: u64) -> Result<(), JournalError> {
        if at < self.end {
            self.storage.truncate(at)?;
            self.end = at;
            self.allocated = at;
        }
        Ok(())
    }

    /// Where the next frame goes (the journal's length as this writer knows it).
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The file's length as this journal last knew it: its frames, and on a file the zeros
    /// kept past them ([`PREALLOCATE`]).
    pub fn allocated(&self) -> u64 {
        self.allocated
    }

    /// Gives back the zeros kept past the end (a compacted journal is its records alone; the
    /// next append keeps zeros again), durably.
    ///
    /// # Errors
    /// [`JournalError::Io`].
    pub(crate) fn release_zeros(&mut self) -> Result<(), JournalError> {
        if self.allocated > self.end {
            self.storage.truncate(self.end)?;
            self.storage.sync()?;
            self.allocated = self.end;
        }
        Ok(())
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
    /// Where each record's frame starts in `out` is returned.
    pub(crate) fn encode(&mut self, records: &[&[u8]], out: &mut Vec<u8>) -> Vec<usize> {
        let durable = self.durable;
        match records {
            [] => Vec::new(),
            [one] => {
                let at = out.len();
                frame::encode(durable, &Body::Record(Cow::Borrowed(one)), out);
                vec![at]
            }
            many => {
                let batch = self.next_batch;
                self.next_batch += 1;
                let mut starts = Vec::with_capacity(many.len());
                for data in many {
                    starts.push(out.len());
                    let data = Cow::Borrowed(*data);
                    frame::encode(durable, &Body::Part { batch, data }, out);
                }
                frame::encode(durable, &Body::Commit { batch }, out);
                starts
            }
        }
    }

    /// Writes encoded frames at the end, in one write.
    pub(crate) fn write_encoded(&mut self, out: &[u8]) -> Result<(), JournalError> {
        if out.is_empty() {
            return Ok(());
        }
        let end = self.end + out.len() as u64;
        // Zeros past the frames, in the same write, when the frames reach past those kept:
        // the next appends overwrite them.
        let padded = (self.storage.preallocates() && end > self.allocated).then(|| {
            let to = zeros_kept_to(end);
            let mut padded = out.to_vec();
            padded.resize(padded.len() + usize::try_from(to - end).unwrap_or(0), 0);
            padded
        });
        let mut wrote = padded.as_deref().unwrap_or(out);
        let mut written = self.storage.write_at(self.end, wrote);
        if written.is_err() && padded.is_some() {
            // The zeros did not fit (a disk nearly full, a file size limit): the frames
            // alone may, as they would have without them.
            let _ = self.storage.truncate(self.end);
            wrote = out;
            written = self.storage.write_at(self.end, out);
            if written.is_ok() {
                tracing::warn!(
                    "no room for the zeros the journal keeps past its end; appended without them"
                );
            }
        }
        if let Err(e) = written {
            // Whatever part of it landed is cut, so the next append starts where this did.
            let _ = self.storage.truncate(self.end);
            self.allocated = self.end;
            return Err(e.into());
        }
        self.allocated = self.allocated.max(self.end + wrote.len() as u64);
        self.end = end;
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

/// Cuts the journal in `storage` at `from` (its length `to`): a torn write, or damage to
/// the last write, which looks the same. The bytes are kept first
/// ([`Storage::keep_before_cut`]); where that fails (a full disk) the cut goes ahead without
/// a copy, logged, because a store that refused every write until there was room would lose
/// the calls made meanwhile, and appends into the zeros kept past the end still fit. Not
/// synced here.
fn cut_tail(storage: &mut impl Storage, from: u64, to: u64) -> io::Result<()> {
    match storage.keep_before_cut(from, to) {
        Ok(kept) => tracing::warn!(
            kept = kept
                .as_deref()
                .unwrap_or("nowhere (this storage keeps no copies)"),
            "the journal ended in a torn write (or damage to its last write, which looks the same): {} bytes cut at byte {from}",
            to - from
        ),
        Err(error) => tracing::error!(
            %error,
            "the journal ended in a torn write (or damage to its last write, which looks the same): {} bytes cut at byte {from}, with no copy kept",
            to - from
        ),
    }
    storage.truncate(from)
}

/// The record whose frame starts at `at` in `storage`.
/// [`JournalError::NotOurs`] when a journal without one whole frame cannot be planlog's first
/// write torn short ([`frame::could_be_torn`]): a file another program wrote where the
/// journal goes is never cut. (Past a whole frame the file is planlog's journal, and a bad
/// frame at its tail is a torn write, cut as the journal's rules say.)
fn refuse_if_not_torn(storage: &impl Storage) -> Result<(), JournalError> {
    let mut head = [0u8; frame::TORN_PROBE];
    let n = storage.read_at(0, &mut head)?;
    if frame::could_be_torn(&head[..n]) {
        Ok(())
    } else {
        Err(JournalError::NotOurs)
    }
}

pub(crate) fn read_record_in(storage: &impl Storage, at: u64) -> Result<Vec<u8>, JournalError> {
    let mut head = [0u8; frame::HEADER];
    let n = storage.read_at(at, &mut head)?;
    let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    let damaged = |why: &str| JournalError::Unreadable {
        at,
        why: why.to_owned(),
    };
    if n < frame::HEADER || len > frame::MAX_BODY {
        return Err(damaged("no frame starts there"));
    }
    let mut bytes = vec![0u8; frame::HEADER + len];
    let n = storage.read_at(at, &mut bytes)?;
    bytes.truncate(n);
    match frame::read(&bytes) {
        Read::Frame {
            body: Body::Record(data) | Body::Part { data, .. },
            ..
        } => Ok(data.into_owned()),
        Read::Frame { .. } => Err(damaged("the frame there is a batch's commit")),
        Read::Short => Err(damaged("the frame there runs past the end")),
        Read::Bad { why } => Err(damaged(&why)),
    }
}

/// Most bytes between two records read in one span (more, and the records between them,
/// another session's, would cost more to read than a read of their own).
const SPAN_GAP: u64 = 64 << 10;
/// Most bytes a span starts its records in.
const SPAN: u64 = 4 << 20;
/// What a span reads past its last record's start: a record's frame is almost always
/// shorter (one that is not is read by itself).
const SPAN_TAIL: u64 = 16 << 10;

/// What a read of records by place gives each one: its index among the places asked, and
/// its bytes.
pub type EachRecord<'a> = dyn FnMut(usize, &[u8]) -> Result<(), JournalError> + 'a;

/// The records whose frames start at `ats`, each given to `on` with its index in `ats`:
/// records close together (as a session's are) read in one span, not one read each.
pub(crate) fn read_records_in(
    storage: &impl Storage,
    ats: &[u64],
    on: &mut EachRecord<'_>,
) -> Result<(), JournalError> {
    let mut buf = Vec::new();
    let mut i = 0;
    while i < ats.len() {
        let start = ats[i];
        let mut j = i + 1;
        while j < ats.len()
            && ats[j] > ats[j - 1]
            && ats[j] - ats[j - 1] <= SPAN_GAP
            && ats[j] - start <= SPAN
        {
            j += 1;
        }
        let want = usize::try_from(ats[j - 1] - start + SPAN_TAIL).unwrap_or(usize::MAX);
        buf.resize(want, 0);
        let n = storage.read_at(start, &mut buf)?;
        buf.truncate(n);
        for (k, &at) in ats.iter().enumerate().take(j).skip(i) {
            let off = usize::try_from(at - start).unwrap_or(usize::MAX);
            match frame::read(buf.get(off..).unwrap_or_default()) {
                Read::Frame {
                    body: Body::Record(data) | Body::Part { data, .. },
                    ..
                } => on(k, &data)?,
                // Longer than the span read, or not a record: read by itself (which names
                // what is wrong).
                _ => on(k, &read_record_in(storage, at)?)?,
            }
        }
        i = j;
    }
    Ok(())
}

/// Reads the committed records of `storage` between `from` (the start of a frame) and `to`
/// (the end of one), giving each to `on`.
pub(crate) fn read_between_in(
    storage: &impl Storage,
    from: u64,
    to: u64,
    on: &mut dyn FnMut(Located) -> Result<(), JournalError>,
) -> Result<(), JournalError> {
    if from >= to {
        return Ok(());
    }
    scan(&Bounded { storage, end: to }, from, on).map(|_| ())
}

/// A storage read only up to `end`.
struct Bounded<'a, S> {
    storage: &'a S,
    end: u64,
}

impl<S: Storage> Storage for Bounded<'_, S> {
    fn size(&self) -> io::Result<u64> {
        Ok(self.end.min(self.storage.size()?))
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let room = usize::try_from(self.end.saturating_sub(offset)).unwrap_or(usize::MAX);
        let n = buf.len().min(room);
        self.storage.read_at(offset, &mut buf[..n])
    }
    fn write_at(&mut self, _: u64, _: &[u8]) -> io::Result<()> {
        Err(io::Error::other("a bounded view of a journal is read-only"))
    }
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn truncate(&mut self, _: u64) -> io::Result<()> {
        Err(io::Error::other("a bounded view of a journal is read-only"))
    }
}

/// What a scan of a journal found.
struct Scan {
    /// Where the last whole frame ends.
    end: u64,
    open_batches: usize,
    max_batch: u64,
    /// The file's length when the scan began.
    len: u64,
    /// Whether the bytes from `end` to `len` are zeros (the end, with nothing to cut).
    zeros_after: bool,
}

/// How much of the journal a scan reads at once.
const CHUNK: u64 = 8 << 20;

/// How much a live catch-up reads at once: what other writers appended since this one last
/// looked is a few frames, and the zeros kept past them ([`PREALLOCATE`]) are not read.
const CATCH_UP_CHUNK: u64 = 16 << 10;

/// Where a scan is: opening a journal (every byte past the last frame read, so that damage
/// and torn writes a crash left are found), or catching up under the writers' lock with
/// what live writers appended (they append where the frames end, so zeros where a frame
/// would begin are the end, as [`Journal::catch_up_with`] already takes them at its start).
#[derive(Clone, Copy, PartialEq)]
enum Reading {
    /// Every byte to the end of the file is looked at.
    Whole,
    /// A frame head of zeros ends the scan.
    Live,
}

/// Reads every frame of `storage` from byte `from` (the start of a frame), a chunk at a time,
/// giving each committed record to `on` in order; stops at a torn tail, fails on damage
/// before it.
fn scan(
    storage: &impl Storage,
    from: u64,
    on: &mut dyn FnMut(Located) -> Result<(), JournalError>,
) -> Result<Scan, JournalError> {
    scan_by(storage, from, CHUNK, Reading::Whole, on)
}

/// [`scan`], reading `chunk` bytes at a time, as `reading` says.
fn scan_by(
    storage: &impl Storage,
    from: u64,
    chunk: u64,
    reading: Reading,
    on: &mut dyn FnMut(Located) -> Result<(), JournalError>,
) -> Result<Scan, JournalError> {
    let len = storage.size()?;
    // Each open batch's first frame: its records are read again at its commit, so memory
    // does not grow with a batch's length (an import of a million events is one batch).
    let mut parts: HashMap<u64, u64> = HashMap::new();
    let mut max_batch = 0;
    let mut pos = from;
    let mut want = chunk;
    let mut buf = Vec::new();
    loop {
        let size = usize::try_from(want.min(len.saturating_sub(pos))).unwrap_or(usize::MAX);
        buf.resize(size, 0);
        let n = storage.read_at(pos, &mut buf)?;
        buf.truncate(n);
        let last = pos + n as u64 >= len;
        let mut at = 0usize;
        while at < buf.len() {
            match frame::read(&buf[at..]) {
                Read::Frame { body, len, .. } => {
                    let (start, upto) = (pos + at as u64, pos + (at + len) as u64);
                    match body {
                        Body::Record(data) => on(Located {
                            at: start,
                            upto,
                            data: data.into_owned(),
                        })?,
                        Body::Part { batch, .. } => {
                            max_batch = max_batch.max(batch);
                            parts.entry(batch).or_insert(start);
                        }
                        Body::Commit { batch } => {
                            max_batch = max_batch.max(batch);
                            if let Some(first) = parts.remove(&batch) {
                                // The batch's frames lie between its first and its commit:
                                // in what was read when it started there, else read again.
                                let held = usize::try_from(first.saturating_sub(pos))
                                    .ok()
                                    .filter(|_| first >= pos);
                                match held {
                                    Some(from) => {
                                        parts_of(&buf[from..at], first, batch, upto, on)?;
                                    }
                                    None => {
                                        parts_read(storage, first, start, batch, upto, chunk, on)?;
                                    }
                                }
                            }
                        }
                    }
                    at += len;
                }
                Read::Short if !last => break,
                Read::Short | Read::Bad { .. } => {
                    let here = pos + at as u64;
                    let rest = &buf[at..];
                    // Bytes a later writer knew durable are damage, even where a flipped
                    // length byte makes the frame run past the end; anything else was never
                    // synced. The check reads the rest of the file (a tail, the zeros kept
                    // past it, or damage) a window at a time, past the bytes in hand.
                    // Zeros to the end of the file: where the journal ends (kept to be
                    // overwritten, or left by a file system), no frame and nothing to cut.
                    // A live catch-up stops at zeros where a frame would begin: where live
                    // writers' frames end, the zeros kept past them.
                    let read_to = pos + buf.len() as u64;
                    let zeros_next = reading == Reading::Live
                        && rest.get(..frame::HEADER).is_some_and(all_zeros);
                    if zeros_next || (all_zeros(rest) && zeros_from(storage, read_to, len, chunk)?)
                    {
                        return Ok(Scan {
                            end: here,
                            open_batches: parts.len(),
                            max_batch,
                            len,
                            zeros_after: true,
                        });
                    }
                    if let Some(next) = durable_past(storage, here, len, chunk)? {
                        // Not `Short` short of the end: that read more above.
                        let why = match frame::read(&buf[at..]) {
                            Read::Bad { why } => why,
                            _ => "a frame runs past the end of the file".to_owned(),
                        };
                        return Err(JournalError::Damaged {
                            at: here,
                            why: format!(
                                "{why}, and the frame at byte {next} was written when it was already durable"
                            ),
                        });
                    }
                    return Ok(Scan {
                        end: here,
                        open_batches: parts.len(),
                        max_batch,
                        len,
                        zeros_after: false,
                    });
                }
            }
        }
        pos += at as u64;
        if last && at == buf.len() {
            return Ok(Scan {
                end: pos,
                open_batches: parts.len(),
                max_batch,
                len,
                zeros_after: false,
            });
        }
        // A frame longer than what was read: read it whole next time.
        want = if at == 0 {
            match buf.get(..4) {
                Some(l) => {
                    let claimed = u32::from_le_bytes([l[0], l[1], l[2], l[3]]);
                    (u64::from(claimed) + frame::HEADER as u64).max(chunk)
                }
                None => (frame::HEADER as u64).max(chunk),
            }
        } else {
            chunk
        };
    }
}

/// Gives `on` each record of `batch` (committed by a frame ending at `upto`) among the whole
/// frames of `bytes`, which start at journal byte `base`: how many bytes those frames take.
fn parts_of(
    bytes: &[u8],
    base: u64,
    batch: u64,
    upto: u64,
    on: &mut dyn FnMut(Located) -> Result<(), JournalError>,
) -> Result<usize, JournalError> {
    let mut at = 0usize;
    while at < bytes.len() {
        let Read::Frame { body, len, .. } = frame::read(&bytes[at..]) else {
            break;
        };
        if let Body::Part { batch: b, data } = body
            && b == batch
        {
            on(Located {
                at: base + at as u64,
                upto,
                data: data.into_owned(),
            })?;
        }
        at += len;
    }
    Ok(at)
}

/// [`parts_of`] the frames of `storage` from `from` to `to` (frame boundaries a scan has
/// just read whole), read `chunk` bytes at a time.
fn parts_read(
    storage: &impl Storage,
    from: u64,
    to: u64,
    batch: u64,
    upto: u64,
    chunk: u64,
    on: &mut dyn FnMut(Located) -> Result<(), JournalError>,
) -> Result<(), JournalError> {
    let mut pos = from;
    let mut want = chunk;
    let mut buf = Vec::new();
    while pos < to {
        let size = usize::try_from(want.min(to - pos)).unwrap_or(usize::MAX);
        buf.resize(size, 0);
        let n = storage.read_at(pos, &mut buf)?;
        buf.truncate(n);
        let used = parts_of(&buf, pos, batch, upto, on)?;
        if used == 0 {
            // A frame longer than what was read: read it whole, unless it cannot be one.
            let claimed = buf
                .get(..4)
                .map_or(0, |l| u32::from_le_bytes([l[0], l[1], l[2], l[3]]));
            let whole = u64::from(claimed) + frame::HEADER as u64;
            if n < size || whole <= want {
                return Err(JournalError::Damaged {
                    at: pos,
                    why: "a batch's frame read whole a moment ago no longer reads".to_owned(),
                });
            }
            want = whole;
            continue;
        }
        pos += used as u64;
        want = chunk;
    }
    Ok(())
}

/// Whether `storage` holds only zeros from `from` to `len`, read `step` bytes at a time.
fn zeros_from(storage: &impl Storage, from: u64, len: u64, step: u64) -> io::Result<bool> {
    let mut buf = Vec::new();
    let mut pos = from;
    while pos < len {
        buf.resize(
            usize::try_from(step.min(len - pos)).unwrap_or(usize::MAX),
            0,
        );
        let n = storage.read_at(pos, &mut buf)?;
        if n == 0 {
            break;
        }
        if !all_zeros(&buf[..n]) {
            return Ok(false);
        }
        pos += n as u64;
    }
    Ok(true)
}

/// Whether `bytes` are all zeros: looked at a page at a time, each page without a branch
/// per byte (so it is compiled to wide loads; a byte-by-byte search is many times slower).
fn all_zeros(bytes: &[u8]) -> bool {
    bytes
        .chunks(4096)
        .all(|page| page.iter().fold(0u8, |seen, b| seen | b) == 0)
}

/// A whole frame after `from` (and before `len`) that says bytes past `from` were durable
/// when it was written: where it starts. Frames are followed one after another where they
/// chain, byte by byte where they do not. Read `step` bytes of places to try at a time; a
/// frame that runs past them is read by itself, when its first bytes could begin a frame
/// planlog wrote there ([`frame::promised_len`]), so memory is a window plus the longest
/// frame met, whatever the file's length and whatever lies in it.
fn durable_past(storage: &impl Storage, from: u64, len: u64, step: u64) -> io::Result<Option<u64>> {
    let over = (frame::HEADER + frame::BODY_HEAD) as u64;
    let (mut buf, mut alone) = (Vec::new(), Vec::new());
    let mut p = from + 1;
    while p < len {
        let start = p;
        buf.resize(
            usize::try_from((len - start).min(step + over)).unwrap_or(usize::MAX),
            0,
        );
        let n = storage.read_at(start, &mut buf)?;
        buf.truncate(n);
        let end = start + n as u64;
        // Past `limit`, a frame's head may run beyond this window: the next one starts there.
        let limit = if end >= len { end } else { start + step };
        while p < limit {
            let here = buf
                .get(usize::try_from(p - start).unwrap_or(usize::MAX)..)
                .unwrap_or_default();
            let whole = |read: Read<'_>| match read {
                Read::Frame { durable, len, .. } => Some((durable, len)),
                _ => None,
            };
            let found = match frame::read(here) {
                Read::Short if end < len => match frame::promised_len(here, p) {
                    Some(whole_len) if p + whole_len as u64 <= len => {
                        alone.resize(whole_len, 0);
                        let got = storage.read_at(p, &mut alone)?;
                        alone.truncate(got);
                        whole(frame::read(&alone))
                    }
                    _ => None,
                },
                read => whole(read),
            };
            match found {
                Some((durable, _)) if durable > from => return Ok(Some(p)),
                Some((_, flen)) => p += flen as u64,
                None => p += 1,
            }
        }
        if end >= len || n == 0 {
            break;
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use planlog_core::testkit::noise;

    /// A storage under test: the bytes read through it counted, and, without `room`, no
    /// room for the copy a cut keeps.
    struct Probe<S> {
        inner: S,
        read: std::rc::Rc<std::cell::Cell<usize>>,
        room: bool,
    }

    impl<S: Storage> Storage for Probe<S> {
        fn size(&self) -> io::Result<u64> {
            self.inner.size()
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.inner.read_at(offset, buf)?;
            self.read.set(self.read.get() + n);
            Ok(n)
        }
        fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
            self.inner.write_at(offset, bytes)
        }
        fn sync(&mut self) -> io::Result<()> {
            self.inner.sync()
        }
        fn truncate(&mut self, len: u64) -> io::Result<()> {
            self.inner.truncate(len)
        }
        fn preallocates(&self) -> bool {
            self.inner.preallocates()
        }
        fn keep_before_cut(&self, from: u64, to: u64) -> io::Result<Option<String>> {
            if self.room {
                self.inner.keep_before_cut(from, to)
            } else {
                Err(io::Error::from(io::ErrorKind::StorageFull))
            }
        }
    }

    /// A torn tail on a disk with no room for its copy is cut all the same: the store goes
    /// on taking appends (into the zeros it keeps, on a file) rather than refusing them all.
    #[test]
    fn a_cut_whose_copy_finds_no_room_goes_ahead() {
        let (mut journal, _) = Journal::open(SimStorage::new()).unwrap();
        journal.append(&[b"{\"n\":1}"]).unwrap();
        journal.append(&[b"{\"n\":2}"]).unwrap();
        let end = journal.end();
        let mut storage = journal.storage().clone();
        storage.write_at(end, &[9, 0, 0, 0, 1, 2]).unwrap();
        storage.sync().unwrap();
        let no_room = Probe {
            inner: storage,
            read: std::rc::Rc::default(),
            room: false,
        };
        let (mut journal, opened) = Journal::open(no_room).unwrap();
        assert_eq!(opened.cut, Some((end, 6)));
        assert_eq!(opened.records.len(), 2);
        journal.append(&[b"{\"n\":3}"]).unwrap();
        let (_, again) = Journal::open(journal.storage().inner.clone()).unwrap();
        assert_eq!(again.records.len(), 3);
        assert_eq!(again.cut, None);
    }

    /// A live catch-up reads what another writer appended (a record far longer than one of
    /// its reads, a batch longer than several, a torn frame a dead writer left, cut) and
    /// what a scan from the start reads, without reading the zeros kept past the end.
    #[test]
    fn a_catch_up_reads_what_others_appended_and_not_the_zeros_kept_past_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        let read = std::rc::Rc::new(std::cell::Cell::new(0));
        let counted = Probe {
            inner: FileStorage::open(&path).unwrap(),
            read: std::rc::Rc::clone(&read),
            room: true,
        };
        let (mut ours, _) = Journal::open(counted).unwrap();
        let (mut theirs, _) = Journal::open(FileStorage::open(&path).unwrap()).unwrap();
        theirs.append(&[b"{\"n\":0}"]).unwrap();
        assert!(
            theirs.allocated() >= PREALLOCATE,
            "zeros are kept past the end"
        );
        read.set(0);
        assert_eq!(ours.catch_up().unwrap().len(), 1);
        assert_eq!(ours.end(), theirs.end());
        assert!(
            read.get() <= CATCH_UP_CHUNK as usize + frame::HEADER,
            "{} bytes read for one small record, past zeros of {PREALLOCATE}",
            read.get()
        );

        let long = noise(3 * CATCH_UP_CHUNK as usize, 1).into_bytes();
        let batch: Vec<Vec<u8>> = (0..40).map(|i| noise(1000, i + 2).into_bytes()).collect();
        theirs.append(&[long.as_slice()]).unwrap();
        let refs: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
        theirs.append(&refs).unwrap();
        theirs.append(&[b"{\"n\":1}"]).unwrap();
        let mut want = vec![long.clone()];
        want.extend(batch.iter().cloned());
        want.push(b"{\"n\":1}".to_vec());
        let got: Vec<Vec<u8>> = ours
            .catch_up()
            .unwrap()
            .into_iter()
            .map(|r| r.data)
            .collect();
        assert_eq!(got, want);
        assert_eq!(ours.end(), theirs.end());

        // A dead writer's torn frame (a head and part of its body) is cut by the next one.
        let end = theirs.end();
        let mut frame = Vec::new();
        theirs.encode(&[b"{\"torn\":true}"], &mut frame);
        theirs
            .storage_mut()
            .write_at(end, &frame[..frame.len() - 3])
            .unwrap();
        assert!(ours.catch_up().unwrap().is_empty());
        assert_eq!(ours.end(), end);
        let mut after = vec![0u8; frame.len()];
        let n = FileStorage::open(&path)
            .unwrap()
            .read_at(end, &mut after)
            .unwrap();
        assert!(after[..n].iter().all(|b| *b == 0), "the torn frame is cut");

        // What each catch-up read is what a scan of the whole file reads.
        let (_, opened) = Journal::open(FileStorage::open(&path).unwrap()).unwrap();
        assert_eq!(opened.records.len(), 1 + want.len());
        assert_eq!(
            opened.records[1..]
                .iter()
                .map(|r| r.data.clone())
                .collect::<Vec<_>>(),
            want
        );
    }

    /// The search for a frame vouching for bytes past a bad one finds, window by window,
    /// what a search of the whole file in memory finds, from every place in a journal of
    /// chained frames with random bytes between some of them.
    #[test]
    fn the_search_for_a_later_durable_frame_by_windows_is_the_search_in_memory() {
        let (mut journal, _) = Journal::open(SimStorage::new()).unwrap();
        for n in 0..9u32 {
            let text = format!("{{\"n\":{n},\"t\":\"{}\"}}", "x".repeat(n as usize * 7));
            journal.append(&[text.as_bytes()]).unwrap();
            if n % 3 == 1 {
                let end = journal.end();
                let noise: Vec<u8> = (0..13u8).map(|b| b.wrapping_mul(37) | 1).collect();
                journal.storage_mut().write_at(end, &noise).unwrap();
                journal.end = end + noise.len() as u64;
                journal.durable = journal.end;
            }
        }
        let storage = journal.storage();
        let len = storage.size().unwrap();
        let mut whole = vec![0u8; usize::try_from(len).unwrap()];
        storage.read_at(0, &mut whole).unwrap();
        // The search in memory, as it was before windows.
        let in_memory = |from: usize| {
            let mut p = from + 1;
            while p < whole.len() {
                match frame::read(&whole[p..]) {
                    Read::Frame { durable, len, .. } => {
                        if durable > from as u64 {
                            return Some(p as u64);
                        }
                        p += len;
                    }
                    _ => p += 1,
                }
            }
            None
        };
        let mut found = 0;
        for from in 0..whole.len() {
            let want = in_memory(from);
            found += usize::from(want.is_some());
            for step in [1, 2, 5, 64, 1 << 20] {
                let got = durable_past(storage, from as u64, len, step).unwrap();
                assert_eq!(got, want, "from {from}, step {step}");
            }
        }
        assert!(found > whole.len() / 2, "{found} of {}", whole.len());
    }

    /// A journal read a few bytes at a time gives the same records, places and end as read
    /// whole, a torn tail included; and `read_record` finds each record at its place.
    #[test]
    fn reading_by_chunks_gives_what_reading_whole_does() {
        let (mut journal, _) = Journal::open(SimStorage::new()).unwrap();
        let long = "Write the parser tests; ".repeat(40);
        for n in 0..12u32 {
            let a = format!(
                "{{\"n\":{n},\"text\":\"{}\"}}",
                &long[..(n as usize * 37) % long.len()]
            );
            if n % 4 == 3 {
                journal.append(&[a.as_bytes(), b"{\"part\":2}"]).unwrap();
            } else if n == 5 {
                // A batch of many records, one of them long: read again at its commit.
                let parts: Vec<String> = (0..9).map(|k| format!("{{\"k\":{k}}}")).collect();
                let mut refs: Vec<&[u8]> = parts.iter().map(String::as_bytes).collect();
                refs.insert(4, long.as_bytes());
                journal.append(&refs).unwrap();
            } else {
                journal.append(&[a.as_bytes()]).unwrap();
            }
        }
        journal.write(&[b"{\"torn\":1}"]).unwrap();
        let torn_at = journal.end() - 3;
        let mut storage = journal.storage().crash(0, 0);
        storage.truncate(torn_at).unwrap();
        let read = |chunk: u64| {
            let mut seen = Vec::new();
            let scan = scan_by(&storage, 0, chunk, Reading::Whole, &mut |r| {
                seen.push(r);
                Ok(())
            })
            .unwrap();
            (seen, scan.end)
        };
        let (whole, end) = read(1 << 20);
        assert_eq!(whole.len(), 24);
        for chunk in [1, 7, 64, 333] {
            assert_eq!(read(chunk), (whole.clone(), end), "chunk {chunk}");
        }
        for r in &whole {
            assert_eq!(read_record_in(&storage, r.at).unwrap(), r.data);
            assert!(r.upto > r.at && r.upto <= end);
        }
        assert!(matches!(
            read_record_in(&storage, whole[0].at + 1),
            Err(JournalError::Unreadable { .. })
        ));
    }

    /// Records read in spans are the records read one at a time, whatever lies between them
    /// (far apart, longer than a span's margin, asked out of order or twice); a place where
    /// no record starts is an error naming it.
    #[test]
    fn records_read_in_spans_are_the_records_read_one_by_one() {
        let (mut journal, _) = Journal::open(SimStorage::new()).unwrap();
        let mut x = 7u64;
        let mut noise = |len: usize| -> Vec<u8> {
            (0..len)
                .map(|_| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    b'a' + (x >> 59) as u8
                })
                .collect()
        };
        for n in 0..40usize {
            let len = match n % 10 {
                3 => SPAN_TAIL as usize + 5_000,
                7 => SPAN_GAP as usize + 100,
                _ => 50 + n * 13,
            };
            let record = noise(len);
            if n % 6 == 5 {
                journal.append(&[&record, b"{\"part\":2}"]).unwrap();
            } else {
                journal.append(&[&record]).unwrap();
            }
        }
        let mut all = Vec::new();
        scan(journal.storage(), 0, &mut |r| {
            all.push(r);
            Ok(())
        })
        .unwrap();
        let mut asks: Vec<Vec<u64>> = vec![
            all.iter().map(|r| r.at).collect(),
            all.iter().rev().map(|r| r.at).collect(),
            all.iter().step_by(3).map(|r| r.at).collect(),
        ];
        asks.push(vec![all[4].at, all[4].at, all[2].at, all[30].at]);
        for ats in asks {
            let mut got = vec![None; ats.len()];
            read_records_in(journal.storage(), &ats, &mut |k, bytes| {
                assert!(got[k].is_none(), "record {k} given twice");
                got[k] = Some(bytes.to_vec());
                Ok(())
            })
            .unwrap();
            for (k, at) in ats.iter().enumerate() {
                assert_eq!(
                    got[k].as_deref(),
                    Some(read_record_in(journal.storage(), *at).unwrap().as_slice())
                );
            }
        }
        let bad = read_records_in(
            journal.storage(),
            &[all[1].at, all[1].at + 3],
            &mut |_, _| Ok(()),
        );
        assert!(matches!(bad, Err(JournalError::Unreadable { at, .. }) if at == all[1].at + 3));
    }
}
