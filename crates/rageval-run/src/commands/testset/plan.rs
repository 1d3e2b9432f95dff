//! The plan of `testset`: every planned slot written and gated against the
//! [`Planner`](crate::engine::plan::Planner)'s stand-in models, counting every prompt a real
//! run would send.
//!
//! The stand-in's answers pass every gate that asks the judge and answer every closed-book
//! question, so each slot asks everything its category can ask: the table is the most a run
//! asks. Its questions are the start of their chunk (a typical length), so a lexical gate
//! may stop one early, as it would in a real run.

use rageval_core::Sample;

use super::{TestsetOptions, item, make_plan, require_writer};
use crate::engine::error::Result;
use crate::engine::judges::Env;
use crate::engine::observe::{Event, Observer};
use crate::engine::plan::{Estimate, StageEstimate, planned, planning_router, rows_by_task};
use crate::engine::session::usage_of;

/// How `testset`'s estimate is made.
pub const TESTSET_METHOD: &str = "dry run: every planned item is written and gated against \
    a stand-in judge whose answers pass every gate and answer every closed-book question, so \
    the table is the most a run asks; prompts are rendered as a real run renders them and \
    counted with tiktoken. Failed calls, re-asks and answers already in the cache are not \
    foreseen.";
/// Characters of a chunk the stand-in's question holds.
const STAND_IN_QUESTION_CHARS: usize = 60;

/// `testset --dry-run`: no request, no file.
pub fn estimate(
    options: &TestsetOptions,
    env: Env<'_>,
    observer: &dyn Observer,
) -> Result<Estimate> {
    let plan = make_plan(options)?;
    let (setup, planner) = crate::engine::plan::planning_setup(&options.judge, env)?;
    require_writer(&setup, options)?;
    let tasks = planning_router(&setup, planner.as_ref())?;
    let material = item::Material {
        chunks: &options.chunks,
        rule: options.closed_book,
    };
    let runtime = crate::engine::shell::runtime()?;
    let total = plan.slots.len();
    observer.event(&Event::Stage {
        name: "planning testset",
        total: Some(total as u64),
    });
    for (done, slot) in plan.slots.iter().enumerate() {
        if let Some(planner) = &planner {
            let text = slot
                .chunks
                .first()
                .map_or("", |&i| options.chunks[i].text.as_str());
            planner.set_sample(&Sample {
                id: slot.id.clone(),
                question: text.chars().take(STAND_IN_QUESTION_CHARS).collect(),
                ..Sample::default()
            });
        }
        runtime.block_on(item::write_and_gate(&tasks, slot, &material));
        planned(observer, "planning testset", done + 1, total);
    }
    observer.event(&Event::StageEnd);
    let usage = usage_of(tasks.llm(), Some(&tasks));
    let stage = StageEstimate {
        stage: "testset",
        units: total,
        unit_name: "items",
        rows: rows_by_task(&usage),
        templates: usage.templates.clone(),
        method: TESTSET_METHOD,
        least: None,
    };
    Ok(Estimate::new(setup.models(), vec![stage]))
}
