//! Labels matched to a run's samples by id, per metric, and calibrated: the layer between a
//! labels file and [`calibrate`].
//!
//! A label is about one metric: the one its line names, or else each metric the caller
//! lists in [`MatchOptions::unnamed_label_metrics`] (e.g. the metric a labelling session
//! was about). Nothing is dropped silently: labels whose id is not a sample of the run,
//! that name a metric the run does not have, that are about no metric, or that a label
//! naming its metric overrides are listed in [`RunCalibration`]; per metric, the labelled
//! samples whose judge cell is undefined or failed are listed (and left out of every
//! estimate, so all methods estimate the mean over the samples the judge scored), and a
//! metric without labels says so.
//!
//! Labels are on [0, 1] (binary 1/0, grades on their scale, see [`super::labels`]), so
//! the labelled mean lies in [0, 1]: the PPI++, PPI and labels-only estimates and
//! intervals are clipped to it (which can only bring them closer to the truth). The
//! judge-only mean is on the judge's scale and left as it is.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::labels::LabelRecord;
use super::{Calibration, CalibrationError, Estimate, calibrate, judge_only};

/// One metric's judge scores over the run's samples, in the run's order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetricScores {
    pub metric: String,
    /// Sample id and score; `None` where the cell is undefined or failed.
    pub scores: Vec<(String, Option<f64>)>,
}

/// How labels are assigned to metrics.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MatchOptions {
    /// The metrics a label without `metric` is about; empty: such labels are reported as
    /// unassigned.
    pub unnamed_label_metrics: Vec<String>,
}

/// A label line, named for a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelRef {
    pub line: usize,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
}

impl LabelRef {
    fn of(record: &LabelRecord) -> Self {
        Self {
            line: record.line,
            id: record.id.clone(),
            metric: record.metric.clone(),
        }
    }
}

/// One metric's estimates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricCalibration {
    pub metric: String,
    /// Labels matched to this metric's samples (scored or not).
    pub labels: usize,
    /// Labelled samples without a judge score (undefined, failed, or no result): left out.
    pub unscored_labelled: Vec<String>,
    /// Unlabelled samples without a judge score: left out.
    pub unscored_unlabelled: usize,
    /// PPI++ (the one to report), PPI, labels only and judge only; absent with fewer than
    /// 2 labelled, scored samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
    /// The judge's mean alone over the scored samples (also inside `calibration`); absent
    /// when no sample is scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_only: Option<Estimate>,
    /// Why there is no calibration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_calibrated: Option<String>,
}

/// Every metric of a run calibrated against one labels file, and every label not used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunCalibration {
    /// One entry per metric of the run, in the run's order, labelled or not.
    pub metrics: Vec<MetricCalibration>,
    /// Labels whose id is not a sample of the run.
    pub unknown_samples: Vec<LabelRef>,
    /// Labels about a metric the run does not have.
    pub unknown_metrics: Vec<LabelRef>,
    /// Labels without `metric` when no metric was given for them.
    pub unassigned: Vec<LabelRef>,
    /// Labels without `metric` for a sample whose label naming the metric wins.
    pub overridden: Vec<LabelRef>,
}

impl RunCalibration {
    /// The metrics no label is about.
    pub fn metrics_without_labels(&self) -> Vec<&str> {
        self.metrics
            .iter()
            .filter(|m| m.labels == 0)
            .map(|m| m.metric.as_str())
            .collect()
    }
}

