//! `judge-check`: runs the configured judge through one metric on human-labelled items and
//! measures how well its scores agree with the labels, with seeded 95% bootstrap intervals.
//!
//! - [`labels`]: the documented JSONL shapes (pairwise, binary, graded), and
//!   [`LabelFormat`], every layout `--format` reads.
//! - `judging`: one judge-check under way (the passes, the session's end, the measure).
//! - [`convert`]: the shared sets (WikiEval, UHGEval, RGB, DuReader, Cranfield).
//! - [`journal`]: the journals of the first pass and the repeats.
//! - [`measure`]: the statistics over items; [`stability`]: `--repeat K`.
//! - [`head_to_head`]: `--head-to-head`, the pairwise judge asked in both seat orders.
//! - [`few_shot`]: `--few-shot N`, labels drawn as a rubric's examples and not measured.
//!
//! The judging is `eval`'s scoring loop ([`crate::engine::score`]) over the items' samples,
//! so caps, cancellation, a halted judge and resuming work as they do there. Writes a run directory
//! of the same kind as `eval` (manifest, `samples.jsonl` — the items' samples with their
//! labels, `results.jsonl`, `summary.json`, reports) plus `agreement.json` (its type lives
//! in `rageval-report`, which shows it). Bad labels stop before any judging; a failure
//! halfway ends the session by the shell's rule ([`crate::engine::shell`]): kept with what
//! a model judged, removed when new and holding none.

pub mod convert;
pub mod few_shot;
pub mod head_to_head;
pub mod journal;
mod judging;
pub mod labels;
pub mod measure;
pub mod stability;

use std::path::{Path, PathBuf};

use rageval_core::Sample;
use rageval_judge::CancelToken;
use rageval_metrics::{Input, Metric};
use rageval_report::{
    Agreement, DatasetInfo, LabelShape, Manifest, MetricRecord, sha256_bytes, sha256_file,
    utc_timestamp,
};
use serde_json::json;

use crate::engine::ended::Ended;
use crate::engine::error::{Result, RunError};
use crate::engine::identity::RunIdentity;
use crate::engine::judges::{self, Env, JudgeOptions, JudgeSetup};
use crate::engine::observe::Observer;
use crate::engine::plan::Estimate;
use crate::engine::reports::Finished;
use crate::engine::resume;
use crate::engine::score::tasks_of;
use judging::Check;
use labels::Item;
pub use labels::LabelFormat;

/// The file of the run directory holding the items' samples (the run's dataset).
pub const SAMPLES_FILE: &str = "samples.jsonl";
/// Stage name of the first pass's progress.
pub const STAGE: &str = "judging";

/// What `judge-check` is asked to do.
#[derive(Debug, Clone)]
pub struct JudgeCheckOptions {
    /// The labels file (a folder for Cranfield).
    pub labels: PathBuf,
    pub format: LabelFormat,
    /// What is checked: a metric, or the head-to-head judge.
    pub measured: Measured,
    /// Files of `[[metric]]` rubric tables (`--metric-file`); empty: the judge's
    /// configuration file ([`crate::engine::rubrics`]).
    pub rubric_files: Vec<PathBuf>,
    /// Labelled items drawn (seeded, stratified by label) as the rubric metric's few-shot
    /// examples, and left out of the measure; 0: none.
    pub few_shot: usize,
    /// The run directory (default: `runs/judge-check-<labels>-<metric>`).
    pub out: Option<PathBuf>,
    pub overwrite: bool,
    /// When resuming, judge again the samples and repeats whose judgement failed.
    pub retry_failed: bool,
    /// Only the first N source records.
    pub samples: Option<usize>,
    /// Judge each sample this many times (repeats bypass the cache).
    pub repeat: u32,
    /// Binary labels: a score at or above this is a "good" verdict.
    pub threshold: f64,
    /// Folds of the cross-validated threshold.
    pub folds: u32,
    pub seed: u64,
    pub bootstrap_resamples: usize,
    pub judge: JudgeOptions,
}

