//! `rageval-mock`: the mock judge server as a process, for tests outside Rust (the Python
//! package's pytest suite). Prints its `.../v1` base URL on the first line of stdout, then
//! serves on 127.0.0.1 until killed.
//!
//! Flags: `--seed N`, `--fail-rate P` (500s), `--garbage-rate P`, `--api-key KEY` (requests
//! without `Authorization: Bearer KEY` get a 401), `--latency-ms N`.

use std::io::Write;
use std::time::Duration;

use rageval_testkit::{MockConfig, MockServer};

fn main() -> std::process::ExitCode {
    match serve(std::env::args().skip(1).collect()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "error: {message}");
            std::process::ExitCode::from(2)
        }
    }
}

fn serve(args: Vec<String>) -> Result<(), String> {
    let config = config(&args)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("cannot start the runtime: {error}"))?;
    runtime.block_on(async {
        let server = MockServer::start(config)
            .await
            .map_err(|error| format!("cannot bind 127.0.0.1: {error}"))?;
        let mut stdout = std::io::stdout();
        writeln!(stdout, "{}", server.base_url)
            .and_then(|()| stdout.flush())
            .map_err(|error| format!("cannot write to stdout: {error}"))?;
        std::future::pending::<()>().await;
        Ok(())
    })
}

fn config(args: &[String]) -> Result<MockConfig, String> {
    let mut config = MockConfig::default();
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{flag} needs a value"))
                .cloned()
        };
        let number = |text: String| {
            text.parse::<f64>()
                .map_err(|_| format!("{flag}: `{text}` is not a number"))
        };
        match flag.as_str() {
            "--seed" => config.seed = number(value()?)? as u64,
            "--fail-rate" => config.fail_rate = number(value()?)?,
            "--garbage-rate" => config.garbage_rate = number(value()?)?,
            "--api-key" => config.api_key = Some(value()?),
            "--latency-ms" => config.latency = Duration::from_millis(number(value()?)? as u64),
            other => return Err(format!("unknown flag `{other}`")),
        }
    }
    Ok(config)
}
