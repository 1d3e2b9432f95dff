//! `reference`: a reference answer per question from all of its contexts, one question at
//! a time into a resumable run directory: seed S3's `GT_{question}.json` (and
//! `FULL_{question}.json` when the data has the system's answer), `references.jsonl` (the
//! journal: every call behind each answer, or why there is none) and `summary.json`.
//!
//! A question left without a reference says why: the judge failed (its error), or no
//! context answers the question — never the one for the other. A question whose calls were
//! refused by a stop is held back for the next session. Settings that can never work (a
//! window too small for the question) stop the command with an error.

pub mod plan;

use std::path::{Path, PathBuf};

use rageval_core::Sample;
use rageval_judge::CancelToken;
use rageval_rank::reference::files::{
    EXTENSION, FULL_PREFIX, FullFile, GROUND_TRUTH_PREFIX, GroundTruthFile, file_names,
};
use rageval_rank::{
    CallRecord, RankError, Reference, ReferenceMode, ReferenceSettings, TaskAnswerer,
    generate_reference,
};
use rageval_report::JudgeAccount;
use rageval_tasks::TaskKind;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::engine::ended::Ended;
use crate::engine::error::{Result, RunError};
use crate::engine::judges::{self, Env, JudgeOptions, JudgeSetup};
use crate::engine::observe::Observer;
use crate::engine::questions::{
    Journal, QuestionData, QuestionRun, QuestionRunOptions, QuestionStage, Spoiled,
};
use crate::engine::words::{counted, counted_have};

/// The journal: one line per finished question.
pub const REFERENCES_FILE: &str = "references.jsonl";
/// Stage name of `reference`'s progress.
pub const STAGE: &str = "references";
/// The tasks reference generation asks.
pub const TASKS: [TaskKind; 2] = [TaskKind::AnswerFromContexts, TaskKind::MergeAnswers];
/// Why a question has no reference when the judge answered every call.
const NO_ANSWER: &str = "no context answers the question";
/// Questions whose reference is made at once.
const QUESTIONS_AT_ONCE: usize = 4;

/// How the first answers are drawn and how much room the judge's answer gets.
#[derive(Debug, Clone)]
pub struct ReferenceOptions {
    pub mode: ReferenceMode,
    /// Fast mode: contexts per answer call, at most.
    pub group_size: usize,
    /// Tokens kept free in the window for the judge's answer.
    pub answer_tokens: u64,
}

/// What `reference` is asked to do.
#[derive(Debug, Clone)]
pub struct ReferenceRunOptions {
    pub data: QuestionData,
    pub reference: ReferenceOptions,
    pub judge: JudgeOptions,
}

/// One question's outcome.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QuestionReference {
    pub sample_id: String,
    pub question: String,
    /// The `GT_` file written, if any.
    pub file: Option<String>,
    /// The `FULL_` file written, if any.
    pub full_file: Option<String>,
    /// How it was made, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Reference>,
    /// Why there is no reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A complete `reference`.
#[derive(Debug)]
pub struct Referenced {
    pub path: PathBuf,
    pub lines: Vec<QuestionReference>,
    pub summary: ReferenceSummary,
    pub footer: String,
}

/// Totals for summary.json.
#[derive(Debug, Clone, Serialize)]
pub struct ReferenceSummary {
    pub questions: usize,
    pub written: usize,
    /// Questions without a reference because the judge failed.
    pub judge_failed: usize,
    /// Questions without a reference because no context answers them.
    pub unanswered: usize,
    pub calls: usize,
    pub failed_answer_calls: usize,
    pub largest_prompt_tokens: Option<usize>,
    pub max_prompt_tokens: usize,
    pub judge: JudgeAccount,
}

/// Refuses a judge that cannot write reference answers ([`judges::require_writer`] for
/// [`TASKS`]).
pub fn require_writer(setup: &JudgeSetup, options: &JudgeOptions, what: &str) -> Result<()> {
    judges::require_writer(setup, options, what, &TASKS)
}

/// The reference settings of `options` for the judge of `setup`.
pub(crate) fn settings_for(
    options: &ReferenceRunOptions,
    setup: &JudgeSetup,
) -> Result<ReferenceSettings> {
    reference_settings(
        &options.reference,
        setup.prompt_window(),
        options.data.seed,
        setup.concurrency,
    )
}

/// The reference settings of `options` and the judge's prompt window.
pub fn reference_settings(
    options: &ReferenceOptions,
    context_window: u64,
    seed: u64,
    concurrency: usize,
) -> Result<ReferenceSettings> {
    let window = context_window
        .checked_sub(options.answer_tokens)
        .filter(|&w| w > 0)
        .ok_or_else(|| {
            RunError::Usage(format!(
                "--answer-tokens {} leaves no room for a prompt in the judge's context window {}",
                options.answer_tokens, context_window
            ))
        })?;
    let mut settings =
        ReferenceSettings::new(options.mode, usize::try_from(window).unwrap_or(usize::MAX));
    settings.group_size = options.group_size;
    settings.seed = seed;
    settings.max_in_flight = concurrency.max(rageval_rank::DEFAULT_MAX_IN_FLIGHT);
    Ok(settings)
}

