//! `rageval reference`: a reference answer per question from all of its contexts, written as
//! seed S3's `GT_{question}.json` (and `FULL_{question}.json` when the data has the system's
//! answer), plus `references.jsonl` with every call behind each answer.
//!
//! A question whose reference could not be made (a merge call failed, answers too long to
//! merge) or that no context answers gets no `GT_` file; `references.jsonl` says why and the
//! command notes it. Settings that can never work (a window too small for the question) stop
//! the command with exit code 2.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use futures_util::stream::{self, StreamExt};
use rageval_core::Sample;
use rageval_rank::reference::files::{
    EXTENSION, FULL_PREFIX, FullFile, GROUND_TRUTH_PREFIX, GroundTruthFile, file_names,
};
use rageval_rank::{
    RankError, Reference, ReferenceMode, ReferenceSettings, TaskAnswerer, generate_reference,
};
use rageval_tasks::TaskKind;
use serde::Serialize;
use serde_json::json;

use super::output::{OutputDir, write_file};
use super::{TaskSetup, default_out, note, read_samples, runtime, task_judge};
use crate::cli::{ReferenceArgs, ReferenceModeArg, ReferenceOptions};

/// Per question, one JSON line.
pub const REFERENCES_FILE: &str = "references.jsonl";

/// One question's outcome.
#[derive(Debug, Serialize)]
pub struct QuestionReference {
    pub sample_id: String,
    pub question: String,
    /// The `GT_` file written, if any.
    pub file: Option<String>,
    /// The `FULL_` file written, if any.
    pub full_file: Option<String>,
    /// How it was made, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<Reference>,
    /// Why there is no reference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The reference settings of these flags and the judge's window (`TaskSetup::context_window`).
pub fn reference_settings(
    options: &ReferenceOptions,
    context_window: u64,
    seed: u64,
    concurrency: usize,
) -> anyhow::Result<ReferenceSettings> {
    let Some(window) = context_window.checked_sub(options.answer_tokens) else {
        bail!(
            "--answer-tokens {} leaves no room for a prompt in the judge's context window {}",
            options.answer_tokens,
            context_window
        );
    };
    if window == 0 {
        bail!("--answer-tokens must be below --context-window");
    }
    let mode = match options.mode {
        ReferenceModeArg::Slow => ReferenceMode::Slow,
        ReferenceModeArg::Fast => ReferenceMode::Fast,
    };
    let mut settings = ReferenceSettings::new(mode, usize::try_from(window).unwrap_or(usize::MAX));
    settings.group_size = options.group_size;
    settings.seed = seed;
    settings.max_in_flight = concurrency.max(rageval_rank::DEFAULT_MAX_IN_FLIGHT);
    Ok(settings)
}

/// Generates every sample's reference; stops on an error no question can escape.
pub async fn generate_all(
    answerer: &TaskAnswerer,
    samples: &[Sample],
    settings: &ReferenceSettings,
    at_once: usize,
) -> anyhow::Result<Vec<Result<Reference, String>>> {
    let results: Vec<Result<Reference, RankError>> = stream::iter(samples)
        .map(|sample| async move {
            let contexts: Vec<&str> = sample.contexts.iter().map(|c| c.text.as_str()).collect();
            generate_reference(answerer, &sample.question, &contexts, settings).await
        })
        .buffered(at_once.max(1))
        .collect()
        .await;
    results
        .into_iter()
        .map(|result| match result {
            Ok(reference) => Ok(Ok(reference)),
            Err(error @ (RankError::InvalidSetting { .. } | RankError::WindowTooSmall { .. })) => {
                Err(anyhow::Error::new(error))
            }
            Err(error) => Ok(Err(error_text(&error))),
        })
        .collect()
}

fn error_text(error: &RankError) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// Writes the `GT_` / `FULL_` files and references.jsonl into `dir`; returns the lines.
pub fn write_references(
    dir: &Path,
    samples: &[Sample],
    results: Vec<Result<Reference, String>>,
) -> anyhow::Result<Vec<QuestionReference>> {
    let questions: Vec<&str> = samples.iter().map(|s| s.question.as_str()).collect();
    let gt_names = file_names(GROUND_TRUTH_PREFIX, &questions, EXTENSION);
    let full_names = file_names(FULL_PREFIX, &questions, EXTENSION);
    let mut lines = Vec::new();
    for (index, (sample, result)) in samples.iter().zip(results).enumerate() {
        let mut line = QuestionReference {
            sample_id: sample.id.clone(),
            question: sample.question.clone(),
            file: None,
            full_file: None,
            reference: None,
            error: None,
        };
        match result {
            Err(error) => line.error = Some(error),
            Ok(reference) => {
                let contexts: Vec<String> =
                    sample.contexts.iter().map(|c| c.text.clone()).collect();
                match &reference.ground_truth {
                    None => line.error = Some("no context answers the question".into()),
                    Some(ground_truth) => {
                        let gt = GroundTruthFile {
                            question: sample.question.clone(),
                            contexts: contexts.clone(),
                            ground_truth: ground_truth.clone(),
                        };
                        write_file(dir, &gt_names[index], &serde_json::to_vec_pretty(&gt)?)?;
                        line.file = Some(gt_names[index].clone());
                        if let Some(answer) = &sample.answer {
                            let full = FullFile {
                                question: sample.question.clone(),
                                contexts,
                                ground_truth: ground_truth.clone(),
                                answer: answer.clone(),
                            };
                            write_file(
                                dir,
                                &full_names[index],
                                &serde_json::to_vec_pretty(&full)?,
                            )?;
                            line.full_file = Some(full_names[index].clone());
                        }
                    }
                }
                line.reference = Some(reference);
            }
        }
        lines.push(line);
    }
    let mut text = String::new();
    for line in &lines {
        text.push_str(&serde_json::to_string(line)?);
        text.push('\n');
    }
    write_file(dir, REFERENCES_FILE, text.as_bytes())?;
    Ok(lines)
}

/// Fails early when the judge cannot write answers (the offline heuristic judge cannot).
pub fn require_writer(setup: &TaskSetup) -> anyhow::Result<()> {
    for task in [TaskKind::AnswerFromContexts, TaskKind::MergeAnswers] {
        setup
            .judge
            .route(task)
            .context("reference answers need a judge that writes (configure --judge-model)")?;
    }
    Ok(())
}

/// Notes the questions left without a reference; returns how many there are.
pub fn note_missing(lines: &[QuestionReference]) -> usize {
    let missing: Vec<&QuestionReference> = lines.iter().filter(|l| l.file.is_none()).collect();
    for line in &missing {
        note(&format!(
            "note: no reference for sample {}: {}",
            line.sample_id,
            line.error.as_deref().unwrap_or("unknown")
        ));
    }
    missing.len()
}

pub fn run(args: &ReferenceArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let data = &args.data;
    let samples = read_samples(
        &data.data,
        &data.field_map,
        data.format,
        data.sheet.clone(),
        data.samples,
    )?;
    let setup = task_judge(&args.judge)?;
    require_writer(&setup)?;
    let settings = reference_settings(
        &args.reference,
        setup.context_window,
        data.seed,
        setup.concurrency,
    )?;
    let path = data
        .out
        .clone()
        .unwrap_or_else(|| default_out(&data.data, "reference"));
    let dir = OutputDir::create(&path, data.overwrite)?;
    let answerer = TaskAnswerer::new(setup.judge.clone());
    let results = runtime()?.block_on(generate_all(&answerer, &samples, &settings, 4))?;
    let lines = write_references(dir.path(), &samples, results)?;
    let summary = summary_json(&lines, &settings, &setup);
    dir.write(
        super::SUMMARY_FILE,
        serde_json::to_string_pretty(&summary)?.as_bytes(),
    )?;
    let written = dir.commit()?;
    let missing = note_missing(&lines);
    writeln!(
        out,
        "{} references of {} questions ({} calls, largest prompt {} of {} tokens)",
        lines.len() - missing,
        lines.len(),
        summary["calls"],
        summary["largest_prompt_tokens"],
        settings.max_prompt_tokens
    )
    .context("cannot write to stdout")?;
    note(&format!("wrote {}", written.display()));
    Ok(ExitCode::SUCCESS)
}

/// Settings and totals for summary.json.
pub fn summary_json(
    lines: &[QuestionReference],
    settings: &ReferenceSettings,
    setup: &TaskSetup,
) -> serde_json::Value {
    let references: Vec<&Reference> = lines.iter().filter_map(|l| l.reference.as_ref()).collect();
    json!({
        "command": "reference",
        "settings": settings,
        "judge": setup.description,
        "questions": lines.len(),
        "written": lines.iter().filter(|l| l.file.is_some()).count(),
        "calls": references.iter().map(|r| r.calls.answer + r.calls.merge).sum::<usize>(),
        "failed_answer_calls": references.iter().map(|r| r.calls.failed).sum::<usize>(),
        "largest_prompt_tokens": references.iter().map(|r| r.largest_prompt_tokens).max(),
    })
}
