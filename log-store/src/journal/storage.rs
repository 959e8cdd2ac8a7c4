//! Where a journal's bytes live: [`FileStorage`] (a file, `fdatasync`) or [`SimStorage`] (a
//! simulated disk that loses what was not synced, and tears the last write, when it crashes).

use std::io;

/// The file a journal appends to.
pub trait Storage {
    /// Its length in bytes (what this process wrote included, synced or not).
    ///
    /// # Errors
    /// The OS's.
    fn size(&self) -> io::Result<u64>;
    /// Reads `buf.len()` bytes at `offset` (fewer at the end).
    ///
    /// # Errors
    /// The OS's.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
    /// Writes `bytes` at `offset`.
    ///
    /// # Errors
    /// The OS's (a full disk).
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()>;
    /// Makes everything written so far durable (`fdatasync`).
    ///
    /// # Errors
    /// The OS's.
    fn sync(&mut self) -> io::Result<()>;
    /// Cuts the file to `len` bytes (not durable until [`Storage::sync`]).
    ///
    /// # Errors
    /// The OS's.
    fn truncate(&mut self, len: u64) -> io::Result<()>;
    /// Whether the journal keeps zeros written past its end, to overwrite (see
    /// `journal::PREALLOCATE`): a file's `fdatasync` then writes no inode.
    fn preallocates(&self) -> bool {
        false
    }
    /// Keeps a copy of bytes `from..to` before a cut removes them: where (a name to show),
    /// or `None` when this storage keeps none. At its very end a journal cannot tell a torn
    /// write from damage to the last write it synced (both are a bad frame that no later
    /// frame vouches for), so what it cuts is kept, never destroyed.
    ///
    /// # Errors
    /// The OS's (a full disk); no copy is left then.
    fn keep_before_cut(&self, from: u64, to: u64) -> io::Result<Option<String>> {
        let _ = (from, to);
        Ok(None)
    }
}

/// A journal file on disk.
#[derive(Debug)]
pub struct FileStorage {
    file: std::fs::File,
    /// Where it was opened (bytes a cut removes are kept beside it); `None` for a file
    /// handed over open.
    path: Option<std::path::PathBuf>,
}

impl FileStorage {
    /// Opens (or creates) the file at `path` for reading and appending.
    ///
    /// # Errors
    /// The OS's.
    pub fn open(path: &std::path::Path) -> io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        Ok(Self {
            file,
            path: Some(path.to_path_buf()),
        })
    }

    /// Storage on a file already open.
    pub(crate) fn from_file(file: std::fs::File) -> Self {
        Self { file, path: None }
    }

    /// Opens the file at `path` for reading only.
    ///
    /// # Errors
    /// The OS's (`NotFound` when there is none).
    pub fn open_read_only(path: &std::path::Path) -> io::Result<Self> {
        Ok(Self {
            file: std::fs::File::open(path)?,
            path: Some(path.to_path_buf()),
        })
    }
}

impl FileStorage {
    /// The open file (to lock it across processes, and to sync it from another thread).
    pub(crate) fn file(&self) -> &std::fs::File {
        &self.file
    }
}

