//! Reading a jsonl source one line at a time: only the current line is held, blank lines are
//! skipped, CRLF endings and invalid UTF-8 are accepted (the bytes are read lossily), and a
//! line that is not JSON is reported as a [`BadLine`] instead of stopping the read.
//!
//! Two things a file that is still being written has: a last line without its newline that
//! is not JSON yet is [`Line::Cut`] (the writer is in the middle of it: the next import
//! reads it whole), not a bad line; and no line is held beyond [`MAX_LINE_BYTES`]: a longer
//! one is read through without being kept and reported as a bad line, so memory is bounded
//! on any input.

use std::io::BufRead;

use serde_json::Value;

use super::record::BadLine;

/// Longest line an import reads, in bytes. A longer line is a bad line (skipped with
/// `--skip-bad-lines`); no agent writes one (Claude Code moves large tool results to files of
/// their own).
pub const MAX_LINE_BYTES: usize = 32 * 1024 * 1024;

/// One line of a jsonl source.
#[derive(Debug)]
pub(crate) enum Line {
    /// A JSON value and its 1-based line number.
    Json(u64, Value),
    /// A line that is not JSON.
    Bad(BadLine),
    /// The last line, without its newline and not JSON (yet): cut where the file ends, as a
    /// file still being written is. Its 1-based line number.
    Cut(u64),
    /// A line longer than [`MAX_LINE_BYTES`], read through without being kept.
    TooLong(BadLine),
}

/// The lines of `reader`, until its end or an IO error (returned as the last item).
pub(crate) struct JsonLines<R> {
    reader: R,
    buf: Vec<u8>,
    line: u64,
    failed: bool,
}

impl<R: BufRead> JsonLines<R> {
    /// Reads `reader`.
    pub(crate) fn new(reader: R) -> Self {
        Self {
            reader,
            buf: Vec::new(),
            line: 0,
            failed: false,
        }
    }

    /// The text of the line last returned as [`Line::Json`], without its line ending, as the
    /// source has it (invalid UTF-8 read lossily): a parser that keeps part of a line byte for
    /// byte reads it from here.
    pub(crate) fn last_text(&self) -> std::borrow::Cow<'_, str> {
        let mut raw: &[u8] = &self.buf;
        while let [rest @ .., b'\n' | b'\r'] = raw {
            raw = rest;
        }
        String::from_utf8_lossy(raw)
    }

    /// Reads one line into `buf`, keeping at most [`MAX_LINE_BYTES`] + 1 bytes of it: how
    /// many bytes it had (0 at the end) and whether it ended with a newline.
    fn read_line(&mut self) -> std::io::Result<(usize, bool)> {
        let mut total = 0;
        loop {
            let available = self.reader.fill_buf()?;
            if available.is_empty() {
                return Ok((total, false));
            }
            let (chunk, ended) = match available.iter().position(|b| *b == b'\n') {
                Some(i) => (&available[..=i], true),
                None => (available, false),
            };
            let room = (MAX_LINE_BYTES + 1).saturating_sub(self.buf.len());
            self.buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
            let used = chunk.len();
            total += used;
            self.reader.consume(used);
            if ended {
                return Ok((total, true));
            }
        }
    }
}

impl<R: BufRead> Iterator for JsonLines<R> {
    type Item = Result<Line, std::io::Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.failed {
                return None;
            }
            self.buf.clear();
            let (len, ended) = match self.read_line() {
                Ok((0, _)) => return None,
                Ok(r) => r,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            };
            self.line += 1;
            let content = len - usize::from(ended);
            if content > MAX_LINE_BYTES {
                return Some(Ok(Line::TooLong(BadLine {
                    line: self.line,
                    why: format!(
                        "the line is {} MiB long, over planlog's limit of {} MiB for one line",
                        content / (1024 * 1024),
                        MAX_LINE_BYTES / (1024 * 1024)
                    ),
                })));
            }
            let mut raw: &[u8] = &self.buf;
            while let [rest @ .., b'\n' | b'\r'] = raw {
                raw = rest;
            }
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let parsed = match std::str::from_utf8(raw) {
                Ok(text) => serde_json::from_str(text),
                Err(_) => serde_json::from_str(&String::from_utf8_lossy(raw)),
            };
            return Some(Ok(match parsed {
                Ok(v) => Line::Json(self.line, v),
                Err(_) if !ended => Line::Cut(self.line),
                Err(e) => Line::Bad(BadLine {
                    line: self.line,
                    why: format!("not JSON ({e})"),
                }),
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &[u8]) -> Vec<String> {
        JsonLines::new(text)
            .map(|l| match l.unwrap() {
                Line::Json(n, v) => format!("{n}:{v}"),
                Line::Bad(b) => format!("{}:bad", b.line),
                Line::Cut(n) => format!("{n}:cut"),
                Line::TooLong(b) => format!("{}:long", b.line),
            })
            .collect()
    }

    #[test]
    fn numbers_lines_skips_blanks_and_reports_broken_ones() {
        assert_eq!(
            shown(b"{\"a\":1}\r\n\n  \n{broken\n[2]"),
            ["1:{\"a\":1}", "4:bad", "5:[2]"]
        );
    }

    #[test]
    fn an_unterminated_last_line_is_cut_unless_it_is_whole() {
        assert_eq!(shown(b"{\"a\":1}\n{\"b\":"), ["1:{\"a\":1}", "2:cut"]);
        assert_eq!(
            shown(b"{\"a\":1}\n{\"b\":2}"),
            ["1:{\"a\":1}", "2:{\"b\":2}"]
        );
        assert_eq!(shown(b"{\"b\":\n{\"c\":3}\n"), ["1:bad", "2:{\"c\":3}"]);
    }

    #[test]
    fn a_line_over_the_limit_is_bad_and_not_kept() {
        let mut text = vec![b'x'; MAX_LINE_BYTES + 5];
        text.extend_from_slice(b"\n{\"a\":1}\n");
        let mut lines = JsonLines::new(&text[..]);
        let first = lines.next().unwrap().unwrap();
        assert!(
            matches!(&first, Line::TooLong(b) if b.line == 1 && b.why.contains("over planlog's limit")),
            "{first:?}"
        );
        assert!(lines.buf.capacity() <= MAX_LINE_BYTES * 2);
        assert!(matches!(lines.next().unwrap().unwrap(), Line::Json(2, _)));
    }

    #[test]
    fn invalid_utf8_is_read_lossily() {
        let text = b"{\"a\":\"\xff\"}\n";
        let got: Vec<Line> = JsonLines::new(&text[..]).map(Result::unwrap).collect();
        assert!(matches!(&got[..], [Line::Json(1, v)] if v["a"] == "\u{fffd}"));
    }
}
