//! `rageval eval --dry-run`: what the run would ask of the judge — model calls, prompt and
//! completion tokens, cost — before any model call, per metric and for the whole run.
//!
//! Every sample is scored as in a real run (same metrics, task routing, prompt packs, top-k
//! cuts), sample by sample, but against the [`Planner`]'s local stand-in for the models, so
//! the prompts counted are the prompts a real run renders. Each judged metric is planned
//! alone (what it would cost by itself) and all together (the whole run, where metrics share
//! statements and verdicts, so it costs less than the sum of the rows). The dataset is
//! streamed; nothing is written and no cache is read.

use std::io::Write;

use anyhow::Context as _;
use rageval_core::Sample;
use rageval_core::dataset::DatasetError;
use rageval_judge::{Judge, Models};
use rageval_metrics::{Judges, Metric};
use rageval_report::{CallTally, JudgeUsage};

use super::accounting::usage_of;
use super::judge::JudgeSetup;
use super::planner::Planner;
use super::progress::Progress;
use super::score::{Plan, score_sample};

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

/// What a dry run needs from `eval`.
pub struct DryRun<'a> {
    pub metrics: &'a [Box<dyn Metric>],
    pub names: &'a [String],
    pub setup: &'a JudgeSetup,
    /// The planning models (`None` when no model is configured: nothing would be sent).
    pub planner: Option<&'a Planner>,
    pub top_k: Option<usize>,
    pub window: Option<usize>,
}

impl DryRun<'_> {
    /// Plans every sample and prints the estimate to `out`.
    pub fn run(
        &self,
        samples: impl Iterator<Item = Result<Sample, DatasetError>>,
        total: Option<u64>,
        out: &mut dyn Write,
    ) -> anyhow::Result<()> {
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
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        let mut progress = Progress::new(total);
        let planned = runtime.block_on(self.plan_samples(samples, &rows, &mut progress));
        progress.finish();
        let count = planned?;
        out.write_all(self.table(count, &rows).as_bytes())
            .context("cannot write to stdout")
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
        samples: impl Iterator<Item = Result<Sample, DatasetError>>,
        rows: &[Planned],
        progress: &mut Progress,
    ) -> anyhow::Result<usize> {
        let done = Default::default();
        let not_stopped = || false;
        let mut count = 0;
        for sample in samples {
            let sample = sample?;
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
                };
                score_sample(&plan, sample.clone()).await;
            }
            count += 1;
            progress.sample_done(0);
        }
        Ok(count)
    }

    fn table(&self, samples: usize, rows: &[Planned]) -> String {
        let mut text = format!(
            "dry run: {samples} samples × {} metrics; no request was sent and nothing written\n",
            self.metrics.len()
        );
        for model in self.setup.models() {
            let price = match model.price {
                Some(p) => format!(
                    "${} / ${} per million prompt / completion tokens",
                    p.prompt_per_million, p.completion_per_million
                ),
                None => "no price known, so no cost is estimated".into(),
            };
            text.push_str(&format!("{} model {}: {price}\n", model.role, model.model));
        }
        let header = [
            "metric",
            "model calls",
            "prompt tokens",
            "completion tokens",
            "cost (USD)",
            "heuristic answers",
        ];
        let mut lines = vec![header.map(String::from).to_vec()];
        let mut whole = JudgeUsage::default();
        for row in rows {
            let usage = row.usage();
            lines.push(cells(
                row.label.clone(),
                &usage.total,
                usage.heuristic_calls(),
            ));
            whole = usage;
        }
        text.push_str(&aligned(&lines));
        if !whole.templates.is_empty() {
            text.push_str("\nthe whole run by prompt template:\n");
            let mut header = header.map(String::from).to_vec();
            header[0] = "prompt template".into();
            header.pop();
            let mut lines = vec![header];
            for (name, tally) in &whole.templates {
                let mut line = cells(name.clone(), tally, 0);
                line.pop();
                lines.push(line);
            }
            text.push_str(&aligned(&lines));
        }
        text
    }
}

/// One row of the estimate: label, calls, tokens, cost (`—` without a price), heuristic
/// answers.
fn cells(label: String, t: &CallTally, heuristic: u64) -> Vec<String> {
    vec![
        label,
        t.calls.to_string(),
        t.prompt_tokens.to_string(),
        t.completion_tokens.to_string(),
        t.cost_usd
            .map_or_else(|| "—".into(), |usd| format!("{usd:.6}")),
        heuristic.to_string(),
    ]
}

/// `lines` as a text table: the first column left-aligned, the others right-aligned.
fn aligned(lines: &[Vec<String>]) -> String {
    let mut text = String::new();
    let columns = lines.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for line in lines {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, &width))| {
                if c == 0 {
                    format!("{cell:<width$}")
                } else {
                    format!("{cell:>width$}")
                }
            })
            .collect();
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text
}

/// How the estimate is made, for stderr.
pub const METHOD_NOTE: &str = "dry run: each metric is planned alone, and the whole run \
    with metrics sharing statements and verdicts (so it is less than the sum of the rows). \
    Prompts are rendered as a real run renders them and counted with tiktoken (the model's \
    encoding, o200k_base for models tiktoken does not know); statements not in the dataset \
    are estimated as one per sentence, completion tokens as a short reason per verdict. \
    Re-asks, retries and answers already in the cache are not foreseen.";
