//! The `rageval` command as a library, so the Python package's `rageval` command runs the
//! same code as the binary: [`run`] takes the arguments and returns the exit code. Every
//! command's work is done by the library crates (`rageval-run` for the judged commands);
//! this crate only wires them together, and only [`run`] turns an outcome into an exit code.

mod app;
mod cli;
mod commands;
mod judge;
mod signals;
mod ui;

pub use app::run;
