//! A hook's process: its call handed to the store's warm server, or run here.

use std::io::Write;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::wire::{Asked, CallAsked, Header, READ_BUFFER, Reply, Request, VERSION};
use planlog_agents::hook::SPOOL_RESERVE;

use crate::hook::{Args, Call, warn};
use crate::support::failure::Failure;
use crate::support::open::Store;

/// How long past the call's deadline a hook's process waits for the server's reply. The
/// server is given the deadline less [`SPOOL_RESERVE`], so that a call it spools is answered
/// by then; past it the server is taken for stuck (stopped, killed), and the call runs here
/// with what is left, the reserve to spool it (with the same seed: what the server stored of
/// it is kept once). The hook still ends within its budget.
const REPLY_SLACK: Duration = Duration::from_millis(30);

/// How long `planlog compact` waits for a server to let the store go.
const LET_GO_WAIT: Duration = Duration::from_secs(3);

/// Why a call was not run by a server.
enum Missed {
    /// No server listens for the store, or the one that did went away mid-call or was
    /// stuck (and is killed): start one.
    NoServer,
    /// A server is there but did not run it (refused, went away, another user's): why.
    Other(String),
}

/// Runs `call`: by the store's server when it answers; else here, then a server is started
/// for the next calls (when none listens and the store exists).
pub(super) fn call(store: &Store, args: &Args, call: Call) -> Result<(), Failure> {
    let missed = match hand_off(store, args, &call) {
        Ok((code, stdout, stderr)) => {
            // What the call would have printed, printed: an agent gone away is no reason to
            // fail, and is said as the call's own answer says it (`console::answer`).
            let _ = std::io::stderr().lock().write_all(&stderr);
            if !stdout.is_empty() {
                let mut out = std::io::stdout().lock();
                if let Err(e) = out.write_all(&stdout).and_then(|()| out.flush()) {
                    warn(&format!(
                        "could not answer the agent ({e}); what was put back is on record"
                    ));
                }
            }
            return match code {
                0 => Ok(()),
                code => Err(Failure {
                    code,
                    message: String::new(),
                }),
            };
        }
        Err(missed) => missed,
    };
    let ran = crate::hook::run(store, args, call, &crate::hook::open);
    match missed {
        Missed::NoServer if store.path.exists() => {
            if let Err(why) = start(store) {
                warn(&format!(
                    "{why}; the next calls run in their own processes (as this one did)"
                ));
            }
        }
        Missed::NoServer => {}
        Missed::Other(why) => tracing::debug!(%why, "the hook server did not run the call"),
    }
    ran
}

/// The store at `store`'s absolute path: what names its server.
fn absolute(store: &Path) -> Result<PathBuf, Missed> {
    std::path::absolute(store).map_err(|e| Missed::Other(format!("the store's path ({e})")))
}

/// A connection to the server of the store at `absolute`, when one of this user's listens;
/// `frame` (a request) sent on it at once, `wait` the longest a send or read may take.
fn connect(
    absolute: &Path,
    frame: &[u8],
    wait: Duration,
) -> Result<(UnixStream, rustix::process::Pid), Missed> {
    let uid = rustix::process::geteuid().as_raw();
    let name = super::socket_name(absolute, uid);
    let address = SocketAddr::from_abstract_name(name.as_bytes())
        .map_err(|e| Missed::Other(format!("the socket's name ({e})")))?;
    let stream = match UnixStream::connect_addr(&address) {
        Ok(stream) => stream,
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Err(Missed::NoServer);
        }
        Err(e) => return Err(Missed::Other(format!("cannot connect ({e})"))),
    };
    // A server of another user's (squatting the name) never sees a call.
    let peer = rustix::net::sockopt::socket_peercred(&stream)
        .map_err(|e| Missed::Other(format!("cannot tell who serves ({e})")))?;
    if peer.uid.as_raw() != uid {
        return Err(Missed::Other(format!(
            "the socket {name} is served by user {}, not this one",
            peer.uid.as_raw()
        )));
    }
    stream.set_read_timeout(Some(wait)).map_err(went_away)?;
    stream.set_write_timeout(Some(wait)).map_err(went_away)?;
    (&stream).write_all(frame).map_err(went_away)?;
    Ok((stream, peer.pid))
}

