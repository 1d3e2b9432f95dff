//! `pipeline`: seed S3's chain in one command, into one directory, each stage a run
//! directory of its own that resumes: `rank/` (the judge's order and the retriever-versus-
//! judge agreement), `reference/` (`GT_` / `FULL_` files), `dataset.jsonl` (each question
//! as the data had it, with the retriever's context ids and scores and the data's own
//! columns, and the generated reference) and `eval/` (`eval`
//! on that dataset with the first `--top-k` contexts, with the report; it also holds
//! `rank_agreement.jsonl`, so its workbook and report show the ranking).
//!
//! Run again after a stop, finished stages are kept (their journals hold every question) and
//! the unfinished one continues.
//!
//! - [`plan`]: `pipeline --dry-run`, each stage planned.

pub mod plan;

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use rageval_core::Sample;
use rageval_core::dataset::Field;
use rageval_judge::CancelToken;
use rageval_report::{
    PIPELINE_DATASET_FILE, PIPELINE_EVAL_DIR, PIPELINE_RANK_DIR, PIPELINE_REFERENCE_DIR,
    RANK_AGREEMENT_FILE,
};
use serde_json::json;

use crate::commands::eval::{EvalOptions, Evaluated};
use crate::commands::rank::{RankOptions, Ranked, RankingOptions};
use crate::commands::reference::{ReferenceOptions, ReferenceRunOptions, Referenced};
use crate::engine::ended::Ended;
use crate::engine::error::{Result, RunError};
use crate::engine::judges::{self, Env};
use crate::engine::observe::Observer;
use crate::engine::questions::QuestionData;

/// The dataset `eval` scores (the layout's names are `rageval-report`'s, where readers find
/// them).
pub const DATASET_FILE: &str = PIPELINE_DATASET_FILE;

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
            .unwrap_or_else(|| crate::engine::questions::default_out(&self.eval.data, "pipeline"))
    }

    /// The top-k of the ranking's figures and of `eval`.
    pub fn top_k(&self) -> usize {
        self.eval
            .top_k
            .map_or(rageval_rank::agreement::DEFAULT_TOP_K, NonZeroUsize::get)
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
            data: self.question_data(self.root().join(PIPELINE_RANK_DIR)),
            ranking: self.ranking.clone(),
            top_k: self.top_k(),
            judge: self.eval.judge.clone(),
        }
    }

    /// The `reference` stage's options.
    pub fn reference_options(&self) -> ReferenceRunOptions {
        ReferenceRunOptions {
            data: self.question_data(self.root().join(PIPELINE_REFERENCE_DIR)),
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
        eval.out = Some(root.join(PIPELINE_EVAL_DIR));
        eval.top_k = NonZeroUsize::new(self.top_k());
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
    // One pipeline per folder: its stages lock their own run directories, the folder's
    // lock keeps a second pipeline from writing `dataset.jsonl` between them.
    std::fs::create_dir_all(&root).map_err(RunError::write(&root))?;
    let _one_writer = rageval_report::RunLock::take(&root)?;
    let rank_options = options.rank_options();
    let samples = rank_options.data.read()?;
    let setup = judges::resolve(&options.eval.judge, env)?;
    crate::commands::reference::require_writer(
        &setup,
        &options.eval.judge,
        "pipeline's reference stage",
    )?;
    crate::engine::forecast::announce(
        &setup,
        || plan::estimate(options, env, &crate::engine::observe::Silent),
        observer,
    )?;

    let rank = match crate::commands::rank::rank_into(
        &rank_options,
        &samples,
        &setup,
        &root.join(PIPELINE_RANK_DIR),
        observer,
        cancel,
    )? {
        Ended::Complete(rank) => rank,
        Ended::Stopped(stopped) => return Ok(Ended::Stopped(stopped)),
    };
    stage_done(StageEnded::Rank(&rank));

    let reference_options = options.reference_options();
    let reference = match crate::commands::reference::reference_into(
        &reference_options,
        &samples,
        &setup,
        &root.join(PIPELINE_REFERENCE_DIR),
        observer,
        cancel,
    )? {
        Ended::Complete(reference) => reference,
        Ended::Stopped(stopped) => return Ok(Ended::Stopped(stopped)),
    };
    stage_done(StageEnded::Reference(&reference));

    let references: Vec<Option<String>> = reference
        .lines
        .iter()
        .map(|line| line.reference.as_ref().and_then(|r| r.ground_truth.clone()))
        .collect();
    let dataset = root.join(DATASET_FILE);
    let replaced = write_dataset(&dataset, &samples, &references)?;
    if replaced.replaced > 0 {
        observer.note(format!(
            "{} of {} questions had a reference of their own in the data: {} uses the \
             generated one and keeps theirs as `{DATA_REFERENCE_KEY}`",
            replaced.replaced,
            samples.len(),
            dataset.display()
        ));
    }
    let eval_options = options.eval_options();
    let eval_dir = eval_options.run_path();
    std::fs::create_dir_all(&eval_dir).map_err(RunError::write(&eval_dir))?;
    let agreement = root.join(PIPELINE_RANK_DIR).join(RANK_AGREEMENT_FILE);
    std::fs::copy(&agreement, eval_dir.join(RANK_AGREEMENT_FILE))
        .map_err(RunError::write(eval_dir.join(RANK_AGREEMENT_FILE)))?;
    observer.note(format!(
        "wrote {}, {} and {}; now eval on the top {} contexts",
        root.join(PIPELINE_RANK_DIR).display(),
        root.join(PIPELINE_REFERENCE_DIR).display(),
        dataset.display(),
        options.top_k()
    ));
    // The eval stage resumes on its own; its data is the file just written, whose bytes
    // are the same every time for the same stages.
    let eval = match crate::commands::eval::run(&eval_options, env, observer, cancel)? {
        Ended::Complete(eval) => eval,
        Ended::Stopped(stopped) => return Ok(Ended::Stopped(stopped)),
    };
    Ok(Ended::Complete(Piped {
        rank,
        reference,
        eval,
    }))
}

/// What `write_dataset` did with the references the data already had.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct ReferencesReplaced {
    /// Questions whose own reference differs from the generated one that replaced it.
    replaced: usize,
}

