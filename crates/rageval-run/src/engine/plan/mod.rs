//! `--dry-run`: what a command would ask of the judge — model calls, prompt and completion
//! tokens, cost — per stage and in total, before any request is sent or any file written.
//!
//! Every stage runs its real code (metrics, rankings, reference rounds) against the
//! [`Planner`]'s local stand-in for the models, so the prompts counted are the prompts a
//! real run renders; only the answers are made up ([`planner`] says how).
//!
//! - [`planner`]: the stand-in models;
//!
//! Each command's own plan lives beside it (`commands::eval::plan`, `commands::rank::plan`,
//! `commands::reference::plan`, `commands::pipeline::plan`, `commands::testset::plan`).

pub mod planner;

use rageval_report::aligned;

use std::collections::BTreeMap;

use rageval_report::{CallTally, JudgeModel, JudgeUsage};

use rageval_tasks::TaskJudge;

use crate::engine::error::Result;
use crate::engine::judges::{self, Env, JudgeOptions, JudgeSetup};
use crate::engine::observe::{Event, Observer, Progress};

pub use planner::Planner;

/// The judges of `options` with their models replaced by the [`Planner`]'s local stand-ins:
/// no request, no model loaded, no cache file. The planner is `None` when no model is
/// configured (nothing would be sent).
pub fn planning_setup(
    options: &JudgeOptions,
    env: Env<'_>,
) -> Result<(JudgeSetup, Option<Planner>)> {
    let mut planner = None;
    let mut setup = judges::resolve_with(options, env, |settings, local| {
        let heuristic = rageval_tasks::Heuristic::lexical();
        let made = match local {
            Some(models) => Planner::over(models, settings, heuristic),
            None => Planner::new(settings, heuristic)?,
        };
        let judge = made.judge();
        planner = Some(made);
        Ok(judge)
    })?;
    // The checker is counted, not run: on CPU it takes seconds per sample. A cascade is
    // then planned with every claim escalated, the most it can send ([`cascade_note`]).
    setup.plan_checker();
    Ok((setup, planner))
}

/// The task router a planned stage asks: `setup`'s routing over a fresh planning judge, so
/// that this stage's books do not mix with another stage's.
pub(crate) fn planning_router(setup: &JudgeSetup, planner: Option<&Planner>) -> Result<TaskJudge> {
    let judges = setup.judges_over(planner.map(Planner::judge));
    judges.tasks().cloned().ok_or_else(judges::no_judge)
}

/// Says that `done` of a planned stage's `total` units are planned.
pub(crate) fn planned(observer: &dyn Observer, stage: &'static str, done: usize, total: usize) {
    let mut progress = Progress::of(stage, None);
    progress.done = done as u64;
    progress.total = Some(total as u64);
    observer.event(&Event::Progress(progress));
}

/// What a dry run of a cascade says of its estimate. The checker is not run: the claims it
/// scores are the chat model's split of the answers, which a dry run only estimates, and a
/// real checker on CPU takes seconds per sample where a dry run takes none.
pub fn cascade_note(band: rageval_tasks::EscalationBand) -> String {
    format!(
        "cascade: an upper bound — the estimate has the chat judge answer every claim's \
         support verdicts, as a cascade asks them (its own call, never joined with the \
         context checks); in the run the checker scores every claim (the checker claims \
         column, on this machine's CPU, no cost) and settles those it scores outside \
         {band}, so fewer claims, and fewer calls where a sample has none inside, reach the \
         chat judge"
    )
}

/// Statements a checker model would score in `usage`: those it settles and those a cascade
/// escalates (it scores both).
fn checker_claims(usage: &JudgeUsage) -> u64 {
    let (by_checker, by_chat) = usage.cascade_claims();
    by_checker + by_chat
}

/// The rows of a stage planned by one judge: one per task asked, then the total.
pub(crate) fn rows_by_task(usage: &JudgeUsage) -> Vec<EstimateRow> {
    let mut rows: BTreeMap<String, EstimateRow> = BTreeMap::new();
    for (template, tally) in &usage.templates {
        let task = template
            .split(['.', '@'])
            .next()
            .unwrap_or(template)
            .to_string();
        let row = rows.entry(task.clone()).or_insert_with(|| EstimateRow {
            label: task,
            tally: CallTally {
                cost_usd: Some(0.0),
                ..CallTally::default()
            },
            heuristic: 0,
            checker_claims: 0,
        });
        row.tally.add(tally);
    }
    for (task, tally) in &usage.tasks {
        if tally.heuristic > 0 {
            rows.entry(task.clone())
                .or_insert_with(|| EstimateRow {
                    label: task.clone(),
                    tally: CallTally {
                        cost_usd: Some(0.0),
                        ..CallTally::default()
                    },
                    heuristic: 0,
                    checker_claims: 0,
                })
                .heuristic += tally.heuristic;
        }
    }
    let mut rows: Vec<EstimateRow> = rows.into_values().collect();
    rows.push(EstimateRow::of("total", usage));
    rows
}

