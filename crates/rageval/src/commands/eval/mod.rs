//! `rageval eval`: read a dataset, score every sample with every metric (model-judged ones
//! through the configured judge), write a run directory and print the summary.
//!
//! - [`judge`]: the judges from `--judge-*` flags and the environment, and who answers what.
//! - [`resume`]: a new run directory, or the earlier run there resumed.
//! - [`score`]: the streaming, bounded-concurrency scoring loop and the journal.
//! - [`accounting`]: what the judge was asked, per session, into the manifest and summary.
//! - [`dry_run`] and [`planner`]: `--dry-run`'s estimate of calls, tokens and cost.
//! - [`budget`]: seed S3's top-k lowering under the judge's context window.
//! - [`progress`]: the progress bar.
//!
//! The dataset is streamed: samples are scored as they are read, a bounded number at once.
//! Bad data halfway stops the run with exit code 2: a new run directory is removed again (or
//! emptied of this run's files), a resumed one keeps its finished cells. Ctrl-C stops after
//! the samples already journaled, leaving the run incomplete and resumable (exit 130); so
//! does a judge cap (`--max-calls`, `--max-cost`) once reached, after the samples in flight
//! finish (exit 3). Every session's judge usage is recorded in the manifest either way.

pub(crate) mod accounting;
pub(crate) mod budget;
mod dry_run;
pub(crate) mod judge;
mod planner;
mod progress;
pub(crate) mod resume;
mod score;

