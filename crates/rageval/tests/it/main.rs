//! End-to-end tests of the `rageval` binary: real processes, real files, exit codes.

#![allow(clippy::unwrap_used)]

mod abstention_citation;
mod accounting;
mod browser;
mod calibrate;
mod cascade;
mod cdp;
mod checker;
mod chromium;
mod ci_action;
mod columnar;
mod compare;
mod compare_confirm;
mod compare_gate;
mod compare_pairwise;
mod conversations;
mod design;
mod disk_full;
mod engine;
mod eval;
mod help;
mod issue_39;
mod journals_checked;
mod judge_check;
mod judge_check_few_shot;
#[cfg(feature = "gguf")]
mod judge_check_gguf;
mod judge_check_head_to_head;
mod judge_check_resume;
mod judge_faults;
mod judged;
mod label;
mod label_review;
mod local_models;
mod metrics;
mod mlflow;
mod pairwise;
mod phoenix;
mod rank;
mod released_runs;
mod report;
mod resume;
mod rubrics;
mod runs_survive;
mod s3_views;
mod s4_pipeline;
mod scale;
mod schema;
mod serve_kinds;
mod signals;
mod snapshots;
mod sources;
mod testset;
mod tool_calls;
mod trace_servers;
mod traces;
mod version_table;
mod watch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crate lives under crates/")
        .to_path_buf()
}

/// Whether `../shared/validation` (the labelled sets beside this repository in its
/// development workplace, never copied into it) is missing; if so, says that the calling
/// test is skipped and why.
#[allow(
    clippy::print_stderr,
    reason = "a skipped test says why in the test output"
)]
pub fn skip_without_shared(test: &str) -> bool {
    let shared = repo_root().join("../shared/validation");
    if shared.is_dir() {
        return false;
    }
    eprintln!(
        "skipped {test}: {} is absent (the shared labelled sets exist only beside this \
         repository where it is developed)",
        shared.display()
    );
    true
}

/// Runs the binary with `args` in `dir`.
pub fn rageval(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().expect("the binary runs")
}

/// The binary's command with `args` in `dir`, isolated from the caller's judge settings:
/// no endpoint from the environment, the judge cache inside `dir`.
pub fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rageval"));
    command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("RAGEVAL_CACHE_DIR", dir.join(".cache"));
    for name in [
        "RAGEVAL_JUDGE_BASE_URL",
        "RAGEVAL_JUDGE_MODEL",
        "RAGEVAL_JUDGE_EMBEDDING_MODEL",
        "RAGEVAL_JUDGE_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    ] {
        command.env_remove(name);
    }
    command
}

/// Scores `examples/fiqa-30.jsonl` with `metrics` (comma-separated) into the run directory
/// `out`, from `dir`; panics unless the run succeeds.
pub fn eval_fiqa(dir: &Path, metrics: &str, out: &Path) {
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let output = rageval(
        dir,
        &[
            "eval",
            data.to_str().unwrap(),
            "--metrics",
            metrics,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
}

/// Sends Ctrl-C (SIGINT) to a running `rageval` and waits for it to exit.
pub fn interrupt(child: std::process::Child) -> Output {
    let signal = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(signal.success());
    child.wait_with_output().expect("the binary exits")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
