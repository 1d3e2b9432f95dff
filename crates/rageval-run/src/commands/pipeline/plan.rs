//! The plan of `pipeline`: its rank and reference stages planned as those commands plan
//! them, then its `eval` stage over the questions with the system's answer standing in for
//! the reference it would generate (the same order of length).

use rageval_core::Sample;

use super::PipelineOptions;
use crate::commands::reference::require_writer;
use crate::commands::{eval, rank, reference};
use crate::engine::error::Result;
use crate::engine::judges::Env;
use crate::engine::observe::Observer;
use crate::engine::plan::{Estimate, planning_setup};

/// `pipeline --dry-run`: rank, reference and eval, each planned.
pub fn estimate(
    options: &PipelineOptions,
    env: Env<'_>,
    observer: &dyn Observer,
) -> Result<Estimate> {
    options.check()?;
    let rank_options = options.rank_options();
    let samples = rank_options.data.read()?;
    let (setup, planner) = planning_setup(&options.eval.judge, env)?;
    require_writer(&setup, &options.eval.judge, "pipeline's reference stage")?;
    let rank = rank::plan::stage(&rank_options, &samples, &setup, planner.as_ref(), observer)?;
    let reference = reference::plan::stage(
        &options.reference_options(),
        &samples,
        &setup,
        planner.as_ref(),
        observer,
    )?;
    let mut eval_options = options.eval_options();
    eval_options.data = options.eval.data.clone();
    eval_options.format = options.eval.format;
    eval_options.field_map = options.eval.field_map.clone();
    eval_options.sheet = options.eval.sheet.clone();
    eval_options.samples = options.eval.samples;
    let stand_in = eval::dry_run_over(&eval_options, env, observer, &|sample: &mut Sample| {
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
