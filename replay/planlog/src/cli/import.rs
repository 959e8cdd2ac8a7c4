//! `planlog import [FORMAT] PATH`: recorded sessions into the store, all or nothing per
//! source. PATH is a file, a Claude Code task folder, or a folder to walk (every source
//! inside, each imported once). Without FORMAT the format is detected and named on stderr.
//! Prints the id of every session each source maps to (a main session before its
//! sub-agents) and writes their plan files; stderr says what was new, what was there already,
//! and which sessions kept no plan.

use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use planlog_core::{EventLog, SessionId};
use planlog_import::{
    self as import, FileReport, HistoryCache, ImportError, ImportOptions, Input, SourceFormat,
};
use planlog_store::host::{PlanFiles, SystemEnv};

use crate::support::failure::Failure;
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog import`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The format (claude-code, claude-code-tasks, codex, opencode, gemini, planlog), then
    /// the path; or just the path, to have the format detected.
    #[arg(num_args = 1..=2, value_name = "[FORMAT] PATH", required = true)]
    words: Vec<String>,
    /// Import what can be read and report the bad lines instead of refusing the source.
    #[arg(long)]
    skip_bad_lines: bool,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let (named, path) = match args.words.as_slice() {
        [path] => (None, PathBuf::from(path)),
        [format, path] => match SourceFormat::from_word(format) {
            Some(f) => (Some(f), PathBuf::from(path)),
            None => {
                return Err(Failure::cannot_run(format!(
                    "unknown format {format:?}; planlog imports {} (or leave the format out to have it detected)",
                    SourceFormat::all_words()
                )));
            }
        },
        _ => return Err(Failure::cannot_run("give [FORMAT] PATH")),
    };
    let shown = path.display().to_string();
    let found = import::walk(&path)
        .map_err(|e| Failure::cannot_run(format!("cannot read {shown}: {e}")))?;
    let options = ImportOptions {
        skip_bad_lines: args.skip_bad_lines,
        history: Some(HistoryCache::beside(&store.path)),
        ..ImportOptions::default()
    };
    let log = store.for_writing()?;
    let files = PlanFiles::beside(&store.path);
    let mut out = Out::new();
    // A session two files map to (a main session and its sub-agent's file) is printed once.
    let mut printed = HashSet::new();
    let single = found.len() == 1 && found[0].path == path;
    if single {
        let format = single_format(&found[0], named)?;
        let report = import_one(&*log, format, &found[0].path, options)?;
        show(&*log, &files, &mut out, &mut printed, &shown, &report)?;
        out.finish()?;
        return Ok(());
    }
    // A folder: every source inside, refused ones reported and the rest imported.
    let (mut imported, mut refused) = (0, 0);
    for source in &found {
        let file = source.path.display().to_string();
        let format = match (&source.format, named) {
            (Ok(f), Some(n)) if *f != n => {
                eprintln!(
                    "planlog: skipped {file}: it is {} ({f}), not {n}",
                    f.describe()
                );
                continue;
            }
            (Ok(f), _) => *f,
            (Err(why), _) => {
                eprintln!("planlog: skipped {file}: {why}");
                continue;
            }
        };
        match import_one(&*log, format, &source.path, options.clone()) {
            Ok(report) => {
                imported += 1;
                show(&*log, &files, &mut out, &mut printed, &file, &report)?;
            }
            Err(failure) => {
                refused += 1;
                eprintln!("planlog: {}", failure.message);
            }
        }
    }
    out.finish()?;
    match (imported, refused) {
        (0, 0) => Err(Failure::cannot_run(format!(
            "no source planlog can import under {shown}{}",
            named.map_or_else(String::new, |n| format!(" of format {n}"))
        ))),
        (_, 0) => Ok(()),
        (_, r) => Err(Failure::no(format!(
            "{r} of {} sources were refused (see above); the others were imported",
            imported + r
        ))),
    }
}

/// The format of a single file or task folder: the named one, checked against its content,
/// or the detected one (said on stderr).
fn single_format(
    found: &import::Found,
    named: Option<SourceFormat>,
) -> Result<SourceFormat, Failure> {
    let file = found.path.display().to_string();
    match (named, &found.format) {
        (Some(n), Ok(f)) if *f == n => Ok(n),
        (Some(n), Ok(f)) => Err(ImportError::WrongFormat {
            file,
            format: n,
            why: format!("its content is {}", f.describe()),
            looks_like: Some(*f),
        }
        .into()),
        (Some(n), Err(why)) => Err(ImportError::WrongFormat {
            file,
            format: n,
            why: why.to_string(),
            looks_like: None,
        }
        .into()),
        (None, Ok(f)) => {
            eprintln!("planlog: {file} is {} ({f})", f.describe());
            Ok(*f)
        }
        (None, Err(why)) => Err(ImportError::Unknown {
            file,
            why: why.clone(),
        }
        .into()),
    }
}

fn import_one(
    log: &dyn EventLog,
    format: SourceFormat,
    path: &Path,
    options: ImportOptions,
) -> Result<FileReport, Failure> {
    if format == SourceFormat::Planlog && options.skip_bad_lines {
        eprintln!(
            "planlog: --skip-bad-lines does not apply to planlog exports (every event chains to the one before it)"
        );
    }
    // Bytes of the source read, of its size (a folder of task files: a spinner).
    static READ: AtomicU64 = AtomicU64::new(0);
    READ.store(0, Ordering::Relaxed);
    let size = std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len());
    let bar = match size {
        Some(size) => crate::support::progress::bytes("importing", size),
        None => {
            let s = indicatif::ProgressBar::new_spinner();
            s.set_message(format!("importing {}", path.display()));
            s
        }
    };
    let options = ImportOptions {
        progress: Some(import::ReadProgress(&READ)),
        ..options
    };
    let result = std::thread::scope(|scope| {
        // The bar follows the count until the import ends (the sender is dropped).
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let ticker = std::io::stderr().is_terminal().then(|| {
            let bar = &bar;
            scope.spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(std::time::Duration::from_millis(100))
                {
                    bar.set_position(READ.load(Ordering::Relaxed));
                }
            })
        });
        let result = import::import(log, &SystemEnv, format, Input::Path(path), options);
        drop(stop);
        if let Some(t) = ticker {
            let _ = t.join();
        }
        result
    });
    bar.finish_and_clear();
    Ok(result?)
}

/// Prints the sessions of one source (each session once per run), writes their plan files, and says on stderr what the
/// import did.
fn show(
    log: &dyn EventLog,
    files: &PlanFiles,
    out: &mut Out,
    printed: &mut HashSet<SessionId>,
    file: &str,
    report: &FileReport,
) -> Result<(), Failure> {
    for bad in &report.skipped {
        if bad.line == 0 {
            eprintln!("planlog: skipped in {file}: {}", bad.why);
        } else {
            eprintln!("planlog: skipped {file} line {}: {}", bad.line, bad.why);
        }
    }
    if let Some(why) = &report.no_conversation {
        eprintln!("planlog: nothing imported from {file}: {why}");
    }
    if let Some(line) = report.unfinished.cut_line {
        eprintln!(
            "planlog: {file} ends in the middle of line {line} (still being written?): that line is left for the next import"
        );
    }
    for (line, records) in &report.unfinished.waiting {
        eprintln!(
            "planlog: {file} line {line}: a call whose result is not written yet ({records} records from there on in its session) is left for the next import"
        );
    }
    for s in &report.sessions {
        if (s.calls > 0 || s.created)
            && let Some(last) = log.last(&s.id)?
        {
            let state = log.state_at(&s.id, last.seq)?;
            files.write_or_warn(&s.id, &state.plan, last.at);
        }
        let what = match (s.created, s.calls, s.already) {
            (true, _, _) if s.stand_in => {
                "created empty as its sub-agent's parent (import its own source to fill it)"
                    .to_owned()
            }
            (_, _, _) if s.no_plan => "the agent kept no plan".to_owned(),
            (true, n, _) => events(n),
            (false, 0, 0) => "already imported; nothing new".to_owned(),
            (false, 0, a) => {
                format!("already imported; nothing new ({a} calls were there already)")
            }
            (false, n, a) => format!("{} appended ({a} calls were there already)", events(n)),
        };
        eprintln!("planlog: {} <- {file} ({}): {what}", s.id, s.key);
        if printed.insert(s.id.clone()) {
            out.line(s.id.as_str())?;
        }
    }
    Ok(())
}

fn events(n: usize) -> String {
    if n == 1 {
        "1 event".to_owned()
    } else {
        format!("{n} events")
    }
}
