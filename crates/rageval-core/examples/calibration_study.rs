//! How often a calibrated interval from a random subset of labels covers the mean of all
//! the labels, on `judge-check` runs over fully labelled sets (the figures of
//! docs/calibration.md):
//!
//! ```text
//! cargo run -p rageval-core --example calibration_study -- [--labels 100] [--draws 200] \
//!     [--seed 20240601] RUN_DIR…
//! ```
//!
//! Each RUN_DIR is a `rageval judge-check` run directory: its `samples.jsonl` carries every
//! item's label (`label`: true/false, or for pairwise items `label_preferred`, the preferred
//! sample read as 1 and the other as 0) and its `results.jsonl` the judge's score of each
//! sample. Over the samples with a label and a score (the population; its mean label is
//! the truth), each draw labels a seeded random subset and calibrates the rest through
//! `calibration::matching::calibrate_run`, the path `rageval calibrate` takes. A population
//! no larger than `--labels` is drawn at half its size, and said so. A directory that does
//! not exist is skipped with a note (the shared sets are not everywhere).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::HashMap;
use std::path::Path;

use rageval_core::Outcome;
use rageval_core::calibration::Estimate;
use rageval_core::calibration::labels::{LabelRecord, LabelValue};
use rageval_core::calibration::matching::{MatchOptions, MetricScores, calibrate_run};
use rageval_core::stats::{DEFAULT_SEED, SplitMix64};
use serde::Deserialize;
use serde_json::Value;

type Error = Box<dyn std::error::Error>;

#[derive(Deserialize)]
struct ResultLine {
    sample_id: String,
    metric: String,
    #[serde(flatten)]
    outcome: Outcome,
}

/// One run's population: (sample id, label, judge score), and what was left out.
struct Population {
    metric: String,
    members: Vec<(String, f64, f64)>,
    unscored: usize,
}

fn read_population(dir: &Path) -> Result<Population, Error> {
    let mut labels: HashMap<String, f64> = HashMap::new();
    for line in std::fs::read_to_string(dir.join("samples.jsonl"))?.lines() {
        let row: Value = serde_json::from_str(line)?;
        let id = row["id"].as_str().ok_or("a sample without id")?.to_owned();
        let good = row["label"].as_bool().or(row["label_preferred"].as_bool());
        if let Some(good) = good {
            labels.insert(id, f64::from(u8::from(good)));
        }
    }
    let mut metric = String::new();
    let mut scores: HashMap<String, Option<f64>> = HashMap::new();
    for line in std::fs::read_to_string(dir.join("results.jsonl"))?.lines() {
        let record: ResultLine = serde_json::from_str(line)?;
        metric = record.metric;
        scores.insert(record.sample_id, record.outcome.value());
    }
    let mut members = Vec::new();
    let mut unscored = 0;
    for (id, label) in labels {
        match scores.get(&id).copied().flatten() {
            Some(score) => members.push((id, label, score)),
            None => unscored += 1,
        }
    }
    members.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Population {
        metric,
        members,
        unscored,
    })
}

#[derive(Default)]
struct Tally {
    draws: usize,
    covers: [usize; 3],
    width: [f64; 3],
    lambda: f64,
}

impl Tally {
    fn add(&mut self, estimates: [&Estimate; 3], truth: f64) {
        self.draws += 1;
        for (i, estimate) in estimates.iter().enumerate() {
            let interval = estimate.ci95;
            self.covers[i] += usize::from(interval.low <= truth && truth <= interval.high);
            self.width[i] += interval.high - interval.low;
        }
        self.lambda += estimates[0].lambda.unwrap_or(0.0);
    }

    fn coverage(&self, i: usize) -> f64 {
        self.covers[i] as f64 / self.draws as f64
    }

    fn mean_width(&self, i: usize) -> f64 {
        self.width[i] / self.draws as f64
    }
}

fn study(dir: &Path, labels: usize, draws: usize, seed: u64) -> Result<String, Error> {
    let population = read_population(dir)?;
    let size = population.members.len();
    let labels = if size > labels { labels } else { size / 2 };
    let truth = population.members.iter().map(|m| m.1).sum::<f64>() / size as f64;
    let run = [MetricScores {
        metric: population.metric.clone(),
        scores: population
            .members
            .iter()
            .map(|(id, _, score)| (id.clone(), Some(*score)))
            .collect(),
    }];
    let options = MatchOptions {
        unnamed_label_metrics: vec![population.metric.clone()],
    };
    let mut rng = SplitMix64::new(seed);
    let mut order: Vec<usize> = (0..size).collect();
    let mut tally = Tally::default();
    let mut judge_mean = 0.0;
    for _ in 0..draws {
        // A partial Fisher–Yates shuffle: the first `labels` positions are the draw.
        for i in 0..labels {
            let j = i + rng.below(size - i);
            order.swap(i, j);
        }
        let records: Vec<LabelRecord> = order[..labels]
            .iter()
            .enumerate()
            .map(|(line, &index)| {
                let (id, label, _) = &population.members[index];
                LabelRecord {
                    line: line + 1,
                    id: id.clone(),
                    metric: None,
                    written: LabelValue::Binary(*label == 1.0),
                    value: *label,
                }
            })
            .collect();
        let result = calibrate_run(&run, &records, &options)?;
        let calibration = result.metrics[0]
            .calibration
            .as_ref()
            .ok_or("a draw without calibration")?;
        judge_mean = calibration.judge_only.mean;
        tally.add(
            [
                &calibration.ppi_plus_plus,
                &calibration.labels_only,
                &calibration.judge_only,
            ],
            truth,
        );
    }
    let name = dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok(format!(
        "| {name} | `{}` | {size} ({} unscored) | {labels} | {truth:.3} | {judge_mean:.3} | \
         **{:.1}%** | {:.3} | {:.1}% | {:.3} | {:.2} | {:.1}% |",
        population.metric,
        population.unscored,
        100.0 * tally.coverage(0),
        tally.mean_width(0),
        100.0 * tally.coverage(1),
        tally.mean_width(1),
        tally.lambda / tally.draws as f64,
        100.0 * tally.coverage(2),
    ))
}

fn main() -> Result<(), Error> {
    let mut labels = 100;
    let mut draws = 200;
    let mut seed = DEFAULT_SEED;
    let mut dirs = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--labels" => labels = args.next().ok_or("--labels needs a number")?.parse()?,
            "--draws" => draws = args.next().ok_or("--draws needs a number")?.parse()?,
            "--seed" => seed = args.next().ok_or("--seed needs a number")?.parse()?,
            _ => dirs.push(arg),
        }
    }
    if dirs.is_empty() {
        return Err("give one or more judge-check run directories".into());
    }
    println!("{draws} draws of {labels} labels, seed {seed}; coverage of the mean of all labels");
    println!();
    println!(
        "| run | metric | population | labels | all-labels mean | judge mean | PPI++ covers | \
         PPI++ width | labels-only covers | labels-only width | mean λ̂ | judge-only covers |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for dir in dirs {
        let path = Path::new(&dir);
        if !path.join("results.jsonl").is_file() {
            eprintln!("skipped {dir}: not a judge-check run directory");
            continue;
        }
        println!("{}", study(path, labels, draws, seed)?);
    }
    Ok(())
}
