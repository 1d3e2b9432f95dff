//! `compare --gate --confirm K`'s judge calls: the candidate cells that drove a regression
//! ([`rageval_report::dropped_cells`]) judged again K times each, so that one flaky verdict
//! does not fail a build.
//!
//! The repeats are `eval` runs of their own, never a second scorer: the dropped samples,
//! read back from the candidate's dataset, are written to `OUT/asked.jsonl` and scored K
//! times, one run after the other, by [`crate::commands::eval`] into `OUT/repeats/1` …
//! `OUT/repeats/K` on the regressed metrics, by a judge that neither reads nor writes the
//! cache (as `judge-check --repeat` asks), so each repeat reaches the model. Every engine
//! rule holds because it is `eval`'s: a dry run plans the calls and sends nothing, caps stop
//! it resumably (the same command goes on where it stopped), a judge that never answers
//! ends it with the judge's stop. Each cell's repeats come to their median
//! ([`ConfirmedCell`]), written to `OUT/confirmed.jsonl`. The candidate's run directory is
//! only read: `OUT` may not lie inside it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rageval_core::Sample;
use rageval_judge::CancelToken;
use rageval_report::{ConfirmedCell, DroppedCell, RunData, judging_differences, read_dataset_of};

use crate::commands::eval::{self, EvalOptions, MaxFailed, TooManyFailed};
use crate::engine::ended::Ended;
use crate::engine::error::{Result, RunError};
use crate::engine::files::write_atomically;
use crate::engine::judges::{Env, JudgeOptions};
use crate::engine::observe::Observer;
use crate::engine::plan::Estimate;

/// The samples asked again, K times each, in the confirmation's directory.
pub const ASKED_FILE: &str = "asked.jsonl";
/// The `eval` run of the repeats, in the confirmation's directory.
pub const REPEATS_RUN: &str = "repeats";
/// Each cell's repeats and confirmed score, one JSON line per cell.
pub const CONFIRMED_FILE: &str = "confirmed.jsonl";
/// What joins a sample's id and its repeat's number in the repeats' ids.
const REPEAT_MARK: &str = "#repeat-";

/// What to confirm, and where.
pub struct ConfirmOptions<'a> {
    /// The candidate run (read, never written).
    pub candidate: &'a RunData,
    /// The cells that drove the regression.
    pub cells: &'a [DroppedCell],
    /// Repeats per cell (K ≥ 1).
    pub repeats: u32,
    /// The confirmation's directory (outside the candidate's).
    pub out: PathBuf,
    /// Who judges (the candidate's judge settings, as flags, env and `rageval.toml` give
    /// them); the cache is bypassed whatever they say.
    pub judge: JudgeOptions,
    /// Files of `[[metric]]` rubric tables (`--metric-file`).
    pub rubric_files: Vec<PathBuf>,
}

/// The repeats scored and what they came to.
#[derive(Debug)]
pub struct Confirmed {
    pub cells: Vec<ConfirmedCell>,
    /// The judge calls this confirmation made, and their cost where priced.
    pub calls: u64,
    pub cost_usd: Option<f64>,
    /// Every judged repeat failed (the judge never answered): no confirmation.
    pub too_many_failed: Option<TooManyFailed>,
    /// How the repeats were judged differently from the candidate (judge model, prompt
    /// versions, settings), one line each.
    pub differences: Vec<String>,
}

