//! Run directories written through `rageval-report`'s own types, so the report and compare
//! commands can be tested without reading a dataset.

use std::path::Path;

use rageval_core::Outcome;
use rageval_report::{Aggregator, DatasetInfo, Manifest, MetricRecord, ResultRecord, RunDir};

/// Writes a complete run at `path` over a dataset hashed `sha256`, from (sample, metric,
/// outcome) triples in journal order.
pub fn write_run(path: &Path, sha256: &str, results: &[(String, &str, Outcome)]) {
    let mut metrics: Vec<String> = Vec::new();
    let mut samples: Vec<&str> = Vec::new();
    for (sample, metric, _) in results {
        if !metrics.iter().any(|m| m == metric) {
            metrics.push((*metric).to_string());
        }
        if !samples.contains(&sample.as_str()) {
            samples.push(sample);
        }
    }
    let run = RunDir::create(path, true).unwrap();
    let mut manifest = Manifest::start(
        "eval",
        DatasetInfo {
            path: "no-such-dataset.jsonl".into(),
            sha256: sha256.into(),
            format: "jsonl".into(),
            samples: Some(samples.len()),
        },
        metrics
            .iter()
            .map(|name| MetricRecord {
                name: name.clone(),
                formula: String::new(),
                source: String::new(),
            })
            .collect(),
        serde_json::json!({}),
    );
    run.write_manifest(&manifest).unwrap();
    let mut journal = run.journal().unwrap();
    let mut aggregator = Aggregator::new(metrics);
    for (sample, metric, outcome) in results {
        aggregator.add(metric, outcome);
        journal
            .append(&ResultRecord {
                sample_id: sample.clone(),
                metric: (*metric).to_string(),
                outcome: outcome.clone(),
            })
            .unwrap();
    }
    journal.flush().unwrap();
    run.finish(&mut manifest, &aggregator.finish(samples.len(), 500, 1))
        .unwrap();
}

/// 40 samples of `faithfulness` around 0.6 plus `shift`, and an undefined `context_recall`
/// on the last one.
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
