//! Writing to stdout: colour only on terminals (and never with `NO_COLOR`); a closed pipe
//! (`planlog history | head`) ends the command quietly with 0; any other write or flush
//! error (a full disk) is an error, so nobody is told an export worked when it did not.

use std::io::{IsTerminal, Write};

use planlog_core::render::Style;

/// Whether stdout gets colour.
pub(crate) fn style() -> Style {
    if std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    {
        Style::Color
    } else {
        Style::Plain
    }
}

/// Why output stopped.
#[derive(Debug)]
pub(crate) enum OutputError {
    /// The reader went away (a closed pipe): stop quietly.
    Closed,
    /// Writing failed (no space, an IO error): the command failed.
    Failed(std::io::Error),
}

impl From<std::io::Error> for OutputError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            OutputError::Closed
        } else {
            OutputError::Failed(e)
        }
    }
}

/// Stdout, buffered; [`Out::finish`] flushes it and reports a failure to.
pub(crate) struct Out {
    inner: std::io::BufWriter<std::io::StdoutLock<'static>>,
}

impl Out {
    /// Locks stdout.
    pub(crate) fn new() -> Self {
        Self {
            inner: std::io::BufWriter::new(std::io::stdout().lock()),
        }
    }

    /// Writes `text` and a newline.
    pub(crate) fn line(&mut self, text: impl AsRef<str>) -> Result<(), OutputError> {
        self.inner.write_all(text.as_ref().as_bytes())?;
        self.inner.write_all(b"\n")?;
        Ok(())
    }

    /// Writes `text` as is.
    pub(crate) fn raw(&mut self, text: impl AsRef<str>) -> Result<(), OutputError> {
        Ok(self.inner.write_all(text.as_ref().as_bytes())?)
    }

    /// Flushes everything written; the command's output is complete only when this is Ok.
    pub(crate) fn finish(mut self) -> Result<(), OutputError> {
        Ok(self.inner.flush()?)
    }
}
