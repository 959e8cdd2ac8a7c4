//! planlog-index: the viewer's index of a store, derived from the log and rebuilt from it at
//! will. The log stays the record; this file only makes whole-session questions cheap on
//! sessions of millions of events:
//!
//! - each session's **marks** by seq: refusals, flagged writes, compactions, restores (the
//!   minimap's buckets, next/previous refusal or flag);
//! - each item's **texts**: every content an item had in a session, with the first and last
//!   seq it had it (search, grouped per item and session).
//!
//! It lives in its own redb file ([`Index::open`]); [`Index::catch_up`] brings it up to the
//! log a chunk at a time, from where it stopped, so it is kept current by whoever reads it.
//! A session that shrank, changed under it or went away is indexed again or forgotten.
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | `error` | [`IndexError`]: the store's errors, and the index file's (remove it to rebuild) |
//! | `tables` | the redb tables and the index file's format |
//! | `catch_up` | reading the log past what is indexed ([`Index::catch_up`], [`Index::catch_up_session`]) |
//! | `query` | marks, buckets, next/previous mark, search ([`Mark`], [`Bucket`], [`Hit`]) |

mod catch_up;
mod error;
mod query;
mod tables;

pub use catch_up::Indexed;
pub use error::IndexError;
pub use query::{Bucket, Hit, ItemText, Mark, MarkKind};

use std::path::{Path, PathBuf};

/// redb's page cache for the index: queries read ranges once, and the viewer that holds the
/// index must stay small whatever the store's size.
const CACHE: usize = 16 * 1024 * 1024;

/// An open index file.
pub struct Index {
    db: redb::Database,
    path: PathBuf,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index").field("path", &self.path).finish()
    }
}

impl Index {
    /// Opens the index at `path`, creating it when there is no file. `store` names the store it
    /// indexes: an index made for another store is emptied and made again. A file that is not
    /// a planlog index is refused, never overwritten.
    pub fn open(path: &Path, store: &str) -> Result<Self, IndexError> {
        let fresh = !path.exists();
        let db = redb::Builder::new()
            .set_cache_size(CACHE)
            .create(path)
            .map_err(|e| IndexError::file(path, e))?;
        let index = Self {
            db,
            path: path.to_path_buf(),
        };
        tables::prepare(&index.db, store, fresh).map_err(|e| IndexError::file(path, e))?;
        Ok(index)
    }

    /// Where the index file is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
