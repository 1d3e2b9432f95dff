//! The `rageval` binary: [`rageval::run`] with the process's arguments.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(rageval::run(std::env::args_os()))
}
