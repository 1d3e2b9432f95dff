//! The plan of `reference`: the real reference rounds run against the [`Planner`]'s
//! stand-in models, question by question, counting every prompt they would send.
//!
//! Reference answers are the short placeholder the stand-in writes, so merge rounds are
//! estimated at their smallest.

use rageval_core::Sample;
use rageval_rank::TaskAnswerer;

use super::{ReferenceRunOptions, require_writer, settings_for};
use crate::engine::error::Result;
use crate::engine::judges::{Env, JudgeSetup};
use crate::engine::observe::{Event, Observer};
use crate::engine::plan::{
    Estimate, Planner, StageEstimate, planned, planning_router, planning_setup, rows_by_task,
};
use crate::engine::session::usage_of;

/// How `reference`'s estimate is made.
pub const REFERENCE_METHOD: &str = "dry run: the reference rounds run against a stand-in \
    judge whose answers are short, so merges are estimated at their smallest; prompts are \
    rendered as a real run renders them and counted with tiktoken.";

/// `reference --dry-run`.
pub fn estimate(
    options: &ReferenceRunOptions,
    env: Env<'_>,
    observer: &dyn Observer,
) -> Result<Estimate> {
    let samples = options.data.read()?;
    let (setup, planner) = planning_setup(&options.judge, env)?;
    require_writer(&setup, &options.judge, "reference answers")?;
    let stage = stage(options, &samples, &setup, planner.as_ref(), observer)?;
    Ok(Estimate::new(setup.models(), vec![stage]))
}

pub(crate) fn stage(
    options: &ReferenceRunOptions,
    samples: &[Sample],
    setup: &JudgeSetup,
    planner: Option<&Planner>,
    observer: &dyn Observer,
) -> Result<StageEstimate> {
    let settings = settings_for(options, setup)?;
    let tasks = planning_router(setup, planner)?;
    let answerer = TaskAnswerer::new(tasks.clone());
    let runtime = crate::engine::shell::runtime()?;
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
        planned(observer, "planning reference", done + 1, samples.len());
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
