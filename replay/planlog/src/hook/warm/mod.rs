//! A warm process for a store's hook calls.
//!
//! An agent runs a new `planlog hook` process for every hook event, and a cold process
//! spends ~0.55 ms of its own work on a call beyond the start and the sync (BENCHMARKS.md §
//! "The hook's gap taken apart"): code paged in, memory touched for the first time, caches
//! filled. So a hook's process hands its call to `planlog hook-server`, a process of the
//! store's that stays warm between calls, and prints what it answers:
//!
//! - [`client`]: a hook's process connects to the store's server (a Unix socket in Linux's
//!   abstract namespace, named after the user and the store: nothing on disk to go stale),
//!   sends the call and prints the reply. When no server listens it runs the call itself
//!   (as before), then starts one for the calls after it, if the store exists by then (a
//!   session that never planned leaves no store and no server).
//! - [`server`]: runs each call as the hook's process would ([`crate::hook::run`], its
//!   words kept by [`crate::hook::console`]) on a pool of threads that stay warm too; ends
//!   after [`IDLE`] without calls, when its store's folder is gone, or when its program has
//!   been replaced.
//! - [`held`]: the store's handle the server keeps between calls, opened again when the
//!   store's files are no longer the ones it opened (deleted, replaced, restored).
//! - [`wire`]: the request and the reply.
//!
//! Nothing is lost when the server is not there or goes away: a call it refuses, or does
//! not answer, the hook's process runs itself, with the same seed, so its records carry
//! the same call ids and the store keeps them once. Both ends check that the other runs as
//! the same user (`SO_PEERCRED`); the server runs only calls of its own build, for its own
//! store, and of a process with its lock timeout. `PLANLOG_HOOK_SERVER=off` turns it off.

#[cfg(target_os = "linux")]
mod client;
#[cfg(target_os = "linux")]
mod held;
#[cfg(target_os = "linux")]
mod server;
mod wire;

use std::path::Path;
use std::time::Duration;

use crate::hook::{Args, Call};
use crate::support::failure::Failure;
use crate::support::open::Store;

#[cfg(target_os = "linux")]
pub(crate) use server::serve;

/// The environment variable that turns the warm route off (`off`, `0`, `no` or `false`):
/// every call then runs in the hook's own process, and no server is started.
pub(crate) const SWITCH: &str = "PLANLOG_HOOK_SERVER";

/// How long a server waits without a call before it ends (the next call starts another).
pub(crate) const IDLE: Duration = Duration::from_secs(10 * 60);

/// Runs the hook call `call` of `store`: by its warm server when one answers, else here. A
/// store in a database has no server: its calls run in their own processes.
pub(crate) fn call(store: &Store, args: &Args, call: Call) -> Result<(), Failure> {
    #[cfg(target_os = "linux")]
    if enabled() && matches!(store.address, planlog_store::StoreAddress::File(_)) {
        return client::call(store, args, call);
    }
    crate::hook::run(store, args, call, &crate::hook::open)
}

/// Asks the warm server of the store at `store`, if one runs, to close the store, and waits
/// until it has (`planlog compact` needs no other process to have the store open); a call
/// after this opens it again. `Err`: why it could not be asked.
pub(crate) fn let_go(store: &Path) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    return client::let_go(store);
    #[cfg(not(target_os = "linux"))]
    Ok(())
}

/// Microseconds since the Unix epoch, by the system's clock (0 before it).
fn unix_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// False when [`SWITCH`] turns the warm route off.
fn enabled() -> bool {
    std::env::var(SWITCH).map_or(true, |v| {
        !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "off" | "0" | "no" | "false"
        )
    })
}

/// Which planlog this process is, as far as a hook call's outcome goes: its version, its
/// program file (device, inode, size, time: a build installed over it is another), and
/// the lock timeout it was given (`PLANLOG_LOCK_TIMEOUT_MS`, read by the store's opens).
/// A server runs the calls of processes of its own identity only.
fn identity() -> String {
    use std::os::unix::fs::MetadataExt;
    let program = std::fs::metadata("/proc/self/exe")
        .map(|m| {
            format!(
                "{}:{}:{}:{}",
                m.dev(),
                m.ino(),
                m.size(),
                m.mtime_nsec() + m.mtime() * 1_000_000_000
            )
        })
        .unwrap_or_default();
    let timeout = std::env::var("PLANLOG_LOCK_TIMEOUT_MS").unwrap_or_default();
    format!(
        "planlog {} program {program} lock-timeout {timeout}",
        env!("CARGO_PKG_VERSION")
    )
}

/// The name of `store`'s server socket in the abstract namespace: the user's id and a hash
/// of the store's absolute path (two stores that share a hash share a name; the server
/// refuses the other's calls, which then run in their own processes).
fn socket_name(store: &Path, uid: u32) -> String {
    // FNV-1a, 64 bits: stable across builds and machines, which std's hasher is not.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in store.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("planlog-hook-{uid}-{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_is_named_after_the_user_and_the_store() {
        let a = socket_name(Path::new("/home/u/p/.planlog/planlog.redb"), 1000);
        assert_eq!(
            a,
            socket_name(Path::new("/home/u/p/.planlog/planlog.redb"), 1000)
        );
        assert_ne!(
            a,
            socket_name(Path::new("/home/u/q/.planlog/planlog.redb"), 1000)
        );
        assert_ne!(
            a,
            socket_name(Path::new("/home/u/p/.planlog/planlog.redb"), 1001)
        );
        assert!(a.starts_with("planlog-hook-1000-") && a.len() < 100, "{a}");
    }

    #[test]
    fn identity_names_the_version_and_the_program() {
        let id = identity();
        assert!(id.starts_with(&format!("planlog {} program ", env!("CARGO_PKG_VERSION"))));
        assert_eq!(id, identity());
    }
}