/// Matches `labels` to the samples of `run` by id and calibrates every metric.
pub fn calibrate_run(
    run: &[MetricScores],
    labels: &[LabelRecord],
    options: &MatchOptions,
) -> Result<RunCalibration, CalibrationError> {
    let sample_ids: HashSet<&str> = run
        .iter()
        .flat_map(|m| m.scores.iter().map(|(id, _)| id.as_str()))
        .collect();
    let metric_names: HashSet<&str> = run.iter().map(|m| m.metric.as_str()).collect();
    let mut result = RunCalibration {
        metrics: Vec::new(),
        unknown_samples: Vec::new(),
        unknown_metrics: Vec::new(),
        unassigned: Vec::new(),
        overridden: Vec::new(),
    };
    // metric → sample id → the label used (a named label replaces an unnamed one).
    let mut assigned: HashMap<&str, HashMap<&str, &LabelRecord>> = HashMap::new();
    for record in labels {
        let targets: Vec<&str> = match &record.metric {
            Some(metric) => vec![metric.as_str()],
            None => options
                .unnamed_label_metrics
                .iter()
                .map(String::as_str)
                .collect(),
        };
        if targets.is_empty() {
            result.unassigned.push(LabelRef::of(record));
            continue;
        }
        if targets.iter().any(|m| !metric_names.contains(m)) {
            result.unknown_metrics.push(LabelRef::of(record));
        }
        if !sample_ids.contains(record.id.as_str()) {
            result.unknown_samples.push(LabelRef::of(record));
            continue;
        }
        for metric in targets.into_iter().filter(|m| metric_names.contains(m)) {
            let per_sample = assigned.entry(metric).or_default();
            match per_sample.get(record.id.as_str()) {
                Some(earlier) if earlier.metric.is_some() => {
                    result.overridden.push(LabelRef::of(record));
                }
                Some(earlier) => {
                    result.overridden.push(LabelRef::of(earlier));
                    per_sample.insert(&record.id, record);
                }
                None => {
                    per_sample.insert(&record.id, record);
                }
            }
        }
    }
    let no_labels = HashMap::new();
    for column in run {
        let labelled = assigned.get(column.metric.as_str()).unwrap_or(&no_labels);
        result.metrics.push(calibrate_metric(column, labelled)?);
    }
    Ok(result)
}

fn calibrate_metric(
    column: &MetricScores,
    labelled: &HashMap<&str, &LabelRecord>,
) -> Result<MetricCalibration, CalibrationError> {
    let (mut labels, mut judge_labelled, mut judge_unlabelled) = (vec![], vec![], vec![]);
    let mut unscored_labelled = Vec::new();
    let mut unscored_unlabelled = 0;
    let mut seen = HashSet::new();
    for (id, score) in &column.scores {
        if !seen.insert(id.as_str()) {
            continue;
        }
        match (labelled.get(id.as_str()), score) {
            (Some(label), Some(score)) => {
                labels.push(label.value);
                judge_labelled.push(*score);
            }
            (Some(_), None) => unscored_labelled.push(id.clone()),
            (None, Some(score)) => judge_unlabelled.push(*score),
            (None, None) => unscored_unlabelled += 1,
        }
    }
    // Labelled samples of the run that have no result for this metric at all.
    let mut missing: Vec<&str> = labelled
        .keys()
        .copied()
        .filter(|id| !seen.contains(id))
        .collect();
    missing.sort_unstable();
    unscored_labelled.extend(missing.into_iter().map(str::to_owned));

    let mut all_scores = judge_labelled.clone();
    all_scores.extend_from_slice(&judge_unlabelled);
    let judge_only = judge_only(&all_scores)?;
    let (calibration, not_calibrated) = if labelled.is_empty() {
        (None, Some("no labels for this metric".to_owned()))
    } else if labels.len() < 2 {
        let why = format!(
            "{} labelled sample(s) with a judge score ({} without): at least 2 are needed",
            labels.len(),
            unscored_labelled.len()
        );
        (None, Some(why))
    } else {
        let mut calibration = calibrate(&labels, &judge_labelled, &judge_unlabelled)?;
        for estimate in [
            &mut calibration.ppi_plus_plus,
            &mut calibration.ppi,
            &mut calibration.labels_only,
        ] {
            clip_to_unit(estimate);
        }
        (Some(calibration), None)
    };
    Ok(MetricCalibration {
        metric: column.metric.clone(),
        labels: labelled.len(),
        unscored_labelled,
        unscored_unlabelled,
        calibration,
        judge_only,
        not_calibrated,
    })
}

