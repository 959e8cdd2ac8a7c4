//! A journal frame: `[length: u32 LE][CRC-32C of the body: u32 LE][body]`, the body
//! `[kind: u8][durable: u64 LE][batch: u64 LE, for batch frames][data]`.
//!
//! `durable` is how much of the journal its writer knew to be synced when it wrote the frame
//! (the end of the file when its last sync began). A frame that is not whole at byte `x` is
//! damage when a whole frame after it says bytes past `x` were durable; otherwise it lies in
//! what was never synced (a torn write, or writes a crash kept out of order) and is cut.
//!
//! - `RECORD`: one record, committed by itself.
//! - `PART`: one record of batch `batch`, visible only once the batch's `COMMIT` is.
//! - `COMMIT`: batch `batch` is whole; its parts become visible here, in their order.

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
    Record(&'a [u8]),
    /// A record of a batch.
    Part {
        /// The batch.
        batch: u64,
        /// The record.
        data: &'a [u8],
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

/// Bytes of a body before a record's data: kind, durable, batch.
pub(crate) const BODY_HEAD: usize = 17;

/// Appends the frame of `body`, written when `durable` bytes were known synced, to `out`.
pub(crate) fn encode(durable: u64, body: &Body<'_>, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER]);
    let kind = match body {
        Body::Record(_) => RECORD,
        Body::Part { .. } => PART,
        Body::Commit { .. } => COMMIT,
    };
    out.push(kind);
    out.extend_from_slice(&durable.to_le_bytes());
    match body {
        Body::Record(data) => out.extend_from_slice(data),
        Body::Part { batch, data } => {
            out.extend_from_slice(&batch.to_le_bytes());
            out.extend_from_slice(data);
        }
        Body::Commit { batch } => out.extend_from_slice(&batch.to_le_bytes()),
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
    let parsed = match (body[0], batch) {
        (RECORD, _) => Body::Record(&body[9..]),
        (PART, Some(batch)) => Body::Part {
            batch,
            data: &body[BODY_HEAD..],
        },
        (COMMIT, Some(batch)) if body.len() == BODY_HEAD => Body::Commit { batch },
        (kind, _) => {
            return Read::Bad {
                why: format!("a frame of kind {kind} and {} bytes", body.len()),
            };
        }
    };
    Read::Frame {
        body: parsed,
        durable,
        len: HEADER + len,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn frames_read_back_and_every_cut_or_flip_is_seen() {
        for body in [
            Body::Record(b"{\"seq\":1}"),
            Body::Part {
                batch: 7,
                data: b"x",
            },
            Body::Commit { batch: 7 },
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
