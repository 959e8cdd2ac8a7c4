//! CRC-32C (Castagnoli), the checksum of every journal frame: it finds a torn or damaged
//! frame, not a forgery (the events' SHA-256 chain does that). Table-driven, a byte at a time
//! (with the framing, 11% of the journal benchmark's profile: BENCHMARKS.md § The journal).

/// The reflected Castagnoli polynomial.
const POLY: u32 = 0x82F6_3B78;

/// One entry per byte value.
const TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// CRC-32C of `bytes`: what a frame's checksum is (public for tools and tests that check,
/// or forge, a journal's frames).
pub fn crc32c(bytes: &[u8]) -> u32 {
    !bytes.iter().fold(!0u32, |crc, &b| {
        TABLE[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8)
    })
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
}
