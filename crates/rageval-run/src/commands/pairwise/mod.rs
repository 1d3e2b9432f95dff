//! `pairwise`: two or more versions' answers to the same questions judged head to head by
//! the chat judge, one question at a time into a resumable run directory.
//!
//! Each pair of versions on each question is asked in both seat orders (the typed task
//! `CompareAnswers`, each answer with its own version's contexts, the reference answer when
//! the data has one); the two verdicts are joined by the both-orders rule of
//! [`rageval_core::preference`]. The directory holds `manifest.json`, `pairwise.jsonl`
//! (the journal: one [`PairwiseQuestion`] per finished question — both verdicts with their
//! reasons, the answers' lengths, the combined result), `summary.json`
//! ([`PairwiseSummary`]), `report.md`, `report.html` and `results.xlsx` (the head-to-head
//! table and every verdict beside both answers). A question whose calls were refused by a stop
//! is held back for the next session; a call that failed otherwise is journaled as failed
//! (done again with `--retry-failed`) and counted as failed, never as a tie.
//!
//! The questions are worked by the engine's question loop ([`crate::engine::questions`]).
//!
//! - [`versions`]: reading the versions and pairing their questions;
//! - [`plan`]: the dry run.

pub mod plan;
pub mod versions;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use rageval_core::Sample;
use rageval_core::preference::{Resampling, Seat};
use rageval_judge::CancelToken;
use rageval_metrics::MetricCatalogue;
use rageval_report::{
    AnswerLength, DatasetInfo, HTML_FILE, MARKDOWN_FILE, PAIRWISE_COMMAND, PAIRWISE_FILE,
    PairVerdicts, PairwiseAnswers, PairwiseQuestion, PairwiseSummary, SeatVerdict, XLSX_FILE,
    error_chain, render_pairwise_html, render_pairwise_markdown, sha256_bytes, sha256_file,
    write_pairwise_xlsx,
};
use rageval_tasks::{
    CompareAnswers, Implementation, Judged, Preference, Preferred, Rubric, ShownAnswer, TaskError,
    TaskJudge, TaskKind,
};
use serde_json::json;

use crate::commands::eval::MaxFailed;
use crate::engine::ended::Ended;
use crate::engine::error::{Result, RunError};
use crate::engine::judges::{self, Env, JudgeOptions, JudgeSetup};
use crate::engine::observe::Observer;
use crate::engine::questions::{
    Journal, QuestionRun, QuestionRunOptions, QuestionStage, Restart, Spoiled,
};
use crate::engine::words::counted;
use versions::{DatasetReading, PairedQuestion, Version, paired_questions, read_versions};

/// Stage name of `pairwise`'s progress.
pub const STAGE: &str = "judging pairs";
/// The one task a pairwise run asks.
pub const TASKS: [TaskKind; 1] = [TaskKind::CompareAnswers];
/// The criterion's name when none is given: correct, grounded in its own contexts,
/// answers what was asked.
pub const RAG_CRITERION: &str = "rag";
/// Bootstrap resamples of the intervals, as `compare` draws.
pub const DEFAULT_RESAMPLES: usize = 2_000;
/// The tokenizer answers' lengths are counted in (o200k).
const LENGTH_ENCODING_MODEL: &str = "gpt-4o";

/// What `pairwise` is asked to do.
#[derive(Debug, Clone)]
pub struct PairwiseOptions {
    /// Run directories, dataset files or pipeline folders, one per version.
    pub versions: Vec<PathBuf>,
    /// Names of the versions, in order (the rest are named by their file or folder).
    pub names: Vec<String>,
    pub reading: DatasetReading,
    /// Only the first N paired questions.
    pub samples: Option<usize>,
    /// The run directory (default `runs/<first>-vs-<second>-pairwise`).
    pub out: Option<PathBuf>,
    pub restart: Restart,
    /// Seed of the bootstrap intervals.
    pub seed: u64,
    /// A rubric metric whose criterion is used instead of the built-in RAG one.
    pub criterion: Option<String>,
    /// Rubric files (`--metric-file`); the judge's configuration file when empty.
    pub metric_files: Vec<PathBuf>,
    /// Questions judged at once.
    pub questions_at_once: usize,
    pub resamples: usize,
    /// The largest share of version pairs × questions whose calls may fail.
    pub max_failed: MaxFailed,
    pub judge: JudgeOptions,
}

