//! `rageval judge-check LABELS --metric M`: runs the configured judge (endpoint, heuristic,
//! or any backend the judge flags select) through metric `M` on human-labelled items and
//! reports how well its scores agree with the labels, with seeded 95% bootstrap intervals.
//!
//! - [`labels`]: the documented JSONL shapes (pairwise, binary, graded).
//! - [`convert`]: the shared sets (`--format wikieval|uhgeval|rgb|dureader|cranfield`).
//! - [`measure`]: the statistics over items; [`stability`]: `--repeat K`.
//!
//! Writes a run directory of the same kind as `eval` (manifest, `samples.jsonl` — the
//! items' samples with their labels, `results.jsonl` — each sample's outcome with the
//! judge's reasons, `summary.json`, reports) plus `agreement.json`, so `report`, `compare`
//! and `serve` work on it. Bad labels stop before any judging (exit 2) and a failure halfway
//! removes the directory.

mod convert;
mod labels;
mod measure;
mod stability;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::{Args, ValueEnum};
use futures_util::StreamExt;
use rageval_core::stats::{DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_SEED};
use rageval_core::{Outcome, Sample};
use rageval_metrics::{Judges, Metric, ScoringContext};
use rageval_report::{
    Aggregator, DatasetInfo, Gate, Manifest, MetricRecord, ResultRecord, RunData, RunDir,
    sha256_file,
};
use serde_json::json;

use crate::cli::{GateArgs, JudgeArgs};
use labels::Item;

/// The file of the run directory holding the agreement figures and per-item verdicts.
pub const AGREEMENT_FILE: &str = "agreement.json";
/// The file of the run directory holding the items' samples (the run's dataset).
pub const SAMPLES_FILE: &str = "samples.jsonl";

/// The labels file's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LabelFormat {
    /// rageval's labels JSONL (pairwise, binary or graded; docs/judge-fidelity.md).
    Jsonl,
    /// WikiEval rows: pairs chosen by what the metric reads.
    Wikieval,
    /// UHGEval rows: one binary item per annotated keyword.
    Uhgeval,
    /// An RGB file: one binary item per positive or negative passage.
    Rgb,
    /// DuReader rows: one binary item per document (`is_selected`).
    Dureader,
    /// The Cranfield folder: one graded item per judged (query, abstract).
    Cranfield,
}

#[derive(Debug, Args)]
pub struct JudgeCheckArgs {
    /// The labels: a labels JSONL file, or a shared set's file (folder for Cranfield) with
    /// --format.
    pub labels: PathBuf,

    /// The metric whose scores are checked against the labels (`rageval metrics` lists
    /// them; `NAME:MODE` picks a mode).
    #[arg(long, short)]
    pub metric: String,

    /// The layout of LABELS.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: LabelFormat,

    /// The run directory to write (default: `runs/judge-check-<labels>-<metric>`).
    #[arg(long, short)]
    pub out: Option<PathBuf>,

    /// Replace a run already in the output directory.
    #[arg(long)]
    pub overwrite: bool,

    /// Check only the first N source records (lines; questions or queries of a shared set).
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,

    /// Ask every judgement K times (the cache is bypassed for repeats 2..K) and report how
    /// often the repeats agree; unstable items are listed.
    #[arg(long, default_value_t = 1, value_name = "K",
          value_parser = clap::value_parser!(u32).range(1..=20))]
    pub repeat: u32,

    /// Binary labels: a score at or above this is a "good" verdict.
    #[arg(long, default_value_t = 0.5)]
    pub threshold: f64,

    /// Binary labels: folds for the cross-validated best threshold.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(2..=50))]
    pub folds: u32,

    /// Seed of the bootstrap and the folds.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,

    /// Bootstrap resamples for the 95% intervals.
    #[arg(long, default_value_t = DEFAULT_BOOTSTRAP_RESAMPLES)]
    pub bootstrap_resamples: usize,

    #[command(flatten)]
    pub judge: JudgeArgs,
}

