//! `pipeline`: seed S3's chain in one command, into one directory, each stage a run
//! directory of its own that resumes: `rank/` (the judge's order and the retriever-versus-
//! judge agreement), `reference/` (`GT_` / `FULL_` files), `dataset.jsonl` (each question
//! with its contexts, the system's answer and the generated reference) and `eval/` (`eval`
//! on that dataset with the first `--top-k` contexts, with the report; it also holds
//! `rank_agreement.jsonl`, so its workbook and report show the ranking).
//!
//! Run again after a stop, finished stages are kept (their journals hold every question) and
//! the unfinished one continues.

use std::path::{Path, PathBuf};

use rageval_core::Sample;
use rageval_judge::CancelToken;
use rageval_report::RANK_AGREEMENT_FILE;
use serde_json::json;

use crate::ended::Ended;
use crate::error::{Result, RunError};
use crate::eval::{EvalOptions, Evaluated};
use crate::judges::{self, Env};
use crate::observe::Observer;
use crate::rank::questions::QuestionData;
use crate::rank::{RankOptions, Ranked, RankingOptions};
use crate::reference::{ReferenceOptions, ReferenceRunOptions, Referenced};

/// The dataset `eval` scores.
pub const DATASET_FILE: &str = "dataset.jsonl";

/// What `pipeline` is asked to do: `eval`'s options (its data, output folder, metrics,
/// judge, `--top-k`) plus the ranking and reference options.
#[derive(Debug, Clone)]
pub struct PipelineOptions {
    pub eval: EvalOptions,
    pub ranking: RankingOptions,
    pub reference: ReferenceOptions,
}

impl PipelineOptions {
    /// The folder of the stages.
    pub fn root(&self) -> PathBuf {
        self.eval
            .out
            .clone()
            .unwrap_or_else(|| crate::rank::questions::default_out(&self.eval.data, "pipeline"))
    }

    /// The top-k of the ranking's figures and of `eval`.
    pub fn top_k(&self) -> usize {
        self.eval
            .top_k
            .map_or(rageval_rank::agreement::DEFAULT_TOP_K, |k| {
                usize::try_from(k).unwrap_or(usize::MAX)
            })
    }

    fn question_data(&self, out: PathBuf) -> QuestionData {
        QuestionData {
            data: self.eval.data.clone(),
            format: self.eval.format,
            field_map: self.eval.field_map.clone(),
            sheet: self.eval.sheet.clone(),
            samples: self.eval.samples,
            out: Some(out),
            overwrite: self.eval.overwrite,
            retry_failed: self.eval.retry_failed,
            seed: self.eval.seed,
        }
    }

    /// The `rank` stage's options.
    pub fn rank_options(&self) -> RankOptions {
        RankOptions {
            data: self.question_data(self.root().join("rank")),
            ranking: self.ranking.clone(),
            top_k: self.top_k(),
            judge: self.eval.judge.clone(),
        }
    }

    /// The `reference` stage's options.
    pub fn reference_options(&self) -> ReferenceRunOptions {
        ReferenceRunOptions {
            data: self.question_data(self.root().join("reference")),
            reference: self.reference.clone(),
            judge: self.eval.judge.clone(),
        }
    }

