//! Where a hook call's words go: the process's stdout and stderr, or, for a call a warm
//! `planlog hook-server` runs for a hook's process (`super::warm`), buffers the reply
//! carries back to that process, which prints them as its own.
//!
//! A call's code says what it has to say through [`warn`], [`say_on_stderr`] and
//! [`answer`]; [`capture`] runs a call with its words kept on the calling thread; and
//! [`Stderr`] is the writer of the binary's `tracing` subscriber, so that a call's log lines
//! travel with its other words.

use std::cell::RefCell;
use std::io::Write;

/// A call's words, as its process would have printed them.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    /// What would have gone to stdout (the text the agent adds to the model's context).
    pub(crate) stdout: Vec<u8>,
    /// What would have gone to stderr (warnings, log lines).
    pub(crate) stderr: Vec<u8>,
}

thread_local! {
    /// The words of the call this thread runs for a hook's process; `None`: the process's own.
    static CAPTURED: RefCell<Option<Captured>> = const { RefCell::new(None) };
}

/// Runs `call` with what it says on this thread kept, not printed; its result and its words.
pub(crate) fn capture<R>(call: impl FnOnce() -> R) -> (R, Captured) {
    let outer = CAPTURED.with(|c| c.replace(Some(Captured::default())));
    let result = call();
    let captured = CAPTURED.with(|c| c.replace(outer)).unwrap_or_default();
    (result, captured)
}

/// Appends `bytes` to this thread's kept words (`stdout` or stderr); false when nothing is
/// kept on this thread.
fn keep(bytes: &[u8], stdout: bool) -> bool {
    CAPTURED.with(|c| match c.borrow_mut().as_mut() {
        Some(captured) => {
            let to = if stdout {
                &mut captured.stdout
            } else {
                &mut captured.stderr
            };
            to.extend_from_slice(bytes);
            true
        }
        None => false,
    })
}

/// Says `what` on stderr, where Claude Code shows a hook's warnings. A stderr nobody reads is
/// no reason to fail the call: the error is dropped.
pub(crate) fn warn(what: &str) {
    say_on_stderr(&format!("planlog hook: {what}"));
}

/// One line on stderr; an error writing it is dropped (`eprintln!` would panic).
pub(crate) fn say_on_stderr(line: &str) {
    let line = format!("{line}\n");
    if !keep(line.as_bytes(), false) {
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

/// The hook's answer on stdout (the text Claude Code adds to the model's context). An agent
/// that went away before reading it closes the pipe: that is said on stderr, and the call
/// still ends well (`println!` would panic).
pub(crate) fn answer(text: &str) {
    let line = format!("{text}\n");
    if keep(line.as_bytes(), true) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
        warn(&format!(
            "could not answer the agent ({e}); what was put back is on record"
        ));
    }
}

/// The `tracing` subscriber's writer: this thread's kept words when it runs a call for a
/// hook's process, else the process's stderr.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Stderr;

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if keep(buf, false) {
            Ok(buf.len())
        } else {
            std::io::stderr().lock().write(buf)
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().lock().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Stderr {
    type Writer = Stderr;

    fn make_writer(&'a self) -> Self::Writer {
        Stderr
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;

    #[test]
    fn a_captured_call_keeps_its_words_apart_and_the_outer_capture_comes_back() {
        let ((), outer) = capture(|| {
            warn("outer");
            let ((), inner) = capture(|| {
                answer("{\"x\":1}");
                say_on_stderr("inner");
                let _ = Stderr.write(b"logged\n").unwrap();
            });
            assert_eq!(inner.stdout, b"{\"x\":1}\n");
            assert_eq!(inner.stderr, b"inner\nlogged\n");
            say_on_stderr("after");
        });
        assert_eq!(outer.stdout, b"");
        assert_eq!(outer.stderr, b"planlog hook: outer\nafter\n");
    }

    #[test]
    fn another_thread_s_words_are_not_kept_with_this_one_s() {
        let ((), captured) = capture(|| {
            std::thread::spawn(|| assert!(!keep(b"elsewhere", false)))
                .join()
                .unwrap();
        });
        assert!(captured.stderr.is_empty());
    }
}
