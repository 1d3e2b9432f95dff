//! When an `eval` run is not a success although it completed: more judged cells failed
//! than `--max-failed` allows ([`TooManyFailed`]); and the lines that name each metric's
//! unscored samples.

use rageval_metrics::Metric;
use rageval_report::Summary;

use crate::engine::judges::JudgeSetup;

/// Judged cells that failed beyond the share a run tolerates: the run is not a success.
#[derive(Debug, Clone, PartialEq)]
pub struct TooManyFailed {
    /// Failed judged cells.
    pub failed: usize,
    /// Judged cells.
    pub cells: usize,
    /// The share tolerated.
    pub limit: f64,
    /// The most frequent error.
    pub commonest: String,
}

impl TooManyFailed {
    /// What went wrong and what to do, said the same way by every front.
    pub fn message(&self) -> String {
        let what = if self.failed == self.cells {
            "every judged cell failed".to_owned()
        } else {
            format!(
                "{} of {} judged cells failed ({:.1}%, over the {}% that --max-failed allows)",
                self.failed,
                self.cells,
                100.0 * self.failed as f64 / self.cells as f64,
                trim_percent(self.limit)
            )
        };
        format!(
            "{what}, most often with: {}; the judge's answers are not usable enough to trust \
             the means (see summary.json's failed_errors). Fix the judge, then run the same \
             command with --retry-failed to score those cells again.",
            self.commonest
        )
    }
}

/// `10` for 0.1, `2.5` for 0.025.
fn trim_percent(share: f64) -> String {
    let percent = format!("{:.2}", share * 100.0);
    percent
        .trim_end_matches('0')
        .trim_end_matches('.')
        .to_owned()
}

/// When more cells of the judged metrics failed than the share `limit` allows (and always
/// when every one did): how many, and the most frequent error. Metrics whose tasks no
/// configured judge answers (asked for without the model they need, and announced as such)
/// fail by the run's configuration, not by the judge's answers, and are left out.
pub(super) fn judged_cells_failed(
    summary: &Summary,
    metrics: &[Box<dyn Metric>],
    setup: &JudgeSetup,
    limit: f64,
) -> Option<TooManyFailed> {
    let judged: Vec<String> = metrics
        .iter()
        .filter(|m| {
            let requirements = m.requirements();
            (!requirements.tasks.is_empty() || requirements.embeddings)
                && setup.judges.unmet(&requirements).is_none()
        })
        .map(|m| m.name())
        .collect();
    let mut cells = 0;
    let mut failed = 0;
    let mut errors: std::collections::BTreeMap<&String, usize> = Default::default();
    for name in &judged {
        let Some(metric) = summary.metrics.get(name) else {
            continue;
        };
        cells += metric.n;
        failed += metric.n_failed;
        for (error, count) in &metric.failed_errors {
            *errors.entry(error).or_default() += count;
        }
    }
    let over = failed == cells || failed as f64 > limit * cells as f64;
    if cells == 0 || failed == 0 || !over {
        return None;
    }
    let commonest = errors
        .into_iter()
        .max_by_key(|(_, count)| *count)
        .map_or_else(
            || "(no error recorded)".to_owned(),
            |(error, _)| error.clone(),
        );
    Some(TooManyFailed {
        failed,
        cells,
        limit,
        commonest,
    })
}

/// One line per metric that left samples unscored, with its most frequent reason.
pub fn unscored_notes(summary: &Summary) -> Vec<String> {
    let mut notes = Vec::new();
    for name in &summary.metric_order {
        let Some(metric) = summary.metrics.get(name) else {
            continue;
        };
        for (kind, count, reasons) in [
            ("undefined", metric.n_undefined, &metric.undefined_reasons),
            ("failed", metric.n_failed, &metric.failed_errors),
        ] {
            if let Some((reason, _)) = reasons.iter().max_by_key(|(_, n)| **n) {
                let more = if reasons.len() > 1 {
                    format!(" (and {} other reasons)", reasons.len() - 1)
                } else {
                    String::new()
                };
                notes.push(format!(
                    "note: {name} is {kind} for {count} samples: {reason}{more}"
                ));
            }
        }
    }
    notes
}
