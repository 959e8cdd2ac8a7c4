//! A journal frame: `[length: u32 LE][CRC-32C of the body: u32 LE][body]`, the body
//! `[kind: u8][durable: u64 LE][batch: u64 LE, for batch frames][data]`. A record of
//! [`COMPRESS_FROM`] bytes or more is kept LZ4-compressed when that is smaller (the kind's
//! high bit set; the data then `[its length: u32 LE][LZ4 block]`): a plan-carrying event
//! holds its plan twice and repeats its keys, which LZ4 folds away (570 bytes for the typical
//! 1,971-byte event: BENCHMARKS.md § The journal).
//!
//! `durable` is how much of the journal its writer knew to be synced when it wrote the frame
//! (the end of the file when its last sync began). A frame that is not whole at byte `x` is
//! damage when a whole frame after it says bytes past `x` were durable; otherwise it lies in
//! what was never synced (a torn write, or writes a crash kept out of order) and is cut.
//!
//! - `RECORD`: one record, committed by itself.
//! - `PART`: one record of batch `batch`, visible only once the batch's `COMMIT` is.
//! - `COMMIT`: batch `batch` is whole; its parts become visible here, in their order.

use std::borrow::Cow;

use super::crc::crc32c;

/// Bytes before a frame's body.
pub(crate) const HEADER: usize = 8;

/// The largest body a frame may have (a record is an event's canonical bytes: planlog caps
/// those far below this).
pub(crate) const MAX_BODY: usize = 64 * 1024 * 1024;

/// What a frame says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body<'a> {
    /// A record committed by itself.
    Record(Cow<'a, [u8]>),
    /// A record of a batch.
    Part {
        /// The batch.
        batch: u64,
        /// The record.
        data: Cow<'a, [u8]>,
    },
    /// The batch is whole.
    Commit {
        /// The batch.
        batch: u64,
    },
}

const RECORD: u8 = 1;
const PART: u8 = 2;
const COMMIT: u8 = 3;
/// Set in the kind when the data is compressed.
const COMPRESSED: u8 = 0x80;

/// The smallest record worth compressing.
pub(crate) const COMPRESS_FROM: usize = 256;

/// The data as stored: compressed (with its length before it) when that is smaller.
fn stored(data: &[u8]) -> Option<Vec<u8>> {
    if data.len() < COMPRESS_FROM {
        return None;
    }
    let len = u32::try_from(data.len()).ok()?;
    let block = lz4_flex::block::compress(data);
    (block.len() + 4 < data.len()).then(|| {
        let mut out = Vec::with_capacity(block.len() + 4);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&block);
        out
    })
}

/// The data of a compressed record, or why it is not one.
fn unpacked(stored: &[u8]) -> Result<Vec<u8>, String> {
    let (Some(len), Some(block)) = (stored.get(..4), stored.get(4..)) else {
        return Err("a compressed record shorter than its length".to_owned());
    };
    let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
    if len > MAX_BODY {
        return Err(format!("a compressed record claims {len} bytes"));
    }
    let data = lz4_flex::block::decompress(block, len)
        .map_err(|e| format!("a compressed record does not decompress ({e})"))?;
    if data.len() == len {
        Ok(data)
    } else {
        Err(format!(
            "a compressed record holds {} bytes, not the {len} it says",
            data.len()
        ))
    }
}

/// Bytes of a body before a record's data: kind, durable, batch.
pub(crate) const BODY_HEAD: usize = 17;

/// Appends the frame of `body`, written when `durable` bytes were known synced, to `out`.
pub(crate) fn encode(durable: u64, body: &Body<'_>, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER]);
    let (kind, batch, data) = match body {
        Body::Record(data) => (RECORD, None, Some(data)),
        Body::Part { batch, data } => (PART, Some(batch), Some(data)),
        Body::Commit { batch } => (COMMIT, Some(batch), None),
    };
    let packed = data.and_then(|d| stored(d));
    out.push(if packed.is_some() {
        kind | COMPRESSED
    } else {
        kind
    });
    out.extend_from_slice(&durable.to_le_bytes());
    if let Some(batch) = batch {
        out.extend_from_slice(&batch.to_le_bytes());
    }
    match (packed, data) {
        (Some(p), _) => out.extend_from_slice(&p),
        (None, Some(d)) => out.extend_from_slice(d),
        (None, None) => {}
    }
    let body_len = out.len() - start - HEADER;
    // A body over `MAX_BODY` is refused by the journal before it is encoded.
    let len = u32::try_from(body_len).unwrap_or(u32::MAX);
    let crc = crc32c(&out[start + HEADER..]);
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

/// What the bytes at the start of `bytes` hold.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Read<'a> {
    /// A whole frame, `len` bytes long, written when `durable` bytes were known synced.
    Frame {
        body: Body<'a>,
        durable: u64,
        len: usize,
    },
    /// Fewer bytes than a frame: the end of the journal, or a write torn there.
    Short,
    /// A frame that is not one (its checksum, its length or its kind is wrong): `why`.
    Bad { why: String },
}

