//! `eval`'s plan: what the run would ask of the judge — model calls, prompt and completion
//! tokens, cost — before any model call, per metric and for the whole run.
//!
//! Every sample is scored as in a real run (same metrics, task routing, prompt packs, top-k
//! cuts), sample by sample, but against the [`Planner`]'s local stand-in for the models, so
//! the prompts counted are the prompts a real run renders. Each judged metric is planned
//! alone (what it would cost by itself) and all together (the whole run, where metrics share
//! statements and verdicts, so it costs less than the sum of the rows). The dataset is
//! streamed; nothing is written and no cache is read.

use rageval_core::Sample;
use rageval_core::dataset::DatasetError;
use rageval_judge::{Judge, Models};
use rageval_metrics::{Judges, Metric};
use rageval_report::JudgeUsage;

use crate::engine::cells::Cells;
use crate::engine::error::{Result, RunError};
use crate::engine::judges::JudgeSetup;
use crate::engine::observe::{Event, Observer, Progress};
use crate::engine::plan::planner::Planner;
use crate::engine::plan::{EstimateRow, StageEstimate};
use crate::engine::score::{Plan, score_sample};
use crate::engine::session::usage_of;

/// One row of the estimate: a metric alone, or the whole run.
struct Planned {
    label: String,
    judge: Option<Judge<Models>>,
    judges: Judges,
    /// Model-free metrics ask nothing: their row is zero without planning.
    asks_judge: bool,
}

impl Planned {
    fn usage(&self) -> JudgeUsage {
        usage_of(self.judge.as_ref(), self.judges.tasks())
    }
}

/// What `eval`'s plan needs.
pub struct EvalPlan<'a> {
    pub metrics: &'a [Box<dyn Metric>],
    pub names: &'a [String],
    pub setup: &'a JudgeSetup,
    /// The planning models (`None` when no model is configured: nothing would be sent).
    pub planner: Option<&'a Planner>,
    pub top_k: Option<usize>,
    pub window: Option<usize>,
}

impl EvalPlan<'_> {
    /// Plans every sample: one row per metric and the whole run.
    pub fn run(
        &self,
        samples: impl Iterator<Item = std::result::Result<Sample, DatasetError>>,
        total: Option<u64>,
        observer: &dyn Observer,
    ) -> Result<StageEstimate> {
        let mut rows: Vec<Planned> = self
            .metrics
            .iter()
            .zip(self.names)
            .map(|(metric, name)| {
                let requirements = metric.requirements();
                self.planned(
                    name.clone(),
                    std::slice::from_ref(metric),
                    !requirements.tasks.is_empty() || requirements.embeddings,
                )
            })
            .collect();
        rows.push(self.planned("whole run".into(), self.metrics, true));
        let runtime = crate::engine::shell::runtime()?;
        observer.event(&Event::Stage {
            name: "planning",
            total,
        });
        let planned = runtime.block_on(self.plan_samples(samples, &rows, total, observer));
        observer.event(&Event::StageEnd);
        let count = planned?;
        let usages: Vec<JudgeUsage> = rows.iter().map(Planned::usage).collect();
        let templates = usages
            .last()
            .map(|whole| whole.templates.clone())
            .unwrap_or_default();
        Ok(StageEstimate {
            stage: "eval",
            units: count,
            unit_name: "samples",
            least: None,
            rows: rows
                .iter()
                .zip(&usages)
                .map(|(row, usage)| EstimateRow::of(row.label.clone(), usage))
                .collect(),
            templates,
            method: METHOD_NOTE,
        })
    }

    fn planned(&self, label: String, metrics: &[Box<dyn Metric>], asks_judge: bool) -> Planned {
        let judge = self.planner.map(Planner::judge);
        Planned {
            label,
            judges: self.setup.judges_over(judge.clone()).plan_for(metrics),
            judge,
            asks_judge,
        }
    }

    async fn plan_samples(
        &self,
        samples: impl Iterator<Item = std::result::Result<Sample, DatasetError>>,
        rows: &[Planned],
        total: Option<u64>,
        observer: &dyn Observer,
    ) -> Result<usize> {
        let done = Cells::new();
        let not_stopped = || false;
        let mut count = 0;
        for sample in samples {
            let sample = sample.map_err(RunError::from)?;
            if let Some(planner) = self.planner {
                planner.set_sample(&sample);
            }
            let whole = rows.len() - 1;
            for (index, row) in rows.iter().enumerate().filter(|(_, r)| r.asks_judge) {
                let range = if index == whole {
                    0..whole
                } else {
                    index..index + 1
                };
                let plan = Plan {
                    metrics: &self.metrics[range.clone()],
                    names: &self.names[range],
                    judges: &row.judges,
                    top_k: self.top_k,
                    window: self.window,
                    in_flight: 1,
                    done: &done,
                    stopped: &not_stopped,
                    hold_failed: &not_stopped,
                };
                score_sample(&plan, sample.clone()).await;
            }
            count += 1;
            let mut progress = Progress::of("planning", None);
            progress.done = count as u64;
            progress.total = total;
            observer.event(&Event::Progress(progress));
        }
        Ok(count)
    }
}

/// How the estimate is made.
pub const METHOD_NOTE: &str = "dry run: each metric is planned alone, and the whole run \
    with metrics sharing statements and verdicts (so it is less than the sum of the rows). \
    Prompts are rendered as a real run renders them and counted with tiktoken (the model's \
    encoding, o200k_base for models tiktoken does not know); statements not in the dataset \
    are estimated as one per sentence, completion tokens as a short reason per verdict. \
    Re-asks, retries and answers already in the cache are not foreseen.";
