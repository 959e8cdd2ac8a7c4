//! `planlog ui`: the time-travel viewer, served on loopback.
//!
//! | module | what |
//! |---|---|
//! | `guard` | who may ask: the Host check (DNS rebinding), the Origin and token check for writes, the security headers |
//! | `api` | the page, its assets, the JSON API's sessions and forks |
//! | `window` | a session a window at a time: its events, its summary (minimap), its marks |
//! | `search` | search over the index |
//! | `index` | the viewer's index file and the thread that keeps it up to the log |
//! | `live` | the one watcher of the store, and server-sent events when a session gets new events |
//!
//! The page and its data come from `planlog_export::viewer` (the same page an HTML
//! export holds). Store calls are blocking and run on tokio's blocking pool; the server runs
//! on a current-thread runtime.

mod api;
mod guard;
mod index;
mod live;
mod search;
mod window;

use std::net::SocketAddr;
use std::sync::Arc;

use planlog_core::EventLog;

use crate::support::failure::Failure;
use crate::support::open::Store;

/// Arguments of `planlog ui`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 7474)]
    port: u16,
    /// Serve without the fork button (and refuse every write).
    #[arg(long)]
    read_only: bool,
    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,
    /// Listen on another address (ADDR:PORT) instead of loopback; anyone who can reach it
    /// can read the store.
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Another host name the page may be reached by (with --listen).
    #[arg(long, value_name = "NAME")]
    allow_host: Vec<String>,
}

/// What every request handler shares.
pub(crate) struct Ui {
    pub(crate) log: Arc<dyn EventLog>,
    pub(crate) store: Store,
    pub(crate) token: String,
    pub(crate) read_only: bool,
    /// `Host` values requests may carry.
    pub(crate) hosts: Vec<String>,
    /// For a PostgreSQL store: a connection that waits for `NOTIFY planlog`, so the live view
    /// follows appends made on other machines at once.
    pub(crate) changes: Option<Arc<planlog_store::PgLog>>,
    /// The index (search, minimap, marks) and its thread.
    pub(crate) indexer: Arc<index::Indexer>,
    /// Each session change the watcher sees, for the open streams.
    pub(crate) changed: tokio::sync::broadcast::Sender<String>,
    /// Turns for store reads ([`READS_AT_ONCE`] at a time).
    pub(crate) reads: tokio::sync::Semaphore,
}

/// Store reads the viewer runs at once; more requests wait their turn.
const READS_AT_ONCE: usize = 4;

/// Serves until interrupted.
/// How long requests in flight may take to finish after Ctrl-C.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

pub(crate) fn serve(store: &Store, args: &Args) -> Result<(), Failure> {
    let (log, read_only) = if args.read_only {
        (store.for_reading()?, true)
    } else {
        match store.for_writing() {
            Ok(log) => (log, false),
            Err(f)
                if matches!(store.address, planlog_store::StoreAddress::File(_))
                    && store.path.exists() =>
            {
                eprintln!(
                    "planlog ui: cannot write the store ({}); serving it read-only",
                    f.message
                );
                (store.for_reading()?, true)
            }
            Err(f) => return Err(f),
        }
    };
    let addr = args
        .listen
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], args.port)));
    if !addr.ip().is_loopback() {
        eprintln!(
            "planlog ui: WARNING: listening on {addr}, not loopback: anyone who can reach it can read this store{}",
            if read_only {
                ""
            } else {
                " and fork its sessions"
            }
        );
    }
    // A PostgreSQL store's clients block on their own runtime: they are opened before the
    // server's runtime starts and dropped after it stops (the copies kept here are the last).
    let changes = store.change_listener();
    let kept = (Arc::clone(&log), changes.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::cannot_run(format!("cannot start the async runtime: {e}")))?;
    let served = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
            Failure::cannot_run(format!(
                "cannot listen on {addr}: {e} (try --port 0 for a free port)"
            ))
        })?;
        let bound = listener
            .local_addr()
            .map_err(|e| Failure::cannot_run(format!("cannot read the bound address: {e}")))?;
        let port = bound.port();
        let mut hosts = vec![
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ];
        if args.listen.is_some() {
            hosts.push(bound.to_string());
            hosts.extend(args.allow_host.iter().map(|h| {
                if h.contains(':') {
                    h.clone()
                } else {
                    format!("{h}:{port}")
                }
            }));
        }
        let url = format!("http://127.0.0.1:{port}/");
        // The first line on stdout is the URL (scripts read it).
        println!("{url}");
        eprintln!(
            "planlog ui: serving {}{} at {url} (Ctrl-C stops)",
            store.shown(),
            if read_only { ", read-only" } else { "" }
        );
        if args.open {
            open_browser(&url);
        }
        let identity = match &store.address {
            planlog_store::StoreAddress::File(p) => std::fs::canonicalize(p)
                .unwrap_or_else(|_| p.clone())
                .display()
                .to_string(),
            _ => store.shown(),
        };
        let indexer = index::Indexer::start(Arc::clone(&log), &store.path, &identity);
        let ui = Arc::new(Ui {
            indexer,
            changed: tokio::sync::broadcast::channel(256).0,
            reads: tokio::sync::Semaphore::new(READS_AT_ONCE),
            changes,
            log,
            store: store.clone(),
            token: ulid::Ulid::new().to_string(),
            read_only,
            hosts,
        });
        tokio::spawn(live::watch(Arc::clone(&ui), ui.changed.clone()));
        let server = axum::serve(listener, api::router(ui)).with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        });
        // An open page holds its live stream forever: after Ctrl-C, requests in flight get
        // a moment to finish, then the viewer stops anyway.
        let deadline = async {
            let _ = tokio::signal::ctrl_c().await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        };
        tokio::select! {
            served = server => served.map_err(|e| Failure::cannot_run(format!("the viewer stopped: {e}"))),
            () = deadline => Ok(()),
        }
    });
    drop(runtime);
    drop(kept);
    served
}

fn open_browser(url: &str) {
    if let Err(e) = std::process::Command::new("xdg-open")
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        eprintln!("planlog ui: could not open a browser ({e}); open {url} yourself");
    }
}