impl JudgeCheckOptions {
    /// The run directory.
    pub fn run_path(&self) -> PathBuf {
        self.out.clone().unwrap_or_else(|| default_run_path(self))
    }
}

/// What a judge-check measures against the labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Measured {
    /// A metric spec (`--metric`): its scores are read against the labels.
    Metric(String),
    /// The pairwise judge (`--head-to-head`): each labelled pair asked in both seat
    /// orders, by the built-in RAG criterion or a rubric metric's (`--criterion`).
    HeadToHead { criterion: Option<String> },
}

impl Measured {
    /// How it is named in the run directory's default path and in messages.
    pub fn spec(&self) -> String {
        match self {
            Measured::Metric(spec) => spec.clone(),
            Measured::HeadToHead { criterion: None } => head_to_head::NAME.to_owned(),
            Measured::HeadToHead {
                criterion: Some(name),
            } => format!("{}:{name}", head_to_head::NAME),
        }
    }
}

/// A complete judge-check.
#[derive(Debug)]
pub struct Checked {
    pub path: PathBuf,
    pub agreement: Agreement,
    pub footer: String,
    pub finished: Finished,
}

/// What a judge-check reads before judging: the metric, the items and their samples.
pub(super) struct Material {
    metrics: Vec<Box<dyn Metric>>,
    items: Vec<Item>,
    samples: Vec<Sample>,
    /// The labels drawn as few-shot examples (`--few-shot`), left out of `items`.
    drawn: Option<few_shot::Drawn>,
}

fn material(options: &JudgeCheckOptions, env: Env<'_>) -> Result<Material> {
    if !options.threshold.is_finite() {
        return Err(RunError::Usage("--threshold must be a number".into()));
    }
    let catalogue =
        crate::engine::rubrics::catalogue(&options.rubric_files, &options.judge.flags, env)?;
    let (metrics, items, drawn): (Vec<Box<dyn Metric>>, _, _) = match &options.measured {
        Measured::Metric(spec) => {
            let metric = catalogue.build(spec)?;
            let items = read_items(options, metric.info().inputs)?;
            if options.few_shot > 0 {
                let files = crate::engine::rubrics::rubric_files(
                    &options.rubric_files,
                    &options.judge.flags,
                    env,
                );
                let (metric, items, drawn) =
                    few_shot::with_examples(&files, spec, items, options.few_shot, options.seed)?;
                (vec![metric], items, Some(drawn))
            } else {
                (vec![metric], items, None)
            }
        }
        Measured::HeadToHead { criterion } => {
            if options.few_shot > 0 {
                return Err(RunError::Usage(
                    "--few-shot adds examples to a rubric metric; --head-to-head has none".into(),
                ));
            }
            let criterion = criterion
                .as_deref()
                .map(|name| crate::commands::pairwise::criterion_of(&catalogue, name))
                .transpose()?;
            let items = read_items(options, &[Input::Question, Input::Answer])?;
            if let Some(item) = items.first().filter(|i| i.shape() != LabelShape::Pairwise) {
                return Err(RunError::Usage(format!(
                    "{}: --head-to-head judges pairs of answers, and these labels are {}",
                    options.labels.display(),
                    item.shape().name()
                )));
            }
            let metric = head_to_head::HeadToHeadMetric::new(&items, criterion);
            (vec![Box::new(metric)], items, None)
        }
    };
    if options.repeat > 1 && options.judge.flags.offline {
        return Err(RunError::Usage(
            "--repeat asks the judge again, which --offline (replay the cache only) forbids".into(),
        ));
    }
    let samples: Vec<Sample> = items
        .iter()
        .flat_map(|item| {
            item.samples.iter().enumerate().map(|(i, sample)| {
                let mut sample = sample.clone();
                sample.metadata = item.label_metadata(i);
                sample
            })
        })
        .collect();
    Ok(Material {
        metrics,
        items,
        samples,
        drawn,
    })
}

