//! `rageval judge-check LABELS --metric M`: runs the configured judge (endpoint, heuristic,
//! or any backend the judge flags select) through metric `M` on human-labelled items and
//! reports how well its scores agree with the labels, with seeded 95% bootstrap intervals.
//!
//! - [`labels`]: the documented JSONL shapes (pairwise, binary, graded).
//! - [`convert`]: the shared sets (`--format wikieval|uhgeval|rgb|dureader|cranfield`).
//! - [`journal`]: the judging, journaled sample by sample so a run resumes.
//! - [`measure`]: the statistics over items; [`stability`]: `--repeat K`.
//!
//! Writes a run directory of the same kind as `eval` (manifest, `samples.jsonl` — the
//! items' samples with their labels, `results.jsonl` — each sample's outcome with the
//! judge's reasons, `summary.json`, reports) plus `agreement.json` (the type lives in
//! `rageval-report`, which shows it), so `report`, `compare` and `serve` work on it. Bad
//! labels stop before any judging (exit 2); a failure halfway removes a new directory. Like
//! `eval`, Ctrl-C stops after the journaled samples (exit 130, the run left `running`), and
//! running the same command into the same directory resumes it; other labels or another
//! judge there are refused.

mod convert;
mod journal;
mod labels;
mod measure;
mod stability;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::{Args, ValueEnum};
use rageval_core::stats::{DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_SEED};
use rageval_core::{Outcome, Sample};
use rageval_metrics::Metric;
use rageval_report::{
    AGREEMENT_FILE, Aggregator, Agreement, DatasetInfo, Gate, Manifest, MetricRecord, ResultRecord,
    RunData, SessionEnd, sha256_bytes, sha256_file, utc_timestamp,
};
use serde_json::json;

