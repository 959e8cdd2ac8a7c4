//! What an import derived from a session's history, kept between imports so the next one
//! need not read the history again ([`HistoryCache`]).
//!
//! A hook stores one call per process. When a whole list's items do not all keep their ids
//! by the last list alone (an item reworded or added), the import needs the session's item-id
//! assigner, which it otherwise rebuilds from up to [`REPLAY_WINDOW`] stored events: a hook
//! call took 10.8 ms at ~1,000 events, 57% of it that read, mostly decoding events
//! (BENCHMARKS.md). The cache keeps that state
//! as it stood after one event of the session (its seq and hash). The next import that needs
//! it reads only the events after that one, and none when the session has not moved.
//!
//! It is a cache, never the record:
//! - it is used only when the session's event at its seq has its hash (the hash chain covers
//!   everything before it, so the state is the one these events give); otherwise the
//!   history is read as before;
//! - a file that cannot be read, is too large, is not planlog's, names another session or does
//!   not parse is a miss, and a failed write (a full disk, a read-only folder) is only logged;
//! - nothing is synced: each file is its state's JSON line and that line's SHA-256, so a
//!   file torn by a crash, a full disk or two processes writing at once is a miss;
//! - a file planlog did not write (no [`MAGIC`] at its start), a link, a FIFO or a folder
//!   where a cache file would be is left as it is.
//!
//! Files are `<store>.history/<32 hex digits of the session id's SHA-256>`, readable by their
//! owner only (they hold item texts). `planlog delete` removes a deleted session's file;
//! removing the folder at any time loses nothing (the next call that needs a session's
//! history reads it back).
//!
//! [`REPLAY_WINDOW`]: super::derived::REPLAY_WINDOW

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::derived::{Derived, Fold};
use super::ids::{ItemIds, Listed};
use super::record::Todo;
use planlog_core::events::{Hash, Head};
use planlog_core::{ItemId, Seq, SessionId};
use serde::{Deserialize, Serialize};

/// How every cache file starts: a file without it is not planlog's and is never written over.
pub(crate) const MAGIC: &[u8] = b"{\"planlog\":\"history\",";

/// The largest cache file read or written (a session with that much derived state reads its
/// history instead).
const MAX_BYTES: u64 = 4 << 20;

/// The version of the state kept; a file of another version is a miss.
const VERSION: u32 = 1;

/// The folder of cache files beside a store.
#[derive(Debug, Clone)]
pub struct HistoryCache {
    dir: PathBuf,
}

/// A session's derived state as it stood after the event `seq` (whose hash is `hash`).
#[derive(Debug)]
pub(crate) struct Saved {
    /// The event it stood after.
    pub seq: Seq,
    /// That event's hash.
    pub hash: Hash,
    /// The state.
    pub fold: Fold,
}

/// A file's JSON line (its first member makes [`MAGIC`]).
#[derive(Serialize, Deserialize)]
struct Contents<'a> {
    planlog: &'a str,
    version: u32,
    session: &'a str,
    seq: Seq,
    hash: Hash,
    plan_ids: Vec<ItemId>,
    prev: Vec<Listed>,
    dropped: Vec<(String, ItemId)>,
    counter: u64,
    checkpoint: Vec<Todo>,
    list_ids: Vec<ItemId>,
}

