//! `eval`: read a dataset, score every sample with every metric (model-judged ones through
//! the configured judge), and keep the results in a run directory that resumes.
//!
//! - this module: [`EvalOptions`], [`run`] and [`dry_run`];
//! - `evaluation`: one run under way (prepare, score, finish); `metrics`: the metric choice;
//!   `manifest`: the fresh manifest and the run's identity; [`plan`]: the dry run's plan;
//!   `failures`: [`TooManyFailed`], a complete run that is not a success;
//! - the scoring loop is [`crate::engine::score`], shared with `judge-check`.
//!
//! The dataset is streamed: samples are scored as they are read, a bounded number at once.
//! Bad data halfway stops the run with an error, and the session ends by the shell's rule
//! ([`crate::engine::shell`]): a run holding cells a model answered (or a resumed one, or
//! one with batch jobs sent) keeps its finished cells, a new one without is removed again.
//! A stop — the caller's cancel (Ctrl-C), a judge cap, a judge halted as unavailable — ends
//! the session after the samples in flight, leaving the run incomplete and resumable. Every
//! session's judge usage is recorded in the manifest either way.

mod evaluation;
mod failures;
mod manifest;
mod max_failed;
mod metrics;
pub mod plan;

pub use failures::{TooManyFailed, unscored_notes};
pub(crate) use manifest::metric_definitions;
pub use max_failed::{InvalidMaxFailed, MaxFailed};

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use rageval_core::Sample;
use rageval_core::dataset::{self, FieldMap, ReadOptions};
use rageval_judge::CancelToken;
use rageval_report::{Gate, Summary, utc_timestamp};
use serde_json::json;

use crate::engine::batch::BatchMode;
use crate::engine::batch::plan::BatchPlanning;
use crate::engine::ended::Ended;
use crate::engine::error::{Result, RunError};
use crate::engine::judges::{self, Env, JudgeOptions};
use crate::engine::observe::Observer;
use crate::engine::reports::Finished;
use crate::engine::score::Scored;
use crate::engine::session::SessionOpen;
use crate::engine::shard::Shard;
use crate::engine::shell::{self, Books, Tally};
use evaluation::Evaluation;
use manifest::fresh_manifest;
use metrics::{choose_metrics, metrics_of};
use plan::EvalPlan;

/// Stage name of `eval`'s progress.
pub const STAGE: &str = "scoring";
/// The identity setting (and manifest setting) naming a sharded run's shard.
pub const SHARD_SETTING: &str = "shard";

/// What `eval` is asked to do.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// The dataset file (or folder of seed-S3 files).
    pub data: PathBuf,
    /// Its format, when its extension does not say it.
    pub format: Option<dataset::Format>,
    /// `FIELD=COLUMN` mappings.
    pub field_map: Vec<String>,
    /// The XLSX sheet.
    pub sheet: Option<String>,
    /// Metric specs; empty: every metric the first sample's fields and the judge allow.
    pub metrics: Vec<String>,
    /// Files of `[[metric]]` rubric tables (`--metric-file`); empty: the judge's
    /// configuration file ([`crate::engine::rubrics`]).
    pub rubric_files: Vec<PathBuf>,
    /// The run directory (default: `runs/<dataset stem>`).
    pub out: Option<PathBuf>,
    /// The version of the system this run measures, as version tables name it (`--name`);
    /// kept in the manifest, outside the run's identity.
    pub version_name: Option<String>,
    /// Replace a run already there instead of resuming it.
    pub overwrite: bool,
    /// Only the first N samples.
    pub samples: Option<usize>,
    /// Seed of the bootstrap.
    pub seed: u64,
    /// Bootstrap resamples.
    pub bootstrap_resamples: usize,
    /// Score only the first K contexts of each sample.
    pub top_k: Option<NonZeroUsize>,
    /// Score failed cells again when resuming.
    pub retry_failed: bool,
    /// `--fail-under` thresholds.
    pub gate: Gate,
    /// Where to write the JUnit file of the gate.
    pub junit: Option<PathBuf>,
    /// Human labels on some samples: the summary gets calibrated means.
    pub labels: Option<crate::commands::calibrate::CalibrateOptions>,
    /// Who judges.
    pub judge: JudgeOptions,
    /// Score only the samples of this shard (`--shard i/n`).
    pub shard: Option<Shard>,
    /// Answer the judge's requests with batch jobs (`--batch`, `--export-requests`,
    /// `--import-responses`).
    pub batch: Option<BatchMode>,
    /// Write report.html, report.md and results.xlsx when the run completes (false:
    /// `--no-reports`; `rageval report` writes them later).
    pub reports: bool,
    /// The largest share of judged cells that may fail (`--max-failed`) before the run is
    /// not a success.
    pub max_failed: MaxFailed,
}

impl EvalOptions {
    /// How the dataset is read.
    pub fn read_options(&self) -> Result<ReadOptions> {
        Ok(ReadOptions {
            format: self.format,
            field_map: FieldMap::parse(&self.field_map)?,
            sheet: self.sheet.clone(),
        })
    }

    /// The run directory.
    pub fn run_path(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| default_run_path(&self.data))
    }
}

/// A complete `eval` run.
#[derive(Debug)]
pub struct Evaluated {
    /// The run directory.
    pub path: PathBuf,
    /// Its summary.
    pub summary: Summary,
    /// The judge line under the summary table.
    pub footer: String,
    /// What this session did.
    pub scored: Scored,
    /// The reports and the gate.
    pub finished: Finished,
    /// When more judged cells failed than `--max-failed` allows (every one, at worst): the
    /// run is not a success.
    pub too_many_failed: Option<TooManyFailed>,
}

