//! Test helpers: run directories written through the crate's own types, as `eval` writes them.

use std::path::Path;

use rageval_core::Outcome;

use crate::{Aggregator, DatasetInfo, Manifest, MetricRecord, ResultRecord, RunDir};

/// Writes a complete run at `path` over a dataset with hash `sha256`, holding `results`
/// as (sample id, metric, outcome) in journal order.
pub(crate) fn write_run(path: &Path, sha256: &str, results: &[(&str, &str, Outcome)]) {
    let mut metrics: Vec<String> = Vec::new();
    let mut samples: Vec<&str> = Vec::new();
    for (sample, metric, _) in results {
        if !metrics.iter().any(|m| m == metric) {
            metrics.push((*metric).to_string());
        }
        if !samples.contains(sample) {
            samples.push(sample);
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
                sample_id: (*sample).to_string(),
                metric: (*metric).to_string(),
                outcome: outcome.clone(),
            })
            .expect("journal line");
    }
    journal.flush().expect("flush");
    let summary = aggregator.finish(samples.len(), 200, 1);
    run.finish(&mut manifest, &summary).expect("finish");
}
