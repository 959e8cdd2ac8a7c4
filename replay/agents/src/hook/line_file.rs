//! A file of framed lines that planlog keeps beside the store (the hook spool, the dead
//! letters). What makes it safe to share between hook processes and to find where a user's
//! file might be:
//!
//! - **Ownership.** The first line is a header naming the file's kind. A file whose first
//!   line is not it (a user's file, a torn header, invalid UTF-8), a link, a folder or any
//!   other kind of file at the path is never written, emptied or deleted: it is moved aside
//!   (`<path>.foreign-<time>`) with a warning, and a new file takes its place. Links are not
//!   followed: what is opened is checked to be what was looked at.
//! - **Framing.** Each line is `<16 hex digits> <json>\n`, the digits being the start of the
//!   SHA-256 of the JSON text. A line cut by a write that failed part way (a full disk, a
//!   killed process) does not match its digits: it is reported as torn, never read as an
//!   entry, and never merged with the next line (an append first ends an unterminated line).
//! - **Order and exclusion.** Appends and rewrites take an exclusive lock on the file, waiting
//!   at most until the caller's deadline. A rewrite writes a new file and renames it into
//!   place; a writer that locked the old file sees the rename and starts again on the new one.
//!   Readers that only look (verify) take no lock: they see a whole old or new file.
//! - **Bounds.** Lines longer than [`MAX_LINE_BYTES`] are torn lines; a read holds one line.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::deadline::Deadline;

/// Longest line read (a hook input is at most 16 MiB; its entry adds a little).
pub(super) const MAX_LINE_BYTES: usize = 17 * 1024 * 1024;

/// Why a line file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum LineFileError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Another process held the file's lock past the deadline.
    #[error("{path} is locked by another process (waited {waited_ms} ms)")]
    Locked {
        /// The file.
        path: String,
        /// How long this process waited.
        waited_ms: u64,
    },
}

impl LineFileError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// One line of a line file, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A framed line whose digits match: its JSON text.
    Framed(String),
    /// A line of the file's first version (plain JSON, no digits), read as is.
    Plain(String),
    /// A line that is neither (cut by a failed write, or not planlog's): its 1-based line
    /// number, its length in bytes, and its first characters.
    Torn {
        /// 1-based line number (the header is line 1).
        line: usize,
        /// Its length in bytes.
        bytes: usize,
        /// Its first characters, for messages.
        excerpt: String,
    },
}

impl Line {
    /// Who this line is, for removing exactly what was handled: the SHA-256 of its bytes.
    pub(super) fn identity(raw: &[u8]) -> String {
        hex(&Sha256::digest(raw), 32)
    }
}

/// A line as read, with its identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadLine {
    /// Who this line is: the SHA-256 of its bytes, in hex (what `remove` is given back).
    pub identity: String,
    /// What it holds.
    pub line: Line,
}

fn hex(bytes: &[u8], digits: usize) -> String {
    bytes
        .iter()
        .flat_map(|b| [b >> 4, b & 0xf])
        .take(digits)
        .map(|n| char::from_digit(u32::from(n), 16).unwrap_or('0'))
        .collect()
}

/// The framed text of `json` (without the newline).
pub fn frame(json: &str) -> String {
    format!("{} {json}", hex(&Sha256::digest(json.as_bytes()), 16))
}

/// Reads one line's bytes (without its newline) as a [`Line`].
fn parse_line(n: usize, raw: &[u8]) -> Line {
    let torn = || Line::Torn {
        line: n,
        bytes: raw.len(),
        excerpt: String::from_utf8_lossy(&raw[..raw.len().min(80)]).into_owned(),
    };
    let Ok(text) = std::str::from_utf8(raw) else {
        return torn();
    };
    if let Some((digits, json)) = text.split_once(' ')
        && digits.len() == 16
        && digits.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return if hex(&Sha256::digest(json.as_bytes()), 16) == digits {
            Line::Framed(json.to_owned())
        } else {
            torn()
        };
    }
    if text.starts_with('{') && serde_json::from_str::<serde_json::Value>(text).is_ok() {
        return Line::Plain(text.to_owned());
    }
    torn()
}

/// A file of framed lines with a header.
#[derive(Debug, Clone)]
pub struct LineFile {
    path: PathBuf,
    /// Headers this file may start with; the first is written to new files.
    headers: &'static [&'static str],
    /// What the file is, for warnings.
    what: &'static str,
}

