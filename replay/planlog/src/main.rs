//! The `planlog` binary: parses the command line and hands it to the surface it names (the
//! CLI commands, or the MCP server). The surfaces never call each other; both stand on
//! `support` (opening the store, failures, output).
//!
//! | module | what |
//! |---|---|
//! | `cli` | the argument grammar and one file per command |
//! | `mcp` | `planlog mcp`: the stdio MCP server |
//! | `hook` | `planlog hook AGENT`: the agents' hook events; `hook::catch_up`: long store work left to a background `planlog drain`; `hook::warm`: `planlog hook-server`, the store's warm process a hook's process hands its call to |
//! | `ui` | `planlog ui`: the time-travel viewer in the browser |
//! | `support` | the store, the failure type and exit codes, stdout, a hook's exit |

mod cli;
mod hook;
mod mcp;
mod support;
mod ui;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use support::open::Store;

/// The allocator: reads decode JSON into many small allocations, often freed on another
/// thread than the one that made them; glibc's malloc took a third of `verify`'s time
/// (BENCHMARKS.md § issue 17). A test checks the binary really uses it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// planlog: the plan-keeping engine for LLM agents. Every plan_write is an event in a
/// session's log; audit it, replay it, fork it.
#[derive(Debug, Parser)]
#[command(name = "planlog", version, about, long_about = None)]
struct Cli {
    /// The store: a file path, or a postgres:// URL for a shared database (default:
    /// $PLANLOG_DB, else .planlog/planlog.redb at the git repository root, else the user's
    /// data folder).
    #[arg(long, global = true, value_name = "STORE")]
    db: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    surface: Surface,
}

/// Each command belongs to one surface.
#[derive(Debug, Subcommand)]
enum Surface {
    #[command(flatten)]
    Cli(cli::Command),
    /// Serve one session over stdio as an MCP server (plan_write, or the task tools with
    /// --tools tasks, and plan_history).
    Mcp(mcp::Args),
    /// Handle one Claude Code hook event (JSON on stdin); `planlog install claude-code` sets
    /// it up.
    Hook(hook::Args),
    /// Serve the time-travel viewer on 127.0.0.1 (prints its URL first).
    Ui(ui::Args),
    /// Serve the store's hook calls from a warm process (started by `planlog hook` itself;
    /// ends after 10 minutes without a call). `PLANLOG_HOOK_SERVER=off` turns it off.
    #[command(hide = true)]
    HookServer,
}

/// Whether the command line (without the program) names the `hook` surface: its first word
/// that is neither an option nor `--db`'s value.
fn is_hook_call(mut args: impl Iterator<Item = String>) -> bool {
    while let Some(arg) = args.next() {
        if arg == "--db" {
            args.next();
        } else if !arg.starts_with('-') {
            return arg == "hook";
        }
    }
    false
}

/// What `planlog --version` prints: clap's words for it (a test checks they agree).
fn version() -> String {
    format!("planlog {}\n", env!("CARGO_PKG_VERSION"))
}

/// How long a process that ends waits for the writable opens it gave up on
/// ([`planlog_store::settle_abandoned_opens`]): another process's index write is a batch of
/// a few milliseconds; past this the process ends anyway (an open still waiting for the
/// lock has written nothing yet).
const SETTLE_AT_EXIT: std::time::Duration = std::time::Duration::from_secs(2);

