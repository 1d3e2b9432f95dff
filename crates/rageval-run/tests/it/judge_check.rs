//! `judge-check` in process: the environment it is handed is the one every judge of the run
//! resolves from, the repeat judge included.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rageval_judge::CancelToken;
use rageval_run::Ended;
use rageval_run::commands::judge_check::{self, JudgeCheckOptions, LabelFormat, Measured};
use rageval_run::engine::judges::JudgeOptions;
use rageval_run::engine::observe::Silent;

/// Four labelled binary items in `dir/labels.jsonl`, half of them good.
pub fn write_labels(dir: &Path) -> PathBuf {
    let mut labels = String::new();
    for i in 0..4 {
        let line = serde_json::json!({
            "id": format!("p{i}"),
            "question": format!("What does item {i} say?"),
            "contexts": [format!("Item {i} says the sky is blue.")],
            "answer": format!("Item {i} says the sky is blue."),
            "label": i % 2 == 0,
        });
        writeln!(labels, "{line}").unwrap();
    }
    let path = dir.join("labels.jsonl");
    std::fs::write(&path, labels).unwrap();
    path
}

/// Regression: `judge-check --repeat` resolved its repeat judge from the process
/// environment instead of the one it was handed, so a judge named only there (the Python
/// package's key, a test's endpoint) judged the first pass and the repeat found none.
#[test]
fn the_repeat_judge_resolves_from_the_environment_the_command_was_handed() {
    let endpoint = super::endpoint();
    let dir = tempfile::tempdir().unwrap();
    let path = write_labels(dir.path());
    let options = JudgeCheckOptions {
        labels: path,
        format: LabelFormat::Jsonl,
        measured: Measured::Metric("faithfulness".into()),
        rubric_files: Vec::new(),
        few_shot: 0,
        out: Some(dir.path().join("run")),
        overwrite: false,
        retry_failed: false,
        samples: None,
        repeat: 2,
        threshold: 0.5,
        folds: 2,
        seed: 7,
        bootstrap_resamples: 50,
        judge: JudgeOptions {
            flags: rageval_judge::config::JudgeFlags {
                cache: Some(dir.path().join("cache.sqlite")),
                ..Default::default()
            },
            ..JudgeOptions::default()
        },
    };
    let base_url = endpoint.mock.base_url.clone();
    let env = move |name: &str| match name {
        rageval_judge::settings::ENV_JUDGE_BASE_URL => Some(base_url.clone()),
        rageval_judge::settings::ENV_JUDGE_MODEL => Some("mock-chat".to_owned()),
        _ => None,
    };
    let ended = judge_check::run(&options, &env, &Silent, &CancelToken::new()).unwrap();
    let Ended::Complete(done) = ended else {
        panic!("judge-check stopped")
    };
    let repeats = std::fs::read_to_string(done.path.join("repeats.jsonl")).unwrap();
    assert!(repeats.lines().count() >= 4, "{repeats}");
    // The first pass (cached) and the repeat (uncached) both reached the endpoint.
    assert!(endpoint.mock.stats().chat_requests > 0);
}