use std::collections::{BTreeSet, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use rageval_core::Sample;
use rageval_core::dataset::{self, FieldMap, Format, ReadOptions};
use rageval_metrics::Metric;
use rageval_report::{
    Aggregator, DatasetInfo, Gate, Manifest, MetricRecord, RESULTS_FILE, ResultRecord, RunData,
    SessionEnd, Summary, render_summary_table, sha256_file, utc_timestamp,
};
use serde_json::json;

pub use resume::ResumeRefused;

use crate::cli::{DataFormat, EvalArgs};
use judge::JudgeSetup;
use planner::Planner;

/// Exit code of a run stopped by Ctrl-C (128 + SIGINT), resumable.
pub(crate) const EXIT_INTERRUPTED: u8 = 130;
/// Exit code of a run stopped by `--max-calls` or `--max-cost`, resumable.
pub const EXIT_CAP_REACHED: u8 = 3;

pub fn run(args: &EvalArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let session_started = utc_timestamp();
    let gate = Gate::parse(&args.gate.fail_under)?;
    let options = ReadOptions {
        format: args.format.map(format_of),
        field_map: FieldMap::parse(&args.field_map)?,
        sheet: args.sheet.clone(),
    };
    let mut samples = dataset::open(&args.data, &options)?.peekable();
    let mut planner = None;
    let setup = if args.dry_run {
        // The configured models are replaced by local stand-ins: no request, no cache file.
        judge::resolve_with(&args.judge, |settings, local| {
            let heuristic = rageval_tasks::Heuristic::lexical();
            let made = match local {
                Some(models) => Planner::over(models, settings, heuristic),
                None => Planner::new(settings, heuristic)?,
            };
            let judge = made.judge();
            planner = Some(made);
            Ok(judge)
        })?
    } else {
        judge::resolve(&args.judge)?
    };
    let metrics = if args.metrics.is_empty() {
        let first = match samples.peek() {
            Some(Ok(sample)) => sample,
            // The reader reports an empty file itself; a bad first record surfaces below.
            _ => &Sample::default(),
        };
        default_metrics(first, &setup, &args.data)?
    } else {
        let metrics = build_metrics(args.metrics.iter().map(String::as_str))?;
        require_models(&metrics, &setup)?;
        metrics
    };
    let names: Vec<String> = metrics.iter().map(|m| m.name()).collect();

    // A gate on a metric that will not run is a typo: say so before any work is done.
    for threshold in &gate.thresholds {
        if !names.contains(&threshold.metric) {
            bail!(
                "--fail-under names metric `{}`, which this run does not compute",
                threshold.metric
            );
        }
    }

    let top_k = args.top_k.map(|k| usize::try_from(k).unwrap_or(usize::MAX));
    let window = setup.window(args.judge.context_window);
    let limit = args.samples.unwrap_or(usize::MAX);
    if args.dry_run {
        announce_judges(&metrics, &setup);
        note(dry_run::METHOD_NOTE);
        let plan = dry_run::DryRun {
            metrics: &metrics,
            names: &names,
            setup: &setup,
            planner: planner.as_ref(),
            top_k,
            window,
        };
        plan.run(samples.take(limit), args.samples.map(|n| n as u64), out)?;
        return Ok(ExitCode::SUCCESS);
    }

    let run_path = args
        .out
        .clone()
        .unwrap_or_else(|| default_run_path(&args.data));
    let dataset_info = DatasetInfo {
        path: args.data.display().to_string(),
        sha256: sha256_file(&args.data)?,
        format: describe_format(&args.data, args.format),
        samples: None,
    };
    let records = metrics
        .iter()
        .map(|metric| MetricRecord {
            name: metric.name(),
            formula: metric.formula().0.to_string(),
            source: metric.formula().1.to_string(),
        })
        .collect();
    let settings = json!({
        "metrics": names,
        "field_map": args.field_map,
        "sheet": args.sheet,
        "samples": args.samples,
        "seed": args.seed,
        "bootstrap_resamples": args.bootstrap_resamples,
        "top_k": args.top_k,
        "judge": setup.description,
    });
    if args.show_settings {
        let resolved = json!({"out": run_path, "dataset": dataset_info, "settings": settings});
        writeln!(out, "{}", serde_json::to_string_pretty(&resolved)?)
            .context("cannot write to stdout")?;
        return Ok(ExitCode::SUCCESS);
    }
    announce_judges(&metrics, &setup);

    let fresh = Manifest::start("eval", dataset_info, records, settings);
    let mut prepared = resume::prepare(
        &run_path,
        args.overwrite,
        args.retry_failed,
        fresh,
        &|_, _| Ok(()),
    )?;
    if prepared.resumed {
        let retried = if prepared.retried > 0 {
            format!(", {} failed cells to score again", prepared.retried)
        } else {
            String::new()
        };
        note(&format!(
            "resuming {}: {} finished cells kept{retried}",
            run_path.display(),
            prepared.done.len()
        ));
    }
    prepared.run.write_manifest(&prepared.manifest)?;
    let mut journal = prepared.run.journal()?;
    let concurrency = setup.concurrency;
    let judges = setup.judges.clone().plan_for(&metrics);
    let stopped = || setup.cap_reached().is_some();
    let plan = score::Plan {
        metrics: &metrics,
        names: &names,
        judges: &judges,
        top_k,
        window,
        in_flight: concurrency.saturating_mul(2),
        done: &prepared.done,
        stopped: &stopped,
    };
    let mut progress = progress::Progress::new(args.samples.map(|n| n as u64));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut scored = score::Scored::default();
    let mut session = accounting::SessionOpen::new(&setup, session_started, &prepared.manifest);
    let (run_dir, manifest) = (&prepared.run, &mut prepared.manifest);
    let mut checkpoint =
        |scored: &score::Scored| session.checkpoint(run_dir, manifest, scored.cells);
    let ended = runtime.block_on(async {
        let scoring = score::score_all(
            &plan,
            samples.take(limit),
            &mut journal,
            &mut progress,
            &mut scored,
            &mut checkpoint,
        );
        tokio::select! {
            result = scoring => Some(result),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    progress.finish();
    match ended {
        None => {
            if let Some(judge) = &setup.chat {
                judge.cancel();
            }
            journal.flush()?;
            let footer = session.stop(
                &mut prepared,
                SessionEnd::Interrupted,
                "interrupted (Ctrl-C)".into(),
                scored.cells,
            )?;
            note(&footer);
            note(&format!(
                "interrupted: finished samples are in {}; run the same command again to resume",
                run_path.display()
            ));
            return Ok(ExitCode::from(EXIT_INTERRUPTED));
        }
        Some(Err(error)) => {
            if prepared.resumed {
                session.stop(
                    &mut prepared,
                    SessionEnd::Failed,
                    format!("{error:#}"),
                    scored.cells,
                )?;
                note("the run stays incomplete: its finished cells are kept");
            } else if let Err(cleanup) = prepared.run.abandon() {
                note(&format!("could not remove the partial run: {cleanup}"));
            }
            return Err(error);
        }
        Some(Ok(())) => {}
    }
    drop(journal);
    if let Some(cap) = setup.cap_reached() {
        let reason = format!("judge cap reached: {cap}");
        let footer = session.stop(
            &mut prepared,
            SessionEnd::CapReached,
            reason.clone(),
            scored.cells,
        )?;
        note(&footer);
        note(&format!(
            "stopped: {reason}. {} cells were journaled in this session and {} left unscored \
             for the next one (no further sample was started; those in flight finished). \
             {} stays resumable: run the same command again, with a larger cap or none, to \
             continue.",
            scored.cells,
            scored.held_back,
            run_path.display()
        ));
        return Ok(ExitCode::from(EXIT_CAP_REACHED));
    }

    let mut summary = summarise(&run_path, &names, args)?;
    prepared.manifest.dataset.samples = Some(summary.samples);
    prepared.manifest.settings["judge"]["stats"] = setup.stats();
    let account = session.close(
        &mut prepared.manifest,
        SessionEnd::Complete,
        None,
        scored.cells,
    );
    let footer = accounting::footer(&account, &accounting::this_session(&prepared.manifest));
    summary.judge = Some(account);
    prepared.run.finish(&mut prepared.manifest, &summary)?;
    out.write_all(render_summary_table(&summary).as_bytes())
        .context("cannot write to stdout")?;
    writeln!(out, "{footer}").context("cannot write to stdout")?;
    for line in unscored_notes(&summary) {
        note(&line);
    }
    if scored.cut > 0 {
        note(&format!(
            "{} samples had their contexts cut to fit (--top-k / --context-window)",
            scored.cut
        ));
    }
    note(&format!(
        "wrote {} ({} samples × {} metrics; {} cells scored now, {} of them failed)",
        run_path.display(),
        summary.samples,
        metrics.len(),
        scored.cells,
        scored.failed
    ));
    let finished = RunData::load(&run_path)?;
    let kept = super::report::samples_of(&finished.manifest);
    super::report::finish_run(&finished, &kept, &gate, &args.gate, out)
}

/// Every metric whose inputs the first sample has and that the judges can answer.
fn default_metrics(
    first: &Sample,
    setup: &JudgeSetup,
    data: &Path,
) -> anyhow::Result<Vec<Box<dyn Metric>>> {
    let mut metrics = Vec::new();
    let mut skipped = Vec::new();
    for name in rageval_metrics::input_defaults(first) {
        let metric = rageval_metrics::build(name)?;
        match setup.unmet(&metric.requirements()) {
            None => metrics.push(metric),
            Some(_) => skipped.push(name),
        }
    }
    if metrics.is_empty() {
        bail!(
            "no metric applies to the first sample of {} (it needs a response with a \
             reference, or retrieved contexts)",
            data.display()
        );
    }
    let names: Vec<String> = metrics.iter().map(|m| m.name()).collect();
    note(&format!(
        "metrics: {} (from the first sample's fields and the judge)",
        names.join(", ")
    ));
    if !skipped.is_empty() {
        note(&format!(
            "not run, the judge cannot answer them: {} (configure --judge-model or \
             --judge-embedding-model, or provision the embedded models with \
             ./scripts/fetch-models.sh)",
            skipped.join(", ")
        ));
    }
    Ok(metrics)
}

/// Refuses metrics asked for by name that need the embedded models when those are not
/// provisioned: the run would fail on every sample, and the fix is one script.
fn require_models(metrics: &[Box<dyn Metric>], setup: &JudgeSetup) -> anyhow::Result<()> {
    if setup.missing_models.is_none() {
        return Ok(());
    }
    for metric in metrics {
        if let Some(why) = setup.unmet(&metric.requirements()) {
            bail!("{} cannot run: {why}", metric.name());
        }
    }
    Ok(())
}

/// Says on stderr who answers each task the metrics need, and which metrics will fail.
fn announce_judges(metrics: &[Box<dyn Metric>], setup: &JudgeSetup) {
    let mut tasks = BTreeSet::new();
    for metric in metrics {
        let requirements = metric.requirements();
        tasks.extend(requirements.tasks.iter().copied());
        if let Some(why) = setup.unmet(&requirements) {
            note(&format!(
                "note: {} will fail on every sample: {why}",
                metric.name()
            ));
        }
    }
    let tasks: Vec<_> = tasks.into_iter().collect();
    for line in setup.route_lines(&tasks) {
        note(&format!("judge: {line}"));
    }
}

/// The summary of every cell in the journal (earlier runs' included), read line by line.
fn summarise(run_path: &Path, names: &[String], args: &EvalArgs) -> anyhow::Result<Summary> {
    let path = run_path.join(RESULTS_FILE);
    let file = File::open(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut aggregator = Aggregator::new(names.to_vec());
    let mut samples = HashSet::new();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let record: ResultRecord = serde_json::from_str(&line)
            .with_context(|| format!("{}:{}: not a journal line", path.display(), index + 1))?;
        aggregator.add(&record.metric, &record.outcome);
        samples.insert(record.sample_id);
    }
    Ok(aggregator.finish(samples.len(), args.bootstrap_resamples, args.seed))
}

/// One line per metric that left samples unscored, with its most frequent reason.
fn unscored_notes(summary: &Summary) -> Vec<String> {
    let mut notes = Vec::new();
    for name in &summary.metric_order {
        let Some(metric) = summary.metrics.get(name) else {
            continue;
        };
        for (kind, count, reasons) in [
            ("undefined", metric.n_undefined, &metric.undefined_reasons),
            ("failed", metric.n_failed, &metric.failed_errors),
        ] {
            if let Some((reason, _)) = reasons.iter().max_by_key(|(_, n)| **n) {
                let more = if reasons.len() > 1 {
                    format!(" (and {} other reasons)", reasons.len() - 1)
                } else {
                    String::new()
                };
                notes.push(format!(
                    "note: {name} is {kind} for {count} samples: {reason}{more}"
                ));
            }
        }
    }
    notes
}

fn build_metrics<'a>(specs: impl Iterator<Item = &'a str>) -> anyhow::Result<Vec<Box<dyn Metric>>> {
    let mut seen = HashSet::new();
    let mut metrics = Vec::new();
    for spec in specs.filter(|s| !s.trim().is_empty()) {
        let metric = rageval_metrics::build(spec)?;
        if !seen.insert(metric.name()) {
            bail!("metric `{}` is asked for twice", metric.name());
        }
        metrics.push(metric);
    }
    if metrics.is_empty() {
        bail!("--metrics names no metric");
    }
    Ok(metrics)
}

pub(super) fn format_of(format: DataFormat) -> Format {
    match format {
        DataFormat::Jsonl => Format::Jsonl,
        DataFormat::Json => Format::Json,
        DataFormat::Csv => Format::Csv,
        DataFormat::Xlsx => Format::Xlsx,
    }
}

fn describe_format(path: &Path, given: Option<DataFormat>) -> String {
    match given {
        Some(format) => format!("{format:?}").to_lowercase(),
        None if path.is_dir() => "seed-files".into(),
        None => path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default(),
    }
}

/// `runs/<dataset file stem>`.
fn default_run_path(data: &Path) -> PathBuf {
    let stem = data
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".into());
    PathBuf::from("runs").join(stem)
}

/// A progress or status line on stderr.
fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