impl Storage for FileStorage {
    /// The file's length from `lseek(SEEK_END)`, not from a `stat`: on Linux since 6.13
    /// (multigrain timestamps) a `stat` marks the file's times as seen, so the next write
    /// stamps a fine-grained time and dirties the inode, and the `fdatasync` after it then
    /// writes the inode as well as the data (ext4 without a journal did, on the kernel
    /// measured). A writer asks the length at each catch-up; with a `stat` there, an append
    /// and its sync took ~210 µs against ~140 µs (BENCHMARKS.md § "A stat before each
    /// append"). Every read and write here is positional, so the file offset the seek moves
    /// is never used.
    fn size(&self) -> io::Result<u64> {
        use std::io::Seek as _;
        (&self.file).seek(io::SeekFrom::End(0))
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64)? {
                0 => break,
                n => done += n,
            }
        }
        Ok(done)
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.file.write_all_at(bytes, offset)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }

    fn preallocates(&self) -> bool {
        true
    }

    /// Copies the bytes to `<journal>.cut-at-<from>-<nanoseconds since 1970>` (the
    /// journal's mode, zeros at the end left out, a MiB at a time; written as
    /// `.cutting-…` and renamed when whole), synced with its folder.
    fn keep_before_cut(&self, from: u64, to: u64) -> io::Result<Option<String>> {
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        let Some(path) = &self.path else {
            return Ok(None);
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let named = |what: &str| {
            let mut name = path.as_os_str().to_owned();
            name.push(format!(".{what}-{from}-{nanos}"));
            std::path::PathBuf::from(name)
        };
        // Written under another name, renamed once whole: a copy a kill cut short is never
        // taken for one.
        let (writing, kept) = (named("cutting"), named("cut-at"));
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&writing)?;
        let copied = (|| {
            out.set_permissions(self.file.metadata()?.permissions())?;
            let mut buf = vec![0u8; 1 << 20];
            let (mut at, mut upto) = (from, 0u64);
            while at < to {
                let want = usize::try_from(to - at).map_or(buf.len(), |w| w.min(buf.len()));
                let n = self.read_at(at, &mut buf[..want])?;
                if n == 0 {
                    break;
                }
                if let Some(last) = buf[..n].iter().rposition(|&b| b != 0) {
                    upto = at - from + last as u64 + 1;
                }
                out.write_all(&buf[..n])?;
                at += n as u64;
            }
            out.set_len(upto)?;
            out.sync_all()?;
            std::fs::rename(&writing, &kept)?;
            sync_folder_of(&kept)
        })();
        if let Err(e) = copied {
            let _ = std::fs::remove_file(&writing);
            return Err(e);
        }
        Ok(Some(kept.display().to_string()))
    }
}

/// Makes the names in `file`'s folder durable (a file made or renamed there): the folder
/// synced, `.` for a bare file name.
///
/// # Errors
/// The OS's.
pub(crate) fn sync_folder_of(file: &std::path::Path) -> io::Result<()> {
    std::fs::File::open(folder_of(file))?.sync_all()
}

/// The folder `file` lies in: `.` for a bare file name.
fn folder_of(file: &std::path::Path) -> &std::path::Path {
    file.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."))
}

/// The copies [`FileStorage`] kept of what cuts removed from the journal at `journal`
/// (see [`Storage::keep_before_cut`]): each file, and the byte the cut was at, in the
/// order of their names.
///
/// # Errors
/// The OS's, reading the journal's folder.
pub fn cuts_kept_beside(journal: &std::path::Path) -> io::Result<Vec<(std::path::PathBuf, u64)>> {
    let Some(name) = journal
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
    else {
        return Ok(Vec::new());
    };
    let prefix = format!("{name}.cut-at-");
    let mut kept = Vec::new();
    for entry in std::fs::read_dir(folder_of(journal))? {
        let entry = entry?;
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&prefix) else {
            continue;
        };
        if let Some(at) = rest.split('-').next().and_then(|a| a.parse().ok()) {
            kept.push((entry.path(), at));
        }
    }
    kept.sort();
    Ok(kept)
}

/// What a power loss did to one change that was not synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It reached the disk.
    Kept,
    /// It did not.
    Lost,
    /// Its first bytes did (a write).
    Torn(usize),
}

/// One change not yet synced.
#[derive(Debug, Clone)]
enum Pending {
    Write { offset: u64, bytes: Vec<u8> },
    Truncate { len: u64 },
}

/// A simulated disk: what a sync made durable, and the writes since, in order. A crash keeps
/// the durable bytes, then the first `k` pending changes and a torn piece of the next: any
/// `k`, any byte (`crash` is given both), which covers losing everything not synced and
/// tearing the last write anywhere.
#[derive(Debug, Clone, Default)]
pub struct SimStorage {
    durable: Vec<u8>,
    pending: Vec<Pending>,
    /// What the process sees: `durable` with `pending` applied.
    now: Vec<u8>,
    /// How long the file may grow (`None`: without limit): a write that would end past it
    /// fails, as on a full disk (`StorageFull`); one over bytes the file has (zeros kept
    /// past the journal's end) still lands.
    pub limit: Option<u64>,
    /// Whether the journal keeps zeros past its end here, as it does on a file.
    preallocate: bool,
}

impl SimStorage {
    /// An empty disk.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty disk on which the journal keeps zeros written past its end, as it does on
    /// a file ([`FileStorage`]).
    pub fn preallocating() -> Self {
        Self {
            preallocate: true,
            ..Self::default()
        }
    }

