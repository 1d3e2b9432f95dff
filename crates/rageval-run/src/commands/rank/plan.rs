//! The plan of `rank`: the real ranking rounds run against the [`Planner`]'s stand-in
//! models, question by question, counting every prompt they would send.
//!
//! The stand-in grades every context 1 (related), so every context goes on to be ordered:
//! the ranking's table is the most it asks; the fewest, when the judge grades no context
//! useful, is its grading calls alone, printed as the lower end of a range.

use rageval_core::Sample;

use super::{RankOptions, rank_settings};
use crate::engine::error::Result;
use crate::engine::judges::{Env, JudgeSetup};
use crate::engine::observe::{Event, Observer};
use crate::engine::plan::{
    Estimate, EstimateRow, Planner, StageEstimate, planned, planning_setup, rows_by_task,
};
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
/// `rank --dry-run`.
pub fn estimate(options: &RankOptions, env: Env<'_>, observer: &dyn Observer) -> Result<Estimate> {
    let samples = options.data.read()?;
    let (setup, planner) = planning_setup(&options.judge, env)?;
    let stage = stage(options, &samples, &setup, planner.as_ref(), observer)?;
    Ok(Estimate::new(setup.models(), vec![stage]))
}

pub(crate) fn stage(
    options: &RankOptions,
    samples: &[Sample],
    setup: &JudgeSetup,
    planner: Option<&Planner>,
    observer: &dyn Observer,
) -> Result<StageEstimate> {
    let judge = setup.task_judge()?;
    let settings = rank_settings(&options.ranking, options.data.seed, setup);
    let runtime = crate::engine::shell::runtime()?;
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
        planned(observer, "planning rank", done + 1, samples.len());
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
