//! `rageval eval`: read a dataset, score every sample with every metric, write a run
//! directory and print the summary.
//!
//! The dataset is streamed: samples are scored as they are read. If the data turns out to
//! be bad halfway, the run directory is removed again (or, if it existed before, emptied of
//! this run's files), so nothing is left that looks like results.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use rageval_core::Sample;
use rageval_core::dataset::{self, FieldMap, Format, ReadOptions};
use rageval_metrics::Metric;
use rageval_report::{
    Aggregator, DatasetInfo, Gate, Manifest, MetricRecord, ResultRecord, RunData, RunDir,
    render_summary_table, sha256_file,
};
use serde_json::json;

use crate::cli::{DataFormat, EvalArgs};

pub fn run(args: &EvalArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let gate = Gate::parse(&args.gate.fail_under)?;
    let options = ReadOptions {
        format: args.format.map(format_of),
        field_map: FieldMap::parse(&args.field_map)?,
        sheet: args.sheet.clone(),
    };
    let mut samples = dataset::open(&args.data, &options)?.peekable();
    let metrics = if args.metrics.is_empty() {
        let first = match samples.peek() {
            Some(Ok(sample)) => sample,
            // The reader reports an empty file itself; a bad first record surfaces below.
            _ => &Sample::default(),
        };
        let names = rageval_metrics::model_free_defaults(first);
        if names.is_empty() {
            bail!(
                "no model-free metric applies to the first sample of {} (it needs a response \
                 with a reference, or retrieved contexts with gold contexts or ids)",
                args.data.display()
            );
        }
        eprintln_note(&format!(
            "metrics: {} (from the first sample's fields)",
            names.join(", ")
        ));
        build_metrics(names.iter().copied())?
    } else {
        build_metrics(args.metrics.iter().map(String::as_str))?
    };

    // A gate on a metric that will not run is a typo: say so before any work is done.
    for threshold in &gate.thresholds {
        if !metrics.iter().any(|m| m.name() == threshold.metric) {
            bail!(
                "--fail-under names metric `{}`, which this run does not compute",
                threshold.metric
            );
        }
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
            formula: metric.info().formula.to_string(),
            source: metric.info().source.to_string(),
        })
        .collect();
    let settings = json!({
        "metrics": metrics.iter().map(|m| m.name()).collect::<Vec<_>>(),
        "field_map": args.field_map,
        "sheet": args.sheet,
        "samples": args.samples,
        "seed": args.seed,
        "bootstrap_resamples": args.bootstrap_resamples,
    });
    if args.show_settings {
        let resolved = json!({"out": run_path, "dataset": dataset_info, "settings": settings});
        writeln!(out, "{}", serde_json::to_string_pretty(&resolved)?)
            .context("cannot write to stdout")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut manifest = Manifest::start("eval", dataset_info, records, settings);

    let run = RunDir::create(&run_path, args.overwrite)?;
    let scored = score_into(&run, &mut manifest, &metrics, samples, args);
    let (summary, kept) = match scored {
        Ok(scored) => scored,
        Err(error) => {
            if let Err(cleanup) = run.abandon() {
                eprintln_note(&format!("could not remove the partial run: {cleanup}"));
            }
            return Err(error);
        }
    };
    out.write_all(render_summary_table(&summary).as_bytes())
        .context("cannot write to stdout")?;
    for note in unscored_notes(&summary) {
        eprintln_note(&note);
    }
    eprintln_note(&format!(
        "wrote {} ({} samples × {} metrics)",
        run_path.display(),
        summary.samples,
        metrics.len()
    ));
    let finished = RunData::load(&run_path)?;
    super::report::finish_run(&finished, &kept, &gate, &args.gate, out)
}

/// Scores every sample into the run's journal and returns the finished summary, with the
/// samples kept for the HTML report's drill-down.
fn score_into(
    run: &RunDir,
    manifest: &mut Manifest,
    metrics: &[Box<dyn Metric>],
    samples: impl Iterator<Item = Result<Sample, dataset::DatasetError>>,
    args: &EvalArgs,
) -> anyhow::Result<(rageval_report::Summary, Vec<Sample>)> {
    run.write_manifest(manifest)?;
    let mut journal = run.journal()?;
    let names: Vec<String> = metrics.iter().map(|m| m.name()).collect();
    let mut aggregator = Aggregator::new(names.clone());
    let mut count = 0usize;
    let mut kept = Vec::new();
    for sample in samples.take(args.samples.unwrap_or(usize::MAX)) {
        let sample = sample?;
        for (metric, name) in metrics.iter().zip(&names) {
            let outcome = metric.score(&sample);
            aggregator.add(name, &outcome);
            journal.append(&ResultRecord {
                sample_id: sample.id.clone(),
                metric: name.clone(),
                outcome,
            })?;
        }
        journal.flush()?;
        count += 1;
        kept.push(sample);
    }
    let summary = aggregator.finish(count, args.bootstrap_resamples, args.seed);
    manifest.dataset.samples = Some(count);
    run.finish(manifest, &summary)?;
    Ok((summary, kept))
}

/// One line per metric that left samples unscored, with its most frequent reason.
fn unscored_notes(summary: &rageval_report::Summary) -> Vec<String> {
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
fn eprintln_note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
