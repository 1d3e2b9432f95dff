//! The plans of `rank`, `reference` and `pipeline`: the real ranking and reference rounds
//! run against the [`Planner`]'s stand-in models, question by question, counting every
//! prompt they would send.
//!
//! The stand-in grades every context 1 (related), so every context goes on to be ordered:
//! the ranking's table is the most it asks; the fewest, when the judge grades no context
//! useful, is its grading calls alone, printed as the lower end of a range. Reference answers are the short placeholder
//! the stand-in writes, so merge rounds are estimated at their smallest. `pipeline`'s `eval`
//! stage is planned over the questions with the system's answer standing in for the
//! reference it would generate (the same order of length).

use rageval_core::Sample;
use rageval_rank::TaskAnswerer;

use crate::commands::pipeline::PipelineOptions;
use crate::commands::rank::{RankOptions, rank_settings, task_judge};
use crate::commands::reference::{ReferenceRunOptions, reference_settings, require_writer};
use crate::engine::error::Result;
use crate::engine::judges::{Env, JudgeSetup};
use crate::engine::observe::{Event, Observer, Progress};
use crate::engine::plan::{Estimate, EstimateRow, Planner, StageEstimate, rows_by_task};
use crate::engine::session::usage_of;

/// How `rank`'s estimate is made.
pub const RANK_METHOD: &str = "dry run: the ranking runs its real rounds against a stand-in \
    judge that grades every context related, so every context is ordered: the table is the \
    most a run asks, and the line under it gives the fewest (grading alone, no context \
    useful); prompts are rendered as a real run renders them and counted with tiktoken. \
    Failed calls, re-asks and answers already in the cache are not foreseen.";
/// The task name that starts the plan rows of the ranking's grading calls
/// (`grade_relevance`, `grade_relevance_batch`).
const GRADING_TASK: &str = "grade_relevance";
/// How `reference`'s estimate is made.
pub const REFERENCE_METHOD: &str = "dry run: the reference rounds run against a stand-in \
    judge whose answers are short, so merges are estimated at their smallest; prompts are \
    rendered as a real run renders them and counted with tiktoken.";

/// `rank --dry-run`.
pub fn rank(options: &RankOptions, env: Env<'_>, observer: &dyn Observer) -> Result<Estimate> {
    let samples = options.data.read()?;
    let (setup, planner) = crate::engine::plan::planning_setup(&options.judge, env)?;
    let stage = rank_stage(options, &samples, &setup, planner.as_ref(), observer)?;
    Ok(Estimate::new(setup.models(), vec![stage]))
}

/// `reference --dry-run`.
pub fn reference(
    options: &ReferenceRunOptions,
    env: Env<'_>,
    observer: &dyn Observer,
) -> Result<Estimate> {
    let samples = options.data.read()?;
    let (setup, planner) = crate::engine::plan::planning_setup(&options.judge, env)?;
    require_writer(&setup, &options.judge, "reference answers")?;
    let stage = reference_stage(options, &samples, &setup, planner.as_ref(), observer)?;
    Ok(Estimate::new(setup.models(), vec![stage]))
}

/// `pipeline --dry-run`: rank, reference and eval, each planned.
pub fn pipeline(
    options: &PipelineOptions,
    env: Env<'_>,
    observer: &dyn Observer,
) -> Result<Estimate> {
    options.check()?;
    let rank_options = options.rank_options();
    let samples = rank_options.data.read()?;
    let (setup, planner) = crate::engine::plan::planning_setup(&options.eval.judge, env)?;
    require_writer(&setup, &options.eval.judge, "pipeline's reference stage")?;
    let rank = rank_stage(&rank_options, &samples, &setup, planner.as_ref(), observer)?;
    let reference = reference_stage(
        &options.reference_options(),
        &samples,
        &setup,
        planner.as_ref(),
        observer,
    )?;
    let mut eval = options.eval_options();
    eval.data = options.eval.data.clone();
    eval.format = options.eval.format;
    eval.field_map = options.eval.field_map.clone();
    eval.sheet = options.eval.sheet.clone();
    eval.samples = options.eval.samples;
    let stand_in =
        crate::commands::eval::dry_run_over(&eval, env, observer, &|sample: &mut Sample| {
            if sample.references.is_empty() {
                sample.references = sample.answer.clone().into_iter().collect();
            }
        })?;
    let mut stages = vec![rank, reference];
    stages.extend(stand_in.stages);
    let mut estimate = Estimate::new(setup.models(), stages);
    estimate.batch = stand_in.batch;
    Ok(estimate)
}

