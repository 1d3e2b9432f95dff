//! `calibrate` (and `eval --labels`): a finished run's judge scores and human labels on some
//! of its samples turned into a mean people can trust — prediction-powered inference
//! (PPI++, `rageval_core::calibration`) with its 95% interval, beside the labels-only and
//! judge-only means — written into `summary.json`'s `calibrated` block, the reports
//! rewritten. Labels are matched to samples by id; every label not used, and every metric
//! without labels, is reported.

use std::path::{Path, PathBuf};

use rageval_core::calibration::labels::{GradeScale, read_labels};
use rageval_core::calibration::matching::{
    MatchOptions, MetricScores, RunCalibration, calibrate_run,
};
use rageval_report::{Calibrated, RunData, SUMMARY_FILE, Summary};

use crate::engine::error::{Result, RunError};
use crate::engine::observe::Observer;

/// What `calibrate` is asked to do.
#[derive(Debug, Clone)]
pub struct CalibrateOptions {
    /// The labels file (judge-check's binary or graded lines, optionally with `metric`).
    pub labels: PathBuf,
    /// The scale of graded labels (`1..5`), normalised to [0, 1].
    pub scale: Option<GradeScale>,
    /// The metric of labels that name none.
    pub metric: Option<String>,
}

/// Calibrates the finished run in `run_dir`: writes the `calibrated` block into its
/// `summary.json` (whole or not at all; not at all when no metric was calibrated) and
/// returns what was matched and estimated.
pub fn calibrate(
    run_dir: &Path,
    options: &CalibrateOptions,
    observer: &dyn Observer,
) -> Result<(Summary, RunCalibration)> {
    let run = RunData::load(run_dir)?;
    let outcomes = run.outcomes();
    let columns: Vec<MetricScores> = run
        .metric_names()
        .into_iter()
        .map(|metric| MetricScores {
            scores: run
                .sample_ids()
                .into_iter()
                .map(|id| {
                    let score = outcomes
                        .get(&(id, metric.as_str()))
                        .and_then(|outcome| outcome.value());
                    (id.to_owned(), score)
                })
                .collect(),
            metric,
        })
        .collect();
    let labels = read_labels(&options.labels, options.scale)
        .map_err(|error| RunError::Labels(error.to_string()))?;
    let matched = calibrate_run(
        &columns,
        &labels,
        &MatchOptions {
            unnamed_label_metrics: options.metric.iter().cloned().collect(),
        },
    )
    .map_err(|error| RunError::Labels(format!("{}: {error}", options.labels.display())))?;
    for note in notes(&matched, &options.labels) {
        observer.note(note);
    }
    let mut summary = run.summary.clone();
    summary.calibrated = matched
        .metrics
        .iter()
        .filter_map(|metric| {
            let calibration = metric.calibration.as_ref()?;
            Some((
                metric.metric.clone(),
                Calibrated {
                    estimate: calibration.ppi_plus_plus.clone(),
                    labels_only: calibration.labels_only.clone(),
                    judge_only: calibration.judge_only.clone(),
                    labels: options.labels.display().to_string(),
                },
            ))
        })
        .collect();
    // Nothing calibrated leaves the summary as it was: an earlier calibration is not lost
    // to a labels file that matched nothing.
    if !summary.calibrated.is_empty() {
        write_summary(run_dir, &summary)?;
    }
    Ok((summary, matched))
}

/// Every label not used and every metric not calibrated, in words.
fn notes(matched: &RunCalibration, labels: &Path) -> Vec<String> {
    let file = labels.display();
    let mut notes = Vec::new();
    let lines = |refs: &[rageval_core::calibration::matching::LabelRef]| {
        let shown: Vec<String> = refs
            .iter()
            .take(5)
            .map(|r| format!("line {} (id {})", r.line, r.id))
            .collect();
        let more = refs.len().saturating_sub(shown.len());
        let mut text = shown.join(", ");
        if more > 0 {
            text.push_str(&format!(" and {more} more"));
        }
        text
    };
    if !matched.unknown_samples.is_empty() {
        notes.push(format!(
            "warning: {} labels in {file} are for samples the run does not have: {}",
            matched.unknown_samples.len(),
            lines(&matched.unknown_samples)
        ));
    }
    if !matched.unknown_metrics.is_empty() {
        notes.push(format!(
            "warning: {} labels in {file} name a metric the run does not have: {}",
            matched.unknown_metrics.len(),
            lines(&matched.unknown_metrics)
        ));
    }
    if !matched.unassigned.is_empty() {
        notes.push(format!(
            "warning: {} labels in {file} name no metric (pass --label-metric METRIC to say which): {}",
            matched.unassigned.len(),
            lines(&matched.unassigned)
        ));
    }
    if !matched.overridden.is_empty() {
        notes.push(format!(
            "note: {} labels without a metric were set aside for a label of the same sample \
             that names it: {}",
            matched.overridden.len(),
            lines(&matched.overridden)
        ));
    }
    let without = matched.metrics_without_labels();
    if !without.is_empty() {
        notes.push(format!("note: no labels for {}", without.join(", ")));
    }
    for metric in &matched.metrics {
        if let (Some(why), true) = (&metric.not_calibrated, metric.labels > 0) {
            notes.push(format!("note: {} is not calibrated: {why}", metric.metric));
        }
        if !metric.unscored_labelled.is_empty() {
            notes.push(format!(
                "note: {}: {} labelled samples have no judge score (undefined or failed) and \
                 are left out",
                metric.metric,
                metric.unscored_labelled.len()
            ));
        }
    }
    notes
}

/// `summary.json`, whole or not at all.
fn write_summary(run_dir: &Path, summary: &Summary) -> Result<()> {
    let path = run_dir.join(SUMMARY_FILE);
    let mut bytes = serde_json::to_vec_pretty(summary).map_err(RunError::encode("the summary"))?;
    bytes.push(b'\n');
    crate::engine::files::write_atomically(&path, bytes)
}

/// The calibrated means as a text table for a terminal: judge-only, labels-only and PPI++
/// with their intervals, the labels used and λ.
pub fn render(summary: &Summary) -> String {
    let lines: Vec<Vec<String>> =
        std::iter::once(rageval_report::CALIBRATED_COLUMNS.map(String::from))
            .chain(rageval_report::calibrated_rows(summary))
            .map(Vec::from)
            .collect();
    rageval_report::aligned(&lines)
}
