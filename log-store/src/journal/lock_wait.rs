//! A bounded wait for another process's lock on the journal that wakes when the lock is let
//! go, instead of polling for it.
//!
//! `flock` has no timeout. Polling `try_lock` with pauses bounds the wait, but under short,
//! frequent holds (processes appending to one store) the lock often sits free until the
//! next poll: 8 processes appending at once reached 1.9 x one process with blocking locks,
//! 1.45 x polling from 1 ms pauses and 1.6 x from 50 µs (BENCHMARKS.md § "A bounded wait
//! for the journal's lock").
//!
//! So a helper thread blocks in `flock` for the waiting thread, on an open file description
//! of the journal of its own (which conflicts with every other, this process's own too).
//! When it gets the lock it lets go at once and tells the waiter, which then tries the
//! journal's own description; the waiter itself waits on a condition variable with a
//! timeout. A wait that times out leaves the helper blocked until the holder lets go; it then
//! takes and drops the lock once, which delays nobody for more than that moment.
//!
//! Tried and not kept: the helper handing the lock it got over to the waiter (no other
//! process can take it between). It held the lock across the wake-up of the waiting thread
//! instead, and was no faster (8 processes: 1.65 x against 1.71 x).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::JournalError;
use super::shared::{held_for, lock_within};

/// What the waiting threads and the helper share.
#[derive(Default)]
struct State {
    /// A waiter asks the helper to block until the lock is free.
    asked: bool,
    /// How many times the helper found the lock free (a waiter waits for it to change).
    released: u64,
    /// The helper is running (started lazily, on the first wait that needs it).
    running: bool,
    /// The journal is closed: the helper ends.
    stop: bool,
    /// The helper could not take the lock (an error, not a wait): waits poll from then on.
    failed: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // A panic holding it leaves plain counters and flags: nothing half done.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Takes the journal's lock within a time bound, woken when the holder lets go.
pub(crate) struct LockWaiter {
    path: PathBuf,
    /// The bound.
    wait: Duration,
    shared: Arc<Shared>,
}

impl LockWaiter {
    /// A waiter for the journal at `path` that waits at most `wait` (its helper starts on the
    /// first wait that needs it).
    pub(crate) fn new(path: &Path, wait: Duration) -> Self {
        Self {
            path: path.to_path_buf(),
            wait,
            shared: Arc::default(),
        }
    }

    /// Takes the advisory lock on `file` (the journal's own description), waiting at most
    /// the bound for another process to let go: an error of kind `WouldBlock` when it held
    /// the lock all that time.
    ///
    /// # Errors
    /// `WouldBlock` as above; the file's own errors.
    pub(crate) fn lock(&self, file: &File) -> Result<(), JournalError> {
        let (started, wait) = (Instant::now(), self.wait);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(()),
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
            }
            let left = wait.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Err(held_for(started));
            }
            if !self.helper_running() {
                // No helper (it could not start, or failed): poll for what is left.
                return lock_within(file, Some(left), false);
            }
            let mut state = self.shared.state();
            let seen = state.released;
            state.asked = true;
            self.shared.changed.notify_all();
            while state.released == seen && state.running {
                let left = wait.saturating_sub(started.elapsed());
                if left.is_zero() {
                    break;
                }
                state = self
                    .shared
                    .changed
                    .wait_timeout(state, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
        }
    }

    /// Starts the helper if it is not running; whether it runs.
    fn helper_running(&self) -> bool {
        let mut state = self.shared.state();
        if state.running {
            return true;
        }
        if state.failed {
            return false;
        }
        let Ok(own) = File::open(&self.path) else {
            return false;
        };
        let shared = Arc::clone(&self.shared);
        let started = std::thread::Builder::new()
            .name("planlog-journal-lock".to_owned())
            .spawn(move || help(&shared, &own));
        state.running = started.is_ok();
        state.running
    }
}

impl Drop for LockWaiter {
    fn drop(&mut self) {
        self.shared.state().stop = true;
        self.shared.changed.notify_all();
    }
}