/// [`SETTLE_AT_EXIT`] for a hook, which must end within its budget (1 s): an open it gave
/// up on (it gives way to another process writing the index) is most often still waiting
/// for that process's lock, having written nothing, and the hook does not wait for it
/// longer than this.
const SETTLE_HOOK: std::time::Duration = std::time::Duration::from_millis(50);

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        // stderr, or the reply of the hook call a hook server runs (`hook::console`).
        .with_writer(hook::console::Stderr)
        .with_max_level(tracing::Level::WARN)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .without_time()
        .with_target(false)
        .init();
    let words: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|w| w.into_string().unwrap_or_default())
        .collect();
    // `--version` and the hook command lines `planlog install` writes are read without
    // building clap's grammar of every command (0.16 ms of each hook call); anything else,
    // and any other spelling of those, goes to clap.
    if let [word] = words.as_slice()
        && (word == "--version" || word == "-V")
    {
        let _ = std::io::stdout().lock().write_all(version().as_bytes());
        return std::process::ExitCode::SUCCESS;
    }
    let installed = hook::Args::installed(&words).map(|(db, args)| Cli {
        db,
        surface: Surface::Hook(args),
    });
    let parsed = match installed.map(Ok).unwrap_or_else(Cli::try_parse) {
        Ok(parsed) => parsed,
        // A hook's command line planlog does not know (installed by another version of it,
        // or edited): said, and exit 0, for clap's exit 2 would block the agent's tool call.
        Err(e) if is_hook_call(words.iter().cloned()) && e.use_stderr() => {
            let said = e.render().to_string();
            eprintln!(
                "planlog hook: this call is not recorded: its command line is not one this planlog knows (installed by another version? `planlog install` again sets it up): {}",
                said.lines().next().unwrap_or_default()
            );
            return std::process::ExitCode::SUCCESS;
        }
        Err(e) => e.exit(),
    };
    let hook = matches!(parsed.surface, Surface::Hook(_));
    let result = match (Store::resolve(parsed.db.as_deref()), parsed.surface) {
        // A hook fails open: with no place for the store (no --db, no git repository, no
        // HOME) it says so and exits 0, for an exit 2 would block the agent's tool call.
        (Err(failure), Surface::Hook(_)) => {
            eprintln!(
                "planlog hook: {}; this call is not recorded (importing the session's transcript later records it)",
                failure.message
            );
            Ok(())
        }
        (store, surface) => store.and_then(|store| match surface {
            Surface::Cli(command) => {
                // Compaction needs the store alone: a warm hook server lets it go first.
                if matches!(command, cli::Command::Compact(_))
                    && let Err(why) = hook::warm::let_go(&store.path)
                {
                    tracing::warn!(%why, "could not ask the hook server to let the store go");
                }
                cli::run(&store, command)
            }
            Surface::Mcp(args) => mcp::serve(&store, &args),
            Surface::Hook(args) => hook::call(&store, &args),
            Surface::Ui(args) => ui::serve(&store, &args),
            Surface::HookServer => hook::serve_warm(&store),
        }),
    };
    let code = match result {
        Ok(()) => 0,
        Err(failure) => {
            if !failure.message.is_empty() {
                eprintln!("planlog: {}", failure.message);
            }
            failure.code
        }
    };
    // A writable open this process gave up on (it waited past its lock timeout) still
    // opens and closes the index when the other process's write is over: ending in
    // between would leave the file marked open, to be repaired by the next opener.
    planlog_store::settle_abandoned_opens(if hook { SETTLE_HOOK } else { SETTLE_AT_EXIT });
    if hook {
        // Every value of the call is dropped by now: only the C library's exit handlers are
        // left, which a hook's short process need not wait for (`support::exit`).
        support::exit::without_exit_handlers(code);
    }
    std::process::ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;
    use clap::CommandFactory;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_version_printed_without_clap_is_clap_s() {
        assert_eq!(version(), Cli::command().render_version());
    }

    /// Every line the hook's own reading takes, clap reads the same way (the store and the
    /// arguments); the other spellings, help, repeats and lines that are not hook calls are
    /// left to clap, which reads them as it did before.
    #[test]
    fn a_hook_line_read_without_clap_is_read_as_clap_reads_it() {
        let taken = [
            "hook claude-code",
            "hook claude-code --db /tmp/s.redb",
            "--db /tmp/s.redb hook codex",
            "hook gemini --db /tmp/s.redb --enforce",
            "hook claude-code --enforce --db postgres://u@h/db",
            "hook --enforce claude-code",
            "hook copilot --event postToolUse --db /tmp/s.redb",
            "hook opencode --audit-only",
            "hook cursor --db /tmp/s.redb --enforce --event x --audit-only",
        ];
        for line in taken {
            let (db, args) =
                hook::Args::installed(&words(line)).unwrap_or_else(|| panic!("not taken: {line}"));
            let clap =
                Cli::try_parse_from(std::iter::once("planlog").chain(line.split_whitespace()))
                    .unwrap();
            let Surface::Hook(clap_args) = clap.surface else {
                panic!("clap did not read a hook call: {line}")
            };
            assert_eq!(db, clap.db, "{line}");
            assert_eq!(format!("{args:?}"), format!("{clap_args:?}"), "{line}");
        }
        let left = [
            "",
            "hook",
            "hook --help",
            "hook claude-code --help",
            "hook claude-code -h",
            "hook nobody",
            "hook claude-code codex",
            "hook claude-code --enforce --enforce",
            "hook claude-code --db",
            "hook claude-code --db --enforce",
            "hook claude-code --db=/tmp/s.redb",
            "--db a hook claude-code --db b",
            "hook claude-code --event",
            "hook claude-code --bogus",
            "claude-code hook",
            "show cc-x",
            "--version",
            "hook hook claude-code",
        ];
        for line in left {
            assert!(
                hook::Args::installed(&words(line)).is_none(),
                "taken, but clap must read it: {line:?}"
            );
        }
    }

    /// What a hook's process sends its warm server (`Args::words`) reads back as the same
    /// arguments (`Args::installed`), for every line the hook's own reading takes.
    #[test]
    fn a_hook_s_arguments_sent_to_its_server_read_back_the_same() {
        for line in [
            "hook claude-code",
            "hook codex --enforce",
            "hook gemini --audit-only",
            "hook copilot --event postToolUse --enforce",
            "hook cursor --db /tmp/s.redb --enforce --event x --audit-only",
        ] {
            let (_, args) = hook::Args::installed(&words(line)).unwrap();
            let (db, again) = hook::Args::installed(&args.words()).unwrap();
            assert_eq!(db, None, "{line}");
            assert_eq!(format!("{again:?}"), format!("{args:?}"), "{line}");
        }
    }
}
