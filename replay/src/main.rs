//! The `planlog` binary.

use std::io::IsTerminal;

use clap::Parser;

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::WARN)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .without_time()
        .with_target(false)
        .init();
    let cli = planlog_replay::cli::Cli::parse();
    std::process::ExitCode::from(planlog_replay::cli::run(cli))
}
