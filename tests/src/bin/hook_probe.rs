//! A bare probe of a hook call (BENCHMARKS.md § Hooks): the least work any hook that is a
//! new process per call must do to keep the call durably, with planlog taken away. It takes
//! `planlog`'s command line (`--version`, or `--db STORE hook AGENT` with the hook's JSON on
//! stdin), so `hook_latency` runs it in turns with `planlog` and reports it the same way:
//! its gap past its own `--version` is what the machine asks of a process-per-call hook.
//!
//! For a `PostToolUse` call it reads stdin, parses the JSON, takes the session's id, and:
//! - appends one framed record (length, checksum, the input's bytes) at the end of
//!   `<STORE>.probe-journal` under an exclusive `flock`, lets go, and `fdatasync`s (the file
//!   grows, as the floor's does: planlog's journal writes over zeros kept past its end,
//!   whose sync is a little cheaper);
//! - writes `<STORE>.probe-plans/<session>.md` in place (truncate and write: less than
//!   planlog's whole-file replacement, so the probe stays a lower bound).
//!
//! Any other event is read and left (`hook_latency` compares only the PostToolUse calls).
//! No index, no rules, no import semantics, no spool: everything planlog adds is absent.

use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::process::ExitCode;

/// FNV-1a, 32 bits: a checksum of the record's bytes (the probe's stand-in for CRC-32C).
fn checksum(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--version") {
        println!("hook_probe 0");
        return ExitCode::SUCCESS;
    }
    let Some(store) = args
        .iter()
        .position(|a| a == "--db")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from)
    else {
        eprintln!("usage: hook_probe --version | --db STORE hook AGENT < INPUT");
        return ExitCode::from(2);
    };
    match call(&store) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hook_probe: {e}");
            ExitCode::FAILURE
        }
    }
}

fn call(store: &std::path::Path) -> std::io::Result<()> {
    let mut raw = Vec::new();
    std::io::stdin().read_to_end(&mut raw)?;
    let input: serde_json::Value = serde_json::from_slice(&raw)?;
    if input["hook_event_name"] != "PostToolUse" {
        return Ok(());
    }
    let session = input["session_id"].as_str().unwrap_or("unnamed");
    let mut record = Vec::with_capacity(raw.len() + 8);
    let len = u32::try_from(raw.len()).map_err(std::io::Error::other)?;
    record.extend_from_slice(&len.to_le_bytes());
    record.extend_from_slice(&checksum(&raw).to_le_bytes());
    record.extend_from_slice(&raw);

    let mut name = store.as_os_str().to_owned();
    name.push(".probe-journal");
    let journal = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&name)?;
    journal.lock()?;
    let end = journal.metadata()?.len();
    journal.write_all_at(&record, end)?;
    journal.unlock()?;
    journal.sync_data()?;

    let mut plans = store.as_os_str().to_owned();
    plans.push(".probe-plans");
    let plans = PathBuf::from(plans);
    std::fs::create_dir_all(&plans)?;
    let mut file = std::fs::File::create(plans.join(format!("{session}.md")))?;
    let todos = input["tool_input"]["todos"].as_array().cloned();
    for todo in todos.unwrap_or_default() {
        writeln!(
            file,
            "- [{}] {}",
            if todo["status"] == "completed" {
                "x"
            } else {
                " "
            },
            todo["content"].as_str().unwrap_or_default()
        )?;
    }
    Ok(())
}
