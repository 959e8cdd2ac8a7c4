//! Wake-ups of helper threads held back until a call's answer is out.
//!
//! A write wakes the store's helper threads: the indexer ([`crate::JournaledLog`]'s
//! background indexing) and the plan file's thread ([`crate::host::BackgroundSink`]). A
//! wake-up costs the waking thread a system call and, on a small machine, puts a second
//! thread on the cores just when the answer is on its way back to the model. Inside
//! [`after_answer`] (the async session's thread runs every call in one, and each call hands
//! its answer back before it returns) such wake-ups are queued on the thread and done once
//! the call is over; anywhere else [`wake`] wakes at once, as before.
//!
//! The indexer's round is recorded before the call answers (its pending flag); only the
//! wake-up waits. The plan file's update waits with it, since sending it on the channel is
//! what wakes that thread; [`now`] sends what waits, which a flush does first.

use std::cell::RefCell;

/// A queued wake-up.
type Wake = Box<dyn FnOnce()>;

thread_local! {
    /// The wake-ups queued on this thread: `Some` inside [`after_answer`].
    static QUEUED: RefCell<Option<Vec<Wake>>> = const { RefCell::new(None) };
}

/// Runs `wake` when the current [`after_answer`] call ends, or at once outside one.
pub(crate) fn wake(wake: impl FnOnce() + 'static) {
    let mut wake = Some(wake);
    QUEUED.with_borrow_mut(|queued| {
        if let Some(queued) = queued.as_mut()
            && let Some(w) = wake.take()
        {
            queued.push(Box::new(w));
        }
    });
    if let Some(wake) = wake {
        wake();
    }
}

/// Runs every wake-up queued on this thread so far (before something that must come after
/// them, such as a flush that waits for the plan file's thread).
pub(crate) fn now() {
    run(QUEUED.with_borrow_mut(|queued| queued.as_mut().map(std::mem::take)));
}

/// Runs `queued`, in order.
fn run(queued: Option<Vec<Wake>>) {
    for wake in queued.into_iter().flatten() {
        wake();
    }
}

/// Ends an [`after_answer`] call, also when it unwinds: the queue is closed and run.
struct Scope;

impl Drop for Scope {
    fn drop(&mut self) {
        run(QUEUED.with_borrow_mut(Option::take));
    }
}

/// Runs `call`, holding back the wake-ups it asks for until it has returned (or unwound).
/// Nested calls join the outer one.
pub(crate) fn after_answer<R>(call: impl FnOnce() -> R) -> R {
    let outer = QUEUED.with_borrow_mut(|queued| {
        let outer = queued.is_some();
        if !outer {
            *queued = Some(Vec::new());
        }
        outer
    });
    // Built only by the outermost call: a `Scope` dropped at once would close the queue.
    let _scope = (!outer).then(|| Scope);
    call()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    #[test]
    fn outside_a_call_a_wake_up_happens_at_once() {
        let woken = Rc::new(Cell::new(0));
        let w = Rc::clone(&woken);
        wake(move || w.set(w.get() + 1));
        assert_eq!(woken.get(), 1);
    }

    #[test]
    fn inside_a_call_wake_ups_wait_for_its_end_in_order() {
        let woken = Rc::new(std::cell::RefCell::new(Vec::new()));
        let seen_inside = after_answer(|| {
            for k in 0..3 {
                let w = Rc::clone(&woken);
                wake(move || w.borrow_mut().push(k));
            }
            // A nested call joins the outer one: nothing runs at its end.
            after_answer(|| {
                let w = Rc::clone(&woken);
                wake(move || w.borrow_mut().push(3));
            });
            woken.borrow().len()
        });
        assert_eq!(seen_inside, 0, "a wake-up ran before the call ended");
        assert_eq!(*woken.borrow(), vec![0, 1, 2, 3]);
        // The scope is closed: the next wake-up is at once again.
        let w = Rc::clone(&woken);
        wake(move || w.borrow_mut().push(4));
        assert_eq!(woken.borrow().len(), 5);
    }

    #[test]
    fn now_runs_what_is_queued_and_a_panicking_call_still_wakes() {
        let woken = Rc::new(Cell::new(0));
        after_answer(|| {
            let w = Rc::clone(&woken);
            wake(move || w.set(w.get() + 1));
            now();
            assert_eq!(woken.get(), 1, "now() did not run the queued wake-up");
        });
        assert_eq!(woken.get(), 1, "a wake-up ran twice");
        let w = Rc::clone(&woken);
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            after_answer(|| {
                wake(move || w.set(w.get() + 1));
                panic!("the call fails");
            })
        }));
        assert!(unwound.is_err());
        assert_eq!(
            woken.get(),
            2,
            "the wake-up of a call that panicked was lost"
        );
    }
}
