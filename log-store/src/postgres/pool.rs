//! A small pool of connections: a process keeps the connections it opened and reuses them, so
//! concurrent appends (threads of one process) each get a connection of their own without
//! paying a connect per call. A connection that failed is dropped, not returned.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use postgres::{Client, Config, NoTls};

/// Idle connections kept at most.
const MAX_IDLE: usize = 16;

/// The connections of one store.
pub(super) struct Pool {
    config: Config,
    idle: Mutex<Vec<Client>>,
}

impl Pool {
    /// A pool for `config` (a connect timeout of 5 s unless the URL sets one).
    pub(super) fn new(mut config: Config) -> Self {
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        Self {
            config,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// A connection: an idle one, else a new one.
    pub(super) fn get(&self) -> Result<Pooled<'_>, postgres::Error> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let client = match idle {
            Some(c) if !c.is_closed() => c,
            _ => self.config.connect(NoTls)?,
        };
        Ok(Pooled {
            client: Some(client),
            pool: self,
        })
    }
}

/// A connection lent by the pool; it goes back when dropped, unless it broke.
pub(super) struct Pooled<'a> {
    client: Option<Client>,
    pool: &'a Pool,
}

impl Pooled<'_> {
    /// The connection.
    pub(super) fn client(&mut self) -> &mut Client {
        // Invariant: `client` is only taken in `drop`.
        self.client
            .as_mut()
            .unwrap_or_else(|| unreachable!("a pooled connection is taken only when dropped"))
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.client.take()
            && !c.is_closed()
        {
            let mut idle = self
                .pool
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if idle.len() < MAX_IDLE {
                idle.push(c);
            }
        }
    }
}