/// The key under which a replaced reference of the data is kept in `dataset.jsonl`.
const DATA_REFERENCE_KEY: &str = "data_reference";

/// One JSON line per question: the sample as the data had it (id, question, contexts with
/// the retriever's ids and scores, answer, every column of its own) with the generated
/// reference in place of the data's, which is kept as `data_reference`, never dropped.
/// Written whole or not at all.
fn write_dataset(
    path: &Path,
    samples: &[Sample],
    references: &[Option<String>],
) -> Result<ReferencesReplaced> {
    let mut text = String::new();
    let mut report = ReferencesReplaced::default();
    for (sample, generated) in samples.iter().zip(references) {
        let row = dataset_row(sample, generated.as_deref(), &mut report);
        text.push_str(&serde_json::to_string(&row).map_err(RunError::encode("a dataset line"))?);
        text.push('\n');
    }
    crate::engine::files::write_atomically(path, text)?;
    Ok(report)
}

/// One question's record for `dataset.jsonl`.
fn dataset_row(
    sample: &Sample,
    generated: Option<&str>,
    report: &mut ReferencesReplaced,
) -> Sample {
    let mut row = sample.clone();
    // A metadata key that is some field's alias (left there by `--map FIELD=`) would make the
    // eval stage, which reads the file without the map, see two columns for that field.
    let clashing: Vec<String> = row
        .metadata
        .keys()
        .filter(|key| {
            Field::ALL
                .iter()
                .any(|f| f.aliases().contains(&key.as_str()))
        })
        .cloned()
        .collect();
    for key in clashing {
        if let Some(value) = row.metadata.remove(&key) {
            row.metadata.insert(format!("data_{key}"), value);
        }
    }
    if let Some(generated) = generated {
        if !row.references.is_empty() && row.references.iter().any(|r| r != generated) {
            report.replaced += 1;
            row.metadata
                .insert(DATA_REFERENCE_KEY.into(), json!(row.references));
            // The data's statements split its own reference, not the generated one.
            if let Some(statements) = row.reference_statements.take() {
                row.metadata.insert(
                    format!("{DATA_REFERENCE_KEY}_statements"),
                    json!(statements),
                );
            }
        }
        row.references = vec![generated.to_string()];
    }
    row
}