/// A complete `pairwise` run.
#[derive(Debug)]
pub struct PairwiseRun {
    pub path: PathBuf,
    pub summary: PairwiseSummary,
    pub footer: String,
    /// Questions of the first version left out because some version lacks them.
    pub left_out: usize,
    /// Set when more pairs failed than `--max-failed` allows: the run is not a success.
    pub too_many_failed: Option<String>,
}

/// The versions, their paired questions and the criterion, read before any judge is made.
pub struct Prepared {
    pub versions: Vec<Version>,
    pub questions: Vec<PairedQuestion>,
    pub left_out: usize,
    pub criterion: Option<Arc<Rubric>>,
}

/// Reads the versions, pairs their questions and finds the criterion; bad input is an
/// error naming what is wrong.
pub fn prepare(options: &PairwiseOptions, env: Env<'_>) -> Result<Prepared> {
    let versions = read_versions(&options.versions, &options.names, &options.reading)?;
    let (questions, left_out) = paired_questions(&versions, options.samples)?;
    for question in &questions {
        for (version, sample) in versions.iter().zip(&question.samples) {
            if sample.answer.is_none() {
                return Err(RunError::Usage(format!(
                    "{}: sample `{}` has no answer: pairwise judges answers, so every version's \
                     data needs them",
                    version.source.display(),
                    sample.id
                )));
            }
        }
    }
    let criterion = match &options.criterion {
        None => None,
        Some(name) => {
            let catalogue = crate::engine::rubrics::catalogue(
                &options.metric_files,
                &options.judge.flags,
                env,
            )?;
            Some(criterion_of(&catalogue, name)?)
        }
    };
    Ok(Prepared {
        versions,
        questions,
        left_out,
        criterion,
    })
}

/// The rubric metric `name` of `catalogue` as a criterion (`--criterion NAME`).
pub fn criterion_of(catalogue: &MetricCatalogue, name: &str) -> Result<Arc<Rubric>> {
    catalogue.rubric(name).ok_or_else(|| {
        RunError::Usage(format!(
            "--criterion {name}: no rubric metric of that name in the rubric files \
             (a `[[metric]]` table of rageval.toml or --metric-file; see docs/rubrics.md)"
        ))
    })
}

/// The task asking whether `first`'s answer beats `second`'s on `question`.
pub fn task(
    question: &PairedQuestion,
    first: usize,
    second: usize,
    criterion: Option<&Arc<Rubric>>,
) -> CompareAnswers {
    let shown = |sample: &Sample| ShownAnswer {
        answer: sample.answer.clone().unwrap_or_default(),
        contexts: sample.contexts.iter().map(|c| c.text.clone()).collect(),
    };
    let named = question.first();
    CompareAnswers {
        question: named.question.clone(),
        reference: named.reference_text().unwrap_or_default(),
        first: shown(&question.samples[first]),
        second: shown(&question.samples[second]),
        criterion: criterion.cloned(),
    }
}

/// Every pair of version indices, each earlier version against each later one.
pub fn version_pairs(count: usize) -> Vec<(usize, usize)> {
    (0..count)
        .flat_map(|a| (a + 1..count).map(move |b| (a, b)))
        .collect()
}

/// Refuses a judge without a chat model: the heuristic judge has no rule that tells a
/// better answer from a worse one.
fn judges_check(setup: &JudgeSetup, options: &PairwiseOptions) -> Result<()> {
    judges::require_writer(setup, &options.judge, "pairwise judging", &TASKS)
}

/// Judges every question into the run directory, resuming what is there.
pub fn run(
    options: &PairwiseOptions,
    env: Env<'_>,
    observer: &dyn Observer,
    cancel: &CancelToken,
) -> Result<Ended<PairwiseRun>> {
    let prepared = prepare(options, env)?;
    let setup = judges::resolve(&options.judge, env)?;
    judges_check(&setup, options)?;
    crate::engine::forecast::announce(
        &setup,
        || plan::estimate(options, env, &crate::engine::observe::Silent),
        observer,
    )?;
    if prepared.left_out > 0 {
        observer.note(format!(
            "note: {} of {} are not in every version: left out",
            counted(prepared.left_out, "questions"),
            prepared.versions[0].name
        ));
    }
    judge_into(options, &prepared, &setup, observer, cancel)
}

