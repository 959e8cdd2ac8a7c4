//! CRC-32C (Castagnoli), the checksum of every journal frame: it finds a torn or damaged
//! frame, not a forgery (the events' SHA-256 chain does that). Computed by the `crc32c`
//! crate (the CPU's CRC instruction where there is one); checked here against the standard's
//! vectors and a plain bitwise reference.

/// CRC-32C of `bytes`: what a frame's checksum is (public for tools and tests that check,
/// or forge, a journal's frames). The CPU's CRC instruction where it has one.
pub fn crc32c(bytes: &[u8]) -> u32 {
    ::crc32c::crc32c(bytes)
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

    /// Every length up to a few blocks, at every alignment: the crate's fast paths and the
    /// reference agree.
    #[test]
    fn agrees_with_the_bitwise_reference() {
        let data: Vec<u8> = (0..600u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for start in 0..8 {
            for len in (0..data.len() - start).step_by(7) {
                let bytes = &data[start..start + len];
                assert_eq!(crc32c(bytes), bitwise(bytes), "start {start} len {len}");
            }
        }
    }
}
