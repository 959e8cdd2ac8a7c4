//! The index's redb handle, opened again when redb has failed it.
//!
//! When a write to the index fails (a disk that filled during a commit, a file-size limit,
//! an I/O error), redb fails every later operation of that handle, reads included ("previous
//! I/O error: close and re-open the database"). A long-lived process (an MCP server, the
//! viewer) would then fail every append and read until it was restarted, although the
//! journal takes appends and holds every record. So the store keeps its handle here, and
//! after a failure opens the index again in its place when the handle is the one that
//! failed: the next write's checks and reads go through the new one.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use crate::redb::{Handle, OpenOptions};

/// The index's current handle, and how to open it again.
pub(super) struct IndexHandle {
    current: RwLock<Arc<Handle>>,
    path: PathBuf,
    /// The store's index options (read-only when the store was opened so): how to open the
    /// index again, and how a lazily indexed writer opens it for writing.
    options: OpenOptions,
}

impl IndexHandle {
    /// `handle`, opened on the index at `path`; `options` open it again.
    pub(super) fn new(handle: Handle, path: &Path, options: OpenOptions) -> Self {
        Self {
            current: RwLock::new(Arc::new(handle)),
            path: path.to_path_buf(),
            options,
        }
    }

    /// The store's index options.
    pub(super) fn options(&self) -> &OpenOptions {
        &self.options
    }

    /// The handle to use now.
    pub(super) fn get(&self) -> Arc<Handle> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// After an operation on `used` (a handle [`IndexHandle::get`] gave) failed: when redb
    /// has failed that handle for good, the index is opened again in its place (read-only
    /// stays read-only, falling back to writable when the store may write and the file
    /// needs a repair only a writer makes). Whether the handle was replaced: a handle that
    /// still works is kept, and so is a failed one when the index cannot be opened again
    /// now (no room for that repair): the next failure tries again.
    pub(super) fn renew_if_failed(&self, used: &Arc<Handle>) -> bool {
        if !used.has_failed() {
            return false;
        }
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        if !Arc::ptr_eq(&current, used) {
            // Another thread renewed it already.
            return true;
        }
        let same_mode = self.options.clone().read_only(!used.is_writable());
        let opened = same_mode.open_handle(&self.path).or_else(|e| {
            if used.is_writable() || self.options.is_read_only() {
                Err(e)
            } else {
                self.options.open_handle(&self.path)
            }
        });
        match opened {
            Ok(handle) => {
                tracing::warn!(index = %self.path.display(), "the index's handle failed (a write to it did not complete); it was opened again");
                *current = Arc::new(handle);
                true
            }
            Err(error) => {
                tracing::warn!(index = %self.path.display(), %error, "the index's handle failed and could not be opened again yet; the next failure tries again");
                false
            }
        }
    }
}
