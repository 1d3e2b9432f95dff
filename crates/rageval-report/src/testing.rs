//! Test helpers (feature `test-support`, and this crate's own tests): complete run
//! directories written through the crate's own types, as `eval` writes them, so reports,
//! comparisons and servers can be tested without a dataset or a metric.

use std::collections::HashMap;
use std::path::Path;

use calamine::{Data, Reader, Xlsx, open_workbook};
use rageval_core::{Evidence, Outcome};

use crate::{
    Aggregator, DatasetInfo, Manifest, MetricRecord, RESULTS_SHEET_COLUMNS, ResultRecord, RunDir,
};

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
/// each cell of the `samples` sheet is that sample × metric's score, or `undefined: reason`
/// / `failed: error`. Panics with the first difference.
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
    let metrics: Vec<String> = rows
        .next()
        .expect("header")
        .iter()
        .skip(1)
        .map(|c| c.to_string())
        .collect();
    let outcomes: HashMap<(&str, &str), &Outcome> = records
        .iter()
        .map(|r| ((r.sample_id.as_str(), r.metric.as_str()), &r.outcome))
        .collect();
    let mut seen = 0;
    for row in rows {
        let id = row[0].to_string();
        for (metric, cell) in metrics.iter().zip(&row[1..]) {
            let expected = match outcomes.get(&(id.as_str(), metric.as_str())) {
                Some(Outcome::Score { value, .. }) => Data::Float(*value),
                Some(Outcome::Undefined { reason }) => Data::String(format!("undefined: {reason}")),
                Some(Outcome::Failed { error }) => Data::String(format!("failed: {error}")),
                None => Data::Empty,
            };
            assert_eq!(cell, &expected, "samples sheet, {id} × {metric}");
            seen += usize::from(expected != Data::Empty);
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