fn rank_stage(
    options: &RankOptions,
    samples: &[Sample],
    setup: &JudgeSetup,
    planner: Option<&Planner>,
    observer: &dyn Observer,
) -> Result<StageEstimate> {
    let judge = task_judge(setup)?;
    let settings = rank_settings(&options.ranking, options.data.seed, setup);
    let runtime = crate::runtime()?;
    observer.event(&Event::Stage {
        name: "planning rank",
        total: Some(samples.len() as u64),
    });
    for (done, sample) in samples.iter().enumerate() {
        if let Some(planner) = planner {
            planner.set_sample(sample);
        }
        let contexts: Vec<&str> = sample.contexts.iter().map(|c| c.text.as_str()).collect();
        runtime.block_on(rageval_rank::rank(
            &judge,
            &sample.question,
            &contexts,
            &settings,
        ))?;
        progress(observer, "planning rank", done + 1, samples.len());
    }
    observer.event(&Event::StageEnd);
    let usage = usage_of(setup.chat.as_ref(), Some(&judge));
    let rows = rows_by_task(&usage);
    let least = grading_alone(&rows);
    Ok(StageEstimate {
        stage: "rank",
        units: samples.len(),
        unit_name: "questions",
        rows,
        templates: usage.templates.clone(),
        method: RANK_METHOD,
        least,
    })
}

fn reference_stage(
    options: &ReferenceRunOptions,
    samples: &[Sample],
    setup: &JudgeSetup,
    planner: Option<&Planner>,
    observer: &dyn Observer,
) -> Result<StageEstimate> {
    let settings = reference_settings(
        &options.reference,
        setup.prompt_window(),
        options.data.seed,
        setup.concurrency,
    )?;
    // A fresh planning judge, so this stage's books do not mix with the ranking's.
    let judges = setup.judges_over(planner.map(Planner::judge));
    let tasks = judges
        .tasks()
        .cloned()
        .ok_or_else(|| crate::RunError::Usage("no judge is configured".into()))?;
    let answerer = TaskAnswerer::new(tasks.clone());
    let runtime = crate::runtime()?;
    observer.event(&Event::Stage {
        name: "planning reference",
        total: Some(samples.len() as u64),
    });
    for (done, sample) in samples.iter().enumerate() {
        if let Some(planner) = planner {
            planner.set_sample(sample);
        }
        let contexts: Vec<&str> = sample.contexts.iter().map(|c| c.text.as_str()).collect();
        runtime.block_on(rageval_rank::generate_reference(
            &answerer,
            &sample.question,
            &contexts,
            &settings,
        ))?;
        progress(observer, "planning reference", done + 1, samples.len());
    }
    observer.event(&Event::StageEnd);
    let usage = usage_of(tasks.llm(), Some(&tasks));
    Ok(StageEstimate {
        stage: "reference",
        units: samples.len(),
        unit_name: "questions",
        rows: rows_by_task(&usage),
        templates: usage.templates.clone(),
        method: REFERENCE_METHOD,
        least: None,
    })
}

/// The grading rows of a ranking's plan, summed: what the ranking asks when no context is
/// graded useful, so none is ordered. `None` when no grading call is planned.
fn grading_alone(rows: &[EstimateRow]) -> Option<EstimateRow> {
    let mut grading = rows
        .iter()
        .filter(|row| row.label.starts_with(GRADING_TASK));
    let first = grading.next()?.clone();
    Some(grading.fold(
        EstimateRow {
            label: "grading alone".into(),
            ..first
        },
        |mut sum, row| {
            sum.tally.add(&row.tally);
            sum.heuristic += row.heuristic;
            sum.checker_claims += row.checker_claims;
            sum
        },
    ))
}

fn progress(observer: &dyn Observer, stage: &'static str, done: usize, total: usize) {
    let mut progress = Progress::of(stage, None);
    progress.done = done as u64;
    progress.total = Some(total as u64);
    observer.event(&Event::Progress(progress));
}