/// The run directory of `options`, opened (resumed when its identity — the versions'
/// data, the criterion, the judge — is the same), its path and the criterion's name.
fn open_run<'a>(
    options: &PairwiseOptions,
    prepared: &Prepared,
    setup: &'a JudgeSetup,
    observer: &dyn Observer,
) -> Result<(QuestionRun<'a, PairwiseQuestion>, PathBuf, String)> {
    let versions = &prepared.versions;
    let path = options.out.clone().unwrap_or_else(|| {
        PathBuf::from("runs").join(format!(
            "{}-vs-{}-pairwise",
            versions[0].name, versions[1].name
        ))
    });
    let criterion_name = prepared
        .criterion
        .as_ref()
        .map_or(RAG_CRITERION.to_owned(), |r| {
            format!("{}#{}", r.name, r.hash())
        });
    let mut hashes = String::new();
    for version in versions {
        hashes.push_str(&sha256_file(&version.dataset)?);
        hashes.push('\n');
    }
    let names: Vec<&str> = versions.iter().map(|v| v.name.as_str()).collect();
    let dataset = DatasetInfo {
        path: versions
            .iter()
            .map(|v| v.dataset.display().to_string())
            .collect::<Vec<_>>()
            .join(" | "),
        sha256: sha256_bytes(hashes.as_bytes()),
        format: String::new(),
        samples: Some(prepared.questions.len()),
    };
    let identity_settings = [
        ("versions", names.join(" | ")),
        ("criterion", criterion_name.clone()),
        ("samples", format!("{:?}", options.samples)),
    ];
    let manifest_settings = json!({
        "versions": versions.iter().map(Version::described).collect::<Vec<_>>(),
        "criterion": criterion_name,
        "samples": options.samples,
        "seed": options.seed,
        "judge": setup.description,
    });
    let run_options = QuestionRunOptions {
        command: PAIRWISE_COMMAND,
        dataset,
        restart: options.restart,
        path: &path,
        manifest_settings,
        identity_settings: &identity_settings,
        tasks: &TASKS,
        journal: Journal {
            file: PAIRWISE_FILE,
            key: |line: &PairwiseQuestion| line.question_id.clone(),
            failed: PairwiseQuestion::failed,
        },
        own_files: &[MARKDOWN_FILE, HTML_FILE, XLSX_FILE],
        unit: "questions",
    };
    let run = QuestionRun::open(run_options, setup, observer)?;
    Ok((run, path, criterion_name))
}

fn judge_into(
    options: &PairwiseOptions,
    prepared: &Prepared,
    setup: &JudgeSetup,
    observer: &dyn Observer,
    cancel: &CancelToken,
) -> Result<Ended<PairwiseRun>> {
    let (mut run, path, criterion_name) = open_run(options, prepared, setup, observer)?;
    let versions = &prepared.versions;
    let judge = setup.task_judge()?;
    let firsts: Vec<Sample> = prepared
        .questions
        .iter()
        .map(|q| q.first().clone())
        .collect();
    let by_id: HashMap<&str, &PairedQuestion> = prepared
        .questions
        .iter()
        .map(|q| (q.first().id.as_str(), q))
        .collect();
    let pairs = version_pairs(versions.len());
    let (judge, by_id, pairs, criterion) = (&judge, &by_id, &pairs, prepared.criterion.as_ref());
    let stage = QuestionStage {
        name: STAGE,
        questions: &firsts,
        at_once: options.questions_at_once,
    };
    let ended = run.work(
        stage,
        observer,
        cancel,
        |sample| async move {
            let question = by_id.get(sample.id.as_str()).ok_or_else(|| {
                RunError::Usage(format!("question `{}` was not paired", sample.id))
            })?;
            Ok(judge_question(judge, question, pairs, criterion).await)
        },
        |judged: &Result<PairwiseQuestion>| match judged {
            Ok(line) if !line.failed() => Spoiled::No,
            _ => Spoiled::IfStopping,
        },
    )?;
    if let Some(stopped) = ended {
        return Ok(Ended::Stopped(stopped));
    }
    let lines = run.lines_in_order(&firsts)?;
    let resampling = Resampling {
        resamples: options.resamples,
        seed: options.seed,
        level: 0.95,
    };
    let described = versions.iter().map(Version::described).collect();
    let summary = PairwiseSummary::of(
        described,
        &lines,
        &criterion_name,
        resampling,
        run.account(),
    );
    write_reports(&run, &path, &summary, &lines, &prepared.questions)?;
    let footer = run.footer();
    let too_many_failed = too_many_failed(&summary, options.max_failed);
    run.finish(&summary)?;
    Ok(Ended::Complete(PairwiseRun {
        path,
        summary,
        footer,
        left_out: prepared.left_out,
        too_many_failed,
    }))
}