/// Writes every question's reference into the run directory, resuming what is there.
pub fn run(
    options: &ReferenceRunOptions,
    env: Env<'_>,
    observer: &dyn Observer,
    cancel: &CancelToken,
) -> Result<Ended<Referenced>> {
    let samples = options.data.read()?;
    let setup = judges::resolve(&options.judge, env)?;
    require_writer(&setup, &options.judge, "reference answers")?;
    crate::engine::forecast::announce(
        &setup,
        || plan::estimate(options, env, &crate::engine::observe::Silent),
        observer,
    )?;
    let path = options.data.out_or(&options.data.data, "reference");
    reference_into(options, &samples, &setup, &path, observer, cancel)
}

/// [`run`] over questions already read and a judge already resolved (`pipeline`'s second
/// stage).
pub fn reference_into(
    options: &ReferenceRunOptions,
    samples: &[Sample],
    setup: &JudgeSetup,
    path: &Path,
    observer: &dyn Observer,
    cancel: &CancelToken,
) -> Result<Ended<Referenced>> {
    let settings = settings_for(options, setup)?;
    let answerer = TaskAnswerer::new(setup.task_judge()?);
    let questions: Vec<&str> = samples.iter().map(|s| s.question.as_str()).collect();
    let gt_names = file_names(GROUND_TRUTH_PREFIX, &questions, EXTENSION);
    let full_names = file_names(FULL_PREFIX, &questions, EXTENSION);
    let mut run = open_run(options, &settings, setup, path, observer)?;
    if !run.resumed() {
        remove_reference_files(run.path())?;
    }
    let index_of = |sample: &Sample| {
        samples
            .iter()
            .position(|s| s.id == sample.id)
            .unwrap_or_default()
    };
    let (answerer, settings_ref, run_path) = (&answerer, &settings, run.path().to_path_buf());
    let (gt_names, full_names) = (&gt_names, &full_names);
    let stage = QuestionStage {
        name: STAGE,
        questions: samples,
        at_once: QUESTIONS_AT_ONCE,
    };
    let stopped = run.work(
        stage,
        observer,
        cancel,
        |sample| {
            let index = index_of(sample);
            let run_path = run_path.clone();
            async move {
                let contexts: Vec<&str> = sample.contexts.iter().map(|c| c.text.as_str()).collect();
                let result =
                    generate_reference(answerer, &sample.question, &contexts, settings_ref).await;
                outcome(
                    &run_path,
                    sample,
                    result,
                    &gt_names[index],
                    &full_names[index],
                )
            }
        },
        |line: &Result<QuestionReference>| match line {
            Ok(line) if line.reference.as_ref().is_some_and(|r| r.calls.failed == 0) => Spoiled::No,
            _ => Spoiled::IfStopping,
        },
    )?;
    if let Some(stopped) = stopped {
        return Ok(Ended::Stopped(stopped));
    }
    let lines = run.lines_in_order(samples)?;
    let summary = summarize(&lines, &settings, run.account());
    let footer = run.footer();
    run.finish(&json!({
        "command": "reference",
        "settings": settings,
        "judge": setup.description,
        "summary": summary,
    }))?;
    Ok(Ended::Complete(Referenced {
        path: path.to_path_buf(),
        lines,
        summary,
        footer,
    }))
}

/// `reference`'s run directory at `path`, new or resumed: its identity is the reference
/// settings, the question count and the judge.
fn open_run<'a>(
    options: &ReferenceRunOptions,
    settings: &ReferenceSettings,
    setup: &'a JudgeSetup,
    path: &Path,
    observer: &dyn Observer,
) -> Result<QuestionRun<'a, QuestionReference>> {
    let identity_settings = [
        ("mode", format!("{:?}", settings.mode)),
        ("group_size", settings.group_size.to_string()),
        ("seed", settings.seed.to_string()),
        ("max_prompt_tokens", settings.max_prompt_tokens.to_string()),
        ("samples", format!("{:?}", options.data.samples)),
    ];
    let (dataset, restart, manifest_settings) = options
        .data
        .described(json!({"settings": settings, "judge": setup.description}))?;
    let options_of_run = QuestionRunOptions {
        command: "reference",
        dataset,
        restart,
        path,
        manifest_settings,
        identity_settings: &identity_settings,
        tasks: &TASKS,
        journal: Journal {
            file: REFERENCES_FILE,
            key: |line: &QuestionReference| line.sample_id.clone(),
            failed: |line: &QuestionReference| {
                line.reference.as_ref().is_none_or(|r| r.calls.failed > 0)
                    && line.error.as_deref() != Some(NO_ANSWER)
            },
        },
        own_files: &[],
        unit: "questions",
    };
    QuestionRun::open(options_of_run, setup, observer)
}