pub fn run(args: &JudgeCheckArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    if !args.threshold.is_finite() {
        bail!("--threshold must be a number");
    }
    let metrics = vec![rageval_metrics::build(&args.metric)?];
    let metric = metrics[0].as_ref();
    let items = read_items(args, metric)?;
    if args.repeat > 1 && args.judge.offline {
        bail!("--repeat asks the judge again, which --offline (replay the cache only) forbids");
    }
    let setup = super::eval::judge::resolve(&args.judge)?;
    if let Some(why) = setup.unmet(&metric.requirements()) {
        bail!("the judge cannot answer {}: {why}", metric.name());
    }
    for line in setup.route_lines(&metric.requirements().tasks) {
        note(&format!("judge: {line}"));
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

    let run_path = args.out.clone().unwrap_or_else(|| default_run_path(args));
    let run = RunDir::create(&run_path, args.overwrite)?;
    remove_own_files(&run_path)?;
    let result = judge_and_write(args, &metrics, &items, &samples, &setup, &run);
    let agreement = match result {
        Ok(agreement) => agreement,
        Err(error) => {
            if let Err(cleanup) = remove_own_files(&run_path).and_then(|()| Ok(run.abandon()?)) {
                note(&format!("could not remove the partial run: {cleanup}"));
            }
            return Err(error);
        }
    };
    out.write_all(measure::render(&agreement).as_bytes())
        .context("cannot write to stdout")?;
    let finished = RunData::load(&run_path)?;
    let kept = super::report::samples_of(&finished.manifest);
    let no_gate = GateArgs {
        fail_under: Vec::new(),
        junit: None,
    };
    super::report::finish_run(
        &finished,
        &kept,
        &Gate::parse::<String>(&[])?,
        &no_gate,
        out,
    )
}

fn read_items(args: &JudgeCheckArgs, metric: &dyn Metric) -> anyhow::Result<Vec<Item>> {
    let path = &args.labels;
    let limit = args.samples;
    let items = match args.format {
        LabelFormat::Jsonl => labels::read_jsonl(path, limit)?,
        LabelFormat::Wikieval => convert::wikieval(path, metric.info().inputs, limit)?,
        LabelFormat::Uhgeval => convert::uhgeval(path, limit)?,
        LabelFormat::Rgb => convert::rgb(path, limit)?,
        LabelFormat::Dureader => convert::dureader(path, limit)?,
        LabelFormat::Cranfield => convert::cranfield(path, limit)?,
    };
    labels::check_items(&items, &path.display().to_string())?;
    Ok(items)
}

/// Judges every sample (K times with `--repeat`), writes the run directory and returns the
/// figures.
fn judge_and_write(
    args: &JudgeCheckArgs,
    metrics: &[Box<dyn Metric>],
    items: &[Item],
    samples: &[Sample],
    setup: &super::eval::judge::JudgeSetup,
    run: &RunDir,
) -> anyhow::Result<measure::Agreement> {
    let metric = metrics[0].as_ref();
    let samples_path = run.path().join(SAMPLES_FILE);
    write_samples(&samples_path, samples)?;
    let dataset = DatasetInfo {
        path: samples_path.display().to_string(),
        sha256: sha256_file(&samples_path)?,
        format: "jsonl".into(),
        samples: Some(samples.len()),
    };
    let record = MetricRecord {
        name: metric.name(),
        formula: metric.formula().0.to_string(),
        source: metric.formula().1.to_string(),
    };
    let settings = json!({
        "labels": args.labels.display().to_string(),
        "labels_sha256": sha256_file(&args.labels).ok(),
        "labels_format": format!("{:?}", args.format).to_lowercase(),
        "shape": items[0].shape().name(),
        "items": items.len(),
        "metric": metric.name(),
        "samples": args.samples,
        "repeat": args.repeat,
        "threshold": args.threshold,
        "folds": args.folds,
        "seed": args.seed,
        "bootstrap_resamples": args.bootstrap_resamples,
        "judge": setup.description,
    });
    let mut manifest = Manifest::start("judge-check", dataset, vec![record], settings);
    run.write_manifest(&manifest)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let in_flight = setup.concurrency.saturating_mul(2).max(1);
    let window = setup
        .has_chat_model()
        .then(|| usize::try_from(args.judge.context_window).unwrap_or(usize::MAX));
    let judges = setup.judges.clone().plan_for(metrics);
    note(&format!(
        "judging {} samples of {} items with {}",
        samples.len(),
        items.len(),
        metric.name()
    ));
    let first = runtime.block_on(score_pass(metric, &judges, samples, window, in_flight));
    let mut journal = run.journal()?;
    for (sample, outcome) in samples.iter().zip(&first) {
        journal.append(&ResultRecord {
            sample_id: sample.id.clone(),
            metric: metric.name(),
            outcome: outcome.clone(),
        })?;
    }
    journal.flush()?;
    drop(journal);
    let mut passes = vec![first];
    if args.repeat > 1 {
        // Repeats must reach the model: a fresh judge that neither reads nor writes the cache.
        let mut uncached = args.judge.clone();
        uncached.no_cache = true;
        let again = super::eval::judge::resolve(&uncached)?;
        let judges = again.judges.clone().plan_for(metrics);
        for k in 2..=args.repeat {
            note(&format!("repeat {k} of {}", args.repeat));
            passes.push(runtime.block_on(score_pass(metric, &judges, samples, window, in_flight)));
        }
    }

    let measure_settings = measure::Settings {
        threshold: args.threshold,
        folds: args.folds as usize,
        resamples: args.bootstrap_resamples,
        seed: args.seed,
    };
    let mut agreement = measure::measure(items, &scores_of(samples, &passes[0]), &measure_settings);
    let mut written = serde_json::to_value(&agreement)?;
    if passes.len() > 1 {
        let report = stability::stability(items, samples, &passes, &measure_settings);
        for line in stability::render(&report) {
            agreement.notes.insert(line.0, json!(line.1));
        }
        written["stability"] = serde_json::to_value(&report)?;
    }
    let agreement_path = run.path().join(AGREEMENT_FILE);
    std::fs::write(&agreement_path, serde_json::to_string_pretty(&written)?)
        .with_context(|| format!("cannot write {}", agreement_path.display()))?;

    let mut aggregator = Aggregator::new(vec![metric.name()]);
    for outcome in &passes[0] {
        aggregator.add(&metric.name(), outcome);
    }
    let summary = aggregator.finish(samples.len(), args.bootstrap_resamples, args.seed);
    manifest.settings["judge"]["stats"] = setup.stats();
    manifest.settings["agreement"] = json!({
        "figures": agreement.figures,
        "unscored": agreement.unscored,
    });
    run.finish(&mut manifest, &summary)?;
    Ok(agreement)
}

/// One pass over every sample, a bounded number at once, outcomes in sample order.
async fn score_pass(
    metric: &dyn Metric,
    judges: &Judges,
    samples: &[Sample],
    window: Option<usize>,
    in_flight: usize,
) -> Vec<Outcome> {
    futures_util::stream::iter(samples)
        .map(|sample| async move {
            let mut sample = sample.clone();
            let keep = super::eval::budget::contexts_to_score(&sample, None, window);
            sample.contexts.truncate(keep);
            let scoring = ScoringContext::new(judges, &sample);
            metric.score(&sample, &scoring).await
        })
        .buffered(in_flight)
        .collect()
        .await
}

/// Each sample's score (`None`: undefined or failed).
fn scores_of(samples: &[Sample], outcomes: &[Outcome]) -> HashMap<String, Option<f64>> {
    samples
        .iter()
        .zip(outcomes)
        .map(|(sample, outcome)| {
            let value = match outcome {
                Outcome::Score { value, .. } => Some(*value),
                _ => None,
            };
            (sample.id.clone(), value)
        })
        .collect()
}

/// The samples as rageval JSONL (`eval`'s reader reads them back for the report), labels
/// in the extra fields.
fn write_samples(path: &Path, samples: &[Sample]) -> anyhow::Result<()> {
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
        text.push_str(&serde_json::to_string(&row)?);
        text.push('\n');
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Removes the files only judge-check writes (a replaced run's, or a failed one's).
fn remove_own_files(run: &Path) -> anyhow::Result<()> {
    for file in [AGREEMENT_FILE, SAMPLES_FILE] {
        let path = run.join(file);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                return Err(error).with_context(|| format!("cannot remove {}", path.display()));
            }
        }
    }
    Ok(())
}

/// `runs/judge-check-<labels file stem>-<metric>`.
fn default_run_path(args: &JudgeCheckArgs) -> PathBuf {
    let stem = args
        .labels
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "labels".into());
    let metric: String = args
        .metric
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

/// A status line on stderr.
fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
