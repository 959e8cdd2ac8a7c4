//! A small pool of connections: a process keeps the connections it opened and reuses them, so
//! concurrent appends (threads of one process) each get a connection of their own without
//! paying a connect per call. At most [`MAX_OPEN`] connections per store and process: more
//! threads wait for one (a server backend per thread would cost more than the wait on a
//! machine with a few cores). A connection that failed is dropped, not returned. Each
//! connection keeps its prepared statements, so a query costs one round trip, not two.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

use postgres::{Client, Config, GenericClient, NoTls, Statement};

/// Connections open at most, per store and process.
pub(super) const MAX_OPEN: usize = 16;

/// A connection and the statements prepared on it.
pub(super) struct Conn {
    /// The connection.
    pub(super) client: Client,
    /// Statements prepared on it, by their SQL.
    pub(super) prepared: Prepared,
}

/// The statements prepared on one connection.
#[derive(Default)]
pub(super) struct Prepared(HashMap<&'static str, Statement>);

impl Prepared {
    /// `sql` prepared on `client` (a connection or a transaction on it), once per connection.
    pub(super) fn get(
        &mut self,
        client: &mut impl GenericClient,
        sql: &'static str,
    ) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.0.get(sql) {
            return Ok(s.clone());
        }
        let s = client.prepare(sql)?;
        self.0.insert(sql, s.clone());
        Ok(s)
    }
}

struct State {
    idle: Vec<Conn>,
    /// Connections lent out or idle.
    open: usize,
}

/// The connections of one store.
pub(super) struct Pool {
    config: Config,
    /// `statement_timeout` and `lock_timeout` of every connection, when set.
    limit: Option<Duration>,
    state: Mutex<State>,
    freed: Condvar,
}

impl Pool {
    /// A pool for `config` (a connect timeout of 5 s unless the URL sets one); with `limit`,
    /// every statement and lock wait of its connections gives up after it.
    pub(super) fn new(mut config: Config, limit: Option<Duration>) -> Self {
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        Self {
            config,
            limit,
            state: Mutex::new(State {
                idle: Vec::new(),
                open: 0,
            }),
            freed: Condvar::new(),
        }
    }

    /// A connection: an idle one, else a new one, else (at [`MAX_OPEN`]) the next one freed.
    pub(super) fn get(&self) -> Result<Pooled<'_>, postgres::Error> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            while let Some(c) = state.idle.pop() {
                if c.client.is_closed() {
                    state.open -= 1;
                } else {
                    return Ok(Pooled {
                        conn: Some(c),
                        pool: self,
                    });
                }
            }
            if state.open < MAX_OPEN {
                state.open += 1;
                break;
            }
            state = self
                .freed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        drop(state);
        match self.connect() {
            Ok(client) => Ok(Pooled {
                conn: Some(Conn {
                    client,
                    prepared: Prepared::default(),
                }),
                pool: self,
            }),
            Err(e) => {
                self.release(None);
                Err(e)
            }
        }
    }

    /// Closes every idle connection: one was found closed by the server (a restart, an
    /// administrator), so its neighbours likely were too; the next `get` connects afresh.
    pub(super) fn discard_idle(&self) {
        let stale = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            let stale = std::mem::take(&mut state.idle);
            state.open -= stale.len();
            stale
        };
        drop(stale);
        self.freed.notify_all();
    }

    /// A new connection, its commits durable before they return whatever the server's
    /// default (`synchronous_commit` on for the session: one setting, not one per commit).
    fn connect(&self) -> Result<Client, postgres::Error> {
        let mut client = self.config.connect(NoTls)?;
        client.batch_execute("SET synchronous_commit = on")?;
        if let Some(limit) = self.limit {
            let ms = limit.as_millis().max(1);
            client.batch_execute(&format!(
                "SET statement_timeout = {ms}; SET lock_timeout = {ms}"
            ))?;
        }
        Ok(client)
    }

    /// Takes back a connection (`None`: it broke, its place is free).
    fn release(&self, conn: Option<Conn>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match conn {
            Some(c) if !c.client.is_closed() => state.idle.push(c),
            _ => state.open -= 1,
        }
        drop(state);
        self.freed.notify_one();
    }
}

/// A connection lent by the pool; it goes back when dropped, unless it broke.
pub(super) struct Pooled<'a> {
    conn: Option<Conn>,
    pool: &'a Pool,
}

impl Pooled<'_> {
    /// The connection and its statements.
    pub(super) fn conn(&mut self) -> &mut Conn {
        // Invariant: `conn` is only taken in `drop`.
        self.conn
            .as_mut()
            .unwrap_or_else(|| unreachable!("a pooled connection is taken only when dropped"))
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        self.pool.release(self.conn.take());
    }
}
