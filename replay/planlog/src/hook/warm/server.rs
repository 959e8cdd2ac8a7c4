//! `planlog hook-server`: a store's warm process for its hook calls.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use planlog_agents::hook::Deadline;

use super::held::Held;
use super::wire::{Asked, CallAsked, Header, READ_BUFFER, Reply, Request, VERSION};
use crate::hook::{Args, Call, console};
use crate::support::failure::Failure;
use crate::support::open::Store;

/// Most calls run at once; one more is refused (its process runs it).
const MAX_CALLS: usize = 32;

/// How long a connection may take to send its request.
const REQUEST_WAIT: Duration = Duration::from_secs(2);

/// How many times a server tries its socket's name while another holds it (20 ms apart).
const BIND_TRIES: u32 = 10;

/// How long a request to let the store go waits for the calls running to end.
const LET_GO_WAIT: Duration = Duration::from_secs(2);

/// How often the server looks whether it should end.
const TICK: Duration = Duration::from_millis(500);

/// The calls running, the threads waiting for the next, and when the last call ended.
struct Calls {
    running: usize,
    /// Threads waiting in `accept` (or about to be).
    accepting: usize,
    /// Threads started.
    threads: usize,
    last: Instant,
}

/// What the server's threads share.
struct Shared {
    listener: UnixListener,
    uid: u32,
    calls: Mutex<Calls>,
    held: Held,
    identity: String,
    store: PathBuf,
}

impl Shared {
    fn calls(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Serves `store`'s hook calls until [`super::IDLE`] passes without one, the store's folder
/// is gone, or planlog's program has been replaced. Ends at once, quietly, when another
/// server has the store's socket.
pub(crate) fn serve(store: &Store) -> Result<(), Failure> {
    let path = std::path::absolute(&store.path)
        .map_err(|e| Failure::cannot_run(format!("the store's path: {e}")))?;
    let uid = rustix::process::geteuid().as_raw();
    let name = super::socket_name(&path, uid);
    let address = SocketAddr::from_abstract_name(name.as_bytes())
        .map_err(|e| Failure::cannot_run(format!("the socket's name {name}: {e}")))?;
    // A server that was killed as this one started may hold the name a moment longer (its
    // files are closed last as it exits): a few tries, then another server has the store.
    let mut tries = 0;
    let listener = loop {
        match UnixListener::bind_addr(&address) {
            Ok(listener) => break listener,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && tries < BIND_TRIES => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                tracing::info!(socket = %name, "another hook server has this store");
                return Ok(());
            }
            Err(e) => return Err(Failure::cannot_run(format!("cannot listen on {name}: {e}"))),
        }
    };
    // No folder of the user's is held open (a relative path of a call is read from its
    // own working folder, `CallEnv::cwd`).
    if let Err(e) = std::env::set_current_dir("/") {
        tracing::warn!(error = %e, "cannot leave the working folder");
    }
    let folder = path.parent().map(Path::to_path_buf);
    let shared = Arc::new(Shared {
        listener,
        uid,
        calls: Mutex::new(Calls {
            running: 0,
            accepting: 1,
            threads: 1,
            last: Instant::now(),
        }),
        held: Held::default(),
        identity: super::identity(),
        store: path,
    });
    {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || watch(&shared, folder.as_deref()));
    }
    accept_calls(&shared);
    Ok(())
}

/// One of the server's threads: takes the next connection and runs its call, over and over.
/// Each thread accepts for itself (no hand-over from one thread to another on a call's
/// path); a thread that takes a call while no other waits for the next starts one more,
/// up to [`MAX_CALLS`].
fn accept_calls(shared: &Arc<Shared>) {
    loop {
        let stream = match shared.listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "a connection failed");
                continue;
            }
        };
        // Only this user's processes hand calls over.
        match rustix::net::sockopt::socket_peercred(&stream) {
            Ok(peer) if peer.uid.as_raw() == shared.uid => {}
            _ => continue,
        }
        let (refused, start) = {
            let mut calls = shared.calls();
            if calls.running >= MAX_CALLS {
                (true, false)
            } else {
                calls.running += 1;
                calls.accepting -= 1;
                let start = calls.accepting == 0 && calls.threads <= MAX_CALLS;
                if start {
                    calls.accepting += 1;
                    calls.threads += 1;
                }
                (false, start)
            }
        };
        if refused {
            let _ =
                Reply::Refused(format!("{MAX_CALLS} calls already running")).write(&mut &stream);
            continue;
        }
        if start {
            let for_thread = Arc::clone(shared);
            let started = std::thread::Builder::new()
                .name("hook calls".to_owned())
                .spawn(move || accept_calls(&for_thread));
            if let Err(e) = started {
                tracing::warn!(error = %e, "cannot start a thread for calls");
                let mut calls = shared.calls();
                calls.accepting -= 1;
                calls.threads -= 1;
            }
        }
        let _done = Done(shared);
        // A call that panics (a bug) loses only its connection: its hook's process runs it
        // itself, and this thread goes on serving.
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| answer(stream, shared)))
            .is_err()
        {
            tracing::error!("a hook call panicked in the hook server; its process ran it itself");
        }
    }
}

/// Marks its call ended, and its thread waiting for the next, when dropped.
struct Done<'a>(&'a Shared);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        let mut calls = self.0.calls();
        calls.running -= 1;
        calls.accepting += 1;
        calls.last = Instant::now();
    }
}

