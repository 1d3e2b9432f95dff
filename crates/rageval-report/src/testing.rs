//! Test helpers (other crates' tests, and this crate's own): complete run
//! directories written through the crate's own types, as `eval` writes them, so reports,
//! comparisons and servers can be tested without a dataset or a metric.

use std::collections::HashMap;
use std::path::Path;

/// The workbook reader the checks use, for other crates' tests that read sheets back.
pub use calamine;
use calamine::{Data, Reader, Xlsx, open_workbook};
use rageval_core::{Evidence, Outcome};

use crate::outcome_text::outcome_reason;
use crate::xlsx::fit_cell;
use crate::{
    Aggregator, DatasetInfo, Manifest, MetricRecord, REASON_SUFFIX, RESULTS_SHEET_COLUMNS,
    ResultRecord, RunDir, SAMPLES_SHEET_COLUMNS,
};

/// Two runs (baseline, candidate) compared with the default settings and gated by `spec`
/// (the baseline's age measured at time 0).
pub fn gated(
    runs: &[crate::RunData],
    spec: &crate::GateSpec,
) -> (crate::Comparison, crate::RegressionGate) {
    let comparison = crate::Comparison::build(runs, crate::CompareSettings::default())
        .expect("the runs compare");
    let manifests = [&runs[0].manifest, &runs[1].manifest];
    let gate = crate::RegressionGate::check(&comparison, manifests, spec, None, 0)
        .expect("the gate decides");
    (comparison, gate)
}

/// Writes a complete run at `path` over a dataset with hash `sha256` (its path,
/// `data.jsonl`, is not a file), holding `results` as (sample id, metric, outcome) in
/// journal order. Panics when a file cannot be written: it is for tests only.
pub fn write_run<S: AsRef<str>>(path: &Path, sha256: &str, results: &[(S, &str, Outcome)]) {
    let mut metrics: Vec<String> = Vec::new();
    let mut samples: Vec<&str> = Vec::new();
    for (sample, metric, _) in results {
        if !metrics.iter().any(|m| m == metric) {
            metrics.push((*metric).to_string());
        }
        if !samples.contains(&sample.as_ref()) {
            samples.push(sample.as_ref());
        }
    }
    let run = RunDir::create(path, true).expect("run directory");
    let mut manifest = Manifest::start(
        "eval",
        DatasetInfo {
            path: "data.jsonl".into(),
            sha256: sha256.into(),
            format: "jsonl".into(),
            samples: Some(samples.len()),
        },
        metrics
            .iter()
            .map(|name| MetricRecord {
                name: name.clone(),
                formula: format!("{name} formula"),
                source: "test".into(),
                judges: Vec::new(),
            })
            .collect(),
        serde_json::json!({}),
    );
    run.write_manifest(&manifest).expect("manifest");
    let mut journal = run.journal().expect("journal");
    let mut aggregator = Aggregator::new(metrics);
    for (sample, metric, outcome) in results {
        aggregator.add(metric, outcome);
        journal
            .append(&ResultRecord {
                sample_id: sample.as_ref().to_string(),
                metric: (*metric).to_string(),
                outcome: outcome.clone(),
            })
            .expect("journal line");
    }
    journal.flush().expect("flush");
    let summary = aggregator.finish(samples.len(), 200, 1);
    run.finish(&mut manifest, &summary).expect("finish");
}

/// Writes a finished `command` run (`rank`, `reference`, `testset`: a stage run) at `path`
/// over `questions.jsonl` (3 questions, hash `q`), whose `summary.json` is `summary` (the
/// command's own shape). Panics when a file cannot be written: it is for tests only.
pub fn write_stage_run(path: &Path, command: &str, summary: &serde_json::Value) {
    let run = RunDir::create(path, true).expect("run directory");
    let dataset = DatasetInfo {
        path: "questions.jsonl".into(),
        sha256: "q".into(),
        format: "jsonl".into(),
        samples: Some(3),
    };
    let mut manifest = Manifest::start(command, dataset, Vec::new(), serde_json::json!({}));
    run.finish_with(&mut manifest, summary).expect("finish");
}

/// Two metrics over 40 samples `q0`…`q39`: `faithfulness` at 0.5 + {0, 0.05, …, 0.2}
/// (cycling) + `shift`, so its mean is 0.6 + `shift`; `context_recall` at 0.9, except on the
/// last sample, where it is undefined ("no reference contexts").
pub fn scores(shift: f64) -> Vec<(String, &'static str, Outcome)> {
    let mut results = Vec::new();
    for i in 0..40 {
        let wobble = f64::from(i % 5) * 0.05;
        results.push((
            format!("q{i}"),
            "faithfulness",
            Outcome::bare(0.5 + wobble + shift),
        ));
        let recall = if i == 39 {
            Outcome::undefined("no reference contexts")
        } else {
            Outcome::bare(0.9)
        };
        results.push((format!("q{i}"), "context_recall", recall));
    }
    results
}

