//! Ending a hook's process without the C library's exit handlers.
//!
//! A hook is a new process for every call of the agent's tool, and the process's end is part
//! of what the agent waits for. Returning from `main` runs the C library's `exit`: its
//! handlers, and among them the allocator's (mimalloc walks and collects every heap page and
//! returns it to the kernel, which unmaps them all a moment later anyway). In turns on the
//! benchmark machine that was 60–80 µs of a hook call's ~0.9 ms past process start
//! (BENCHMARKS.md § "A hook's process ends with `_exit`").
//!
//! This is planlog's only `unsafe` code (the workspace denies it elsewhere, and
//! `.ci/crate-checks` counts the exceptions): std has no `_exit`, and no small crate in the
//! tree wraps it safely.

use std::io::Write;

/// Flushes stdout and stderr, then ends the process with `code` through `_exit`: no exit
/// handlers, no thread-local destructors. Every value of the caller's has been dropped by
/// then (files closed, the store's handles let go), so nothing is lost: what a normal exit
/// would add is the allocator handing memory back and the C library's own teardown.
#[allow(unsafe_code)]
pub(crate) fn without_exit_handlers(code: u8) -> ! {
    // Errors are ignored as a normal exit ignores them (the reader has gone: nothing to
    // tell it).
    let _ = std::io::stdout().lock().flush();
    let _ = std::io::stderr().lock().flush();
    // SAFETY: `_exit` takes an integer and returns to no one; it only asks the kernel to end
    // the process. Skipping exit handlers is sound here: planlog's code registers none (the
    // allocator's is the one skipped on purpose), its output is flushed above, and every file
    // and lock the process still holds is the kernel's to close.
    unsafe { libc::_exit(i32::from(code)) }
}