/// One row of an estimate: a metric alone, a kind of call, or a stage's total.
#[derive(Debug, Clone, PartialEq)]
pub struct EstimateRow {
    pub label: String,
    pub tally: CallTally,
    /// Answers the heuristic judge would give (free).
    pub heuristic: u64,
    /// Statements a checker model would score (on this machine's CPU, free).
    pub checker_claims: u64,
}

impl EstimateRow {
    /// A row from a judge's usage.
    pub fn of(label: impl Into<String>, usage: &JudgeUsage) -> Self {
        EstimateRow {
            label: label.into(),
            tally: usage.total.clone(),
            heuristic: usage.heuristic_calls(),
            checker_claims: checker_claims(usage),
        }
    }
}

/// The estimate of one stage (`eval`, `rank`, `reference`).
#[derive(Debug, Clone, PartialEq)]
pub struct StageEstimate {
    pub stage: &'static str,
    /// Units planned (samples, questions).
    pub units: usize,
    /// What a unit is, in the plural.
    pub unit_name: &'static str,
    /// The rows; the last is the stage's total.
    pub rows: Vec<EstimateRow>,
    /// The stage's total by prompt template.
    pub templates: BTreeMap<String, CallTally>,
    /// How the estimate is made, for stderr.
    pub method: &'static str,
    /// When the stage's calls depend on the judge's answers: the fewest it can make (rank:
    /// grading alone, when no context is graded useful); `rows` are then the most.
    pub least: Option<EstimateRow>,
}

impl StageEstimate {
    /// The stage's total row.
    pub fn total(&self) -> Option<&EstimateRow> {
        self.rows.last()
    }
}

/// A command's estimate: its stages and the models' prices.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub models: Vec<JudgeModel>,
    pub stages: Vec<StageEstimate>,
    /// With `--batch`: the batch stages and jobs the run would need.
    pub batch: Option<crate::engine::batch::plan::BatchPlan>,
    /// What the figures mean beyond the tables (a cascade's upper bound).
    pub notes: Vec<String>,
    /// The model calls are the most the run can make (a cascade: the checker keeps some
    /// claims from the chat model); the table says so.
    pub upper_bound: bool,
}

impl Estimate {
    pub fn new(models: Vec<JudgeModel>, stages: Vec<StageEstimate>) -> Self {
        Estimate {
            models,
            stages,
            batch: None,
            notes: Vec::new(),
            upper_bound: false,
        }
    }

    /// The total over every stage.
    pub fn total(&self) -> EstimateRow {
        let mut total = EstimateRow {
            label: "total".into(),
            tally: CallTally {
                cost_usd: Some(0.0),
                ..CallTally::default()
            },
            heuristic: 0,
            checker_claims: 0,
        };
        for row in self.stages.iter().filter_map(StageEstimate::total) {
            total.tally.add(&row.tally);
            total.heuristic += row.heuristic;
            total.checker_claims += row.checker_claims;
        }
        total
    }