/// Checks a run's `results.xlsx` against its `results.jsonl`, cell for cell: the `results`
/// sheet rebuilds every journal record exactly (values bit for bit, evidence included), and
/// in the `samples` sheet each sample × metric has its score (or `undefined` / `failed`)
/// and beside it the reason: the evidence as text, the undefined reason or the error.
/// Panics with the first difference.
pub fn assert_workbook_matches_journal(xlsx: &Path, journal: &Path) {
    let records = crate::read_results(journal).expect("journal");
    let mut workbook: Xlsx<_> = open_workbook(xlsx).expect("workbook");
    let results = workbook.worksheet_range("results").expect("results sheet");
    let mut rows = results.rows();
    let header: Vec<String> = rows
        .next()
        .expect("header")
        .iter()
        .map(|c| c.to_string())
        .collect();
    assert_eq!(header, RESULTS_SHEET_COLUMNS);
    let rebuilt: Vec<ResultRecord> = rows.map(record_from_row).collect();
    assert_eq!(
        rebuilt, records,
        "the results sheet differs from the journal"
    );

    let samples = workbook.worksheet_range("samples").expect("samples sheet");
    let mut rows = samples.rows();
    let header: Vec<String> = rows
        .next()
        .expect("header")
        .iter()
        .map(|c| c.to_string())
        .collect();
    let fixed = SAMPLES_SHEET_COLUMNS.len();
    assert_eq!(header[..fixed], SAMPLES_SHEET_COLUMNS);
    let metrics: Vec<&String> = header[fixed..].iter().step_by(2).collect();
    for (metric, reason) in metrics.iter().zip(header[fixed + 1..].iter().step_by(2)) {
        assert_eq!(*reason, format!("{metric}{REASON_SUFFIX}"));
    }
    let outcomes: HashMap<(&str, &str), &Outcome> = records
        .iter()
        .map(|r| ((r.sample_id.as_str(), r.metric.as_str()), &r.outcome))
        .collect();
    let text = |value: String| {
        if value.is_empty() {
            Data::Empty
        } else {
            Data::String(fit_cell(&value).into_owned())
        }
    };
    let mut seen = 0;
    for row in rows {
        let id = row[0].to_string();
        for (index, metric) in metrics.iter().enumerate() {
            let at = |column: usize| row.get(column).cloned().unwrap_or(Data::Empty);
            let (score, reason) = match outcomes.get(&(id.as_str(), metric.as_str())) {
                Some(outcome @ Outcome::Score { value, .. }) => {
                    (Data::Float(*value), text(outcome_reason(outcome)))
                }
                Some(outcome @ Outcome::Undefined { .. }) => (
                    Data::String("undefined".into()),
                    text(outcome_reason(outcome)),
                ),
                Some(outcome @ Outcome::Failed { .. }) => {
                    (Data::String("failed".into()), text(outcome_reason(outcome)))
                }
                None => (Data::Empty, Data::Empty),
            };
            let column = fixed + 2 * index;
            assert_eq!(at(column), score, "samples sheet, {id} × {metric}");
            assert_eq!(
                at(column + 1),
                reason,
                "samples sheet, {id} × {metric} reason"
            );
            seen += usize::from(score != Data::Empty);
        }
    }
    let distinct: std::collections::HashSet<_> = outcomes.keys().collect();
    assert_eq!(seen, distinct.len(), "the samples sheet misses outcomes");
}

fn record_from_row(row: &[Data]) -> ResultRecord {
    let text = |i: usize| match row.get(i) {
        Some(Data::String(s)) => s.clone(),
        _ => String::new(),
    };
    let outcome = match text(2).as_str() {
        "score" => Outcome::Score {
            value: match row.get(3) {
                Some(Data::Float(v)) => *v,
                other => panic!("not a number: {other:?}"),
            },
            evidence: if text(5).is_empty() {
                Evidence::default()
            } else {
                serde_json::from_str(&text(5)).expect("evidence JSON")
            },
        },
        "undefined" => Outcome::undefined(text(4)),
        "failed" => Outcome::failed(text(4)),
        other => panic!("unknown status {other}"),
    };
    ResultRecord {
        sample_id: text(0),
        metric: text(1),
        outcome,
    }
}
