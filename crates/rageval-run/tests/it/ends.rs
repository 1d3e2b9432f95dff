//! How a session that fails leaves its run directory, one rule for every command
//! (`engine::shell::failed`): a directory holding what a judge was paid for — an earlier
//! session's journal, or units this session journaled after a model answered — is kept,
//! unfinished, with the session recorded as `failed`; a new directory holding none is
//! removed. Pinned here for `eval`, the question loop (`rank`, and `reference` on the same
//! loop) and `judge-check`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rageval_judge::CancelToken;
use rageval_rank::reference::DEFAULT_GROUP_SIZE;
use rageval_rank::{Algorithm, ReferenceMode};
use rageval_run::commands::eval;
use rageval_run::commands::judge_check::{self, JudgeCheckOptions, LabelFormat, Measured};
use rageval_run::commands::rank::{self, RankOptions, RankingOptions};
use rageval_run::commands::reference::{self, ReferenceOptions, ReferenceRunOptions};
use rageval_run::engine::observe::Recorded;
use rageval_run::{Ended, RunError};
use serde_json::Value;

use crate::{endpoint, no_env, options, question_data};

/// The manifest of the run in `dir`.
fn manifest(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

/// How the last session of the run in `dir` ended.
fn last_session_end(dir: &Path) -> Value {
    let manifest = manifest(dir);
    let sessions = manifest["sessions"].as_array().unwrap();
    sessions.last().unwrap()["ended"].clone()
}

/// Whether `observer` was told a note holding `text`.
fn said(observer: &Recorded, text: &str) -> bool {
    observer.notes().iter().any(|note| note.contains(text))
}

/// Lines of `file` in `dir`.
fn lines(dir: &Path, file: &str) -> usize {
    std::fs::read_to_string(dir.join(file))
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

/// Three samples, the third reusing the first's id: bad data the reader finds only when it
/// gets there, after the first two are scored.
fn data_bad_at_line_3(dir: &Path) -> PathBuf {
    let mut text = String::new();
    for (id, topic) in [("a", 1), ("b", 2), ("a", 3)] {
        let line = serde_json::json!({
            "id": id,
            "user_input": format!("What is topic {topic}?"),
            "response": format!("Topic {topic} is blue."),
            "reference": format!("Topic {topic} is blue."),
            "retrieved_contexts": [format!("Topic {topic} is blue, as everyone knows.")],
        });
        writeln!(text, "{line}").unwrap();
    }
    let path = dir.join("bad.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn eval_keeps_a_new_run_with_answers_a_model_judged_and_removes_one_without() {
    let endpoint = endpoint();
    let dir = tempfile::tempdir().unwrap();
    let data = data_bad_at_line_3(dir.path());

    let judged = dir.path().join("judged");
    let mut paid = options(&endpoint, &data, &judged, &dir.path().join("c.sqlite"));
    paid.metrics = vec!["faithfulness".into()];
    let notes = Recorded::default();
    let error = eval::run(&paid, &no_env, &notes, &CancelToken::new()).unwrap_err();
    assert!(error.to_string().contains("bad.jsonl:3"), "{error}");
    assert_eq!(
        lines(&judged, "results.jsonl"),
        2,
        "the judged cells are kept"
    );
    assert_eq!(last_session_end(&judged), "failed");
    assert_eq!(manifest(&judged)["status"], "running");
    assert!(!judged.join("summary.json").exists());
    assert!(
        said(&notes, "its finished cells are kept"),
        "{:?}",
        notes.notes()
    );

    let free = dir.path().join("free");
    let mut unpaid = options(&endpoint, &data, &free, &dir.path().join("f.sqlite"));
    unpaid.metrics = vec!["exact_match".into()];
    let error = eval::run(&unpaid, &no_env, &Recorded::default(), &CancelToken::new()).unwrap_err();
    assert!(error.to_string().contains("bad.jsonl:3"), "{error}");
    assert!(!free.exists(), "a new run nothing was paid for is removed");
}

/// `reference`'s options over `data` into `out`, with a judge window that a very long
/// question does not fit.
fn reference_options(base_url: &str, data: &Path, out: &Path, cache: &Path) -> ReferenceRunOptions {
    let judge = options_at_judge(base_url, cache);
    ReferenceRunOptions {
        data: question_data(data, out),
        reference: ReferenceOptions {
            mode: ReferenceMode::Slow,
            group_size: DEFAULT_GROUP_SIZE,
            answer_tokens: 256,
        },
        judge: rageval_run::JudgeOptions {
            context_window: 1_024,
            ..judge
        },
    }
}

/// The mock's judge options, with their own cache.
fn options_at_judge(base_url: &str, cache: &Path) -> rageval_run::JudgeOptions {
    crate::options_at(base_url, Path::new("unused"), Path::new("unused"), cache).judge
}

#[test]
fn the_question_loop_keeps_answers_a_model_wrote_and_removes_a_new_run_without() {
    let endpoint = endpoint();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("questions.jsonl");
    let long_question = "why ".repeat(3_000);
    let mut text = String::new();
    for (id, question) in [
        ("a", "What colour is the sky?"),
        ("b", long_question.as_str()),
    ] {
        let line = serde_json::json!({
            "id": id,
            "question": question,
            "contexts": ["The sky is blue.", "Grass is green."],
        });
        writeln!(text, "{line}").unwrap();
    }
    std::fs::write(&data, text).unwrap();

    // `reference`: the first question's answer is written, the second's question is over
    // the window (an error of the command, not of the judge).
    let written = dir.path().join("reference");
    let options = reference_options(
        &endpoint.mock.base_url,
        &data,
        &written,
        &dir.path().join("r.sqlite"),
    );
    let notes = Recorded::default();
    let error = reference::run(&options, &no_env, &notes, &CancelToken::new()).unwrap_err();
    assert!(matches!(error, RunError::Rank(_)), "{error}");
    assert_eq!(lines(&written, reference::REFERENCES_FILE), 1);
    assert_eq!(last_session_end(&written), "failed");
    assert!(
        said(&notes, "its finished questions are kept"),
        "{:?}",
        notes.notes()
    );

    // `rank` with a setting it cannot run with fails before any model answers.
    let ranked = dir.path().join("rank");
    let rank_options = RankOptions {
        data: question_data(&data, &ranked),
        ranking: RankingOptions {
            algorithm: Algorithm::Listwise,
            grade_batch: rageval_rank::ranking::DEFAULT_GRADE_BATCH,
            window: 1,
            both_orders: false,
            questions_at_once: 2,
        },
        top_k: 2,
        judge: options_at_judge(&endpoint.mock.base_url, &dir.path().join("k.sqlite")),
    };
    let error = rank::run(
        &rank_options,
        &no_env,
        &Recorded::default(),
        &CancelToken::new(),
    );
    assert!(error.is_err(), "a listwise window of 1 cannot rank");
    assert!(
        !ranked.exists(),
        "a new run nothing was paid for is removed"
    );
}

/// Four labelled items, judged by the mock at `base_url`.
fn judge_check_options(dir: &Path, base_url: &str) -> JudgeCheckOptions {
    let path = crate::judge_check::write_labels(dir);
    JudgeCheckOptions {
        labels: path,
        format: LabelFormat::Jsonl,
        measured: Measured::Metric("faithfulness".into()),
        rubric_files: Vec::new(),
        few_shot: 0,
        out: Some(dir.join("run")),
        overwrite: false,
        retry_failed: false,
        samples: None,
        repeat: 1,
        threshold: 0.5,
        folds: 2,
        seed: 7,
        bootstrap_resamples: 50,
        judge: options_at_judge(base_url, &dir.join("cache.sqlite")),
    }
}

#[test]
fn judge_check_keeps_a_resumed_run_and_removes_a_new_one_with_nothing_paid_for() {
    let endpoint = endpoint();
    let dir = tempfile::tempdir().unwrap();
    let mut options = judge_check_options(dir.path(), &endpoint.mock.base_url);
    let run = options.out.clone().unwrap();
    let samples = run.join(judge_check::SAMPLES_FILE);

    // New: the samples file cannot be written (a folder is in its place) before anything
    // is judged. The run's files go; the folder that was there stays.
    std::fs::create_dir_all(&samples).unwrap();
    let error = judge_check::run(&options, &no_env, &Recorded::default(), &CancelToken::new());
    assert!(error.is_err());
    assert!(
        !run.join("manifest.json").exists(),
        "a new run nothing was paid for is removed"
    );
    std::fs::remove_dir(&samples).unwrap();

    // Resumed: a capped session judged some samples; the next one fails the same way and
    // keeps them, recorded as failed.
    // One call at a time: the first sample's two calls are answered, the cap refuses the
    // next sample's second.
    options.judge.flags.concurrency = Some(1);
    options.judge.flags.max_calls = Some(3);
    let ended = judge_check::run(&options, &no_env, &Recorded::default(), &CancelToken::new());
    assert!(matches!(ended, Ok(Ended::Stopped(_))), "{ended:?}");
    let judged = lines(&run, "results.jsonl");
    assert!(judged > 0);
    std::fs::remove_file(&samples).unwrap();
    std::fs::create_dir(&samples).unwrap();
    options.judge.flags.max_calls = None;
    let notes = Recorded::default();
    let error = judge_check::run(&options, &no_env, &notes, &CancelToken::new());
    assert!(error.is_err());
    assert_eq!(lines(&run, "results.jsonl"), judged);
    assert_eq!(last_session_end(&run), "failed");
    assert!(
        said(&notes, "its finished judgements are kept"),
        "{:?}",
        notes.notes()
    );
}