/// `report.md`, `report.html` and `results.xlsx` of the finished run.
fn write_reports(
    run: &QuestionRun<'_, PairwiseQuestion>,
    path: &std::path::Path,
    summary: &PairwiseSummary,
    lines: &[PairwiseQuestion],
    questions: &[PairedQuestion],
) -> Result<()> {
    run.write_file(
        MARKDOWN_FILE,
        render_pairwise_markdown(summary, lines).as_bytes(),
    )?;
    run.write_file(HTML_FILE, render_pairwise_html(summary, lines).as_bytes())?;
    let answers: PairwiseAnswers = questions
        .iter()
        .map(|q| {
            let answers = q
                .samples
                .iter()
                .map(|s| s.answer.clone().unwrap_or_default());
            (q.first().id.clone(), answers.collect())
        })
        .collect();
    write_pairwise_xlsx(summary, lines, &answers, &path.join(XLSX_FILE))?;
    Ok(())
}

/// Every pair of versions on one question, both seat orders asked at once.
async fn judge_question(
    judge: &TaskJudge,
    question: &PairedQuestion,
    pairs: &[(usize, usize)],
    criterion: Option<&Arc<Rubric>>,
) -> PairwiseQuestion {
    let mut verdicts = Vec::with_capacity(pairs.len());
    for &(a, b) in pairs {
        let (a_first, b_first) = (
            task(question, a, b, criterion),
            task(question, b, a, criterion),
        );
        let (a_first, b_first) = tokio::join!(
            judge.compare_answers(&a_first),
            judge.compare_answers(&b_first)
        );
        verdicts.push(PairVerdicts::new(a, b, verdict(a_first), verdict(b_first)));
    }
    let named = question.first();
    PairwiseQuestion {
        question_id: named.id.clone(),
        sample_ids: question.samples.iter().map(|s| s.id.clone()).collect(),
        question: named.question.clone(),
        has_reference: named.reference_text().is_some_and(|r| !r.trim().is_empty()),
        lengths: question
            .samples
            .iter()
            .map(|s| length(s.answer.as_deref().unwrap_or_default()))
            .collect(),
        pairs: verdicts,
    }
}

/// A call's answer as the journal keeps it.
fn verdict(answer: std::result::Result<Judged<Preference>, TaskError>) -> SeatVerdict {
    match answer {
        Ok(judged) => SeatVerdict::Answered {
            preferred: match judged.value.preferred {
                Preferred::First => Seat::First,
                Preferred::Second => Seat::Second,
                Preferred::Tie => Seat::Tie,
            },
            reason: judged.value.reason,
            by_rule: matches!(judged.by, Implementation::Rule { .. }),
        },
        Err(error) => SeatVerdict::Failed {
            error: error_chain(&error),
        },
    }
}

fn length(answer: &str) -> AnswerLength {
    AnswerLength {
        chars: answer.chars().count(),
        tokens: usize::try_from(rageval_judge::tokens::count_tokens(
            LENGTH_ENCODING_MODEL,
            answer,
        ))
        .unwrap_or(usize::MAX),
    }
}

/// Why the run is not a success when more version pairs × questions failed than `limit`
/// allows (always when every one did).
fn too_many_failed(summary: &PairwiseSummary, limit: MaxFailed) -> Option<String> {
    let failed: usize = summary.pairs.iter().map(|p| p.failed).sum();
    let judged: usize = summary.pairs.iter().map(|p| p.failed + p.figures.n).sum();
    let over = failed == judged || failed as f64 > limit.share() * judged as f64;
    if failed == 0 || !over {
        return None;
    }
    let error = summary
        .pairs
        .iter()
        .find_map(|p| p.first_error.clone())
        .unwrap_or_else(|| "(no error recorded)".into());
    Some(format!(
        "{failed} of {judged} version pairs × questions failed (over the {limit} that \
         --max-failed allows), the first with: {error}; fix the judge, then run the same \
         command with --retry-failed to ask them again"
    ))
}

impl PairwiseRun {
    /// A few lines for stdout: each pair's head-to-head line.
    pub fn render(&self) -> String {
        let mut text = format!(
            "judged {} head to head, both seat orders ({})\n",
            counted(self.summary.questions, "questions"),
            self.summary.criterion
        );
        for pair in &self.summary.pairs {
            text.push_str(&rageval_report::pairwise_line(pair));
            text.push('\n');
        }
        text
    }
}
