//! The metric choice of an `eval` run: the metrics asked for (`--metrics`, rubric files),
//! or every metric the first sample's fields and the judge allow, with the offline judges
//! only those measured above chance; the gate checked against them, and who answers each
//! task said before any work.

use std::collections::HashSet;
use std::path::Path;

use rageval_core::Sample;
use rageval_core::dataset;
use rageval_metrics::{Metric, MetricCatalogue};
use rageval_report::Gate;

use super::EvalOptions;
use crate::engine::error::{Result, RunError};
use crate::engine::judges::{self, Env, JudgeSetup};
use crate::engine::observe::Observer;
use crate::engine::score::tasks_of;

/// A run's metrics, built.
pub(super) type Metrics = Vec<Box<dyn Metric>>;

/// The run's metrics and their names — chosen with the first sample, which the reader
/// peeks — with the gate checked against them and who answers each task said: what a run
/// and its dry run both start from.
pub(super) fn metrics_of(
    options: &EvalOptions,
    env: Env<'_>,
    setup: &JudgeSetup,
    observer: &dyn Observer,
) -> Result<(Metrics, Vec<String>)> {
    let reader = dataset::open(&options.data, &options.read_options()?)?;
    note_skipped_traces(reader.skipped_traces(), observer);
    let mut samples = reader.peekable();
    let metrics = choose_metrics(options, env, setup, &mut samples, observer)?;
    drop(samples);
    let names: Vec<String> = metrics.iter().map(|m| m.name()).collect();
    check_gate(&options.gate, &names)?;
    announce_judges(&metrics, setup, observer);
    Ok((metrics, names))
}

/// The metrics asked for, or every metric whose inputs the first sample has and that the
/// judges can answer.
pub(super) fn choose_metrics(
    options: &EvalOptions,
    env: Env<'_>,
    setup: &JudgeSetup,
    samples: &mut std::iter::Peekable<
        impl Iterator<Item = std::result::Result<Sample, dataset::DatasetError>>,
    >,
    observer: &dyn Observer,
) -> Result<Vec<Box<dyn Metric>>> {
    let catalogue =
        crate::engine::rubrics::catalogue(&options.rubric_files, &options.judge.flags, env)?;
    if !options.metrics.is_empty() {
        let metrics = build_metrics(&catalogue, options.metrics.iter().map(String::as_str))?;
        require_models(&metrics, setup)?;
        return Ok(metrics);
    }
    let first = match samples.peek() {
        Some(Ok(sample)) => sample.clone(),
        // The reader reports an empty file itself; a bad first record surfaces later.
        _ => Sample::default(),
    };
    default_metrics(&catalogue, &first, setup, &options.data, observer)
}

/// A gate on a metric that will not run is a typo: say so before any work is done.
fn check_gate(gate: &Gate, names: &[String]) -> Result<()> {
    for threshold in &gate.thresholds {
        if !names.contains(&threshold.metric) {
            return Err(RunError::Usage(format!(
                "--fail-under names metric `{}`, which this run does not compute",
                threshold.metric
            )));
        }
    }
    Ok(())
}

/// Every metric whose inputs the first sample has and that the judges can answer; with the
/// offline judges, only model-free metrics and those whose judge measured above chance on
/// the first sample's script (the others are named, with why and how to run them anyway).
fn default_metrics(
    catalogue: &MetricCatalogue,
    first: &Sample,
    setup: &JudgeSetup,
    data: &Path,
    observer: &dyn Observer,
) -> Result<Vec<Box<dyn Metric>>> {
    let lang = rageval_tasks::Lang::detect(&first.question);
    let mut metrics = Vec::new();
    let mut unanswered = Vec::new();
    let mut unproven = Vec::new();
    for name in catalogue.input_defaults(first) {
        let metric = catalogue.build(name)?;
        let requirements = metric.requirements();
        if let Some(why) = setup.unmet(&requirements) {
            unanswered.push(format!("{name} ({why})"));
            continue;
        }
        let judged = !requirements.tasks.is_empty() || requirements.embeddings;
        if judged && setup.is_offline() {
            let agreement = if requirements.embeddings {
                Err("embedding similarity: agreement with people unmeasured".to_string())
            } else {
                setup.agreement_above_chance(metric.as_ref(), lang)
            };
            if let Err(why) = agreement {
                unproven.push(format!("{name} ({why})"));
                continue;
            }
        }
        metrics.push(metric);
    }
    if metrics.is_empty() {
        return Err(RunError::Usage(format!(
            "no metric applies to the first sample of {} (it needs a response with a \
             reference, or retrieved contexts)",
            data.display()
        )));
    }
    let names: Vec<String> = metrics.iter().map(|m| m.name()).collect();
    observer.note(format!(
        "metrics: {} (from the first sample's fields and the judge)",
        names.join(", ")
    ));
    if !unproven.is_empty() {
        observer.note(unproven_note(setup, &unproven));
    }
    if !unanswered.is_empty() {
        // The hint to name a writing model is said once, not once per metric.
        let hint = format!("; {}", judges::WRITER_HINT);
        let needs_writer = unanswered.iter().any(|why| why.contains(&hint));
        let listed: Vec<String> = unanswered
            .iter()
            .map(|why| why.replace(&hint, ""))
            .collect();
        let mut note = format!(
            "not run, the judge cannot answer them: {}",
            listed.join("; ")
        );
        if needs_writer {
            note.push_str(&format!(". To run them, {}", judges::WRITER_HINT));
        }
        observer.note(note);
    }
    Ok(metrics)
}

