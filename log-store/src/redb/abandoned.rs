//! Opens given up on: a writable open runs on a thread of its own, which the caller stops
//! waiting for past its lock timeout ([`super::OpenOptions`]). Such a thread, once the other
//! process's write is over, opens the file and closes it again, and redb writes to the file
//! as it does. A process that ended in between would leave the file marked as needing a
//! repair (seconds on a large store): [`settle_abandoned_opens`] lets them finish first.

use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The threads of opens given up on, not yet seen finished.
static ABANDONED: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// Keeps `thread`, an open given up on, for [`settle_abandoned_opens`].
pub(super) fn keep(thread: JoinHandle<()>) {
    // A poisoned list is still a list: a panic elsewhere does not lose the threads.
    let mut list = ABANDONED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    list.retain(|t| !t.is_finished());
    list.push(thread);
}

/// Waits, at most `within`, for the writable opens this process gave up on to finish
/// (each closes what it opened), so that a process that ends leaves no file of the store
/// marked open. Call it before the process exits. One still unfinished at the deadline is
/// most often still waiting for another process's write, having written nothing yet (redb
/// takes the writer's lock before it writes).
pub fn settle_abandoned_opens(within: Duration) {
    let deadline = Instant::now() + within;
    let threads = std::mem::take(
        &mut *ABANDONED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    for thread in threads {
        while !thread.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        if thread.is_finished() {
            // The thread ended: its result (the handle, closed) is nothing to us.
            let _ = thread.join();
        } else {
            tracing::debug!("an open of the store still waits for another process's write at exit");
        }
    }
}