/// The helper: each time a waiter asks, blocks until the lock is free on `own` (a
/// description of its own), lets go at once and tells the waiters.
fn help(shared: &Shared, own: &File) {
    loop {
        {
            let mut state = shared.state();
            while !state.asked && !state.stop {
                state = shared
                    .changed
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if state.stop {
                state.running = false;
                return;
            }
            state.asked = false;
        }
        let got = own.lock().and_then(|()| own.unlock());
        let mut state = shared.state();
        state.released += 1;
        if let Err(error) = got {
            tracing::warn!(%error, "the journal's lock helper stopped; waits for the lock poll instead");
            state.running = false;
            state.failed = true;
        }
        shared.changed.notify_all();
        if !state.running {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code

    use std::sync::mpsc;

    use super::*;

    /// An empty journal in a new folder, this process's description of it, and its path.
    fn journal() -> (tempfile::TempDir, PathBuf, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        std::fs::write(&path, b"").unwrap();
        let mine = File::options().read(true).write(true).open(&path).unwrap();
        (dir, path, mine)
    }

    /// Another holder (a description of its own, as another process's) keeps the lock past
    /// the bound: the wait ends at about the bound with `WouldBlock`. Let go during a wait,
    /// the lock is taken well before the bound, by this description alone.
    #[test]
    fn a_wait_ends_at_its_bound_or_when_the_holder_lets_go() {
        let (_dir, path, mine) = journal();
        let holder = File::open(&path).unwrap();
        holder.lock().unwrap();
        let started = Instant::now();
        let e = LockWaiter::new(&path, Duration::from_millis(200))
            .lock(&mine)
            .unwrap_err();
        let waited = started.elapsed();
        assert!(
            matches!(&e, JournalError::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock),
            "{e}"
        );
        assert!(
            waited >= Duration::from_millis(200) && waited < Duration::from_secs(5),
            "{waited:?}"
        );

        // The holder lets go 100 ms into a wait of 30 s.
        let letting_go = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            holder.unlock().unwrap();
            holder
        });
        let started = Instant::now();
        LockWaiter::new(&path, Duration::from_secs(30))
            .lock(&mine)
            .unwrap();
        let waited = started.elapsed();
        assert!(waited < Duration::from_secs(5), "{waited:?}");
        let holder = letting_go.join().unwrap();
        assert!(holder.try_lock().is_err());
        mine.unlock().unwrap();
        assert!(holder.try_lock().is_ok());
        holder.unlock().unwrap();
    }

    /// Each of 30 waits meets the lock held by another description (for 50 ms after it says
    /// so: far longer than the waiting thread takes to try): the helper wakes every one of
    /// them, each then holds the lock alone, and the helper ends when the waiter is dropped.
    #[test]
    fn short_holds_are_waited_out_and_the_helper_ends_with_the_waiter() {
        const ROUNDS: usize = 30;
        let (_dir, path, mine) = journal();
        let waiter = LockWaiter::new(&path, Duration::from_secs(10));
        let (held, holding) = mpsc::channel();
        let (done, next) = mpsc::channel::<()>();
        let other = {
            let path = path.clone();
            std::thread::spawn(move || {
                let theirs = File::open(&path).unwrap();
                for _ in 0..ROUNDS {
                    theirs.lock().unwrap();
                    held.send(()).unwrap();
                    std::thread::sleep(Duration::from_millis(50));
                    theirs.unlock().unwrap();
                    next.recv().unwrap();
                }
            })
        };
        for _ in 0..ROUNDS {
            holding.recv().unwrap();
            let before = waiter.shared.state().released;
            waiter.lock(&mine).unwrap();
            assert!(
                waiter.shared.state().released > before,
                "a wait got the lock without the helper"
            );
            assert!(File::open(&path).unwrap().try_lock().is_err());
            mine.unlock().unwrap();
            done.send(()).unwrap();
        }
        other.join().unwrap();
        let shared = Arc::clone(&waiter.shared);
        drop(waiter);
        let until = Instant::now() + Duration::from_secs(10);
        while shared.state().running && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!shared.state().running, "the helper outlived its waiter");
    }
}
