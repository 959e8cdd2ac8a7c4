//! Reading a jsonl source one line at a time: only the current line is held, blank lines are
//! skipped, CRLF endings and invalid UTF-8 are accepted (the bytes are read lossily), and a
//! line that is not JSON is reported as a [`BadLine`] instead of stopping the read.

use std::io::BufRead;

use serde_json::Value;

use super::record::BadLine;

/// One line of a jsonl source.
#[derive(Debug)]
pub enum Line {
    /// A JSON value and its 1-based line number.
    Json(u64, Value),
    /// A line that is not JSON.
    Bad(BadLine),
}

/// The lines of `reader`, until its end or an IO error (returned as the last item).
pub struct JsonLines<R> {
    reader: R,
    buf: Vec<u8>,
    line: u64,
    failed: bool,
}

impl<R: BufRead> JsonLines<R> {
    /// Reads `reader`.
    pub fn new(reader: R) -> Self {
        Self {
            reader,
            buf: Vec::new(),
            line: 0,
            failed: false,
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
            match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
            self.line += 1;
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

    #[test]
    fn numbers_lines_skips_blanks_and_reports_broken_ones() {
        let text = b"{\"a\":1}\r\n\n  \n{broken\n[2]";
        let got: Vec<String> = JsonLines::new(&text[..])
            .map(|l| match l.unwrap() {
                Line::Json(n, v) => format!("{n}:{v}"),
                Line::Bad(b) => format!("{}:bad", b.line),
            })
            .collect();
        assert_eq!(got, ["1:{\"a\":1}", "4:bad", "5:[2]"]);
    }

    #[test]
    fn invalid_utf8_is_read_lossily() {
        let text = b"{\"a\":\"\xff\"}\n";
        let got: Vec<Line> = JsonLines::new(&text[..]).map(Result::unwrap).collect();
        assert!(matches!(&got[..], [Line::Json(1, v)] if v["a"] == "\u{fffd}"));
    }
}
