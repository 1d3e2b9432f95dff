//! The `rageval` binary: argument parsing, settings and printing. Every command's work is
//! done by the library crates; this crate only wires them together.

mod cli;
mod commands;
mod judge;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(error) => {
            report_error(&error);
            ExitCode::from(commands::EXIT_ERROR)
        }
    }
}

/// Prints an error and its causes to stderr, one per line, with a hint where one is known.
fn report_error(error: &anyhow::Error) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "error: {error}");
    for cause in error.chain().skip(1) {
        let _ = writeln!(stderr, "  caused by: {cause}");
    }
    if let Some(hint) = commands::hint_for(error) {
        let _ = writeln!(stderr, "hint: {hint}");
    }
}