    /// The estimate as text tables: the models and prices, then each stage's rows and its
    /// prompt templates, then the total when there are several stages.
    pub fn render(&self) -> String {
        let mut text = String::new();
        let units: Vec<String> = self
            .stages
            .iter()
            .map(|s| {
                format!(
                    "{} {}",
                    s.stage,
                    crate::engine::words::counted(s.units, s.unit_name)
                )
            })
            .collect();
        text.push_str(&format!(
            "dry run ({}); no request was sent and nothing written\n",
            units.join(", ")
        ));
        for model in &self.models {
            let price = match &model.price {
                Some(p) => format!(
                    "${} / ${} per million prompt / completion tokens",
                    p.prompt_per_million, p.completion_per_million
                ),
                None => "no price known, so no cost is estimated".into(),
            };
            text.push_str(&format!("{} model {}: {price}\n", model.role, model.model));
        }
        let header = self.header();
        let checks = header.len() > 6;
        let cells = |row: &EstimateRow| {
            let mut line = cells(row);
            if checks {
                line.push(row.checker_claims.to_string());
            }
            line
        };
        for stage in &self.stages {
            let mut head: Vec<String> = header.iter().map(|h| h.to_string()).collect();
            head[0] = stage.stage.to_string();
            let mut lines = vec![head];
            lines.extend(stage.rows.iter().map(cells));
            text.push('\n');
            text.push_str(&aligned(&lines));
            if !stage.templates.is_empty() {
                let mut head: Vec<String> = header.iter().take(5).map(|h| h.to_string()).collect();
                head[0] = format!("{} by prompt template", stage.stage);
                let mut lines = vec![head];
                for (name, tally) in &stage.templates {
                    let mut line = cells(&EstimateRow {
                        label: name.clone(),
                        tally: tally.clone(),
                        heuristic: 0,
                        checker_claims: 0,
                    });
                    line.truncate(5);
                    lines.push(line);
                }
                text.push_str(&aligned(&lines));
            }
            if let (Some(least), Some(most)) = (&stage.least, stage.total())
                && least.tally.calls < most.tally.calls
            {
                text.push_str(&range_line(stage.stage, least, most));
            }
        }
        if self.stages.len() > 1 {
            let mut head: Vec<String> = header.iter().map(|h| h.to_string()).collect();
            head[0] = "all stages".into();
            text.push('\n');
            text.push_str(&aligned(&[head, cells(&self.total())]));
        }
        if let Some(batch) = &self.batch {
            text.push_str(&batch.render());
        }
        for note in &self.notes {
            text.push('\n');
            text.push_str(note);
            text.push('\n');
        }
        if let Some(note) = self.thinking_note() {
            text.push('\n');
            text.push_str(&note);
            text.push('\n');
        }
        text
    }

    /// The tables' columns: model calls (the most they can be, for a cascade), tokens,
    /// cost, heuristic answers, and the checker's claims when a checker scores some.
    fn header(&self) -> Vec<&'static str> {
        let calls = if self.upper_bound {
            "model calls (at most)"
        } else {
            "model calls"
        };
        let mut header = vec![
            "",
            calls,
            "prompt tokens",
            "completion tokens",
            "cost (USD)",
            "heuristic answers",
        ];
        if self.total().checker_claims > 0 {
            header.push("checker claims");
        }
        header
    }

    /// What a reasoning judge adds: the thinking counted in, when the answer cache showed
    /// this model thinking, else a warning that a reasoning model multiplies the completion
    /// tokens (nothing when no chat model answers).
    fn thinking_note(&self) -> Option<String> {
        let total = self.total().tally;
        if total.reasoning_tokens > 0 {
            let per_call = total.reasoning_tokens / total.calls.max(1);
            return Some(format!(
                "thinking: {} of the completion tokens are the judge's thinking, about {per_call} \
                 per call as its answers in the cache show",
                total.reasoning_tokens
            ));
        }
        let chat = self.models.iter().any(|m| m.role == "chat") && total.calls > 0;
        chat.then(|| {
            "thinking: a reasoning judge (one that thinks before it answers: o-series, gpt-5, \
             DeepSeek-R1, Qwen3) bills its thinking as completion tokens, often several times \
             those above; no answer of this model in the cache says how many yet"
                .to_owned()
        })
    }

    /// How each stage's estimate is made.
    pub fn methods(&self) -> Vec<&'static str> {
        let mut methods: Vec<&'static str> = self.stages.iter().map(|s| s.method).collect();
        methods.dedup();
        methods
    }
}

/// `rank makes 26 to 350 model calls, 5210 to 70123 prompt tokens, $0.0012 to $0.0130:
/// the fewest if …`: a stage whose calls depend on the judge's answers, from its `least`
/// to its `most` (the table's total).
fn range_line(stage: &str, least: &EstimateRow, most: &EstimateRow) -> String {
    let (l, m) = (&least.tally, &most.tally);
    let cost = match (l.cost_usd, m.cost_usd) {
        (Some(low), Some(high)) => format!(", ${low:.6} to ${high:.6}"),
        _ => String::new(),
    };
    format!(
        "{stage} makes {} to {} model calls, {} to {} prompt tokens{cost}: the fewest if the \
         judge grades no context useful (grading alone), the most (the table) if it grades \
         every one useful; a run lies between, by the share it grades useful\n",
        l.calls, m.calls, l.prompt_tokens, m.prompt_tokens
    )
}

/// One row: label, calls, tokens, cost (`—` without a price), heuristic answers.
fn cells(row: &EstimateRow) -> Vec<String> {
    let t = &row.tally;
    vec![
        row.label.clone(),
        t.calls.to_string(),
        t.prompt_tokens.to_string(),
        t.completion_tokens.to_string(),
        t.cost_usd
            .map_or_else(|| "—".into(), |usd| format!("{usd:.6}")),
        row.heuristic.to_string(),
    ]
}
