//! The spool: hook calls that could not be stored (the store locked by a long import, a full
//! disk) wait in a small file beside the store, `<store>.hook-spool`, and the next hook call
//! or `planlog verify` stores them first, in order. Each line is one entry (the hook's input,
//! and the shared list id it ran with); the first line says the file is planlog's, and a file
//! without it is never written or emptied. Entries are stored by their call ids, so storing
//! one twice (a crash between storing and emptying the spool) records it once. An exclusive
//! lock on the file orders the hooks that push and drain at once.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::input::HookInput;

/// The first line of a spool.
const HEADER: &str = r#"{"planlog":"hook spool","version":1}"#;

/// One spooled hook call.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The hook's input.
    pub input: HookInput,
    /// The raw input, as spooled.
    pub raw: Value,
    /// `CLAUDE_CODE_TASK_LIST_ID` as the hook saw it.
    pub list_id: Option<String>,
}

/// The spool of one store.
#[derive(Debug, Clone)]
pub struct Spool {
    path: PathBuf,
}

impl Spool {
    /// The spool beside the store at `store`.
    pub fn beside(store: &Path) -> Spool {
        let mut name = store.as_os_str().to_owned();
        name.push(".hook-spool");
        Spool {
            path: PathBuf::from(name),
        }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn open_locked(&self, create: bool) -> std::io::Result<Option<File>> {
        let file = match OpenOptions::new()
            .read(true)
            .append(true)
            .create(create)
            .open(&self.path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => return Ok(None),
            Err(e) => return Err(e),
        };
        file.lock()?;
        let mut first = String::new();
        BufReader::new(&file).read_line(&mut first)?;
        if first.is_empty() {
            (&file).write_all(format!("{HEADER}\n").as_bytes())?;
        } else if first.trim_end() != HEADER {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "{} is not a planlog spool (its first line is not planlog's); it is left alone",
                    self.path.display()
                ),
            ));
        }
        Ok(Some(file))
    }

    /// Adds a hook call, durably.
    ///
    /// # Errors
    /// The spool cannot be written (or is a file planlog does not own).
    pub fn push(&self, raw: &Value, list_id: Option<&str>) -> std::io::Result<()> {
        let Some(mut file) = self.open_locked(true)? else {
            return Ok(());
        };
        let line = json!({"list_id": list_id, "input": raw}).to_string();
        file.seek(SeekFrom::End(0))?;
        file.write_all(format!("{line}\n").as_bytes())?;
        file.sync_all()
    }

    /// Stores every spooled call with `store`, oldest first. When all are stored the spool is
    /// emptied; at the first failure it is left as it is (what was stored is skipped next
    /// time) and the failure returned. Lines that are not entries are dropped with a warning.
    ///
    /// # Errors
    /// The spool cannot be read, or `store`'s first failure.
    pub fn drain<E: From<std::io::Error>>(
        &self,
        mut store: impl FnMut(&Entry) -> Result<(), E>,
    ) -> Result<usize, E> {
        let Some(file) = self.open_locked(false)? else {
            return Ok(0);
        };
        let mut stored = 0;
        let mut reader = BufReader::new(&file);
        reader.seek(SeekFrom::Start(0))?;
        for (n, line) in reader.lines().enumerate().skip(1) {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let entry = serde_json::from_str::<Value>(&line).ok().and_then(|v| {
                let raw = v.get("input")?.clone();
                Some(Entry {
                    input: serde_json::from_value(raw.clone()).ok()?,
                    raw,
                    list_id: v.get("list_id").and_then(Value::as_str).map(str::to_owned),
                })
            });
            match entry {
                Some(e) => {
                    store(&e)?;
                    stored += 1;
                }
                None => {
                    tracing::warn!(spool = %self.path.display(), line = n + 1, "dropping a spool line that is not a hook call")
                }
            }
        }
        // Everything is stored: keep only the header (the file stays, so a hook waiting on its
        // lock appends to this same file).
        file.set_len(u64::try_from(HEADER.len() + 1).unwrap_or(0))?;
        file.sync_all()?;
        Ok(stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(id: &str) -> Value {
        json!({"hook_event_name": "PostToolUse", "session_id": "s", "tool_use_id": id})
    }

    #[test]
    fn entries_drain_in_order_and_a_failure_keeps_them_all() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::beside(&dir.path().join("planlog.redb"));
        spool.push(&input("a"), None).unwrap();
        spool.push(&input("b"), Some("team")).unwrap();
        let failed: Result<usize, std::io::Error> = spool.drain(|e| {
            if e.input.tool_use_id.as_deref() == Some("b") {
                Err(std::io::Error::other("store locked"))
            } else {
                Ok(())
            }
        });
        assert!(failed.is_err());
        let mut seen = Vec::new();
        let n: usize = spool
            .drain(|e| {
                seen.push((e.input.tool_use_id.clone().unwrap(), e.list_id.clone()));
                Ok::<(), std::io::Error>(())
            })
            .unwrap();
        assert_eq!(n, 2);
        assert_eq!(
            seen,
            [
                ("a".to_owned(), None),
                ("b".to_owned(), Some("team".to_owned()))
            ]
        );
        assert_eq!(spool.drain(|_| Ok::<(), std::io::Error>(())).unwrap(), 0);
    }

    #[test]
    fn a_file_planlog_does_not_own_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::beside(&dir.path().join("planlog.redb"));
        std::fs::write(spool.path(), "my notes\n").unwrap();
        assert!(spool.push(&input("a"), None).is_err());
        assert!(spool.drain(|_| Ok::<(), std::io::Error>(())).is_err());
        assert_eq!(std::fs::read_to_string(spool.path()).unwrap(), "my notes\n");
    }
}