impl HistoryCache {
    /// The cache beside the store at `store` (`<store>.history`).
    pub fn beside(store: &Path) -> Self {
        let mut name = store.as_os_str().to_owned();
        name.push(".history");
        Self {
            dir: PathBuf::from(name),
        }
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of session `id`.
    fn file(&self, id: &SessionId) -> PathBuf {
        let digest = Hash::of(id.as_str().as_bytes()).to_string();
        self.dir.join(&digest[..32])
    }

    /// Removes what is kept for session `id` (a deleted session's item texts must not stay
    /// behind). A file planlog did not write is left.
    ///
    /// # Errors
    /// The file is there, is planlog's and cannot be removed.
    pub fn forget(&self, id: &SessionId) -> std::io::Result<()> {
        let path = self.file(id);
        let ours = open_ours(&path, false).is_ok_and(|f| f.is_some());
        if !ours {
            return Ok(());
        }
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// What is kept for session `id`, when there is something readable.
    pub(crate) fn load(&self, id: &SessionId) -> Option<Saved> {
        let path = self.file(id);
        let mut file = match open_ours(&path, false) {
            Ok(Some(file)) => file,
            Ok(None) => return None,
            Err(e) => {
                if e.kind() != std::io::ErrorKind::NotFound {
                    tracing::debug!(path = %path.display(), "history cache not read: {e}");
                }
                return None;
            }
        };
        let mut bytes = Vec::new();
        if let Err(e) = (&mut file).take(MAX_BYTES + 1).read_to_end(&mut bytes) {
            tracing::debug!(path = %path.display(), "history cache not read: {e}");
            return None;
        }
        let Some(json) = checked(&bytes) else {
            tracing::debug!(path = %path.display(), "history cache torn; not used");
            return None;
        };
        let saved = match serde_json::from_slice::<Contents<'_>>(json) {
            Ok(f) if f.version == VERSION && f.session == id.as_str() => f,
            Ok(_) => return None,
            Err(e) => {
                tracing::debug!(path = %path.display(), "history cache not used: {e}");
                return None;
            }
        };
        Some(Saved {
            seq: saved.seq,
            hash: saved.hash,
            fold: Fold {
                derived: Derived {
                    item_ids: ItemIds::from_parts(saved.prev, saved.dropped, saved.counter),
                    checkpoint: saved.checkpoint,
                    list_ids: saved.list_ids.into_iter().collect(),
                },
                plan_ids: saved.plan_ids.into_iter().collect(),
            },
        })
    }

    /// Keeps `fold` for session `id` as it stands after its event `head`. Never fails: a
    /// cache that cannot be written is a later miss.
    pub(crate) fn save(&self, id: &SessionId, Head { seq, hash }: Head, fold: &Fold) {
        let Fold { derived, plan_ids } = fold;
        let (prev, dropped, counter) = derived.item_ids.parts();
        let contents = Contents {
            planlog: "history",
            version: VERSION,
            session: id.as_str(),
            seq,
            hash,
            plan_ids: plan_ids.iter().cloned().collect(),
            prev: prev.to_vec(),
            dropped,
            counter,
            checkpoint: derived.checkpoint.clone(),
            list_ids: derived.list_ids.iter().cloned().collect(),
        };
        let path = self.file(id);
        if let Err(e) = self.write(&path, &contents) {
            tracing::debug!(path = %path.display(), "history cache not written: {e}");
        }
    }

    fn write(&self, path: &Path, contents: &Contents<'_>) -> std::io::Result<()> {
        let mut bytes = serde_json::to_vec(contents)?;
        let digest = Hash::of(&bytes).to_string();
        bytes.push(b'\n');
        bytes.extend_from_slice(digest.as_bytes());
        bytes.push(b'\n');
        if bytes.len() as u64 > MAX_BYTES {
            return Ok(());
        }
        match std::fs::DirBuilder::new().mode(0o700).create(&self.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        let Some(file) = open_ours(path, true)? else {
            return Err(std::io::Error::other(
                "a file planlog did not write is there; left as it is",
            ));
        };
        // Written over in place, then cut to length: a reader (or a crash) in between sees
        // a JSON line its digest line does not match, which is a miss.
        file.write_all_at(&bytes, 0)?;
        file.set_len(bytes.len() as u64)
    }
}

/// The JSON line of a cache file's `bytes`, when the digest line after it is its SHA-256 (a
/// file torn by a crash, a full disk or two writers at once has no such pair).
fn checked(bytes: &[u8]) -> Option<&[u8]> {
    let end = bytes.iter().position(|&b| b == b'\n')?;
    let (json, rest) = bytes.split_at(end);
    let digest = rest.strip_prefix(b"\n")?.strip_suffix(b"\n")?;
    (digest == Hash::of(json).to_string().as_bytes()).then_some(json)
}

/// Opens `path` when it is a regular file (not through a link; a FIFO does not block) that
/// is empty or starts with [`MAGIC`]; `Ok(None)` when it is something else. With `create`,
/// a missing file is made (owner only) and opened for writing.
fn open_ours(path: &Path, create: bool) -> std::io::Result<Option<File>> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    if create {
        options.write(true).create(true).mode(0o600);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return Ok(None);
    }
    if meta.len() == 0 {
        return Ok(Some(file));
    }
    let mut start = [0u8; MAGIC.len()];
    match file.read_exact_at(&mut start, 0) {
        Ok(()) if start == MAGIC => Ok(Some(file)),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use planlog_core::PlanStatus;

    fn state() -> Derived {
        let mut item_ids = ItemIds::new();
        let listed = |id: &str, text: &str| Listed {
            id: ItemId::new(id).unwrap(),
            content: text.to_owned(),
            status: PlanStatus::Pending,
        };
        item_ids.observe(&[listed("t1", "Write it"), listed("t2", "Test it")]);
        item_ids.observe(&[listed("t1", "Write it")]);
        Derived {
            item_ids,
            checkpoint: vec![Todo {
                content: "Write it".to_owned(),
                ..Todo::default()
            }],
            list_ids: [ItemId::new("t1").unwrap()].into_iter().collect(),
        }
    }

    fn session() -> SessionId {
        SessionId::new("cc-5e551011-0000-4000-8000-000000000001").unwrap()
    }

    fn hash(n: u8) -> Hash {
        Hash::from_bytes([n; 32])
    }

    fn save(cache: &HistoryCache) {
        let plan = [ItemId::new("t1").unwrap()].into_iter().collect();
        let head = Head {
            seq: Seq::new(7).unwrap(),
            hash: hash(7),
        };
        cache.save(
            &session(),
            head,
            &Fold {
                derived: state(),
                plan_ids: plan,
            },
        );
    }

    #[test]
    fn what_is_saved_is_loaded_with_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let cache = HistoryCache::beside(&dir.path().join("planlog.redb"));
        assert!(cache.load(&session()).is_none(), "nothing saved yet");
        save(&cache);
        let saved = cache.load(&session()).expect("saved");
        assert_eq!((saved.seq.get(), saved.hash), (7, hash(7)));
        assert_eq!(saved.fold.plan_ids.len(), 1);
        let want = state();
        assert_eq!(saved.fold.derived.checkpoint, want.checkpoint);
        assert_eq!(saved.fold.derived.list_ids, want.list_ids);
        assert_eq!(saved.fold.derived.item_ids.parts(), want.item_ids.parts());
        // Another session's file is not this one's.
        let other = SessionId::new("cc-0ther").unwrap();
        std::fs::copy(cache.file(&session()), cache.file(&other)).unwrap();
        assert!(cache.load(&other).is_none());
        // Owner only: it holds item texts.
        let mode = std::fs::metadata(cache.file(&session())).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
            0o600
        );
    }