/// Judges the dropped cells again, K times each, and writes what they come to. The
/// repeats are K `eval` runs (`repeats/1` … `repeats/K`) one after the other, so that no
/// two asks of one cell are in flight together (the judge merges identical calls in
/// flight into one request); the caps hold over all K, each run given what the ones
/// before left.
pub fn run(
    options: &ConfirmOptions<'_>,
    env: Env<'_>,
    observer: &dyn Observer,
    cancel: &CancelToken,
) -> Result<Ended<Confirmed>> {
    check_out(options)?;
    let asked = asked_samples(options, 1)?;
    std::fs::create_dir_all(&options.out).map_err(RunError::write(&options.out))?;
    let data = options.out.join(ASKED_FILE);
    write_atomically(&data, jsonl(&asked)?)?;
    observer.note(format!(
        "confirming: {} cells ({} samples) judged again {} times each, without the cache, \
         into {}",
        options.cells.len(),
        asked.len(),
        options.repeats,
        options.out.display()
    ));
    let mut judge = options.judge.clone();
    let mut repeats: Vec<RunData> = Vec::new();
    let (mut calls, mut cost_usd) = (0, None::<f64>);
    for k in 1..=options.repeats {
        let out = options.out.join(REPEATS_RUN).join(k.to_string());
        let eval_options = eval_options(options, data.clone(), out, judge.clone());
        let evaluated = match eval::run(&eval_options, env, observer, cancel)? {
            Ended::Complete(evaluated) => evaluated,
            Ended::Stopped(stopped) => return Ok(Ended::Stopped(stopped)),
        };
        let run = RunData::load(&evaluated.path)?;
        let spent = run
            .manifest
            .sessions
            .last()
            .map(|session| session.judge.total.clone())
            .unwrap_or_default();
        calls += spent.calls;
        if let Some(cost) = spent.cost_usd {
            *cost_usd.get_or_insert(0.0) += cost;
        }
        judge.flags.max_calls = judge
            .flags
            .max_calls
            .map(|max| max.saturating_sub(spent.calls));
        judge.flags.max_cost_usd = judge
            .flags
            .max_cost_usd
            .map(|max| (max - spent.cost_usd.unwrap_or(0.0)).max(0.0));
        if let Some(too_many_failed) = evaluated.too_many_failed {
            return Ok(Ended::Complete(Confirmed {
                cells: Vec::new(),
                calls,
                cost_usd,
                too_many_failed: Some(too_many_failed),
                differences: Vec::new(),
            }));
        }
        repeats.push(run);
    }
    let differences = repeats
        .first()
        .map(|first| judging_differences(&options.candidate.manifest, &first.manifest))
        .unwrap_or_default();
    let cells = confirmed_cells(options.cells, &repeats);
    let lines = cells
        .iter()
        .map(serde_json::to_string)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|source| RunError::Encode {
            what: "the confirmed cells",
            source,
        })?;
    write_atomically(&options.out.join(CONFIRMED_FILE), lines.join("\n") + "\n")?;
    Ok(Ended::Complete(Confirmed {
        cells,
        calls,
        cost_usd,
        too_many_failed: None,
        differences,
    }))
}

/// Estimates the repeats' judge calls without a request or a file in `OUT` (the asked
/// samples are written to a temporary directory for `eval`'s planner to read).
pub fn dry_run(
    options: &ConfirmOptions<'_>,
    env: Env<'_>,
    observer: &dyn Observer,
) -> Result<Estimate> {
    check_out(options)?;
    let asked = asked_samples(options, options.repeats)?;
    let scratch = tempfile::tempdir().map_err(RunError::write(&std::env::temp_dir()))?;
    let data = scratch.path().join(ASKED_FILE);
    write_atomically(&data, jsonl(&asked)?)?;
    let eval_options = eval_options(
        options,
        data,
        options.out.join(REPEATS_RUN),
        options.judge.clone(),
    );
    eval::dry_run(&eval_options, env, observer)
}

/// Refuses a confirmation directory inside the candidate's run directory (or the same).
fn check_out(options: &ConfirmOptions<'_>) -> Result<()> {
    if options.repeats == 0 {
        return Err(RunError::Usage("--confirm takes K ≥ 1 repeats".into()));
    }
    let candidate = options
        .candidate
        .path
        .canonicalize()
        .map_err(RunError::read(&options.candidate.path))?;
    if resolved(&options.out).starts_with(&candidate) {
        return Err(RunError::Usage(format!(
            "--confirm-out {} lies inside the candidate run {}, which the gate never \
             writes; hint: name a directory outside it, e.g. beside it",
            options.out.display(),
            options.candidate.path.display()
        )));
    }
    Ok(())
}

/// `path` made absolute through its deepest existing ancestor (it may not exist yet).
fn resolved(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
            return absolute;
        };
        rest.push(name.to_owned());
        existing = parent;
    }
    let mut resolved = existing
        .canonicalize()
        .unwrap_or_else(|_| existing.to_path_buf());
    resolved.extend(rest.iter().rev());
    resolved
}