/// Reads one request from `stream`, runs it, and answers.
fn answer(mut stream: UnixStream, shared: &Shared) {
    if let Err(e) = stream.set_read_timeout(Some(REQUEST_WAIT)) {
        tracing::warn!(error = %e, "cannot time a connection");
        return;
    }
    // Through a buffer: the request's parts in one read, not one each.
    let request = match Request::read(&mut std::io::BufReader::with_capacity(READ_BUFFER, &stream))
    {
        Ok(request) => request,
        Err(e) => {
            let _ = Reply::Refused(format!("a request that does not read: {e}")).write(&mut stream);
            return;
        }
    };
    let reply = match refusal(&request.header, shared) {
        Some(why) => Reply::Refused(why),
        None => match request.header.asked {
            Asked::Call(call) => run(&request.header.store, call, request.raw, &shared.held),
            Asked::LetGo => let_go(shared),
        },
    };
    // The hook's process may be gone (killed at its agent's timeout): its call is stored.
    if let Err(e) = reply.write(&mut stream) {
        tracing::debug!(error = %e, "the hook's process did not take the reply");
    }
    drop(stream);
    // The index's catch-up, once the agent has its answer.
    shared.held.index_when_behind();
}

/// Lets the store go for another process that needs it alone (`planlog compact`): the kept
/// handle closed, then the calls running with it waited for (at most 2 s).
fn let_go(shared: &Shared) -> Reply {
    shared.held.close();
    let started = Instant::now();
    // This request counts as one running call.
    while shared.calls().running > 1 && started.elapsed() < LET_GO_WAIT {
        std::thread::sleep(Duration::from_millis(5));
    }
    Reply::Ran {
        code: 0,
        stdout: Vec::new(),
        stderr: Vec::new(),
    }
}

/// Why the server does not do what `header` asks, if it does not: another protocol, another
/// store (two stores whose names share a hash), or, for a call, another planlog (a build
/// installed over this one, another lock timeout). A request to let go is taken from any
/// build (`planlog compact` of another version needs the store alone too).
fn refusal(header: &Header, shared: &Shared) -> Option<String> {
    if header.version != VERSION {
        return Some(format!(
            "protocol {} asked, {VERSION} spoken",
            header.version
        ));
    }
    if header.store != shared.store {
        return Some(format!(
            "the store {} is not this server's ({})",
            header.store.display(),
            shared.store.display()
        ));
    }
    if matches!(header.asked, Asked::Call(_)) && header.identity != shared.identity {
        return Some(format!(
            "another planlog ({}) than this server's ({})",
            header.identity, shared.identity
        ));
    }
    None
}

/// Runs the call `asked` of `store` (its input `raw`) as the hook's process would have, its
/// words kept for the reply.
fn run(store: &Path, asked: CallAsked, raw: Vec<u8>, held: &Held) -> Reply {
    let CallAsked {
        named,
        words,
        env,
        seed,
        deadline_us,
    } = asked;
    let (Some((_, args)), Ok(seed)) = (Args::installed(&words), ulid::Ulid::from_string(&seed))
    else {
        return Reply::Refused(format!(
            "a call this server does not read ({words:?}, seed {seed:?})"
        ));
    };
    // The hook's process gave up waiting by its deadline and ran the call itself: run
    // here too, it could record what never reached the agent (a plan put back).
    let left = deadline_us.saturating_sub(super::unix_us());
    if left == 0 {
        return Reply::Refused("read after its deadline: the hook's process ran it".to_owned());
    }
    let store = Store::file(store.to_path_buf(), named);
    let call = Call {
        raw,
        env,
        seed,
        deadline: Deadline::after(Duration::from_micros(left)),
    };
    let (ran, mut captured) = console::capture(|| {
        crate::hook::run(&store, &args, call, &|store, deadline| {
            held.open(store, deadline)
        })
    });
    let code = match ran {
        Ok(()) => 0,
        Err(Failure { code, message }) => {
            if !message.is_empty() {
                captured
                    .stderr
                    .extend_from_slice(format!("planlog: {message}\n").as_bytes());
            }
            code
        }
    };
    Reply::Ran {
        code,
        stdout: captured.stdout,
        stderr: captured.stderr,
    }
}

/// Ends the process when no call has run for [`super::IDLE`], the store's folder is gone
/// (a store deleted with its folder), or planlog's program has been replaced or removed
/// (an upgrade: the next hook starts the new build's server). Decided under the calls'
/// lock with none running, so no call is cut short.
fn watch(shared: &Shared, folder: Option<&Path>) {
    loop {
        std::thread::sleep(TICK);
        let calls = shared.calls();
        if calls.running > 0 {
            continue;
        }
        shared.held.close_if_unused(Instant::now());
        let why = if calls.last.elapsed() >= super::IDLE {
            Some("idle")
        } else if folder.is_some_and(|f| !f.exists()) {
            Some("the store's folder is gone")
        } else if program_replaced() {
            Some("planlog's program was replaced")
        } else {
            None
        };
        if let Some(why) = why {
            tracing::info!(why, "the hook server ends");
            // The kept handle closed, and opens a call gave up on finished (as at a hook's
            // exit); the calls' lock is held, so no call starts meanwhile.
            shared.held.close();
            planlog_store::settle_abandoned_opens(Duration::from_secs(2));
            std::process::exit(0);
        }
    }
}

/// True when this process's program file is no longer the one at its path.
fn program_replaced() -> bool {
    std::fs::read_link("/proc/self/exe")
        .map(|p: PathBuf| p.to_string_lossy().ends_with(" (deleted)"))
        .unwrap_or(false)
}
