//! Runs survive a bad day (issue 40): one writer per run directory — a second process
//! started on the same `--out` is refused at once with exit 2, naming the first, and the
//! first finishes a run that counts each sample once; a run of metrics that embed nothing
//! resumes on a machine without the embedded models.

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rageval_testkit::MockConfig;
use serde_json::Value;

use crate::judged::{checked_cells, endpoint, fiqa_judged_args};
use crate::{command, repo_root, stderr};

fn spawn(dir: &Path, args: &[String]) -> Child {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child: Command = command(dir, &args);
    child
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until one of `children` has exited, or panics after two minutes; its index.
fn first_to_exit(children: &mut [Child; 2]) -> usize {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        for (index, child) in children.iter_mut().enumerate() {
            if child.try_wait().unwrap().is_some() {
                return index;
            }
        }
        assert!(Instant::now() < deadline, "neither process exited");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn regression_issue_40_two_evals_on_one_out_one_runs_the_other_is_refused_at_once() {
    let endpoint = endpoint(MockConfig {
        latency: Duration::from_millis(100),
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let flags = [vec!["--concurrency".into(), "2".into()], endpoint.flags()].concat();
    let args = fiqa_judged_args("run", &flags);
    let mut children = [spawn(dir.path(), &args), spawn(dir.path(), &args)];
    let loser = first_to_exit(&mut children);
    let winner = 1 - loser;
    assert!(
        children[winner].try_wait().unwrap().is_none(),
        "the refused process exits while the other still runs (30 samples at 100 ms a call)"
    );
    let [first, second] = children;
    let (refused, finished) = if loser == 0 {
        (first, second)
    } else {
        (second, first)
    };
    let winner_pid = finished.id();
    let refused = refused.wait_with_output().unwrap();
    let message = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert_eq!(refused.status.code(), Some(2), "{message}");
    assert!(
        message.contains("another rageval process")
            && message.contains(&format!("pid {winner_pid}")),
        "the refusal names the other writer: {message}"
    );
    let finished = finished.wait_with_output().unwrap();
    assert!(
        finished.status.success(),
        "{}",
        String::from_utf8_lossy(&finished.stderr)
    );
    let run = dir.path().join("run");
    checked_cells(&run, 30, 2);
    let summary: Value =
        serde_json::from_slice(&fs::read(run.join("summary.json")).unwrap()).unwrap();
    for metric in ["faithfulness", "context_recall"] {
        assert_eq!(
            summary["metrics"][metric]["n"], 30,
            "{metric} counts each sample once"
        );
    }
}

/// `binary` (the tests' `rageval` command) run as a copy where no embedded model can be
/// found: a hard link (or copy) of the executable in `dir/bin/rageval/`, so no `models`
/// folder lies beside it, with `HOME` and `XDG_DATA_HOME` in `dir`.
fn without_models(binary: &Command, dir: &Path) -> Command {
    let linked = dir.join("bin/rageval/rageval");
    if !linked.exists() {
        fs::create_dir_all(linked.parent().unwrap()).unwrap();
        let program = Path::new(binary.get_program());
        if fs::hard_link(program, &linked).is_err() {
            fs::copy(program, &linked).unwrap();
        }
    }
    let mut moved = Command::new(&linked);
    moved.args(binary.get_args());
    if let Some(current) = binary.get_current_dir() {
        moved.current_dir(current);
    }
    for (name, value) in binary.get_envs() {
        match value {
            Some(value) => moved.env(name, value),
            None => moved.env_remove(name),
        };
    }
    moved
        .env_remove("RAGEVAL_MODELS_DIR")
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir);
    moved
}

#[test]
fn regression_issue_40_a_model_free_run_resumes_where_the_embedded_models_are_missing() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let args = [
        "eval",
        data.to_str().unwrap(),
        "--metrics",
        "exact_match,rouge_l",
        "--out",
        "run",
    ];
    let first = command(dir.path(), &args).output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let again = without_models(&command(dir.path(), &args), dir.path())
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "metrics that embed nothing do not depend on the embedder: {}",
        stderr(&again)
    );
    checked_cells(&dir.path().join("run"), 30, 2);
}
