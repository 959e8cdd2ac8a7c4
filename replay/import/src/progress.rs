//! How far an import has read its source, for a progress bar: [`ReadProgress`] counts the
//! source's bytes as the parser consumes them. The parser thread is told through a
//! thread-local set around the parse, so the parsers open their input as before
//! ([`Input::open`](crate::Input::open) wraps the reader when a counter is set).

use std::cell::Cell;
use std::io::{BufRead, Read};
use std::sync::atomic::{AtomicU64, Ordering};

/// A counter of bytes read, shared with whoever shows progress (it must outlive the
/// imports: a `static`).
#[derive(Clone, Copy)]
pub struct ReadProgress(pub &'static AtomicU64);

impl std::fmt::Debug for ReadProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReadProgress({})", self.0.load(Ordering::Relaxed))
    }
}

impl PartialEq for ReadProgress {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for ReadProgress {}

thread_local! {
    static COUNTER: Cell<Option<&'static AtomicU64>> = const { Cell::new(None) };
}

/// Runs `f` with reads of sources on this thread counted into `progress`.
pub(crate) fn counted<T>(progress: Option<ReadProgress>, f: impl FnOnce() -> T) -> T {
    COUNTER.with(|c| c.set(progress.map(|p| p.0)));
    let out = f();
    COUNTER.with(|c| c.set(None));
    out
}

/// `reader`, counted when this thread counts.
pub(crate) fn wrap<'a>(reader: Box<dyn BufRead + Send + 'a>) -> Box<dyn BufRead + Send + 'a> {
    match COUNTER.with(Cell::get) {
        Some(counter) => Box::new(Counting {
            inner: reader,
            counter,
        }),
        None => reader,
    }
}

struct Counting<'a> {
    inner: Box<dyn BufRead + Send + 'a>,
    counter: &'static AtomicU64,
}

impl Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl BufRead for Counting<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.counter.fetch_add(amt as u64, Ordering::Relaxed);
        self.inner.consume(amt);
    }
}