use super::eval::accounting::SessionOpen;
use super::eval::judge::JudgeSetup;
use super::eval::resume::{self, Prepared};
use crate::cli::{GateArgs, JudgeArgs};
use journal::{REPEATS_FILE, RepeatRecord, write_atomically};
use labels::Item;

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

    /// The run directory to write (default: `runs/judge-check-<labels>-<metric>`). A run
    /// there over the same labels with the same metric and judge is resumed; other labels or
    /// another judge there are refused.
    #[arg(long, short)]
    pub out: Option<PathBuf>,

    /// Replace a run already in the output directory (by default a run there over the same
    /// labels, metric and judge is resumed: only what it lacks is judged).
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
    let session_started = utc_timestamp();
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
    let samples_text = samples_jsonl(&samples)?;
    let fresh = fresh_manifest(args, &items, metric, &setup, &run_path, &samples_text)?;
    let mut prepared = resume::prepare(&run_path, args.overwrite, false, fresh, &same_labels)?;
    let check = Check {
        args,
        metrics: &metrics,
        items: &items,
        samples: &samples,
        setup: &setup,
    };
    let agreement = match check.judge_and_write(&mut prepared, &samples_text, session_started) {
        Ok(Ended::Finished(agreement)) => agreement,
        Ok(Ended::Interrupted) => {
            note(&format!(
                "interrupted: finished samples are in {}; run the same command again to resume",
                run_path.display()
            ));
            return Ok(ExitCode::from(super::eval::EXIT_INTERRUPTED));
        }
        Err(error) => {
            if prepared.resumed {
                note("the run stays incomplete: its finished samples are kept");
            } else if let Err(cleanup) =
                remove_own_files(&run_path).and_then(|()| Ok(prepared.run.abandon()?))
            {
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

/// How a judging session ended.
enum Ended {
    /// Every cell is journaled; the run is complete with these figures.
    Finished(Agreement),
    /// Ctrl-C: the journaled cells are kept, the run stays resumable.
    Interrupted,
}

/// One judge-check: what is checked, on which items, by which judge.
struct Check<'a> {
    args: &'a JudgeCheckArgs,
    metrics: &'a [Box<dyn Metric>],
    items: &'a [Item],
    samples: &'a [Sample],
    setup: &'a JudgeSetup,
}

impl Check<'_> {
    /// Judges every sample not yet journaled (K times with `--repeat`), journaling each as
    /// it finishes; then measures from the journals and finishes the run directory.
    fn judge_and_write(
        &self,
        prepared: &mut Prepared,
        samples_text: &str,
        session_started: String,
    ) -> anyhow::Result<Ended> {
        let (args, setup) = (self.args, self.setup);
        let metric = self.metrics[0].as_ref();
        let name = metric.name();
        let run_path = prepared.run.path().to_path_buf();
        // Figures from an earlier session are stale until this one finishes; repeats of a
        // run that is not resumed are not this run's.
        let stale: &[&str] = if prepared.resumed {
            &[AGREEMENT_FILE]
        } else {
            &[AGREEMENT_FILE, REPEATS_FILE]
        };
        remove_files(&run_path, stale)?;
        write_atomically(&run_path.join(SAMPLES_FILE), samples_text)?;
        prepared.run.write_manifest(&prepared.manifest)?;

        let first_done: HashSet<&str> = prepared
            .done
            .iter()
            .filter(|(_, m)| *m == name)
            .map(|(id, _)| id.as_str())
            .collect();
        let repeats_done = journal::repeats_done(&run_path, &name)?;
        if prepared.resumed {
            note(&format!(
                "resuming {}: {} of {} samples judged, {} repeat judgements kept",
                run_path.display(),
                first_done.len(),
                self.samples.len(),
                repeats_done.len()
            ));
        }
        // Repeats must reach the model: a fresh judge that neither reads nor writes the cache.
        let again = if args.repeat > 1 {
            let mut uncached = args.judge.clone();
            uncached.no_cache = true;
            Some(super::eval::judge::resolve(&uncached)?)
        } else {
            None
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        let pass = journal::Pass {
            metric,
            window: setup
                .has_chat_model()
                .then(|| usize::try_from(args.judge.context_window).unwrap_or(usize::MAX)),
            in_flight: setup.concurrency.saturating_mul(2),
        };
        let mut session = SessionOpen::new(setup, session_started, &prepared.manifest);
        if let Some(again) = &again {
            session.also_counting(again);
        }
        let mut results = prepared.run.journal()?;
        let mut repeats = prepared.run.side_journal(REPEATS_FILE)?;
        let mut cells = 0usize;
        let (run_dir, manifest) = (&prepared.run, &mut prepared.manifest);
        let ended = runtime.block_on(async {
            let judging = async {
                let todo: Vec<&Sample> = self
                    .samples
                    .iter()
                    .filter(|s| !first_done.contains(s.id.as_str()))
                    .collect();
                note(&format!(
                    "judging {} of {} samples ({} items) with {name}",
                    todo.len(),
                    self.samples.len(),
                    self.items.len()
                ));
                let judges = setup.judges.clone().plan_for(self.metrics);
                pass.judge(&judges, todo, |sample, outcome| {
                    results.append(&record(sample, &name, outcome))?;
                    results.flush()?;
                    cells += 1;
                    session.checkpoint(run_dir, manifest, cells)
                })
                .await?;
                let Some(again) = &again else {
                    return anyhow::Ok(());
                };
                let judges = again.judges.clone().plan_for(self.metrics);
                for k in 2..=args.repeat {
                    let todo: Vec<&Sample> = self
                        .samples
                        .iter()
                        .filter(|s| !repeats_done.contains(&(k, s.id.clone())))
                        .collect();
                    note(&format!(
                        "repeat {k} of {}: {} samples",
                        args.repeat,
                        todo.len()
                    ));
                    pass.judge(&judges, todo, |sample, outcome| {
                        repeats.append(&RepeatRecord {
                            repeat: k,
                            record: record(sample, &name, outcome),
                        })?;
                        repeats.flush()?;
                        cells += 1;
                        session.checkpoint(run_dir, manifest, cells)
                    })
                    .await?;
                }
                Ok(())
            };
            tokio::select! {
                result = judging => Some(result),
                _ = tokio::signal::ctrl_c() => None,
            }
        });
        results.flush()?;
        repeats.flush()?;
        match ended {
            None => {
                for judge in [Some(setup), again.as_ref()].into_iter().flatten() {
                    if let Some(chat) = &judge.chat {
                        chat.cancel();
                    }
                }
                let reason = "interrupted (Ctrl-C)".to_string();
                note(&session.stop(prepared, SessionEnd::Interrupted, reason, cells)?);
                return Ok(Ended::Interrupted);
            }
            Some(Err(error)) => {
                if prepared.resumed {
                    session.stop(prepared, SessionEnd::Failed, format!("{error:#}"), cells)?;
                }
                return Err(error);
            }
            Some(Ok(())) => {}
        }
        drop((results, repeats));

        let passes = journal::read_passes(&run_path, &name, self.samples, args.repeat)?;
        let measure_settings = measure::Settings {
            threshold: args.threshold,
            folds: args.folds as usize,
            resamples: args.bootstrap_resamples,
            seed: args.seed,
        };
        let scores = scores_of(self.samples, &passes[0]);
        let mut agreement = measure::measure(self.items, &scores, &measure_settings);
        if passes.len() > 1 {
            let report = stability::stability(self.items, self.samples, &passes, &measure_settings);
            agreement.stability = Some(report);
        }
        write_atomically(
            &run_path.join(AGREEMENT_FILE),
            &serde_json::to_string_pretty(&agreement)?,
        )?;

        let mut aggregator = Aggregator::new(vec![name.clone()]);
        for outcome in &passes[0] {
            aggregator.add(&name, outcome);
        }
        let mut summary =
            aggregator.finish(self.samples.len(), args.bootstrap_resamples, args.seed);
        let manifest = &mut prepared.manifest;
        manifest.settings["judge"]["stats"] = setup.stats();
        manifest.settings["agreement"] = json!({
            "figures": agreement.figures,
            "unscored": agreement.unscored,
        });
        let account = session.close(manifest, SessionEnd::Complete, None, cells);
        summary.judge = Some(account);
        prepared.run.finish(manifest, &summary)?;
        Ok(Ended::Finished(agreement))
    }
}

/// A journal line of `sample`'s outcome.
fn record(sample: &Sample, metric: &str, outcome: Outcome) -> ResultRecord {
    ResultRecord {
        sample_id: sample.id.clone(),
        metric: metric.to_owned(),
        outcome,
    }
}

/// The manifest a new run starts with: the samples (the run's dataset, hashed as they will
/// be written), the metric, and the labels, judge and statistics settings.
fn fresh_manifest(
    args: &JudgeCheckArgs,
    items: &[Item],
    metric: &dyn Metric,
    setup: &JudgeSetup,
    run_path: &Path,
    samples_text: &str,
) -> anyhow::Result<Manifest> {
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
    Ok(Manifest::start(
        "judge-check",
        dataset,
        vec![record],
        settings,
    ))
}

/// Refuses to resume a run that checked other labels (another file, format or `--samples`).
fn same_labels(earlier: &Manifest, fresh: &Manifest) -> Result<(), String> {
    let key = |m: &Manifest| {
        let s = &m.settings;
        [
            s["labels_sha256"].clone(),
            s["labels_format"].clone(),
            s["samples"].clone(),
        ]
    };
    if key(earlier) == key(fresh) {
        return Ok(());
    }
    let describe = |m: &Manifest| {
        let s = &m.settings;
        let sha = s["labels_sha256"].as_str().unwrap_or("?");
        format!(
            "{} (format {}, SHA-256 {}…{})",
            s["labels"].as_str().unwrap_or("?"),
            s["labels_format"].as_str().unwrap_or("?"),
            &sha[..sha.len().min(12)],
            s["samples"]
                .as_u64()
                .map_or_else(String::new, |n| format!(", first {n} records"))
        )
    };
    Err(format!(
        "it checked the labels {}, now the labels are {}",
        describe(earlier),
        describe(fresh)
    ))
}

/// Each sample's score (`None`: undefined or failed).
fn scores_of(samples: &[Sample], outcomes: &[Outcome]) -> HashMap<String, Option<f64>> {
    samples
        .iter()
        .zip(outcomes)
        .map(|(sample, outcome)| (sample.id.clone(), outcome.value()))
        .collect()
}

/// The samples as rageval JSONL (`eval`'s reader reads them back for the report), labels
/// in the extra fields.
fn samples_jsonl(samples: &[Sample]) -> anyhow::Result<String> {
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
    Ok(text)
}

/// Removes the files only judge-check writes (a failed new run's).
fn remove_own_files(run: &Path) -> anyhow::Result<()> {
    remove_files(run, &[AGREEMENT_FILE, SAMPLES_FILE, REPEATS_FILE])
}

/// Removes `files` from the run directory where they exist.
fn remove_files(run: &Path, files: &[&str]) -> anyhow::Result<()> {
    for file in files {
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