/// One question's journal line, with its `GT_` / `FULL_` files written first. A window too
/// small or a setting that cannot work ends the command; any other failure is the line's
/// `error`, in words that say whether the judge failed or no context answers.
fn outcome(
    dir: &Path,
    sample: &Sample,
    result: std::result::Result<Reference, RankError>,
    gt_name: &str,
    full_name: &str,
) -> Result<QuestionReference> {
    let mut line = QuestionReference {
        sample_id: sample.id.clone(),
        question: sample.question.clone(),
        file: None,
        full_file: None,
        reference: None,
        error: None,
    };
    let reference = match result {
        Ok(reference) => reference,
        Err(error @ (RankError::InvalidSetting { .. } | RankError::WindowTooSmall { .. })) => {
            return Err(error.into());
        }
        Err(error) => {
            line.error = Some(format!("judge failed: {}", error_text(&error)));
            return Ok(line);
        }
    };
    let contexts: Vec<String> = sample.contexts.iter().map(|c| c.text.clone()).collect();
    match &reference.ground_truth {
        None => line.error = Some(why_none(&reference)),
        Some(ground_truth) => {
            let gt = GroundTruthFile {
                question: sample.question.clone(),
                contexts: contexts.clone(),
                ground_truth: ground_truth.clone(),
            };
            write_json(dir, gt_name, &gt)?;
            line.file = Some(gt_name.to_owned());
            if let Some(answer) = &sample.answer {
                let full = FullFile {
                    question: sample.question.clone(),
                    contexts,
                    ground_truth: ground_truth.clone(),
                    answer: answer.clone(),
                };
                write_json(dir, full_name, &full)?;
                line.full_file = Some(full_name.to_owned());
            }
        }
    }
    line.reference = Some(reference);
    Ok(line)
}

/// Why a reference has no answer: the judge's failures when there were any, else no
/// context answers.
fn why_none(reference: &Reference) -> String {
    let failed: Vec<&str> = reference
        .partial_answers
        .iter()
        .filter_map(|partial| match &partial.answer {
            CallRecord::Failed(error) => Some(error.as_str()),
            CallRecord::Answer(_) => None,
        })
        .collect();
    match failed.first() {
        None => NO_ANSWER.into(),
        Some(first) => format!(
            "judge failed on {} of {} answer calls (the others found no answer): {first}",
            failed.len(),
            reference.partial_answers.len()
        ),
    }
}

fn error_text(error: &RankError) -> String {
    crate::engine::error::chain_text(error)
}

/// Removes `GT_` / `FULL_` files an earlier run left in `dir`, so a new run's directory
/// holds only its own.
fn remove_reference_files(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(RunError::read(dir))?;
    for entry in entries {
        let entry = entry.map_err(RunError::read(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = (name.starts_with(GROUND_TRUTH_PREFIX) || name.starts_with(FULL_PREFIX))
            && name.ends_with(EXTENSION);
        if ours {
            crate::engine::files::remove_if_present(&entry.path())?;
        }
    }
    Ok(())
}

fn write_json(dir: &Path, name: &str, value: &impl Serialize) -> Result<()> {
    let path = dir.join(name);
    let bytes = serde_json::to_vec_pretty(value).map_err(RunError::encode("a reference file"))?;
    crate::engine::files::write_atomically(&path, bytes)
}

fn summarize(
    lines: &[QuestionReference],
    settings: &ReferenceSettings,
    judge: JudgeAccount,
) -> ReferenceSummary {
    let references: Vec<&Reference> = lines.iter().filter_map(|l| l.reference.as_ref()).collect();
    let judge_failed = lines
        .iter()
        .filter(|l| {
            l.file.is_none()
                && l.error
                    .as_deref()
                    .is_some_and(|e| e.starts_with("judge failed"))
        })
        .count();
    let written = lines.iter().filter(|l| l.file.is_some()).count();
    ReferenceSummary {
        questions: lines.len(),
        written,
        judge_failed,
        unanswered: lines.len() - written - judge_failed,
        calls: references
            .iter()
            .map(|r| r.calls.answer + r.calls.merge)
            .sum(),
        failed_answer_calls: references.iter().map(|r| r.calls.failed).sum(),
        largest_prompt_tokens: references.iter().map(|r| r.largest_prompt_tokens).max(),
        max_prompt_tokens: settings.max_prompt_tokens,
        judge,
    }
}

impl ReferenceSummary {
    /// One line for stdout.
    pub fn render(&self) -> String {
        let mut text = format!(
            "{} of {} ({} calls, largest prompt {} of {} tokens)\n",
            counted(self.written, "references"),
            counted(self.questions, "questions"),
            self.calls,
            self.largest_prompt_tokens.unwrap_or(0),
            self.max_prompt_tokens
        );
        if self.judge_failed > 0 {
            text.push_str(&format!(
                "{} no reference because the judge failed (references.jsonl says how)\n",
                counted_have(self.judge_failed, "questions")
            ));
        }
        text
    }
}

/// Notes for the questions left without a reference.
pub fn missing_notes(lines: &[QuestionReference]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l.file.is_none())
        .map(|line| {
            format!(
                "note: no reference for sample {}: {}",
                line.sample_id,
                line.error.as_deref().unwrap_or("unknown")
            )
        })
        .collect()
}
