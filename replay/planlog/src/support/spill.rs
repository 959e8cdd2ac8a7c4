//! [`Spill`]: lines grouped by key (an item) on disk, not in memory, for commands whose output
//! groups what a session's events say by something other than time (`planlog items`). Memory
//! is one offset per key while writing; reading a key back holds one offset per line of it.
//!
//! The file is an unnamed temporary file (gone when the command ends, even when killed).
//! Records are appended as `[previous record of the key: u64][seq: u64][length: u32][text]`
//! (little-endian; offset 0 means none, so the file starts with one unused byte).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;

/// Lines by key, spilled to a temporary file.
pub(crate) struct Spill {
    out: BufWriter<File>,
    /// Where the next record goes.
    end: u64,
    /// The last record of each key (0: none yet).
    last: Vec<u64>,
}

const HEADER: usize = 20;

impl Spill {
    /// A new, empty spill file.
    pub(crate) fn new() -> std::io::Result<Self> {
        let mut out = BufWriter::new(tempfile::tempfile()?);
        out.write_all(&[0])?;
        Ok(Self {
            out,
            end: 1,
            last: Vec::new(),
        })
    }

    /// Adds `text` at `seq` to the lines of `key`.
    pub(crate) fn push(&mut self, key: usize, seq: u64, text: &str) -> std::io::Result<()> {
        if self.last.len() <= key {
            self.last.resize(key + 1, 0);
        }
        let len =
            u32::try_from(text.len()).map_err(|_| std::io::Error::other("a line over 4 GiB"))?;
        self.out.write_all(&self.last[key].to_le_bytes())?;
        self.out.write_all(&seq.to_le_bytes())?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(text.as_bytes())?;
        self.last[key] = self.end;
        self.end += (HEADER + text.len()) as u64;
        Ok(())
    }

    /// Calls `f` with each (seq, text) of `key`, in the order they were pushed.
    pub(crate) fn each(
        &mut self,
        key: usize,
        f: &mut dyn FnMut(u64, &str) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        self.out.flush()?;
        let file = self.out.get_ref();
        // Walk the key's records back from its last, then read them forward.
        let mut offsets = Vec::new();
        let mut at = self.last.get(key).copied().unwrap_or(0);
        let mut header = [0u8; HEADER];
        while at != 0 {
            offsets.push(at);
            file.read_exact_at(&mut header, at)?;
            at = u64::from_le_bytes(field(&header, 0));
        }
        let mut text = Vec::new();
        for &at in offsets.iter().rev() {
            file.read_exact_at(&mut header, at)?;
            let seq = u64::from_le_bytes(field(&header, 8));
            let len = u32::from_le_bytes(field(&header, 16)) as usize;
            text.resize(len, 0);
            file.read_exact_at(&mut text, at + HEADER as u64)?;
            let text = std::str::from_utf8(&text)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            f(seq, text)?;
        }
        Ok(())
    }
}

/// `N` bytes of `header` from `at`.
fn field<const N: usize>(header: &[u8; HEADER], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&header[at..at + N]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_back_by_key_in_the_order_they_were_pushed() {
        let mut spill = Spill::new().unwrap();
        for n in 0..1000u64 {
            spill
                .push((n % 7) as usize, n, &format!("line {n} é"))
                .unwrap();
        }
        spill.push(9, 5000, "").unwrap();
        for key in 0..10 {
            let mut got = Vec::new();
            spill
                .each(key, &mut |seq, text| {
                    got.push((seq, text.to_owned()));
                    Ok(())
                })
                .unwrap();
            let want: Vec<(u64, String)> = match key {
                0..=6 => (0..1000u64)
                    .filter(|n| (n % 7) as usize == key)
                    .map(|n| (n, format!("line {n} é")))
                    .collect(),
                9 => vec![(5000, String::new())],
                _ => Vec::new(),
            };
            assert_eq!(got, want, "key {key}");
        }
    }
}
