//! `--dry-run` of a batch run: the stages it would need, and per stage the requests and
//! batch jobs. Each sample is scored as the dry run scores it (the planning models,
//! [`crate::engine::plan::Planner`]) but in batch mode: a pass, its pending requests counted as
//! the next stage and then answered by the planning model, another pass, until nothing is
//! pending. Stage *k* of the run gathers the *k*-th requests of every sample. Identical
//! requests of different samples are counted for each (a real run sends one line for
//! them), and re-asks are not foreseen (each adds a stage in a real run).

use rageval_core::Sample;
use rageval_core::dataset::DatasetError;
use rageval_judge::BatchStore;
use rageval_judge::batch::{BatchItem, BatchLimits, ItemFailure, ItemOutcome};
use rageval_metrics::Metric;

use crate::engine::cells::Cells;
use crate::engine::error::{Result, RunError};
use crate::engine::judges::JudgeSetup;
use crate::engine::observe::{Event, Observer, Progress};
use crate::engine::plan::Planner;
use crate::engine::score::{Plan, score_sample};

/// Most stages one sample may take before the plan gives up on it (a loop would be a bug).
const MAX_STAGES: usize = 64;

/// One stage of a batch run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlannedStage {
    /// Requests.
    pub requests: u64,
    /// Bytes of their request lines.
    pub bytes: u64,
}

impl PlannedStage {
    /// Jobs the stage needs: one per request file, files cut at `limits`.
    pub fn jobs(&self, limits: &BatchLimits) -> u64 {
        let by_count = self
            .requests
            .div_ceil(limits.max_requests_per_file.max(1) as u64);
        let by_size = self.bytes.div_ceil(limits.max_bytes_per_file.max(1));
        by_count.max(by_size)
    }
}

/// The stages of a batch run.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchPlan {
    pub stages: Vec<PlannedStage>,
    pub limits: BatchLimits,
}

impl BatchPlan {
    /// The plan as a text table: per stage, requests, megabytes and jobs, then the total.
    pub fn render(&self) -> String {
        let limits = &self.limits;
        let mut text = format!(
            "\nbatch (one job per request file of at most {} requests and {} MB)\n",
            limits.max_requests_per_file,
            limits.max_bytes_per_file / 1_000_000
        );
        let mut lines = vec![
            ["stage", "requests", "MB", "batch jobs"]
                .map(String::from)
                .to_vec(),
        ];
        let mut total = PlannedStage::default();
        let mut jobs = 0;
        for (index, stage) in self.stages.iter().enumerate() {
            total.requests += stage.requests;
            total.bytes += stage.bytes;
            jobs += stage.jobs(limits);
            lines.push(row(&(index + 1).to_string(), stage, stage.jobs(limits)));
        }
        lines.push(row("total", &total, jobs));
        text.push_str(&rageval_report::aligned(&lines));
        text
    }
}

fn row(label: &str, stage: &PlannedStage, jobs: u64) -> Vec<String> {
    vec![
        label.to_owned(),
        stage.requests.to_string(),
        format!("{:.1}", stage.bytes as f64 / 1e6),
        jobs.to_string(),
    ]
}

/// What the batch plan needs.
pub struct BatchPlanning<'a> {
    pub metrics: &'a [Box<dyn Metric>],
    pub names: &'a [String],
    pub setup: &'a JudgeSetup,
    pub planner: &'a Planner,
    pub top_k: Option<usize>,
    pub window: Option<usize>,
    pub limits: BatchLimits,
}

impl BatchPlanning<'_> {
    /// Plans every sample's stages.
    pub fn run(
        &self,
        samples: impl Iterator<Item = std::result::Result<Sample, DatasetError>>,
        total: Option<u64>,
        observer: &dyn Observer,
    ) -> Result<BatchPlan> {
        let runtime = crate::engine::shell::runtime()?;
        observer.event(&Event::Stage {
            name: "planning batch stages",
            total,
        });
        let mut stages = Vec::new();
        let planned = runtime.block_on(async {
            for (count, sample) in samples.enumerate() {
                let sample = sample.map_err(RunError::from)?;
                self.plan_sample(sample, &mut stages).await?;
                let mut progress = Progress::of("planning batch stages", None);
                progress.done = count as u64 + 1;
                progress.total = total;
                observer.event(&Event::Progress(progress));
            }
            Ok::<(), RunError>(())
        });
        observer.event(&Event::StageEnd);
        planned?;
        Ok(BatchPlan {
            stages,
            limits: self.limits,
        })
    }

    /// Adds the requests of `sample`'s stages to `stages`.
    async fn plan_sample(&self, sample: Sample, stages: &mut Vec<PlannedStage>) -> Result<()> {
        self.planner.set_sample(&sample);
        let store = BatchStore::new();
        let judges = self
            .setup
            .judges_over(Some(self.planner.batch_judge(&store)))
            .plan_for(self.metrics);
        let done = Cells::new();
        let never = || false;
        let plan = Plan {
            metrics: self.metrics,
            names: self.names,
            judges: &judges,
            top_k: self.top_k,
            window: self.window,
            in_flight: 1,
            done: &done,
            stopped: &never,
            hold_failed: &never,
        };
        for depth in 0..MAX_STAGES {
            score_sample(&plan, sample.clone()).await;
            let pending = store.take_pending();
            if pending.is_empty() {
                return Ok(());
            }
            if stages.len() == depth {
                stages.push(PlannedStage::default());
            }
            let stage = &mut stages[depth];
            stage.requests += pending.len() as u64;
            for request in &pending {
                let line = serde_json::to_vec(request).map_err(RunError::encode("a request"))?;
                stage.bytes += line.len() as u64 + 1;
            }
            // Failed items send the next pass's calls to the planning model at once.
            store.load(pending.into_iter().map(|request| BatchItem {
                custom_id: request.custom_id,
                outcome: ItemOutcome::Failed(ItemFailure {
                    status: None,
                    code: None,
                    message: "answered by the dry run".into(),
                }),
            }));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_follow_the_tighter_limit() {
        let limits = BatchLimits {
            max_requests_per_file: 100,
            max_bytes_per_file: 1_000,
        };
        let stage = |requests, bytes| PlannedStage { requests, bytes };
        assert_eq!(stage(100, 900).jobs(&limits), 1);
        assert_eq!(stage(101, 900).jobs(&limits), 2);
        assert_eq!(stage(10, 2_500).jobs(&limits), 3);
        assert_eq!(stage(0, 0).jobs(&limits), 0);
        let plan = BatchPlan {
            stages: vec![stage(150, 900), stage(40, 200)],
            limits,
        };
        let text = plan.render();
        assert!(text.contains("total       190  0.0           3"), "{text}");
    }
}
