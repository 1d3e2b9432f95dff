//! The `rageval` binary (a minimal entry point; the full CLI replaces it).

use clap::{Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

mod commands;

#[derive(Parser)]
#[command(
    name = "rageval",
    version,
    about = "Evaluate retrieval-augmented generation"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// trec_eval-compatible evaluation of a run against qrels
    Trec(commands::trec::TrecArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Command::Trec(args) = cli.command;
    match commands::trec::run(&args, &mut std::io::stdout().lock()) {
        Ok(code) => code,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "error: {error:#}");
            commands::trec::exit_code_for_error()
        }
    }
}
