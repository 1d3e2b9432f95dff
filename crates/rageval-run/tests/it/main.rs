//! Tests of the run engine at scale, in process against the testkit mock: batch passes
//! (provider jobs, and requests out / answers in) end as the synchronous run does, and
//! shards merge into the unsharded run. And the accounting types the session copies
//! across the leaf line stay twins (`accounting`).

#![allow(clippy::unwrap_used)]

mod accounting;
mod batch;
mod ends;
mod judge_check;
mod reasoning;
mod rules;
mod shards;
mod walls;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rageval_judge::CancelToken;
use rageval_judge::config::JudgeFlags;
use rageval_report::{Gate, RunData, Summary};
use rageval_run::Ended;
use rageval_run::commands::eval::{self, EvalOptions, Evaluated};
use rageval_run::engine::judges::JudgeOptions;
use rageval_run::engine::observe::Silent;
use rageval_run::engine::questions::QuestionData;
use rageval_testkit::{MockBatchConfig, MockConfig, MockServer};

/// Four judged metrics (statements, verdicts on them, generated questions, embeddings).
pub const METRICS: &str = "context_precision,context_recall,faithfulness,answer_relevancy";

/// A mock endpoint served by its own runtime while the test runs the engine.
pub struct Endpoint {
    pub mock: MockServer,
    _runtime: tokio::runtime::Runtime,
}

/// The mock with batch jobs that finish within milliseconds.
pub fn endpoint() -> Endpoint {
    endpoint_with(MockBatchConfig {
        validating: Duration::from_millis(1),
        in_progress: Duration::from_millis(5),
        finalizing: Duration::from_millis(1),
        expire_after_requests: None,
    })
}

pub fn endpoint_with(batch: MockBatchConfig) -> Endpoint {
    endpoint_of(MockConfig {
        embedding_dim: 16,
        batch,
        ..MockConfig::default()
    })
}

/// The mock as `config` says, served by its own runtime.
pub fn endpoint_of(config: MockConfig) -> Endpoint {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mock = runtime.block_on(MockServer::start(config)).unwrap();
    Endpoint {
        mock,
        _runtime: runtime,
    }
}

/// `count` short samples, each with an id, a question, an answer, a reference and two
/// contexts.
pub fn write_dataset(dir: &Path, count: usize) -> PathBuf {
    let mut text = String::new();
    for i in 0..count {
        let topic = i % 7;
        let line = serde_json::json!({
            "id": format!("q{i:04}"),
            "user_input": format!("What does item {i} say about topic {topic}?"),
            "response": format!("Item {i} covers topic {topic}. It was written in year {}.", 1990 + i % 30),
            "reference": format!("Item {i} is about topic {topic}. Its year is {}.", 1990 + i % 30),
            "retrieved_contexts": [
                format!("Item {i} discusses topic {topic} at length."),
                format!("Item {i} dates from {}.", 1990 + i % 30),
            ],
        });
        writeln!(text, "{line}").unwrap();
    }
    let path = dir.join("data.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

/// `eval`'s options for `data` into `out`, judged by `endpoint` with its own cache file.
pub fn options(endpoint: &Endpoint, data: &Path, out: &Path, cache: &Path) -> EvalOptions {
    options_at(&endpoint.mock.base_url, data, out, cache)
}

/// `eval`'s options for `data` into `out`, judged by the mock at `base_url` with its own
/// cache file.
pub fn options_at(base_url: &str, data: &Path, out: &Path, cache: &Path) -> EvalOptions {
    EvalOptions {
        data: data.to_path_buf(),
        format: None,
        field_map: Vec::new(),
        sheet: None,
        rubric_files: Vec::new(),
        metrics: METRICS.split(',').map(String::from).collect(),
        out: Some(out.to_path_buf()),
        version_name: None,
        overwrite: false,
        samples: None,
        seed: rageval_core::stats::DEFAULT_SEED,
        bootstrap_resamples: 200,
        top_k: None,
        retry_failed: false,
        gate: Gate::default(),
        junit: None,
        labels: None,
        judge: JudgeOptions {
            flags: JudgeFlags {
                base_url: Some(base_url.to_owned()),
                model: Some("mock-chat".into()),
                embedding_model: Some("mock-embed".into()),
                cache: Some(cache.to_path_buf()),
                concurrency: Some(16),
                ..JudgeFlags::default()
            },
            ..JudgeOptions::default()
        },
        shard: None,
        batch: None,
        reports: true,
        max_failed: rageval_run::commands::eval::MaxFailed::DEFAULT,
        rolling: false,
    }
}

/// The questions of `data`, for a per-question command writing into `out`.
pub fn question_data(data: &Path, out: &Path) -> QuestionData {
    QuestionData {
        data: data.to_path_buf(),
        format: None,
        field_map: Vec::new(),
        sheet: None,
        samples: None,
        out: Some(out.to_path_buf()),
        overwrite: false,
        retry_failed: false,
        seed: rageval_core::stats::DEFAULT_SEED,
    }
}

/// No environment variable.
pub fn no_env(_: &str) -> Option<String> {
    None
}

/// Runs `eval`, expecting it to complete.
pub fn complete(options: &EvalOptions) -> Evaluated {
    match run(options) {
        Ended::Complete(done) => done,
        Ended::Stopped(stopped) => panic!("stopped: {}", stopped.message),
    }
}

fn run(options: &EvalOptions) -> Ended<Evaluated> {
    eval::run(options, &no_env, &Silent, &CancelToken::new()).unwrap()
}

/// The journal's lines, sorted: results as a set.
pub fn results(run: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines.sort();
    lines
}

/// The summary without the judge's accounts.
pub fn summary(run: &Path) -> Summary {
    let mut summary = RunData::load(run).unwrap().summary;
    summary.judge = None;
    summary
}

/// Asserts two summaries equal, every number to 1e-12.
pub fn assert_same_summary(a: &Summary, b: &Summary) {
    assert_eq!(a.samples, b.samples);
    assert_eq!(a.metric_order, b.metric_order);
    assert_eq!(a.bootstrap, b.bootstrap);
    for (name, x) in &a.metrics {
        let y = &b.metrics[name];
        assert_eq!(
            (x.n, x.n_scored, x.n_undefined, x.n_failed),
            (y.n, y.n_scored, y.n_undefined, y.n_failed),
            "{name}"
        );
        let close = |p: Option<f64>, q: Option<f64>| match (p, q) {
            (Some(p), Some(q)) => (p - q).abs() <= 1e-12,
            (p, q) => p == q,
        };
        assert!(close(x.mean, y.mean), "{name}: {:?} {:?}", x.mean, y.mean);
        assert!(close(x.min, y.min) && close(x.max, y.max), "{name}");
        let ci = |c: Option<[f64; 2]>| c.map(|[l, _]| l);
        let hi = |c: Option<[f64; 2]>| c.map(|[_, h]| h);
        assert!(
            close(ci(x.ci95), ci(y.ci95)) && close(hi(x.ci95), hi(y.ci95)),
            "{name}: {:?} {:?}",
            x.ci95,
            y.ci95
        );
        assert_eq!(x.undefined_reasons, y.undefined_reasons, "{name}");
        assert_eq!(x.failed_errors, y.failed_errors, "{name}");
    }
    assert_eq!(a.metrics.len(), b.metrics.len());
}
