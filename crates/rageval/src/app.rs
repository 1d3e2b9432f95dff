//! The command run end to end: arguments parsed, logs set up, the command dispatched, its
//! error printed with causes and hint, its exit code returned.

use std::ffi::OsString;
use std::io::Write;

use clap::Parser;

use crate::{cli, commands, ui};

/// Runs the `rageval` command with `args` (the program name first) and returns its exit code.
/// `--help`, `--version` and usage errors print and exit the process, as clap does.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = cli::Cli::parse_from(args);
    let output = cli.command.output();
    init_tracing(output.verbose);
    let ui = ui::Ui::new(output.quiet, output.progress);
    let exit = match commands::dispatch(cli.command, &cli.metric_file, &ui) {
        Ok(exit) => exit,
        Err(error) => {
            report_error(&error);
            if commands::is_disk_full(&error) {
                commands::Exit::DiskFull
            } else {
                commands::Exit::Error
            }
        }
    };
    exit.code()
}

/// `-v`: debug events of the judge (retries, back-offs, halts) and of the run (routing) on
/// stderr; `-vv`: trace. Endpoints are redacted and keys never reach an event.
fn init_tracing(verbose: u8) {
    let level = match verbose {
        0 => return,
        1 => tracing::Level::DEBUG,
        _ => tracing::Level::TRACE,
    };
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Prints an error and its causes to stderr, one per line, with a hint where one is known.
fn report_error(error: &anyhow::Error) {
    let mut stderr = std::io::stderr().lock();
    let disk_full = if commands::is_disk_full(error) {
        "disk full: "
    } else {
        ""
    };
    let _ = writeln!(stderr, "error: {disk_full}{error}");
    for cause in error.chain().skip(1) {
        let _ = writeln!(stderr, "  caused by: {cause}");
    }
    if let Some(hint) = commands::hint_for(error) {
        let _ = writeln!(stderr, "hint: {hint}");
    }
}
