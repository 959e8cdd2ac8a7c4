//! Room on the disk for an index transaction, asked before one begins.
//!
//! An index commit that fails part way (a disk that filled) does more harm than one not
//! tried: redb then fails every later operation of that handle ("previous I/O error"), and
//! the file is left needing a repair that no reader can make and no writer can make without
//! room. So a process indexes only while the index's file system has room for what it
//! would write, and otherwise leaves the index behind: nothing fails for want of an index
//! (the journal keeps every record and reads take them from it), and the next write or open
//! after the disk frees brings it up to date.

use std::path::Path;

/// Free space kept beyond what an index transaction is expected to write (its pages are
/// written anew before the old ones are freed, and redb's allocator state with them).
pub(super) const MARGIN: u64 = 8 << 20;

/// Too little room on the disk for an index transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NoRoom {
    /// Bytes free to an unprivileged process on the index's file system.
    pub(super) available: u64,
    /// Bytes the transaction is taken to need.
    pub(super) needed: u64,
}

impl std::fmt::Display for NoRoom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} KiB free on the index's disk, {} KiB needed to index",
            self.available / 1024,
            self.needed / 1024
        )
    }
}

/// Whether the file system holding the index at `index` has room for a transaction that
/// indexes `journal_bytes` of journal records: at least as many bytes free (an index entry
/// is smaller than its record) plus [`MARGIN`]. Free space that cannot be asked for (a file
/// system without `statvfs`) counts as room: the commit then says what the disk refuses.
pub(super) fn for_indexing(index: &Path, journal_bytes: u64) -> Result<(), NoRoom> {
    let needed = MARGIN.saturating_add(journal_bytes);
    match available(index) {
        Some(available) if available < needed => Err(NoRoom { available, needed }),
        _ => Ok(()),
    }
}

/// Bytes free to an unprivileged process on the file system holding `file` (its folder is
/// asked when the file is not there yet).
#[cfg(target_os = "linux")]
fn available(file: &Path) -> Option<u64> {
    let folder = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let asked = if file.exists() { file } else { folder };
    let stat = rustix::fs::statvfs(asked).ok()?;
    Some(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// Free space is not asked for on other systems.
#[cfg(not(target_os = "linux"))]
fn available(_file: &Path) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code

    use super::*;

    #[test]
    fn a_file_system_with_room_has_room_and_one_asked_for_more_than_it_holds_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("planlog.redb");
        assert_eq!(for_indexing(&index, 0), Ok(()));
        let no = for_indexing(&index, u64::MAX / 2).unwrap_err();
        assert_eq!(no.needed, MARGIN + u64::MAX / 2);
        assert!(no.available < no.needed);
        assert!(no.to_string().contains("KiB free"), "{no}");
    }
}