/// Clips an estimate of a mean of [0, 1] labels to [0, 1].
fn clip_to_unit(estimate: &mut Estimate) {
    estimate.mean = estimate.mean.clamp(0.0, 1.0);
    estimate.ci95.low = estimate.ci95.low.clamp(0.0, 1.0);
    estimate.ci95.high = estimate.ci95.high.clamp(0.0, 1.0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::labels::parse_labels;

    fn column(metric: &str, scores: &[(&str, Option<f64>)]) -> MetricScores {
        MetricScores {
            metric: metric.to_owned(),
            scores: scores
                .iter()
                .map(|(id, s)| ((*id).to_owned(), *s))
                .collect(),
        }
    }

    fn run() -> Vec<MetricScores> {
        vec![
            column(
                "faithfulness",
                &[
                    ("s1", Some(0.9)),
                    ("s2", Some(0.2)),
                    ("s3", None),
                    ("s4", Some(0.7)),
                    ("s5", Some(0.4)),
                    ("s6", None),
                ],
            ),
            column("answer_relevance", &[("s1", Some(1.0)), ("s2", Some(0.5))]),
        ]
    }

    #[test]
    fn every_label_is_used_or_reported() {
        let labels = parse_labels(
            "{\"id\": \"s1\", \"label\": true}\n\
             {\"id\": \"s2\", \"label\": false, \"metric\": \"faithfulness\"}\n\
             {\"id\": \"s2\", \"label\": true}\n\
             {\"id\": \"s3\", \"label\": true}\n\
             {\"id\": \"s4\", \"label\": true}\n\
             {\"id\": \"nope\", \"label\": true}\n\
             {\"id\": \"s1\", \"label\": true, \"metric\": \"context_recall\"}",
            "labels.jsonl",
            None,
        )
        .unwrap();
        let options = MatchOptions {
            unnamed_label_metrics: vec!["faithfulness".into()],
        };
        let result = calibrate_run(&run(), &labels, &options).unwrap();
        let lines = |refs: &[LabelRef]| refs.iter().map(|r| r.line).collect::<Vec<_>>();
        assert_eq!(lines(&result.unknown_samples), [6]);
        assert_eq!(lines(&result.unknown_metrics), [7]);
        // Line 3 (no metric) loses to line 2, which names the metric for the same sample.
        assert_eq!(lines(&result.overridden), [3]);
        assert!(result.unassigned.is_empty());

        let faithfulness = &result.metrics[0];
        assert_eq!(faithfulness.labels, 4);
        assert_eq!(faithfulness.unscored_labelled, ["s3"]);
        assert_eq!(faithfulness.unscored_unlabelled, 1);
        let calibration = faithfulness.calibration.as_ref().unwrap();
        // s1 (1, 0.9), s2 (0, 0.2), s4 (1, 0.7) labelled and scored; s5 (0.4) unlabelled.
        assert_eq!(calibration.labels_only.n_labels, 3);
        assert!((calibration.labels_only.mean - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(calibration.ppi_plus_plus.n_unlabelled, 1);
        assert_eq!(
            faithfulness.judge_only,
            Some(calibration.judge_only.clone())
        );
        for estimate in &calibration.all()[..3] {
            assert!(0.0 <= estimate.ci95.low && estimate.ci95.high <= 1.0);
        }

        let relevance = &result.metrics[1];
        assert_eq!(relevance.labels, 0);
        assert_eq!(relevance.calibration, None);
        assert_eq!(
            relevance.not_calibrated.as_deref(),
            Some("no labels for this metric")
        );
        assert!(relevance.judge_only.is_some());
        assert_eq!(result.metrics_without_labels(), ["answer_relevance"]);
    }

    #[test]
    fn unnamed_labels_without_a_metric_are_reported() {
        let labels = parse_labels("{\"id\": \"s1\", \"label\": true}", "l", None).unwrap();
        let result = calibrate_run(&run(), &labels, &MatchOptions::default()).unwrap();
        assert_eq!(result.unassigned.len(), 1);
        assert_eq!(result.metrics_without_labels().len(), 2);
    }

    #[test]
    fn too_few_scored_labels_say_why() {
        let labels = parse_labels(
            "{\"id\": \"s1\", \"label\": true}\n{\"id\": \"s6\", \"label\": false}",
            "l",
            None,
        )
        .unwrap();
        let options = MatchOptions {
            unnamed_label_metrics: vec!["faithfulness".into()],
        };
        let result = calibrate_run(&run(), &labels, &options).unwrap();
        let faithfulness = &result.metrics[0];
        assert_eq!(faithfulness.calibration, None);
        assert_eq!(faithfulness.unscored_labelled, ["s6"]);
        assert_eq!(
            faithfulness.not_calibrated.as_deref(),
            Some("1 labelled sample(s) with a judge score (1 without): at least 2 are needed")
        );
    }
}