    #[test]
    fn torn_or_foreign_files_are_misses_and_foreign_files_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let cache = HistoryCache::beside(&dir.path().join("planlog.redb"));
        save(&cache);
        let path = cache.file(&session());
        let whole = std::fs::read(&path).unwrap();
        // Torn at every length, and with another write's tail after it.
        for cut in [1, MAGIC.len(), whole.len() / 2, whole.len() - 2] {
            std::fs::write(&path, &whole[..cut]).unwrap();
            assert!(cache.load(&session()).is_none(), "torn at {cut}");
        }
        let mut longer = whole.clone();
        longer.extend_from_slice(b"1,\"x\":2}\n");
        std::fs::write(&path, &longer).unwrap();
        assert!(cache.load(&session()).is_none(), "another write's tail");
        // Parsable, but not what the digest covers (a byte of another write in the middle).
        let mut changed = whole.clone();
        let at = changed.windows(8).position(|w| w == b"Write it").unwrap();
        changed[at] = b'w';
        std::fs::write(&path, &changed).unwrap();
        assert!(cache.load(&session()).is_none(), "a changed byte");
        std::fs::write(&path, &whole).unwrap();
        assert!(cache.load(&session()).is_some(), "the file as written");

        // A file planlog did not write: not read, not written over, not removed.
        std::fs::write(&path, b"my notes\n").unwrap();
        assert!(cache.load(&session()).is_none());
        save(&cache);
        cache.forget(&session()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"my notes\n");