/// Judges the labelled items (resuming a run there) and measures the agreement.
pub fn run(
    options: &JudgeCheckOptions,
    env: Env<'_>,
    observer: &dyn Observer,
    cancel: &CancelToken,
) -> Result<Ended<Checked>> {
    let session_started = utc_timestamp();
    let material = material(options, env)?;
    let metric = material.metrics[0].as_ref();
    let setup = judges::resolve(&options.judge, env)?;
    head_to_head_writer(options, &setup)?;
    if let Some(why) = setup.unmet(&metric.requirements()) {
        return Err(RunError::Usage(format!(
            "the judge cannot answer {}: {why}",
            metric.name()
        )));
    }
    for line in setup.route_lines(&metric.requirements().tasks) {
        observer.note(format!("judge: {line}"));
    }
    let again = repeat_judge(options, env)?;
    let run_path = options.run_path();
    let samples_text = samples_jsonl(&material.samples)?;
    let fresh = fresh_manifest(options, &material, &setup, &run_path, &samples_text)?;
    let mut identity = RunIdentity {
        command: "judge-check".into(),
        dataset_sha256: fresh.dataset.sha256.clone(),
        metrics: vec![metric.name()],
        judge: setup.identity()?.for_tasks(&tasks_of(&material.metrics)),
        labels_sha256: Some(sha256_file(&options.labels).unwrap_or_default()),
        labels_file: Some(options.labels.display().to_string()),
        settings: [
            ("format".to_string(), options.format.name().to_string()),
            ("samples".to_string(), format!("{:?}", options.samples)),
            (
                "few-shot draw".to_string(),
                material
                    .drawn
                    .as_ref()
                    .map_or("none".into(), few_shot::Drawn::identity),
            ),
        ]
        .into(),
    };
    identity
        .settings
        .extend(crate::commands::eval::metric_definitions(&material.metrics));
    let mut prepared = resume::prepare(
        &run_path,
        options.overwrite,
        options.retry_failed,
        fresh,
        &identity,
    )?;
    for note in &prepared.notes {
        observer.note(format!("note: {note}"));
    }
    let check = Check {
        options,
        material: &material,
        setup: &setup,
        again: again.as_ref(),
        observer,
        cancel,
    };
    check.judge_and_write(&mut prepared, &samples_text, session_started)
}

/// Refuses a head-to-head check without a chat model, as `pairwise` does: the heuristic
/// judge has no rule that tells a better answer from a worse one.
fn head_to_head_writer(options: &JudgeCheckOptions, setup: &JudgeSetup) -> Result<()> {
    if !matches!(options.measured, Measured::HeadToHead { .. }) {
        return Ok(());
    }
    judges::require_writer(
        setup,
        &options.judge,
        "head-to-head judging",
        &crate::commands::pairwise::TASKS,
    )
}

/// The judge of repeats 2..K (`--repeat`): a fresh one that neither reads nor writes the
/// cache, so that repeats reach the model; none without repeats.
fn repeat_judge(options: &JudgeCheckOptions, env: Env<'_>) -> Result<Option<JudgeSetup>> {
    if options.repeat <= 1 {
        return Ok(None);
    }
    let mut uncached = options.judge.clone();
    uncached.flags.no_cache = true;
    Ok(Some(judges::resolve(&uncached, env)?))
}

/// Estimates what the judge-check would ask of the judge (all repeats), sending nothing.
pub fn dry_run(
    options: &JudgeCheckOptions,
    env: Env<'_>,
    observer: &dyn Observer,
) -> Result<Estimate> {
    let material = material(options, env)?;
    let (setup, planner) = crate::engine::plan::planning_setup(&options.judge, env)?;
    head_to_head_writer(options, &setup)?;
    let names = vec![material.metrics[0].name()];
    let plan = crate::commands::eval::plan::EvalPlan {
        metrics: &material.metrics,
        names: &names,
        setup: &setup,
        planner: planner.as_ref(),
        top_k: None,
        window: setup.window(),
    };
    let repeats = options.repeat as usize;
    let samples = material
        .samples
        .iter()
        .cycle()
        .take(material.samples.len() * repeats)
        .cloned()
        .map(Ok);
    let mut stage = plan.run(samples, None, observer)?;
    stage.stage = "judge-check";
    stage.unit_name = if repeats > 1 {
        "sample judgements (every repeat)"
    } else {
        "samples"
    };
    Ok(Estimate::new(setup.models(), vec![stage]))
}

