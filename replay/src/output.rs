//! Writing to the terminal: colour only on terminals (and never with `NO_COLOR`), and a
//! closed pipe (`planlog history | head`) ending the command quietly instead of panicking.

use std::io::{IsTerminal, Write};

use planlog_core::Style;

/// Whether stdout gets colour.
pub fn style() -> Style {
    if std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    {
        Style::Color
    } else {
        Style::Plain
    }
}

/// Stdout, line by line.
#[derive(Debug)]
pub struct Out {
    inner: std::io::StdoutLock<'static>,
}

/// The reader of our output went away; stop writing.
#[derive(Debug)]
pub struct PipeClosed;

impl Out {
    /// Locks stdout.
    pub fn new() -> Self {
        Self {
            inner: std::io::stdout().lock(),
        }
    }

    /// Writes `text` and a newline.
    ///
    /// # Errors
    /// [`PipeClosed`] when nobody reads any more (or stdout fails otherwise).
    pub fn line(&mut self, text: impl AsRef<str>) -> Result<(), PipeClosed> {
        writeln!(self.inner, "{}", text.as_ref()).map_err(|_| PipeClosed)
    }

    /// Writes `text` as is.
    ///
    /// # Errors
    /// [`PipeClosed`].
    pub fn raw(&mut self, text: impl AsRef<str>) -> Result<(), PipeClosed> {
        self.inner
            .write_all(text.as_ref().as_bytes())
            .map_err(|_| PipeClosed)
    }
}

impl Default for Out {
    fn default() -> Self {
        Self::new()
    }
}
