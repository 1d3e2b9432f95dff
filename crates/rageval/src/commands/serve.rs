//! `rageval serve [RUNS_DIR]`: the read-only web UI and JSON API over a directory of runs.
//! Says where it listens on stderr, then serves until the process is stopped.

use std::io::Write;
use std::process::ExitCode;

use rageval_server::{AppState, ENV_SERVE_TOKEN, RunsRoot, Server, Token};

use crate::cli::ServeArgs;

pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let secret = args
        .token
        .clone()
        .or_else(|| std::env::var(ENV_SERVE_TOKEN).ok());
    let token = secret.as_deref().map(Token::new).transpose()?;
    let runs = RunsRoot::open(&args.runs_dir)?;
    let count = runs.list()?.len();
    let root = runs.path().display().to_string();
    let guarded = token.is_some();
    let server = Server::bind_spec(&args.bind, AppState::new(runs, token))?;
    let addr = server.local_addr()?;
    {
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "rageval serve: listening on http://{addr}/");
        let _ = writeln!(
            stderr,
            "serving {count} run(s) from {root}, read-only; Ctrl-C stops"
        );
        if guarded {
            let _ = writeln!(
                stderr,
                "every request needs the token: open http://{addr}/?token=TOKEN once in a browser"
            );
        }
    }
    server.run()?;
    Ok(ExitCode::SUCCESS)
}
