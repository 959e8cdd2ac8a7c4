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
    shared: Arc<Shared>,
}

impl LockWaiter {
    /// A waiter for the journal at `path` (its helper starts on the first wait).
    pub(crate) fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            shared: Arc::default(),
        }
    }

    /// Takes the advisory lock on `file` (the journal's own description), waiting at most
    /// `wait` for another process to let go: an error of kind `WouldBlock` when it held the
    /// lock all that time.
    ///
    /// # Errors
    /// `WouldBlock` as above; the file's own errors.
    pub(crate) fn lock(&self, file: &File, wait: Duration) -> Result<(), JournalError> {
        let started = Instant::now();
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
                return super::lock_within(file, Some(left), false);
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

/// The error of a wait that ran out.
fn held_for(started: Instant) -> JournalError {
    JournalError::Io(std::io::Error::new(
        std::io::ErrorKind::WouldBlock,
        format!(
            "another process has held the lock for {} ms",
            started.elapsed().as_millis()
        ),
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code

    use super::*;

    /// Another holder (a description of its own, as another process's) keeps the lock past
    /// the bound: the wait ends at about the bound with `WouldBlock`. Let go during a wait,
    /// the lock is taken well before the bound; and a helper left blocked by a wait that
    /// ran out does not keep the next one from getting the lock.
    #[test]
    fn a_wait_ends_at_its_bound_or_when_the_holder_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        std::fs::write(&path, b"").unwrap();
        let mine = File::options().read(true).write(true).open(&path).unwrap();
        let holder = File::open(&path).unwrap();
        let waiter = LockWaiter::new(&path);

        holder.lock().unwrap();
        let started = Instant::now();
        let e = waiter.lock(&mine, Duration::from_millis(200)).unwrap_err();
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
        waiter.lock(&mine, Duration::from_secs(30)).unwrap();
        let waited = started.elapsed();
        assert!(waited < Duration::from_secs(5), "{waited:?}");
        // Held by this description now: another's try fails until it is let go.
        let holder = letting_go.join().unwrap();
        assert!(holder.try_lock().is_err());
        mine.unlock().unwrap();
        assert!(holder.try_lock().is_ok());
        holder.unlock().unwrap();
    }

    /// Many waits in turn against a holder that takes and lets go of the lock quickly each
    /// get it, and the helper ends when the waiter is dropped.
    #[test]
    fn short_holds_are_waited_out_and_the_helper_ends_with_the_waiter() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        std::fs::write(&path, b"").unwrap();
        let mine = File::options().read(true).write(true).open(&path).unwrap();
        let waiter = LockWaiter::new(&path);
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let other = {
            let (path, done) = (path.clone(), Arc::clone(&done));
            std::thread::spawn(move || {
                let theirs = File::open(&path).unwrap();
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    theirs.lock().unwrap();
                    std::thread::sleep(Duration::from_micros(300));
                    theirs.unlock().unwrap();
                    std::thread::sleep(Duration::from_micros(100));
                }
            })
        };
        let mut woken = 0;
        for _ in 0..200 {
            let before = waiter.shared.state().released;
            waiter.lock(&mine, Duration::from_secs(10)).unwrap();
            // Nobody else holds it meanwhile: a description of another's cannot take it.
            assert!(File::open(&path).unwrap().try_lock().is_err());
            woken += usize::from(waiter.shared.state().released > before);
            mine.unlock().unwrap();
            // Long enough for the other to take it again (else this thread's next try wins
            // before the other is woken).
            std::thread::sleep(Duration::from_micros(200));
        }
        assert!(woken > 0, "no wait was woken by the helper");
        done.store(true, std::sync::atomic::Ordering::SeqCst);
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