/// A server that went away mid-call (killed, ended) is replaced: the call runs here, then
/// starts another.
fn went_away(e: std::io::Error) -> Missed {
    tracing::debug!(error = %e, "the hook server went away");
    Missed::NoServer
}

/// The call sent to the store's server and its reply read: the exit code, stdout, stderr.
fn hand_off(store: &Store, args: &Args, call: &Call) -> Result<(u8, Vec<u8>, Vec<u8>), Missed> {
    let header = Header {
        version: VERSION,
        identity: super::identity(),
        store: absolute(&store.path)?,
        asked: Asked::Call(CallAsked {
            named: store.is_named(),
            words: args.words(),
            env: call.env.clone(),
            seed: call.seed.to_string(),
            deadline_us: super::unix_us()
                + u64::try_from(
                    call.deadline
                        .left()
                        .saturating_sub(SPOOL_RESERVE)
                        .as_micros(),
                )
                .unwrap_or(0),
        }),
    };
    let frame = Request::frame(&header, &call.raw)
        .map_err(|e| Missed::Other(format!("the request ({e})")))?;
    let wait = (call.deadline.left() + REPLY_SLACK).max(Duration::from_millis(1));
    let (stream, server) = connect(&header.store, &frame, wait)?;
    let reply = match Reply::read(&mut std::io::BufReader::with_capacity(READ_BUFFER, &stream)) {
        Ok(reply) => reply,
        // No answer by the deadline: the server is stuck (stopped, hung). Left there, it
        // would take every later call's whole budget too; killed (it is this user's), the
        // next call starts another. A kill cuts at most a write the journal's torn tail
        // handling is for, and an index catch-up the next opener repairs.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            let killed = rustix::process::kill_process(server, rustix::process::Signal::KILL);
            tracing::debug!(error = %e, ?killed, "the hook server did not answer in time");
            return Err(Missed::NoServer);
        }
        Err(e) => return Err(went_away(e)),
    };
    match reply {
        Reply::Ran {
            code,
            stdout,
            stderr,
        } => Ok((code, stdout, stderr)),
        Reply::Refused(why) => Err(Missed::Other(why)),
    }
}

/// Starts `planlog --db STORE hook-server` as a process of its own (its own process group,
/// no terminal, its output nowhere), as `hook::catch_up` starts its drain. Two hooks that
/// start one each at once leave one: the other finds the socket taken and ends.
fn start(store: &Store) -> Result<(), String> {
    let program =
        std::env::current_exe().map_err(|e| format!("cannot find planlog's own program ({e})"))?;
    let absolute = std::path::absolute(&store.path)
        .map_err(|e| format!("cannot start the hook server: the store's path ({e})"))?;
    let mut command = Command::new(program);
    command
        .arg("--db")
        .arg(absolute)
        .arg("hook-server")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Out of the hook's process group: an agent that stops the hook's group at its
        // timeout, or a terminal that hangs up, leaves it running.
        .process_group(0)
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot start the hook server ({e})"))
}

/// Asks `store`'s server, if one runs, to let the store go, and waits until it has (at most
/// [`LET_GO_WAIT`]); why not, when it did not say so.
pub(super) fn let_go(store: &Path) -> Result<(), String> {
    let sent = || {
        let header = Header {
            version: VERSION,
            identity: super::identity(),
            store: absolute(store)?,
            asked: Asked::LetGo,
        };
        let frame = Request::frame(&header, &[])
            .map_err(|e| Missed::Other(format!("the request ({e})")))?;
        connect(&header.store, &frame, LET_GO_WAIT)
    };
    let stream = match sent() {
        Ok((stream, _)) => stream,
        Err(Missed::NoServer) => return Ok(()),
        Err(Missed::Other(why)) => return Err(why),
    };
    let failed = |e: std::io::Error| format!("the hook server did not answer ({e})");
    match Reply::read(&mut std::io::BufReader::with_capacity(READ_BUFFER, &stream))
        .map_err(failed)?
    {
        Reply::Ran { .. } => Ok(()),
        Reply::Refused(why) => Err(why),
    }
}
