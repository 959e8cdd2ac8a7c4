//! CRC-32C (Castagnoli), the checksum of every journal frame: it finds a torn or damaged
//! frame, not a forgery (the events' SHA-256 chain does that). Computed by the `crc32c`
//! crate (the CPU's CRC instruction where there is one), except for a process's first
//! [`SOFTWARE_FIRST`] bytes; checked here against the standard's vectors and a plain
//! bitwise reference.
//!
//! Why a process starts in software: the crate asks std whether the CPU has the
//! instruction, and std's first answer reads all the CPU's features with several `cpuid`s.
//! On a virtual machine each one traps to the hypervisor, a cost every short process (a
//! hook, whose whole read is a few kilobytes) would pay for a checksum of microseconds
//! (with the same probe gone from fresh ids, ~0.07 ms per hook call here: BENCHMARKS.md
//! § "Wake-ups after the answer, …"). Eight tables of 256 entries checksum those bytes with
//! no question asked; a long-lived process switches to the instruction once it has read more.

use std::sync::atomic::{AtomicU64, Ordering};

/// How many bytes a process checksums in software before it asks for the CPU's instruction.
pub(crate) const SOFTWARE_FIRST: u64 = 256 * 1024;

/// Bytes this process has checksummed in software so far.
static IN_SOFTWARE: AtomicU64 = AtomicU64::new(0);

/// CRC-32C of `bytes`: what a frame's checksum is (public for tools and tests that check,
/// or forge, a journal's frames). In software for a process's first 256 KiB, then by the
/// CPU's CRC instruction where it has one.
pub fn crc32c(bytes: &[u8]) -> u32 {
    if IN_SOFTWARE.load(Ordering::Relaxed) < SOFTWARE_FIRST {
        let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        IN_SOFTWARE.fetch_add(len, Ordering::Relaxed);
        return software(bytes);
    }
    ::crc32c::crc32c(bytes)
}

/// The reflected Castagnoli polynomial.
const POLY: u32 = 0x82F6_3B78;

/// Slicing-by-8 tables: `TABLES[0]` is a byte's CRC; `TABLES[k]` a byte's followed by `k`
/// zero bytes.
static TABLES: [[u32; 256]; 8] = tables();

const fn tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        // `i` < 256: the cast is exact.
        let mut c = i as u32;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 1 == 1 { (c >> 1) ^ POLY } else { c >> 1 };
            bit += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut k = 1;
        while k < 8 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            k += 1;
        }
        i += 1;
    }
    t
}

/// The table at `k`, looked up by the low byte of `v`.
fn at(k: usize, v: u32) -> u32 {
    TABLES[k][(v & 0xff) as usize]
}

/// CRC-32C by tables, eight bytes a step.
fn software(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let lo = u32::from_le_bytes([w[0], w[1], w[2], w[3]]) ^ crc;
        let hi = u32::from_le_bytes([w[4], w[5], w[6], w[7]]);
        crc = at(7, lo)
            ^ at(6, lo >> 8)
            ^ at(5, lo >> 16)
            ^ at(4, lo >> 24)
            ^ at(3, hi)
            ^ at(2, hi >> 8)
            ^ at(1, hi >> 16)
            ^ at(0, hi >> 24);
    }
    for &b in words.remainder() {
        crc = (crc >> 8) ^ at(0, crc ^ u32::from(b));
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // RFC 3720 (iSCSI) check value and test vectors.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62A8_AB43);
        assert_eq!(crc32c(b""), 0);
    }

    /// The reference: the reflected Castagnoli polynomial, a bit at a time.
    fn bitwise(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0x82F6_3B78
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    /// Every length up to a few blocks, at every alignment: the tables, the crate's fast
    /// paths and the reference agree.
    #[test]
    fn agrees_with_the_bitwise_reference() {
        let data: Vec<u8> = (0..600u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for start in 0..8 {
            for len in (0..data.len() - start).step_by(7) {
                let bytes = &data[start..start + len];
                assert_eq!(software(bytes), bitwise(bytes), "start {start} len {len}");
                assert_eq!(
                    ::crc32c::crc32c(bytes),
                    bitwise(bytes),
                    "start {start} len {len}"
                );
                assert_eq!(crc32c(bytes), bitwise(bytes), "start {start} len {len}");
            }
        }
    }

    /// A process checksums its first bytes in software and the rest by the crate, with the
    /// same answers either side of the switch.
    #[test]
    fn the_switch_to_the_instruction_changes_no_checksum() {
        let block = vec![0x5au8; 64 * 1024];
        let expected = bitwise(&block);
        for _ in 0..(SOFTWARE_FIRST / 65_536 + 2) {
            assert_eq!(crc32c(&block), expected);
        }
        assert!(IN_SOFTWARE.load(Ordering::Relaxed) >= SOFTWARE_FIRST);
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }
}
