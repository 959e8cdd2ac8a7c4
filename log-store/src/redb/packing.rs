//! How an event's bytes are kept in the `events` table.
//!
//! Store format 1 kept each event's canonical JSON as it is. Store format 2 keeps it
//! LZ4-compressed when that is smaller (almost always: a plan-carrying event holds its plan
//! twice, `submitted` and the plan after, and every item repeats its keys):
//!
//! | first byte | the rest |
//! |---|---|
//! | `{` | the canonical JSON itself (format 1 rows, and events too small to gain) |
//! | `0x01` | the JSON's length (u32, little-endian), then one LZ4 block of it |
//!
//! A reader takes both, so format 1 rows are read as they are, never rewritten. What the
//! hash covers is unchanged: the canonical JSON, recovered exactly before decoding.

use std::borrow::Cow;

use planlog_core::{LogError, SessionId, events::Event};

use crate::codec::{corrupt, decode_event};

/// The first byte of a compressed row.
const LZ4: u8 = 0x01;

/// The most an LZ4 block can expand: 255 bytes of output per input byte (one length byte
/// of 0xFF), plus a little. A length prefix above this for the block it heads is damage,
/// and is refused before anything is allocated for it.
const MAX_RATIO: usize = 255;

/// The row for an event whose canonical JSON is `canonical`.
pub(super) fn pack(canonical: &[u8]) -> Vec<u8> {
    let Ok(len) = u32::try_from(canonical.len()) else {
        // Over 4 GiB: never compressed (no event is near that; the limits refuse far less).
        return canonical.to_vec();
    };
    let block = lz4_flex::block::compress(canonical);
    if block.len() + 5 >= canonical.len() {
        return canonical.to_vec();
    }
    let mut row = Vec::with_capacity(block.len() + 5);
    row.push(LZ4);
    row.extend_from_slice(&len.to_le_bytes());
    row.extend_from_slice(&block);
    row
}

/// The canonical JSON kept in `row`, or what is wrong with the row.
pub(crate) fn unpack(row: &[u8]) -> Result<Cow<'_, [u8]>, String> {
    match row.first() {
        Some(&LZ4) => {
            let (Some(len), Some(block)) = (row.get(1..5), row.get(5..)) else {
                return Err("a compressed event row shorter than its header".to_owned());
            };
            let mut prefix = [0u8; 4];
            prefix.copy_from_slice(len);
            let len = u32::from_le_bytes(prefix) as usize;
            if len > block.len().saturating_mul(MAX_RATIO) + 64 {
                return Err(format!(
                    "a compressed event row claims {len} bytes, more than its {} bytes can hold",
                    block.len()
                ));
            }
            let json = lz4_flex::block::decompress(block, len)
                .map_err(|e| format!("a compressed event row does not decompress ({e})"))?;
            if json.len() != len {
                return Err(format!(
                    "a compressed event row holds {} bytes, not the {len} its header says",
                    json.len()
                ));
            }
            Ok(Cow::Owned(json))
        }
        _ => Ok(Cow::Borrowed(row)),
    }
}

/// Decodes the event in `row`, stored under (`session`, `seq`): unpacked, then checked as
/// [`decode_event`] checks it. Damage is an operator error naming the event.
pub(crate) fn decode_row(
    path: &str,
    session: &SessionId,
    seq: u64,
    row: &[u8],
) -> Result<Event, LogError> {
    let json = unpack(row).map_err(|detail| corrupt(path, session, seq, detail))?;
    decode_event(path, session, seq, &json)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn rows_round_trip_and_small_ones_stay_json() {
        let json = br#"{"data":{"plan":[{"content":"Write the parser","id":"1","status":"pending"},{"content":"Write the parser tests","id":"2","status":"pending"}],"submitted":[{"content":"Write the parser","id":"1","status":"pending"},{"content":"Write the parser tests","id":"2","status":"pending"}]}}"#;
        let row = pack(json);
        assert_eq!(row[0], LZ4);
        assert!(
            row.len() < json.len() * 2 / 3,
            "{} of {}",
            row.len(),
            json.len()
        );
        assert_eq!(unpack(&row).unwrap().as_ref(), json.as_slice());
        let small = br#"{"a":1}"#;
        assert_eq!(pack(small), small.to_vec());
        assert_eq!(unpack(small).unwrap().as_ref(), small.as_slice());
    }

    #[test]
    fn damaged_rows_are_errors_not_panics_or_huge_allocations() {
        let json = br#"{"content":"Write the parser","content2":"Write the parser","content3":"Write the parser"}"#;
        let row = pack(json);
        // A forged length far beyond what the block can hold.
        let mut huge = row.clone();
        huge[1..5].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(unpack(&huge).unwrap_err().contains("more than its"));
        // A length that disagrees with the block.
        let mut short = row.clone();
        short[1..5].copy_from_slice(&((json.len() as u32) - 1).to_le_bytes());
        assert!(unpack(&short).is_err());
        // Truncations at every point: an error each time.
        for cut in 1..row.len() {
            assert!(unpack(&row[..cut]).is_err(), "cut at {cut}");
        }
        // Flipped bytes: an error, or bytes that are not the JSON (the event's own decode
        // and hash check refuse those).
        for i in 5..row.len() {
            let mut bad = row.clone();
            bad[i] ^= 0x55;
            if let Ok(out) = unpack(&bad) {
                assert_ne!(out.as_ref(), json.as_slice(), "flip at {i}");
            }
        }
    }
}
