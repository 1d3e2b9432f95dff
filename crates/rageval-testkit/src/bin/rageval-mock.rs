//! `rageval-mock`: the mock judge server as a process, for tests outside Rust (the Python
//! package's pytest suite). Prints its `.../v1` base URL on the first line of stdout, then
//! serves on 127.0.0.1 until killed; `GET /stats` (beside `/v1`) returns its counters.
//!
//! The flags are listed in [`HELP`] (`--help`).

use std::io::Write;
use std::time::Duration;

use rageval_testkit::{MockConfig, MockServer, ReasoningModes};

/// What `--help` prints.
const HELP: &str = "\
rageval-mock: rageval's OpenAI-compatible mock judge server, on 127.0.0.1 at a free port.
Prints its base URL (http://127.0.0.1:PORT/v1) on the first line of stdout, then serves
until killed. GET http://127.0.0.1:PORT/stats returns the counters as JSON (requests,
tokens with reasoning_tokens, status_counts, faults with param_400 and truncated, ...).

Usage: rageval-mock [FLAGS]

Flags:
  --seed N             seed of every answer and fault draw (default 0)
  --fail-rate P        probability of a 500 (default 0)
  --garbage-rate P     probability of a 200 holding non-JSON or JSON cut in half (default 0)
  --api-key KEY        answer 401 to requests without `Authorization: Bearer KEY`
  --latency-ms N       sleep before every answer (default 0)
  --reasoning MODES    answer as a reasoning model; a comma-separated set of:
                         think          <think>thinking</think> then the answer in content
                         close-only     the same without the opening <think>
                         field          answer in content, thinking in
                                        message.reasoning_content
                         field-new      the same in message.reasoning
                         field-only     content null; thinking then the answer in the
                                        reasoning field (message.reasoning with field-new)
                         strict-params  400 for a temperature other than 1 and for
                                        max_tokens (use max_completion_tokens)
                         budget         a max_completion_tokens (else max_tokens) cap below
                                        about 800 tokens plus the answer ends with
                                        finish_reason length, the thinking cut, no answer
                       The answer is the one the plain mock gives; the thinking drafts one
                       with the opposite verdicts.
  -h, --help           print this help
";

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
    let Some(config) = config(&args)? else {
        let mut stdout = std::io::stdout();
        return stdout
            .write_all(HELP.as_bytes())
            .map_err(|error| format!("cannot write to stdout: {error}"));
    };
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

/// The configuration the flags ask for; `None` when they ask for the help.
fn config(args: &[String]) -> Result<Option<MockConfig>, String> {
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
            "--reasoning" => {
                config.reasoning = value()?
                    .parse::<ReasoningModes>()
                    .map_err(|error| format!("--reasoning: {error}"))?;
            }
            "-h" | "--help" => return Ok(None),
            other => {
                return Err(format!(
                    "unknown flag `{other}`\nhint: `rageval-mock --help` lists the flags"
                ));
            }
        }
    }
    Ok(Some(config))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rageval_testkit::ReasoningMode;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn reasoning_modes_are_read_from_the_flag() {
        let parsed = config(&args("--seed 3 --reasoning think,budget"))
            .unwrap()
            .unwrap();
        assert_eq!(parsed.seed, 3);
        assert_eq!(
            parsed.reasoning,
            ReasoningModes::of(&[ReasoningMode::Think, ReasoningMode::Budget])
        );
        let error = config(&args("--reasoning think,deep")).err().unwrap();
        assert!(
            error.starts_with("--reasoning: unknown reasoning mode `deep`"),
            "{error}"
        );
        assert!(error.contains("strict-params"), "{error}");
    }

    #[test]
    fn the_help_lists_every_reasoning_mode() {
        assert!(config(&args("--help")).unwrap().is_none());
        for mode in ReasoningMode::ALL {
            assert!(
                HELP.contains(&format!("  {} ", mode.name())),
                "{}",
                mode.name()
            );
        }
    }
}