    /// How many changes are not synced.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The disk after a power loss: the durable bytes, then the first `kept` pending changes,
    /// then `torn` bytes of the next write (when there is one).
    pub fn crash(&self, kept: usize, torn: usize) -> SimStorage {
        self.crash_with(&mut |i, _| match i.cmp(&kept) {
            std::cmp::Ordering::Less => Fate::Kept,
            std::cmp::Ordering::Equal => Fate::Torn(torn),
            std::cmp::Ordering::Greater => Fate::Lost,
        })
    }

    /// The disk after a power loss in which each change not synced was kept, lost, or (a
    /// write) torn, each on its own, as `fate` says for the change's index and byte count (a
    /// disk's cache writes back in any order).
    pub fn crash_with(&self, fate: &mut dyn FnMut(usize, usize) -> Fate) -> SimStorage {
        let mut bytes = self.durable.clone();
        for (i, change) in self.pending.iter().enumerate() {
            let size = match change {
                Pending::Write { bytes, .. } => bytes.len(),
                Pending::Truncate { .. } => 0,
            };
            match (fate(i, size), change) {
                (Fate::Kept, _) => apply(&mut bytes, change),
                (Fate::Lost, _) | (Fate::Torn(_), Pending::Truncate { .. }) => {}
                (Fate::Torn(n), Pending::Write { offset, bytes: w }) => apply(
                    &mut bytes,
                    &Pending::Write {
                        offset: *offset,
                        bytes: w[..n.min(w.len())].to_vec(),
                    },
                ),
            }
        }
        SimStorage {
            durable: bytes.clone(),
            pending: Vec::new(),
            now: bytes,
            limit: None,
            preallocate: self.preallocate,
        }
    }

    /// Flips a bit of the durable bytes at `offset` (damage on the disk).
    pub fn damage(&mut self, offset: usize) {
        if let Some(b) = self.durable.get_mut(offset) {
            *b ^= 0x10;
        }
        if let Some(b) = self.now.get_mut(offset) {
            *b ^= 0x10;
        }
    }

    /// The bytes as the process sees them.
    pub fn bytes(&self) -> &[u8] {
        &self.now
    }
}

fn apply(bytes: &mut Vec<u8>, change: &Pending) {
    match change {
        Pending::Write { offset, bytes: w } => {
            let at = usize::try_from(*offset).unwrap_or(usize::MAX);
            if bytes.len() < at + w.len() {
                bytes.resize(at + w.len(), 0);
            }
            bytes[at..at + w.len()].copy_from_slice(w);
        }
        Pending::Truncate { len } => {
            bytes.truncate(usize::try_from(*len).unwrap_or(usize::MAX));
        }
    }
}

impl Storage for SimStorage {
    fn size(&self) -> io::Result<u64> {
        Ok(self.now.len() as u64)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let at = usize::try_from(offset).unwrap_or(usize::MAX);
        let Some(src) = self.now.get(at..) else {
            return Ok(0);
        };
        let n = src.len().min(buf.len());
        buf[..n].copy_from_slice(&src[..n]);
        Ok(n)
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let ends = offset + bytes.len() as u64;
        if self
            .limit
            .is_some_and(|limit| ends > limit.max(self.now.len() as u64))
        {
            return Err(io::Error::from(io::ErrorKind::StorageFull));
        }
        let change = Pending::Write {
            offset,
            bytes: bytes.to_vec(),
        };
        apply(&mut self.now, &change);
        self.pending.push(change);
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        self.durable = self.now.clone();
        self.pending.clear();
        Ok(())
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        let change = Pending::Truncate { len };
        apply(&mut self.now, &change);
        self.pending.push(change);
        Ok(())
    }

    fn preallocates(&self) -> bool {
        self.preallocate
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code

    use super::*;

    /// The length read by seeking is the file's as every handle left it, never one this
    /// handle remembers: grown by this open and by another open of the file (another
    /// process), cut by another.
    #[test]
    fn the_size_is_the_files_as_other_handles_left_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        let mut ours = FileStorage::open(&path).unwrap();
        let mut theirs = FileStorage::open(&path).unwrap();
        assert_eq!(ours.size().unwrap(), 0);
        ours.write_at(0, b"0123456789").unwrap();
        assert_eq!(ours.size().unwrap(), 10);
        theirs.write_at(10, &[7u8; 90]).unwrap();
        assert_eq!(ours.size().unwrap(), 100);
        theirs.truncate(40).unwrap();
        assert_eq!(ours.size().unwrap(), 40);
        assert_eq!(
            ours.size().unwrap(),
            std::fs::metadata(&path).unwrap().len()
        );
    }
}
