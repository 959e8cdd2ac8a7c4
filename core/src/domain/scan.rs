//! [`Chunks`]: a session read a chunk of [`SCAN_CHUNK`] events at a time, what
//! [`EventLog::scan`](crate::EventLog::scan) gives every whole-session reader.

use super::error::LogError;
use super::event::Event;
use super::ids::Seq;
use super::limits::SCAN_CHUNK;

/// Reads events `from..=to` of the session being scanned.
pub type ReadRange<'a> = Box<dyn Fn(Seq, Seq) -> Result<Vec<Event>, LogError> + Send + 'a>;

/// The chunks of a session from a seq to its end, each at most [`SCAN_CHUNK`] events, in
/// order. The scan ends after a chunk shorter than [`SCAN_CHUNK`] (the log's end as it was
/// read) or after an error, which is the last item. Reads on until the log really ends, so
/// a catalogue that undercounts cannot hide events.
///
/// [`Chunks::strided`] takes every `step`-th chunk, for readers that share a scan out
/// between threads.
pub struct Chunks<'a> {
    read: ReadRange<'a>,
    next: u64,
    step: u64,
    done: bool,
}

impl<'a> Chunks<'a> {
    /// A scan from `from`, reading through `read`.
    pub fn new(read: ReadRange<'a>, from: Seq) -> Self {
        Self {
            read,
            next: from.get(),
            step: 1,
            done: false,
        }
    }

    /// Only chunks `first`, `first + step`, `first + 2 * step`, … (counted from 0) of this
    /// scan: `step` threads, each with its own `first`, read the whole session between them.
    /// The scan still ends at the first short chunk this reader sees.
    #[must_use]
    pub fn strided(mut self, first: usize, step: usize) -> Self {
        self.next = self
            .next
            .saturating_add((first as u64).saturating_mul(SCAN_CHUNK));
        self.step = step.max(1) as u64;
        self
    }

    /// The scan one event at a time (still read a chunk at a time); an error is the last item.
    pub fn events(self) -> impl Iterator<Item = Result<Event, LogError>> + 'a {
        self.flat_map(|chunk| {
            let (events, error) = match chunk {
                Ok(events) => (events, None),
                Err(e) => (Vec::new(), Some(Err(e))),
            };
            events.into_iter().map(Ok).chain(error)
        })
    }

    /// The seq the next chunk starts at.
    pub fn position(&self) -> u64 {
        self.next
    }
}

impl Iterator for Chunks<'_> {
    type Item = Result<Vec<Event>, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let (Ok(start), Ok(end)) = (Seq::new(self.next), Seq::new(self.next + SCAN_CHUNK - 1))
        else {
            self.done = true;
            return None;
        };
        let read = (self.read)(start, end);
        match &read {
            Ok(events) if events.is_empty() => {
                self.done = true;
                return None;
            }
            Ok(events) => self.done = (events.len() as u64) < SCAN_CHUNK,
            Err(_) => self.done = true,
        }
        self.next = self.next.saturating_add(self.step * SCAN_CHUNK);
        Some(read)
    }
}

impl std::fmt::Debug for Chunks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chunks")
            .field("next", &self.next)
            .field("step", &self.step)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
