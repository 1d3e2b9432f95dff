//! Scoring samples with metrics: samples stream from the reader, up to a bound are scored at
//! once (each sample's metrics concurrently, sharing one [`ScoringContext`]), and their
//! results are journaled in dataset order, one line per sample × metric (the loop is
//! [`units::in_order`]). `eval` and `judge-check` (each of its repeats) score this way.
//!
//! Cells already in the journal are skipped; a sample with nothing left to score is not
//! judged at all. A record the reader rejects stops the run after the samples before it are
//! journaled. Once the run must stop (Ctrl-C, a judge cap, the judge halted as unavailable),
//! no further sample starts, the samples in flight finish, and their failed cells are held
//! back: a cell refused its judge call is not done, so it is left for the resumed run rather
//! than journaled as failed. In batch mode ([`crate::engine::batch`]) a pass holds failed cells
//! back the same way while the pass has requests waiting for a batch answer
//! ([`Plan::hold_failed`]): a cell whose call is pending is not done either.

use std::collections::{BTreeSet, HashSet};

use futures_util::future::join_all;
use rageval_core::dataset::DatasetError;
use rageval_core::{Outcome, Sample};
use rageval_metrics::{Input, Judges, Metric, ScoringContext};
use rageval_report::ResultRecord;
use rageval_tasks::TaskKind;
use serde_json::json;

use crate::engine::budget::contexts_to_score;
use crate::engine::cells::{Cells, SampleKey};
use crate::engine::error::{Result, RunError};
use crate::engine::units;

/// What scoring needs besides the samples.
pub struct Plan<'a> {
    pub metrics: &'a [Box<dyn Metric>],
    pub names: &'a [String],
    pub judges: &'a Judges,
    /// `--top-k`.
    pub top_k: Option<usize>,
    /// The judge's context window, when a chat model reads the prompts.
    pub window: Option<usize>,
    /// Samples scored at once.
    pub in_flight: usize,
    /// Cells already done.
    pub done: &'a Cells,
    /// Whether the run must stop (Ctrl-C, a cap, the judge halted).
    pub stopped: &'a (dyn Fn() -> bool + Sync),
    /// Whether failed cells are held back now although the run goes on: a batch pass whose
    /// calls may be waiting for a batch answer (always false outside batch mode).
    pub hold_failed: &'a (dyn Fn() -> bool + Sync),
}

/// What a scoring pass did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Scored {
    /// Samples read.
    pub samples: usize,
    /// Cells written now.
    pub cells: usize,
    /// Of those, failed.
    pub failed: usize,
    /// Samples whose contexts were cut to fit (`--top-k` or the window).
    pub cut: usize,
    /// Failed cells not journaled because the run was stopping.
    pub held_back: usize,
    /// Failed cells not journaled because their pass had calls waiting for a batch answer
    /// (scored again in the next pass).
    pub waiting: usize,
}

/// Scores every sample, handing each one's cells to `journal` in dataset order (one call
/// per sample, after which the caller flushes) and counting into `scored` as it goes, so the
/// counts survive when the scoring is abandoned on Ctrl-C. Once the run is stopping, failed
/// cells are held back: a call refused for a stop is no failure. Returns the keys of the
/// samples read, for the summary to refuse journal lines of any other.
pub async fn score_all(
    plan: &Plan<'_>,
    samples: impl Iterator<Item = std::result::Result<Sample, DatasetError>>,
    scored: &mut Scored,
    journal: &mut dyn FnMut(&[ResultRecord], &Scored) -> Result<()>,
) -> Result<HashSet<SampleKey>> {
    let mut seen: HashSet<SampleKey> = HashSet::new();
    units::in_order(
        samples.map(|sample| sample.map_err(RunError::from)),
        plan.in_flight,
        plan.stopped,
        |sample| score_sample(plan, sample),
        |sample, stopped| {
            if !seen.insert(SampleKey::of(&sample.id)) {
                return Err(RunError::DuplicateId(sample.id));
            }
            scored.samples += 1;
            let holding = !stopped && (plan.hold_failed)();
            let mut records = Vec::with_capacity(sample.cells.len());
            for (metric, outcome) in sample.cells {
                let is_failed = matches!(outcome, Outcome::Failed { .. });
                if stopped && is_failed {
                    scored.held_back += 1;
                    continue;
                }
                if holding && is_failed {
                    scored.waiting += 1;
                    continue;
                }
                scored.failed += usize::from(is_failed);
                records.push(ResultRecord {
                    sample_id: sample.id.clone(),
                    metric,
                    outcome,
                });
            }
            scored.cells += records.len();
            if !records.is_empty() {
                scored.cut += usize::from(sample.cut);
            }
            journal(&records, scored)
        },
    )
    .await?;
    Ok(seen)
}

/// One sample's new cells, in metric order.
pub struct SampleCells {
    pub id: String,
    pub cells: Vec<(String, Outcome)>,
    pub cut: bool,
}

/// Scores the cells of `sample` that `plan` has not done yet.
pub async fn score_sample(plan: &Plan<'_>, mut sample: Sample) -> SampleCells {
    let key = (!plan.done.is_empty()).then(|| SampleKey::of(&sample.id));
    let todo: Vec<usize> = (0..plan.metrics.len())
        .filter(|&i| key.is_none_or(|key| !plan.done.contains_key(key, &plan.names[i])))
        .collect();
    if todo.is_empty() {
        return SampleCells {
            id: sample.id,
            cells: Vec::new(),
            cut: false,
        };
    }
    let retrieved = sample.contexts.len();
    let keep = contexts_to_score(&sample, plan.top_k, plan.window);
    sample.contexts.truncate(keep);
    let scoring = ScoringContext::new(plan.judges, &sample);
    let outcomes = join_all(
        todo.iter()
            .map(|&i| plan.metrics[i].score(&sample, &scoring)),
    )
    .await;
    let cut = keep < retrieved;
    let cells = todo
        .iter()
        .zip(outcomes)
        .map(|(&i, mut outcome)| {
            let reads_contexts = plan.metrics[i].info().inputs.contains(&Input::Contexts);
            if let (true, Outcome::Score { evidence, .. }) = (cut && reads_contexts, &mut outcome) {
                evidence.details.insert("top_k".into(), json!(keep));
                evidence
                    .details
                    .insert("contexts_retrieved".into(), json!(retrieved));
            }
            (plan.names[i].clone(), outcome)
        })
        .collect();
    SampleCells {
        id: sample.id,
        cells,
        cut,
    }
}

/// The tasks `metrics` may ask the judge.
pub(crate) fn tasks_of(metrics: &[Box<dyn Metric>]) -> Vec<TaskKind> {
    let mut tasks = BTreeSet::new();
    for metric in metrics {
        tasks.extend(metric.requirements().tasks.iter().copied());
    }
    tasks.into_iter().collect()
}