/// Scores the dataset into the run directory, resuming what is there: prepare (judges,
/// metrics, the run directory), score (one pass, or batch passes), finish (summary,
/// reports) — or stop resumably.
pub fn run(
    options: &EvalOptions,
    env: Env<'_>,
    observer: &dyn Observer,
    cancel: &CancelToken,
) -> Result<Ended<Evaluated>> {
    let session_started = utc_timestamp();
    let (setup, mut eval) = Evaluation::prepare(options, env, observer)?;
    let mut session = SessionOpen::new(&setup, session_started, &eval.prepared.manifest);
    let mut scored = Scored::default();
    let ended = eval.score(options, &setup, &mut session, &mut scored, observer, cancel)?;
    let books = Books {
        run: &eval.prepared.run,
        manifest: &mut eval.prepared.manifest,
        session: &session,
        resumed: eval.prepared.resumed,
        own_files: &[],
        paid_elsewhere: eval.passes.is_some(),
    };
    let tally = Tally {
        done: scored.cells,
        left: scored.held_back + scored.waiting,
        unit: "cells",
    };
    if let Some(stopped) = shell::end(ended, setup.stop(), books, tally, observer)? {
        return Ok(Ended::Stopped(stopped));
    }
    eval.finish(options, &setup, &session, scored, observer)
        .map(Ended::Complete)
}

/// The samples `options` scores, streamed: the first `--samples`, of them those in the
/// shard.
pub(super) fn run_samples(
    options: &EvalOptions,
) -> Result<impl Iterator<Item = std::result::Result<Sample, dataset::DatasetError>> + use<>> {
    let shard = options.shard;
    Ok(dataset::open(&options.data, &options.read_options()?)?
        .take(options.samples.unwrap_or(usize::MAX))
        .filter(move |sample| match (shard, sample) {
            (Some(shard), Ok(sample)) => shard.holds(&sample.id),
            _ => true,
        }))
}

/// The settings a run of `options` would record (run directory, dataset, metrics, judge),
/// resolved without writing anything or calling a model.
pub fn resolved_settings(
    options: &EvalOptions,
    env: Env<'_>,
    observer: &dyn Observer,
) -> Result<serde_json::Value> {
    let setup = judges::resolve(&options.judge, env)?;
    let mut samples = dataset::open(&options.data, &options.read_options()?)?.peekable();
    let metrics = choose_metrics(options, env, &setup, &mut samples, observer)?;
    let names: Vec<String> = metrics.iter().map(|m| m.name()).collect();
    let manifest = fresh_manifest(options, &metrics, &names, &setup)?;
    Ok(json!({
        "out": options.run_path(),
        "dataset": manifest.dataset,
        "settings": manifest.settings,
    }))
}

/// Estimates, without any model call or file written, what `options` would ask of the
/// judge.
pub fn dry_run(
    options: &EvalOptions,
    env: Env<'_>,
    observer: &dyn Observer,
) -> Result<crate::engine::plan::Estimate> {
    dry_run_over(options, env, observer, &|_| {})
}

/// [`dry_run`] with each sample changed by `stand_in` before it is planned (`pipeline`
/// plans its eval stage with the system's answer standing in for the reference it would
/// generate).
pub fn dry_run_over(
    options: &EvalOptions,
    env: Env<'_>,
    observer: &dyn Observer,
    stand_in: &dyn Fn(&mut Sample),
) -> Result<crate::engine::plan::Estimate> {
    let judge = JudgeOptions {
        batch: options.batch.is_some(),
        ..options.judge.clone()
    };
    let (setup, planner) = crate::engine::plan::planning_setup(&judge, env)?;
    if let Some(mode) = &options.batch {
        mode.check()?;
        if setup.kind() != "endpoint" {
            return Err(RunError::Usage(
                "batch mode needs a judge endpoint (--judge-model and --judge-base-url)".into(),
            ));
        }
    }
    let (metrics, names) = metrics_of(options, env, &setup, observer)?;
    let top_k = options.top_k.map(NonZeroUsize::get);
    let plan = EvalPlan {
        metrics: &metrics,
        names: &names,
        setup: &setup,
        planner: planner.as_ref(),
        top_k,
        window: setup.window(),
    };
    let stood_in = || -> Result<_> {
        Ok(run_samples(options)?.map(|sample| {
            sample.map(|mut sample| {
                stand_in(&mut sample);
                sample
            })
        }))
    };
    let total = options
        .samples
        .filter(|_| options.shard.is_none())
        .map(|n| n as u64);
    let stage = plan.run(stood_in()?, total, observer)?;
    let mut estimate = crate::engine::plan::Estimate::new(setup.models(), vec![stage]);
    if let Some(band) = options.judge.escalate {
        estimate.notes.push(crate::engine::plan::cascade_note(band));
        estimate.upper_bound = true;
    }
    if let (Some(mode), Some(planner)) = (&options.batch, &planner) {
        let planning = BatchPlanning {
            metrics: &metrics,
            names: &names,
            setup: &setup,
            planner,
            top_k,
            window: setup.window(),
            limits: mode.limits,
        };
        estimate.batch = Some(planning.run(stood_in()?, total, observer)?);
    }
    Ok(estimate)
}

/// `runs/<dataset file stem>`.
pub fn default_run_path(data: &Path) -> PathBuf {
    let stem = data
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".into());
    PathBuf::from("runs").join(stem)
}