/// An open, locked line file (the lock goes with the handle).
struct Locked {
    file: File,
}

impl LineFile {
    /// The file at `path` whose first line is one of `headers` (the first is written to a
    /// new file), described as `what` in warnings.
    pub fn new(path: PathBuf, headers: &'static [&'static str], what: &'static str) -> Self {
        Self {
            path,
            headers,
            what,
        }
    }

    /// The file beside the store at `store`, named after it with `suffix` added
    /// (`<store>.hook-spool`), as [`LineFile::new`] takes it.
    pub fn beside(
        store: &Path,
        suffix: &str,
        headers: &'static [&'static str],
        what: &'static str,
    ) -> Self {
        let mut name = store.as_os_str().to_owned();
        name.push(suffix);
        Self::new(PathBuf::from(name), headers, what)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether it surely holds no line but its header (missing, or no longer than a header),
    /// without opening it: the common case, checked before anything is locked.
    pub fn looks_empty(&self) -> bool {
        match std::fs::symlink_metadata(&self.path) {
            Err(_) => true,
            Ok(m) => {
                m.is_file()
                    && m.len()
                        <= self
                            .headers
                            .iter()
                            .map(|h| h.len() as u64 + 1)
                            .max()
                            .unwrap_or(0)
                    && self.read_header_is_ours()
            }
        }
    }

    fn read_header_is_ours(&self) -> bool {
        let Ok(file) = File::open(&self.path) else {
            return true;
        };
        let mut first = Vec::new();
        if BufReader::new(file)
            .take(256)
            .read_until(b'\n', &mut first)
            .is_err()
        {
            return false;
        }
        let first = String::from_utf8_lossy(&first);
        first.is_empty() || self.headers.contains(&first.trim_end_matches('\n'))
    }

    /// Moves whatever is at the path aside (never deletes it), saying so.
    fn move_aside(&self, why: &str) -> Result<(), LineFileError> {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let mut n = 0u32;
        loop {
            let mut name = self.path.as_os_str().to_owned();
            name.push(if n == 0 {
                format!(".foreign-{stamp}")
            } else {
                format!(".foreign-{stamp}-{n}")
            });
            let aside = PathBuf::from(name);
            if std::fs::symlink_metadata(&aside).is_ok() {
                n += 1;
                continue;
            }
            return match std::fs::rename(&self.path, &aside) {
                Ok(()) => {
                    tracing::warn!(
                        "{} was not planlog's {} ({why}); it was moved to {} and a new one started",
                        self.path.display(),
                        self.what,
                        aside.display()
                    );
                    Ok(())
                }
                // Someone else moved or replaced it first: look again.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(LineFileError::io(&self.path, e)),
            };
        }
    }

    /// Creates the file whole with its header (a temporary file linked into place, so no
    /// other process ever sees it half made), unless something is there already.
    fn create(&self) -> Result<(), LineFileError> {
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| LineFileError::io(&self.path, e))?;
        let name = self
            .path
            .file_name()
            .map_or_else(|| "file".into(), |n| n.to_string_lossy());
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let temp = dir.join(format!(".{name}.new-{}-{nanos}", std::process::id()));
        let made = (|| {
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temp)?;
            f.write_all(format!("{}\n", self.headers[0]).as_bytes())?;
            f.sync_all()?;
            match std::fs::hard_link(&temp, &self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
                _ => Ok(()),
            }
        })();
        let _ = std::fs::remove_file(&temp);
        made.map_err(|e| LineFileError::io(&self.path, e))
    }

    /// Opens and locks the file, waiting at most until `deadline`; `None` when it does not
    /// exist and `create` is false. A file that is not this kind of planlog file is moved
    /// aside first.
    fn open_locked(
        &self,
        create: bool,
        deadline: &Deadline,
    ) -> Result<Option<Locked>, LineFileError> {
        let started = std::time::Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            let seen = match std::fs::symlink_metadata(&self.path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if !create {
                        return Ok(None);
                    }
                    self.create()?;
                    continue;
                }
                Err(e) => return Err(LineFileError::io(&self.path, e)),
                Ok(m) => m,
            };
            if !seen.is_file() {
                self.move_aside(if seen.file_type().is_symlink() {
                    "a link"
                } else {
                    "not a regular file"
                })?;
                continue;
            }
            let file = match OpenOptions::new().read(true).append(true).open(&self.path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(LineFileError::io(&self.path, e)),
            };
            let opened = file
                .metadata()
                .map_err(|e| LineFileError::io(&self.path, e))?;
            if (opened.dev(), opened.ino()) != (seen.dev(), seen.ino()) {
                continue; // replaced between the look and the open
            }
            loop {
                match file.try_lock() {
                    Ok(()) => break,
                    Err(std::fs::TryLockError::WouldBlock) if !deadline.passed() => {
                        std::thread::sleep(deadline.at_most(pause));
                        pause = (pause * 2).min(Duration::from_millis(20));
                    }
                    Err(std::fs::TryLockError::WouldBlock) => {
                        return Err(LineFileError::Locked {
                            path: self.path.display().to_string(),
                            waited_ms: u64::try_from(started.elapsed().as_millis())
                                .unwrap_or(u64::MAX),
                        });
                    }
                    Err(std::fs::TryLockError::Error(e)) => {
                        return Err(LineFileError::io(&self.path, e));
                    }
                }
            }
            // A rewrite may have renamed a new file into place while this one waited.
            match std::fs::symlink_metadata(&self.path) {
                Ok(now) if (now.dev(), now.ino()) == (opened.dev(), opened.ino()) => {}
                _ => continue,
            }
            let mut first = Vec::new();
            let mut reader = BufReader::new(&file);
            reader
                .seek(SeekFrom::Start(0))
                .map_err(|e| LineFileError::io(&self.path, e))?;
            reader
                .take(4096)
                .read_until(b'\n', &mut first)
                .map_err(|e| LineFileError::io(&self.path, e))?;
            if first.is_empty() {
                // Empty (made by someone else, never by planlog): nothing to lose.
                (&file)
                    .write_all(format!("{}\n", self.headers[0]).as_bytes())
                    .and_then(|()| file.sync_data())
                    .map_err(|e| LineFileError::io(&self.path, e))?;
                return Ok(Some(Locked { file }));
            }
            let header = std::str::from_utf8(&first)
                .ok()
                .map(|h| h.trim_end_matches('\n'));
            if header.is_some_and(|h| self.headers.contains(&h)) && first.ends_with(b"\n") {
                return Ok(Some(Locked { file }));
            }
            self.move_aside("its first line is not planlog's")?;
        }
    }

    /// Appends one line of `json`, framed, durably. A line left unterminated by an earlier
    /// failed write is ended first, so the two never merge; if this write fails part way,
    /// what it wrote is cut off again when possible.
    ///
    /// # Errors
    /// The file cannot be locked by the deadline, or written.
    pub fn append(&self, json: &str, deadline: &Deadline) -> Result<(), LineFileError> {
        let Some(locked) = self.open_locked(true, deadline)? else {
            return Ok(());
        };
        let mut file = locked.file;
        let io = |e| LineFileError::io(&self.path, e);
        let len = file.metadata().map_err(io)?.len();
        let mut text = String::new();
        if len > 0 {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(len - 1)).map_err(io)?;
            file.read_exact(&mut last).map_err(io)?;
            if last[0] != b'\n' {
                text.push('\n');
            }
        }
        text.push_str(&frame(json));
        text.push('\n');
        let written = file
            .write_all(text.as_bytes())
            .and_then(|()| file.sync_data());
        if let Err(e) = written {
            if file.set_len(len).and_then(|()| file.sync_data()).is_err() {
                tracing::warn!(file = %self.path.display(), "a failed write left a cut line; it is skipped when read");
            }
            return Err(io(e));
        }
        Ok(())
    }

    /// Reads every line after the header, calling `each` with it (stop by returning `false`),
    /// under the lock (waiting at most until `deadline`) unless `lock` is false (a reader
    /// that only looks). A missing file has no lines.
    ///
    /// # Errors
    /// The file cannot be locked or read.
    pub fn read(
        &self,
        lock: bool,
        deadline: &Deadline,
        mut each: impl FnMut(ReadLine) -> bool,
    ) -> Result<(), LineFileError> {
        let file = if lock {
            match self.open_locked(false, deadline)? {
                Some(l) => l.file,
                None => return Ok(()),
            }
        } else {
            match std::fs::symlink_metadata(&self.path) {
                Ok(m) if m.is_file() => {}
                _ => return Ok(()),
            }
            match File::open(&self.path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(LineFileError::io(&self.path, e)),
            }
        };
        let mut reader = BufReader::new(&file);
        reader
            .seek(SeekFrom::Start(0))
            .map_err(|e| LineFileError::io(&self.path, e))?;
        let mut n = 0;
        let mut raw = Vec::new();
        loop {
            raw.clear();
            let (read, whole) = read_bounded(&mut reader, &mut raw)
                .map_err(|e| LineFileError::io(&self.path, e))?;
            if read == 0 {
                return Ok(());
            }
            n += 1;
            if n == 1 {
                continue; // the header
            }
            while raw.last() == Some(&b'\n') || raw.last() == Some(&b'\r') {
                raw.pop();
            }
            if raw.is_empty() {
                continue;
            }
            let line = if whole {
                parse_line(n, &raw)
            } else {
                Line::Torn {
                    line: n,
                    bytes: read,
                    excerpt: String::from_utf8_lossy(&raw[..raw.len().min(80)]).into_owned(),
                }
            };
            let identity = Line::identity(&raw);
            if !each(ReadLine { identity, line }) {
                return Ok(());
            }
        }
    }

    /// Rewrites the file without the lines whose identity `remove` accepts, under the lock
    /// (waiting at most until `deadline`): a new file is written beside it and renamed into
    /// place, so a crash leaves the old or the new file whole. Returns how many lines remain.
    ///
    /// # Errors
    /// The file cannot be locked, read or written; it is then unchanged.
    pub fn remove(
        &self,
        deadline: &Deadline,
        mut remove: impl FnMut(&str) -> bool,
    ) -> Result<usize, LineFileError> {
        let Some(locked) = self.open_locked(false, deadline)? else {
            return Ok(0);
        };
        let io = |e| LineFileError::io(&self.path, e);
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = self
            .path
            .file_name()
            .map_or_else(|| "file".into(), |n| n.to_string_lossy());
        let mut kept = 0;
        let written = (|| -> std::io::Result<()> {
            let mode = locked.file.metadata()?.mode() & 0o777;
            // A temporary file of a fresh name (never a planted one, never another writer's),
            // removed if anything fails before the rename.
            let temp = tempfile::Builder::new()
                .prefix(&format!(".{name}.rewrite-"))
                .permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))
                .tempfile_in(dir)?;
            let mut out = std::io::BufWriter::new(temp);
            writeln!(out, "{}", self.headers[0])?;
            let mut reader = BufReader::new(&locked.file);
            reader.seek(SeekFrom::Start(0))?;
            let mut raw = Vec::new();
            let mut n = 0;
            loop {
                raw.clear();
                let (read, _) = read_bounded(&mut reader, &mut raw)?;
                if read == 0 {
                    break;
                }
                n += 1;
                while raw.last() == Some(&b'\n') || raw.last() == Some(&b'\r') {
                    raw.pop();
                }
                if n == 1 || raw.is_empty() || remove(&Line::identity(&raw)) {
                    continue;
                }
                out.write_all(&raw)?;
                out.write_all(b"\n")?;
                kept += 1;
            }
            let out = out
                .into_inner()
                .map_err(std::io::IntoInnerError::into_error)?;
            out.as_file().sync_all()?;
            out.persist(&self.path).map_err(|e| e.error)?;
            File::open(dir)?.sync_all()
        })();
        written.map_err(io)?;
        Ok(kept)
    }
}