/// The labelled items; `inputs` (what is judged) choose WikiEval's pairs.
fn read_items(options: &JudgeCheckOptions, inputs: &[Input]) -> Result<Vec<Item>> {
    let path = &options.labels;
    let limit = options.samples;
    let items = match options.format {
        LabelFormat::Jsonl => labels::read_jsonl(path, limit)?,
        LabelFormat::Wikieval => convert::wikieval(path, inputs, limit)?,
        LabelFormat::Uhgeval => convert::uhgeval(path, limit)?,
        LabelFormat::Rgb => convert::rgb(path, limit)?,
        LabelFormat::Dureader => convert::dureader(path, limit)?,
        LabelFormat::Cranfield => convert::cranfield(path, limit)?,
    };
    labels::check_items(&items, &path.display().to_string())?;
    Ok(items)
}

/// The manifest a new run starts with: the samples (the run's dataset, hashed as they will
/// be written), the metric, and the labels, judge and statistics settings.
fn fresh_manifest(
    options: &JudgeCheckOptions,
    material: &Material,
    setup: &JudgeSetup,
    run_path: &Path,
    samples_text: &str,
) -> Result<Manifest> {
    let metric = material.metrics[0].as_ref();
    let dataset = DatasetInfo {
        path: run_path.join(SAMPLES_FILE).display().to_string(),
        sha256: sha256_bytes(samples_text.as_bytes()),
        format: "jsonl".into(),
        samples: Some(samples_text.lines().count()),
    };
    let record = MetricRecord {
        name: metric.name(),
        formula: metric.formula().0.to_string(),
        source: metric.formula().1.to_string(),
        // This run measures its judge; agreement.json holds the figures.
        judges: Vec::new(),
    };
    let settings = json!({
        "labels": options.labels.display().to_string(),
        "labels_sha256": sha256_file(&options.labels).ok(),
        "labels_format": options.format.name(),
        "shape": material.items[0].shape().name(),
        "items": material.items.len(),
        "metric": metric.name(),
        "samples": options.samples,
        "few_shot": material.drawn.as_ref().map(|drawn| json!({
            "ids": drawn.ids,
            "measured": drawn.measured,
        })),
        "repeat": options.repeat,
        "threshold": options.threshold,
        "folds": options.folds,
        "seed": options.seed,
        "bootstrap_resamples": options.bootstrap_resamples,
        "judge": setup.description,
    });
    Ok(Manifest::start(
        "judge-check",
        dataset,
        vec![record],
        settings,
    ))
}

/// The samples as rageval JSONL (`eval`'s reader reads them back for the report), labels
/// in the extra fields.
fn samples_jsonl(samples: &[Sample]) -> Result<String> {
    let mut text = String::new();
    for sample in samples {
        let mut row = json!({
            "id": sample.id,
            "question": sample.question,
            "contexts": sample.contexts.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
        });
        if let Some(answer) = &sample.answer {
            row["answer"] = json!(answer);
        }
        if let Some(reference) = sample.references.first() {
            row["reference"] = json!(reference);
        }
        for (key, value) in &sample.metadata {
            row[key] = value.clone();
        }
        text.push_str(&serde_json::to_string(&row).map_err(RunError::encode("a sample"))?);
        text.push('\n');
    }
    Ok(text)
}

/// `runs/judge-check-<labels file stem>-<metric>`.
fn default_run_path(options: &JudgeCheckOptions) -> PathBuf {
    let stem = options
        .labels
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "labels".into());
    let metric: String = options
        .measured
        .spec()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    PathBuf::from("runs").join(format!("judge-check-{stem}-{metric}"))
}