        // A link to a file of the user's: not followed, the file unchanged.
        std::fs::remove_file(&path).unwrap();
        let theirs = dir.path().join("theirs");
        std::fs::write(&theirs, &whole).unwrap();
        std::os::unix::fs::symlink(&theirs, &path).unwrap();
        assert!(cache.load(&session()).is_none());
        save(&cache);
        cache.forget(&session()).unwrap();
        assert_eq!(std::fs::read(&theirs).unwrap(), whole);
        assert!(std::fs::symlink_metadata(&path).unwrap().is_symlink());

        // A FIFO: no read blocks on it.
        std::fs::remove_file(&path).unwrap();
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        assert!(made.unwrap().success());
        assert!(cache.load(&session()).is_none());
        save(&cache);

        // A file where the folder would be: nothing written, nothing fails.
        let blocked = HistoryCache::beside(&dir.path().join("other.redb"));
        std::fs::write(blocked.dir(), b"mine").unwrap();
        save(&blocked);
        assert!(blocked.load(&session()).is_none());
        assert_eq!(std::fs::read(blocked.dir()).unwrap(), b"mine");
    }

    #[test]
    fn writers_at_once_leave_one_whole_state_or_a_miss_never_a_mixed_one() {
        let dir = tempfile::tempdir().unwrap();
        let cache = HistoryCache::beside(&dir.path().join("planlog.redb"));
        // Each state's counter is its seq, and its texts are as long as its seq says, so
        // states of different writers differ in length and in content.
        let state_at = |n: u64| {
            let mut derived = state();
            let listed = Listed {
                id: ItemId::new(format!("t{n}")).unwrap(),
                content: "x".repeat(n as usize),
                status: PlanStatus::Pending,
            };
            derived.item_ids.observe(&[listed]);
            derived
        };
        use std::sync::atomic::{AtomicUsize, Ordering};
        // Whole or missing, never mixed: what a load finds is checked against the state its
        // seq names.
        let check = |saved: Option<Saved>| {
            saved.map(|saved| {
                let n = saved.seq.get();
                assert_eq!(saved.hash, Hash::from_bytes([(n % 251) as u8; 32]));
                assert_eq!(
                    saved.fold.derived.item_ids.parts(),
                    state_at(n).item_ids.parts()
                );
            })
        };
        // The writers go on only once the reader has looked while they write (on a busy
        // machine the reader may not run before they are done otherwise), and the reader
        // looks until every writer is done. A reader whose check fails lets them go as it
        // unwinds, so the test fails instead of hanging.
        struct LetGo<'a>(&'a AtomicUsize);
        impl Drop for LetGo<'_> {
            fn drop(&mut self) {
                self.0.store(usize::MAX, Ordering::Release);
            }
        }
        let (done, looks) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|s| {
            for w in 0..3u64 {
                let (cache, done, looks) = (&cache, &done, &looks);
                s.spawn(move || {
                    for i in 0..300u64 {
                        let n = 1 + w * 1000 + i * 3;
                        let head = Head {
                            seq: Seq::new(n).unwrap(),
                            hash: Hash::from_bytes([(n % 251) as u8; 32]),
                        };
                        let fold = Fold {
                            derived: state_at(n),
                            ..Fold::default()
                        };
                        cache.save(&session(), head, &fold);
                        while i == 0 && looks.load(Ordering::Acquire) < 3 {
                            std::thread::yield_now();
                        }
                    }
                    done.fetch_add(1, Ordering::Release);
                });
            }
            let _let_go = LetGo(&looks);
            while done.load(Ordering::Acquire) < 3 {
                check(cache.load(&session()));
                looks.fetch_add(1, Ordering::Release);
            }
        });
        // Once they are done, one of the last states written is there, whole.
        assert!(check(cache.load(&session())).is_some(), "no state left");
    }

    #[test]
    fn forget_removes_what_was_kept() {
        let dir = tempfile::tempdir().unwrap();
        let cache = HistoryCache::beside(&dir.path().join("planlog.redb"));
        cache.forget(&session()).unwrap();
        save(&cache);
        assert!(cache.file(&session()).exists());
        cache.forget(&session()).unwrap();
        assert!(!cache.file(&session()).exists());
    }
}