/// The dropped cells' samples from the candidate's dataset, in its order; `times` > 1 times
/// each as `ID#repeat-k` (the dry run's one file standing for the K runs).
fn asked_samples(options: &ConfirmOptions<'_>, times: u32) -> Result<Vec<Sample>> {
    let candidate = options.candidate;
    let wanted: HashSet<&str> = options.cells.iter().map(|c| c.sample_id.as_str()).collect();
    let samples = read_dataset_of(&candidate.manifest, &candidate.path)?;
    let chosen: Vec<&Sample> = samples
        .iter()
        .filter(|s| wanted.contains(s.id.as_str()))
        .collect();
    if chosen.len() < wanted.len() {
        return Err(RunError::Usage(format!(
            "--confirm: {} of the {} samples to judge again are not in the candidate's \
             dataset {}",
            wanted.len() - chosen.len(),
            wanted.len(),
            candidate.manifest.dataset.path
        )));
    }
    if times == 1 {
        return Ok(chosen.into_iter().cloned().collect());
    }
    Ok(chosen
        .into_iter()
        .flat_map(|sample| {
            (1..=times).map(move |k| Sample {
                id: format!("{}{REPEAT_MARK}{k}", sample.id),
                ..sample.clone()
            })
        })
        .collect())
}

/// Samples as JSON lines that the dataset reader reads back equal.
fn jsonl(samples: &[Sample]) -> Result<String> {
    let mut text = String::new();
    for sample in samples {
        let line = serde_json::to_string(sample).map_err(|source| RunError::Encode {
            what: "a sample to judge again",
            source,
        })?;
        text.push_str(&line);
        text.push('\n');
    }
    Ok(text)
}

/// The `eval` of the repeats: the regressed metrics, the candidate's `--top-k`, a judge
/// without the cache, no reports; resumed where an earlier confirmation stopped.
fn eval_options(
    options: &ConfirmOptions<'_>,
    data: PathBuf,
    out: PathBuf,
    mut judge: JudgeOptions,
) -> EvalOptions {
    let mut metrics: Vec<String> = Vec::new();
    for cell in options.cells {
        if !metrics.contains(&cell.metric) {
            metrics.push(cell.metric.clone());
        }
    }
    let settings = &options.candidate.manifest.settings;
    let top_k = settings["top_k"].as_u64().and_then(|k| {
        usize::try_from(k)
            .ok()
            .and_then(std::num::NonZeroUsize::new)
    });
    judge.flags.no_cache = true;
    EvalOptions {
        data,
        format: Some(rageval_core::dataset::Format::Jsonl),
        field_map: Vec::new(),
        sheet: None,
        metrics,
        rubric_files: options.rubric_files.clone(),
        out: Some(out),
        version_name: Some(format!("{} (confirm)", options.candidate.name)),
        overwrite: false,
        samples: None,
        seed: rageval_core::stats::DEFAULT_SEED,
        bootstrap_resamples: rageval_core::stats::DEFAULT_BOOTSTRAP_RESAMPLES,
        top_k,
        retry_failed: true,
        gate: rageval_report::Gate::default(),
        junit: None,
        labels: None,
        judge,
        shard: None,
        batch: None,
        reports: false,
        max_failed: MaxFailed::default(),
        rolling: false,
    }
}

/// Each dropped cell with its scores in the `repeats` runs, in repeat order.
fn confirmed_cells(cells: &[DroppedCell], repeats: &[RunData]) -> Vec<ConfirmedCell> {
    let scores: Vec<HashMap<(&str, &str), Option<f64>>> = repeats
        .iter()
        .map(|run| {
            run.records
                .iter()
                .map(|r| ((r.sample_id.as_str(), r.metric.as_str()), r.outcome.value()))
                .collect()
        })
        .collect();
    cells
        .iter()
        .map(|cell| {
            let key = (cell.sample_id.as_str(), cell.metric.as_str());
            let values = scores
                .iter()
                .map(|run| run.get(&key).copied().flatten())
                .collect();
            ConfirmedCell::new(
                cell.sample_id.clone(),
                cell.metric.clone(),
                cell.candidate,
                values,
            )
        })
        .collect()
}