    /// Refuses what `pipeline` cannot do: shards (its rank and reference stages read every
    /// question). Batch flags apply to its `eval` stage.
    pub fn check(&self) -> Result<()> {
        if self.eval.shard.is_some() {
            return Err(RunError::Usage(
                "--shard applies to `eval` alone: run `rank` and `reference` (or `pipeline`) \
                 whole, then shard `eval` over the dataset they wrote"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The `eval` stage's options: the dataset the stages before it wrote.
    pub fn eval_options(&self) -> EvalOptions {
        let root = self.root();
        let mut eval = self.eval.clone();
        eval.data = root.join(DATASET_FILE);
        eval.out = Some(root.join("eval"));
        eval.top_k = Some(self.top_k() as u64);
        eval.field_map.clear();
        eval.format = None;
        eval.sheet = None;
        eval.samples = None;
        eval
    }
}

/// Every stage that finished.
#[derive(Debug)]
pub struct Piped {
    pub rank: Ranked,
    pub reference: Referenced,
    pub eval: Evaluated,
}

/// A stage ended: the next one may start, or the pipeline stops here.
pub enum StageEnded<'a> {
    Rank(&'a Ranked),
    Reference(&'a Referenced),
}

/// Runs (or resumes) every stage in order; `stage_done` hears of each finished one before
/// the next starts.
pub fn run(
    options: &PipelineOptions,
    env: Env<'_>,
    observer: &dyn Observer,
    cancel: &CancelToken,
    stage_done: &mut dyn FnMut(StageEnded<'_>),
) -> Result<Ended<Piped>> {
    options.check()?;
    let root = options.root();
    let rank_options = options.rank_options();
    let samples = rank_options.data.read()?;
    let setup = judges::resolve(&options.eval.judge, env)?;
    crate::reference::require_writer(&setup, &options.eval.judge, "pipeline's reference stage")?;
    crate::forecast_gguf(
        &setup,
        || crate::plan::rank::pipeline(options, env, &crate::observe::Silent),
        observer,
    )?;

    let rank = match crate::rank::rank_into(
        &rank_options,
        &samples,
        &setup,
        &root.join("rank"),
        observer,
        cancel,
    )? {
        Ended::Complete(rank) => rank,
        Ended::Stopped(stopped) => return Ok(Ended::Stopped(stopped)),
    };
    stage_done(StageEnded::Rank(&rank));

    let reference_options = options.reference_options();
    let mut reference = match crate::reference::reference_into(
        &reference_options,
        &samples,
        &setup,
        &root.join("reference"),
        observer,
        cancel,
    )? {
        Ended::Complete(reference) => reference,
        Ended::Stopped(mut stopped) => {
            stopped.footer = with_rank_stage(&stopped.footer);
            return Ok(Ended::Stopped(stopped));
        }
    };
    reference.footer = with_rank_stage(&reference.footer);
    stage_done(StageEnded::Reference(&reference));

    let references: Vec<Option<String>> = reference
        .lines
        .iter()
        .map(|line| line.reference.as_ref().and_then(|r| r.ground_truth.clone()))
        .collect();
    let dataset = root.join(DATASET_FILE);
    write_dataset(&dataset, &samples, &references)?;
    let eval_options = options.eval_options();
    let eval_dir = eval_options.run_path();
    std::fs::create_dir_all(&eval_dir).map_err(RunError::write(&eval_dir))?;
    let agreement = root.join("rank").join(RANK_AGREEMENT_FILE);
    std::fs::copy(&agreement, eval_dir.join(RANK_AGREEMENT_FILE))
        .map_err(RunError::write(eval_dir.join(RANK_AGREEMENT_FILE)))?;
    observer.note(format!(
        "wrote {}, {} and {}; now eval on the top {} contexts",
        root.join("rank").display(),
        root.join("reference").display(),
        dataset.display(),
        options.top_k()
    ));
    // The eval stage resumes on its own; its data is the file just written, whose bytes
    // are the same every time for the same stages.
    let eval = match crate::eval::run(&eval_options, env, observer, cancel)? {
        Ended::Complete(eval) => eval,
        Ended::Stopped(stopped) => return Ok(Ended::Stopped(stopped)),
    };
    Ok(Ended::Complete(Piped {
        rank,
        reference,
        eval,
    }))
}

/// The reference stage's judge line, labelled for what it counts: rank and reference share
/// one judge, whose books run from the pipeline's start, so the line holds the rank stage's
/// calls too (`judge, rank and reference stages together: …`).
fn with_rank_stage(footer: &str) -> String {
    match footer.strip_prefix("judge") {
        Some(rest) => format!("judge, rank and reference stages together{rest}"),
        None => footer.to_owned(),
    }
}

/// One JSON line per question: id, question, contexts (retriever order), the system's
/// answer, and the generated reference when there is one. Written whole or not at all.
fn write_dataset(path: &Path, samples: &[Sample], references: &[Option<String>]) -> Result<()> {
    let mut text = String::new();
    for (sample, reference) in samples.iter().zip(references) {
        let contexts: Vec<&str> = sample.contexts.iter().map(|c| c.text.as_str()).collect();
        let mut row = json!({"id": sample.id, "question": sample.question, "contexts": contexts});
        if let Some(answer) = &sample.answer {
            row["answer"] = json!(answer);
        }
        if let Some(reference) = reference {
            row["reference"] = json!(reference);
        }
        text.push_str(&serde_json::to_string(&row).map_err(RunError::encode("a dataset line"))?);
        text.push('\n');
    }
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    std::fs::write(&partial, text)
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(RunError::write(path))
}