/// Why the `unproven` metrics (each with its reason) are not run by default, naming the
/// judges that would answer them: the offline heuristic judge, or a checker model with the
/// heuristic judge for what the checker does not answer.
fn unproven_note(setup: &JudgeSetup, unproven: &[String]) -> String {
    let (who, measure) = match setup.checker() {
        Some(checker) => (
            format!(
                "the judges' agreement with people (the checker model {} for support \
                 verdicts, the heuristic judge for the rest)",
                checker.name()
            ),
            ", measure the checker with `rageval judge-check LABELS --metric NAME --judge \
             checker:DIR` (docs/judges.md)",
        ),
        None => ("the offline judge's agreement with people".to_owned(), ""),
    };
    format!(
        "not run by default, {who} is not shown to be above chance on this language: {}; \
         name them with --metrics to run them anyway{measure}, or use a model judge",
        unproven.join(", ")
    )
}

/// Refuses metrics asked for by name that need the embedded models when those are not
/// provisioned: the run would fail on every sample, and the fix is one script.
fn require_models(metrics: &[Box<dyn Metric>], setup: &JudgeSetup) -> Result<()> {
    if setup.missing_models.is_none() {
        return Ok(());
    }
    for metric in metrics {
        if let Some(why) = setup.unmet(&metric.requirements()) {
            return Err(RunError::Usage(format!(
                "{} cannot run: {why}",
                metric.name()
            )));
        }
    }
    Ok(())
}

/// Says who answers each task the metrics need, and which metrics will fail.
fn announce_judges(metrics: &[Box<dyn Metric>], setup: &JudgeSetup, observer: &dyn Observer) {
    for metric in metrics {
        if let Some(why) = setup.unmet(&metric.requirements()) {
            observer.note(format!(
                "note: {} will fail on every sample: {why}",
                metric.name()
            ));
        }
    }
    for line in setup.route_lines(&tasks_of(metrics)) {
        observer.note(format!("judge: {line}"));
    }
    let embeds = metrics.iter().any(|m| m.requirements().embeddings);
    if let Some(fallback) = setup.embedding_fallback.as_ref().filter(|_| embeds) {
        observer.note(format!("judge: {fallback}"));
    }
}

fn build_metrics<'a>(
    catalogue: &MetricCatalogue,
    specs: impl Iterator<Item = &'a str>,
) -> Result<Vec<Box<dyn Metric>>> {
    let mut seen = HashSet::new();
    let mut metrics = Vec::new();
    for spec in specs.filter(|s| !s.trim().is_empty()) {
        let metric = catalogue.build(spec)?;
        if !seen.insert(metric.name()) {
            return Err(RunError::Usage(format!(
                "metric `{}` is asked for twice",
                metric.name()
            )));
        }
        metrics.push(metric);
    }
    if metrics.is_empty() {
        return Err(RunError::Usage("--metrics names no metric".into()));
    }
    Ok(metrics)
}

/// Names the traces a trace format skipped for lack of a retriever span (a few ids, and
/// the count).
fn note_skipped_traces(skipped: &[String], observer: &dyn Observer) {
    const SHOWN: usize = 5;
    if skipped.is_empty() {
        return;
    }
    let mut shown: Vec<&str> = skipped.iter().take(SHOWN).map(String::as_str).collect();
    if skipped.len() > SHOWN {
        shown.push("…");
    }
    observer.note(format!(
        "note: {} traces skipped, they have no retriever span: {}",
        skipped.len(),
        shown.join(", ")
    ));
}