/// Reads one line into `buf`, keeping at most [`MAX_LINE_BYTES`] of it (the rest is read and
/// dropped): how many bytes the line had, and whether all of them were kept.
fn read_bounded(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<(usize, bool)> {
    let mut total = 0;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok((total, total <= MAX_LINE_BYTES));
        }
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        let take = chunk.len().min(MAX_LINE_BYTES.saturating_sub(buf.len()));
        buf.extend_from_slice(&chunk[..take]);
        let used = chunk.len();
        total += used;
        reader.consume(used);
        if done {
            return Ok((total, total <= MAX_LINE_BYTES + 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADERS: &[&str] = &[r#"{"planlog":"test file","version":2}"#];

    fn file(dir: &Path) -> LineFile {
        LineFile::new(dir.join("f"), HEADERS, "test file")
    }

    fn lines(f: &LineFile) -> Vec<Line> {
        let mut out = Vec::new();
        f.read(false, &Deadline::none(), |l| {
            out.push(l.line);
            true
        })
        .unwrap();
        out
    }

    #[test]
    fn a_cut_line_is_torn_and_never_merged_with_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path());
        f.append(r#"{"a":1}"#, &Deadline::none()).unwrap();
        // A write that failed part way: half a framed line, no newline.
        let half = &frame(r#"{"b":2}"#)[..10];
        OpenOptions::new()
            .append(true)
            .open(f.path())
            .unwrap()
            .write_all(half.as_bytes())
            .unwrap();
        f.append(r#"{"c":3}"#, &Deadline::none()).unwrap();
        let got = lines(&f);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0], Line::Framed(r#"{"a":1}"#.to_owned()));
        assert!(matches!(&got[1], Line::Torn { line: 3, .. }), "{got:?}");
        assert_eq!(got[2], Line::Framed(r#"{"c":3}"#.to_owned()));
    }

    #[test]
    fn a_foreign_file_or_link_is_moved_aside_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path());
        for foreign in [&b"my notes\n"[..], b"{\"planlog\":\"test fi", b"\xff\xfe\n"] {
            std::fs::write(f.path(), foreign).unwrap();
            f.append(r#"{"a":1}"#, &Deadline::none()).unwrap();
            let aside: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.to_string_lossy().contains(".foreign-"))
                .collect();
            assert!(
                aside.iter().any(|p| std::fs::read(p).unwrap() == foreign),
                "{aside:?}"
            );
            assert_eq!(lines(&f), [Line::Framed(r#"{"a":1}"#.to_owned())]);
            std::fs::remove_file(f.path()).unwrap();
        }
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "root:x:0:0\n").unwrap();
        std::os::unix::fs::symlink(&secret, f.path()).unwrap();
        assert!(lines(&f).is_empty(), "a link is not read through");
        f.append(r#"{"a":1}"#, &Deadline::none()).unwrap();
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "root:x:0:0\n");
        assert!(!std::fs::symlink_metadata(f.path()).unwrap().is_symlink());
    }

    #[test]
    fn remove_keeps_the_rest_and_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path());
        for n in 0..4 {
            f.append(&format!(r#"{{"n":{n}}}"#), &Deadline::none())
                .unwrap();
        }
        let mut ids = Vec::new();
        f.read(true, &Deadline::none(), |l| {
            ids.push(l.identity);
            true
        })
        .unwrap();
        let left = f
            .remove(&Deadline::none(), |id| id == ids[0] || id == ids[2])
            .unwrap();
        assert_eq!(left, 2);
        assert_eq!(
            lines(&f),
            [
                Line::Framed(r#"{"n":1}"#.to_owned()),
                Line::Framed(r#"{"n":3}"#.to_owned())
            ]
        );
        let mode = std::fs::metadata(f.path()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn a_held_lock_is_waited_for_only_until_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path());
        f.append(r#"{"a":1}"#, &Deadline::none()).unwrap();
        let holder = File::open(f.path()).unwrap();
        holder.lock().unwrap();
        let started = std::time::Instant::now();
        let e = f
            .append(r#"{"b":2}"#, &Deadline::after(Duration::from_millis(50)))
            .unwrap_err();
        assert!(matches!(e, LineFileError::Locked { .. }), "{e}");
        assert!(started.elapsed() < Duration::from_millis(500));
        drop(holder);
        f.append(r#"{"b":2}"#, &Deadline::none()).unwrap();
        assert_eq!(lines(&f).len(), 2);
    }

    #[test]
    fn an_over_long_line_is_torn_and_read_in_bounded_memory() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path());
        let mut text = format!("{}\n", HEADERS[0]).into_bytes();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 10));
        text.push(b'\n');
        text.extend(format!("{}\n", frame(r#"{"a":1}"#)).as_bytes());
        std::fs::write(f.path(), text).unwrap();
        let got = lines(&f);
        assert!(matches!(&got[0], Line::Torn { bytes, .. } if *bytes > MAX_LINE_BYTES));
        assert_eq!(got[1], Line::Framed(r#"{"a":1}"#.to_owned()));
    }
}
