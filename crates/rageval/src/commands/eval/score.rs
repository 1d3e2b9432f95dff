//! The scoring loop: samples stream from the reader, up to a bound are scored at once (each
//! sample's metrics concurrently, sharing one [`ScoringContext`]), and their results are
//! journaled in dataset order, one line per sample × metric, flushed after each sample.
//!
//! Memory holds the samples in flight, never the dataset. Cells already in the journal are
//! skipped; a sample with nothing left to score is not judged at all. A record the reader
//! rejects stops the run after the samples before it are journaled. Once the judge refuses a
//! call for its caps (`--max-calls`, `--max-cost`), no further sample starts, the samples in
//! flight finish, and their failed cells are held back: a cell refused its judge call is not
//! done, so it is left for the resumed run rather than journaled as failed.

use std::collections::HashSet;

use futures_util::StreamExt;
use futures_util::future::join_all;
use rageval_core::dataset::DatasetError;
use rageval_core::{Outcome, Sample};
use rageval_metrics::{Input, Judges, Metric, ScoringContext};
use rageval_report::{JournalWriter, ResultRecord};
use serde_json::json;

use super::budget::contexts_to_score;
use super::progress::Progress;

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
    pub done: &'a HashSet<(String, String)>,
    /// Whether a judge cap has refused a call (the run is stopping).
    pub stopped: &'a dyn Fn() -> bool,
}

/// What a finished scoring pass did.
#[derive(Debug, Default)]
pub struct Scored {
    /// Samples read.
    pub samples: usize,
    /// Cells written now.
    pub cells: usize,
    /// Of those, failed.
    pub failed: usize,
    /// Samples whose contexts were cut to fit (`--top-k` or the window).
    pub cut: usize,
    /// Failed cells not journaled because a judge cap had stopped the run.
    pub held_back: usize,
}

/// Scores every sample into `journal`, counting into `scored` as it goes (so the counts
/// survive when the scoring is abandoned on Ctrl-C) and calling `after_sample` once each
/// sample is journaled.
pub async fn score_all(
    plan: &Plan<'_>,
    samples: impl Iterator<Item = Result<Sample, DatasetError>>,
    journal: &mut JournalWriter,
    progress: &mut Progress,
    scored: &mut Scored,
    after_sample: &mut dyn FnMut(&Scored) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut results = futures_util::stream::iter(samples)
        .take_while(|_| std::future::ready(!(plan.stopped)()))
        .map(|item| async move {
            let sample = item?;
            Ok::<_, DatasetError>(score_sample(plan, sample).await)
        })
        .buffered(plan.in_flight.max(1));
    let mut seen = HashSet::new();
    while let Some(result) = results.next().await {
        let sample = result?;
        if !seen.insert(sample.id.clone()) {
            anyhow::bail!("two samples have the id `{}`", sample.id);
        }
        scored.samples += 1;
        scored.cut += usize::from(sample.cut);
        let stopped = (plan.stopped)();
        let mut failed = 0;
        for (metric, outcome) in sample.cells {
            let is_failed = matches!(outcome, Outcome::Failed { .. });
            if stopped && is_failed {
                scored.held_back += 1;
                continue;
            }
            failed += u64::from(is_failed);
            journal.append(&ResultRecord {
                sample_id: sample.id.clone(),
                metric,
                outcome,
            })?;
            scored.cells += 1;
        }
        journal.flush()?;
        scored.failed += failed as usize;
        progress.sample_done(failed);
        after_sample(scored)?;
    }
    Ok(())
}

/// One sample's new cells, in metric order.
pub struct SampleCells {
    pub id: String,
    pub cells: Vec<(String, Outcome)>,
    pub cut: bool,
}

/// Scores the cells of `sample` that `plan` has not done yet.
pub async fn score_sample(plan: &Plan<'_>, mut sample: Sample) -> SampleCells {
    let todo: Vec<usize> = (0..plan.metrics.len())
        .filter(|&i| {
            !plan
                .done
                .contains(&(sample.id.clone(), plan.names[i].clone()))
        })
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