/// The whole length of a frame whose first bytes are `bytes`, found at journal byte `at`,
/// before its body is read: when they could begin a frame planlog wrote there (a length
/// within the limit, a kind it writes, and `durable` not past `at`: no writer knows bytes
/// past where it writes to be synced); `None` when they cannot, or are too few to tell.
pub(crate) fn promised_len(bytes: &[u8], at: u64) -> Option<usize> {
    let head = bytes.get(..HEADER + 9)?;
    let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    if !(9..=MAX_BODY).contains(&len) {
        return None;
    }
    if !matches!(head[HEADER] & !COMPRESSED, RECORD | PART | COMMIT) {
        return None;
    }
    let mut durable = [0u8; 8];
    durable.copy_from_slice(&head[HEADER + 1..HEADER + 9]);
    (u64::from_le_bytes(durable) <= at).then_some(HEADER + len)
}

/// Reads the frame at the start of `bytes`.
pub(crate) fn read(bytes: &[u8]) -> Read<'_> {
    let (Some(len), Some(crc)) = (bytes.get(..4), bytes.get(4..8)) else {
        return Read::Short;
    };
    let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let crc = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
    if len == 0 || len > MAX_BODY {
        return Read::Bad {
            why: format!("a frame claims {len} bytes"),
        };
    }
    let Some(body) = bytes.get(HEADER..HEADER + len) else {
        return Read::Short;
    };
    if crc32c(body) != crc {
        return Read::Bad {
            why: "a frame's checksum does not match its bytes".to_owned(),
        };
    }
    let word = |at: usize| {
        body.get(at..at + 8)
            .map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    };
    let (Some(durable), batch) = (word(1), word(9)) else {
        return Read::Bad {
            why: format!("a frame of {} bytes, too short for its head", body.len()),
        };
    };
    let data = |from: usize| -> Result<Cow<'_, [u8]>, String> {
        let raw = &body[from..];
        if body[0] & COMPRESSED == 0 {
            Ok(Cow::Borrowed(raw))
        } else {
            unpacked(raw).map(Cow::Owned)
        }
    };
    let parsed = match (body[0] & !COMPRESSED, batch) {
        (RECORD, _) => data(9).map(Body::Record),
        (PART, Some(batch)) => data(BODY_HEAD).map(|data| Body::Part { batch, data }),
        (COMMIT, Some(batch)) if body.len() == BODY_HEAD && body[0] == COMMIT => {
            Ok(Body::Commit { batch })
        }
        (_, _) => Err(format!(
            "a frame of kind {} and {} bytes",
            body[0],
            body.len()
        )),
    };
    let parsed = match parsed {
        Ok(p) => p,
        Err(why) => return Read::Bad { why },
    };
    Read::Frame {
        body: parsed,
        durable,
        len: HEADER + len,
    }
}

/// Bytes read at a frame's head (enough for its header, kind and `durable`).
pub(crate) const TORN_PROBE: usize = HEADER + 1 + 8;

/// Whether `head`, a journal's first bytes (up to [`TORN_PROBE`]) when it has no whole
/// frame, could be what planlog's first write left torn short: the start of a frame planlog
/// writes (a length within [`MAX_BODY`], a kind it writes, `durable` 0, as the first frame's
/// is), or zeros where a crash lost those bytes. A file another program wrote (random bytes,
/// text) fails it: its first word a length over the limit, its ninth byte no kind, or
/// `durable` not 0.
pub(crate) fn could_be_torn(head: &[u8]) -> bool {
    if let Some(len) = head.get(..4) {
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        if len > MAX_BODY {
            return false;
        }
    }
    if let Some(&kind) = head.get(HEADER)
        && !matches!(kind & !COMPRESSED, 0 | RECORD | PART | COMMIT)
    {
        return false;
    }
    // `durable`'s bytes, as far as they are there, all zero.
    head.get(HEADER + 1..)
        .is_none_or(|durable| durable.iter().all(|&b| b == 0))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn frames_read_back_and_every_cut_or_flip_is_seen() {
        let long = format!("{{\"plan\":\"{}\"}}", "Write the parser tests; ".repeat(20));
        for body in [
            Body::Record(Cow::Borrowed(b"{\"seq\":1}")),
            Body::Part {
                batch: 7,
                data: Cow::Borrowed(b"x"),
            },
            Body::Commit { batch: 7 },
            Body::Record(Cow::Borrowed(long.as_bytes())),
            Body::Part {
                batch: 8,
                data: Cow::Borrowed(long.as_bytes()),
            },
        ] {
            let mut out = Vec::new();
            encode(42, &body, &mut out);
            assert_eq!(
                read(&out),
                Read::Frame {
                    body: body.clone(),
                    durable: 42,
                    len: out.len()
                }
            );
            if matches!(&body, Body::Record(d) if d.len() >= COMPRESS_FROM) {
                assert!(
                    out.len() < long.len() / 2,
                    "compressed: {} bytes",
                    out.len()
                );
            }
            for cut in 0..out.len() {
                assert_eq!(read(&out[..cut]), Read::Short, "{body:?} cut at {cut}");
            }
            for at in 0..out.len() {
                let mut flipped = out.clone();
                flipped[at] ^= 0x40;
                assert!(
                    !matches!(read(&flipped), Read::Frame { body: ref b, .. } if *b == body),
                    "{body:?} flipped at {at}"
                );
            }
        }
    }
}
