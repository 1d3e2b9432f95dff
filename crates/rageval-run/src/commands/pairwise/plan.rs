//! The plan of `pairwise`: every pair of versions on every question asked in both seat
//! orders against the [`Planner`](crate::engine::plan::Planner)'s stand-in models,
//! counting every prompt a real run sends. A pair whose two answers and contexts are the
//! same is a tie by rule and costs nothing, in the plan as in the run.

use super::{PairwiseOptions, Prepared, prepare, task, version_pairs};
use crate::engine::error::Result;
use crate::engine::judges::Env;
use crate::engine::observe::{Event, Observer};
use crate::engine::plan::{Estimate, StageEstimate, planned, planning_setup, rows_by_task};
use crate::engine::session::usage_of;

/// How `pairwise`'s estimate is made.
pub const PAIRWISE_METHOD: &str = "dry run: every pair of versions on every question is \
    asked in both seat orders against a stand-in judge; prompts are rendered as a real run \
    renders them and counted with tiktoken. Failed calls, re-asks and answers already in the \
    cache are not foreseen.";

/// `pairwise --dry-run`.
pub fn estimate(
    options: &PairwiseOptions,
    env: Env<'_>,
    observer: &dyn Observer,
) -> Result<Estimate> {
    let prepared = prepare(options, env)?;
    let (setup, planner) = planning_setup(&options.judge, env)?;
    super::judges_check(&setup, options)?;
    let judge = setup.task_judge()?;
    let runtime = crate::engine::shell::runtime()?;
    let Prepared {
        versions,
        questions,
        criterion,
        ..
    } = &prepared;
    let pairs = version_pairs(versions.len());
    observer.event(&Event::Stage {
        name: "planning pairwise",
        total: Some(questions.len() as u64),
    });
    for (done, question) in questions.iter().enumerate() {
        if let Some(planner) = &planner {
            planner.set_sample(question.first());
        }
        for &(a, b) in &pairs {
            for (first, second) in [(a, b), (b, a)] {
                runtime.block_on(judge.compare_answers(&task(
                    question,
                    first,
                    second,
                    criterion.as_ref(),
                )))?;
            }
        }
        planned(observer, "planning pairwise", done + 1, questions.len());
    }
    observer.event(&Event::StageEnd);
    let usage = usage_of(setup.chat.as_ref(), Some(&judge));
    let stage = StageEstimate {
        stage: "pairwise",
        units: questions.len(),
        unit_name: "questions",
        rows: rows_by_task(&usage),
        templates: usage.templates.clone(),
        method: PAIRWISE_METHOD,
        least: None,
    };
    Ok(Estimate::new(setup.models(), vec![stage]))
}
