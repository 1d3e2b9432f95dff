//! `testset`: a question set written from a team's own chunks, in each chunk's language,
//! every item gated before it is written. One planned item at a time into a resumable run
//! directory: `items.jsonl` (the journal: each slot's draft and gates, or the judge's error),
//! then `testset.jsonl` (the kept items, duplicates removed: the dataset `eval`, `collect`
//! and `reference` read) and `summary.json`.
//!
//! - [`item`]: one slot written ([`WriteTestItem`](rageval_tasks::WriteTestItem)) and gated.
//! - [`set`]: the finished set and its summary (drops by gate, shares against the plan).
//!
//! The plan is `rageval_core::testset::plan`'s; the chunks are read by the caller
//! (`rageval_sources::local::corpus_chunks`). This module never reads documents and never
//! translates: the prompt pack is chosen by each chunk's script.

pub mod item;
pub mod plan;
pub mod set;

use std::path::{Path, PathBuf};

use rageval_core::Sample;
use rageval_core::testset::SourceChunk;
use rageval_core::testset::plan::{Plan, PlanSettings, plan};
use rageval_judge::CancelToken;
use rageval_report::DatasetInfo;
use rageval_tasks::TaskKind;
use serde_json::json;
use sha2::{Digest, Sha256};

pub use item::{ClosedBookRule, Gate, GateOutcome, SlotLine};
pub use set::{TestItem, TestsetSummary};

use crate::engine::ended::Ended;
use crate::engine::error::{Result, RunError};
use crate::engine::judges::{self, Env, JudgeOptions, JudgeSetup};
use crate::engine::observe::Observer;
use crate::engine::questions::{
    Journal, QuestionRun, QuestionRunOptions, QuestionStage, Restart, Spoiled, default_out,
};

/// The journal: one line per planned slot.
pub const ITEMS_FILE: &str = "items.jsonl";
/// The finished set.
pub const TESTSET_FILE: &str = "testset.jsonl";
/// Stage name of `testset`'s progress.
pub const STAGE: &str = "testset";
/// The tasks `testset` asks.
pub const TASKS: [TaskKind; 4] = [
    TaskKind::WriteTestItem,
    TaskKind::SupportVerdicts,
    TaskKind::AnswerFromContexts,
    TaskKind::AnswerClosedBook,
];

/// What `testset` is asked to do.
#[derive(Debug, Clone)]
pub struct TestsetOptions {
    /// The corpus path as given (index, folder or file), for the manifest and the default
    /// output directory.
    pub source: PathBuf,
    /// What the path was read as (`index`, `folder`, `file`).
    pub corpus: String,
    /// Every chunk of the corpus.
    pub chunks: Vec<SourceChunk>,
    pub plan: PlanSettings,
    pub closed_book: ClosedBookRule,
    /// Estimated Jaccard similarity from which two questions are near duplicates.
    pub near_duplicate: f64,
    /// The output directory (default: `runs/<source name>-testset`).
    pub out: Option<PathBuf>,
    pub restart: Restart,
    pub judge: JudgeOptions,
}

/// A complete `testset`.
#[derive(Debug)]
pub struct Generated {
    pub path: PathBuf,
    pub summary: TestsetSummary,
    pub footer: String,
}

/// The plan of `options`, or a usage error saying why there is none.
pub fn make_plan(options: &TestsetOptions) -> Result<Plan> {
    if options.plan.size == 0 {
        return Err(RunError::Usage("--size must be at least 1".into()));
    }
    if !(options.near_duplicate > 0.0 && options.near_duplicate <= 1.0) {
        return Err(RunError::Usage(format!(
            "--near-duplicate {} must be above 0 and at most 1",
            options.near_duplicate
        )));
    }
    plan(&options.chunks, &options.plan)
        .map_err(|why| RunError::Usage(format!("{}: {why}", options.source.display())))
}

/// Each slot as the unit the question loop works: its id, its chunks as contexts.
pub fn slot_units(plan: &Plan, chunks: &[SourceChunk]) -> Vec<Sample> {
    plan.slots
        .iter()
        .map(|slot| Sample {
            id: slot.id.clone(),
            contexts: slot
                .chunks
                .iter()
                .map(|&i| rageval_core::Context::text(chunks[i].text.clone()))
                .collect(),
            ..Sample::default()
        })
        .collect()
}

/// Refuses a judge that cannot write test items ([`judges::require_writer`] for [`TASKS`]).
pub(crate) fn require_writer(setup: &JudgeSetup, options: &TestsetOptions) -> Result<()> {
    judges::require_writer(setup, &options.judge, "test-set questions", &TASKS)
}

/// Writes the planned items into the run directory, resuming what is there.
pub fn run(
    options: &TestsetOptions,
    env: Env<'_>,
    observer: &dyn Observer,
    cancel: &CancelToken,
) -> Result<Ended<Generated>> {
    let plan = make_plan(options)?;
    let setup = judges::resolve(&options.judge, env)?;
    require_writer(&setup, options)?;
    crate::engine::forecast::announce(
        &setup,
        || plan::estimate(options, env, &crate::engine::observe::Silent),
        observer,
    )?;
    let path = options
        .out
        .clone()
        .unwrap_or_else(|| default_out(&options.source, "testset"));
    let mut run = open(options, &setup, &path, observer)?;
    let units = slot_units(&plan, &options.chunks);
    let judge = setup.task_judge()?;
    let material = item::Material {
        chunks: &options.chunks,
        rule: options.closed_book,
    };
    let (judge, material, plan_ref) = (&judge, &material, &plan);
    let stage = QuestionStage {
        name: STAGE,
        questions: &units,
        at_once: setup.concurrency.max(1),
    };
    let stopped = run.work(
        stage,
        observer,
        cancel,
        |unit| async move {
            let slot = plan_ref
                .slots
                .iter()
                .find(|s| s.id == unit.id)
                .ok_or_else(|| RunError::Usage(format!("no planned slot `{}`", unit.id)))?;
            Ok(item::write_and_gate(judge, slot, material).await)
        },
        |line: &Result<SlotLine>| match line {
            Ok(line) if line.error.is_none() => Spoiled::No,
            _ => Spoiled::IfStopping,
        },
    )?;
    if let Some(stopped) = stopped {
        return Ok(Ended::Stopped(stopped));
    }
    let lines = run.lines_in_order(&units)?;
    finish(run, options, &plan, &lines, &setup, &path)
}

/// Opens (or resumes) the run directory: its identity is the chunks' content, the plan's
/// settings, the gates' settings and the judge's routes for [`TASKS`].
fn open<'a>(
    options: &TestsetOptions,
    setup: &'a JudgeSetup,
    path: &Path,
    observer: &dyn Observer,
) -> Result<QuestionRun<'a, SlotLine>> {
    let dataset = DatasetInfo {
        path: options.source.display().to_string(),
        sha256: chunks_sha256(&options.chunks),
        format: options.corpus.clone(),
        samples: Some(options.chunks.len()),
    };
    let shares = serde_json::to_string(&options.plan.shares).unwrap_or_default();
    let identity_settings = [
        ("size", options.plan.size.to_string()),
        ("seed", options.plan.seed.to_string()),
        ("per_document", format!("{:?}", options.plan.per_document)),
        ("min_chunk_chars", options.plan.min_chunk_chars.to_string()),
        ("shares", shares),
        ("closed_book", format!("{:?}", options.closed_book)),
        ("near_duplicate", options.near_duplicate.to_string()),
    ];
    let options_of_run = QuestionRunOptions {
        command: "testset",
        dataset,
        restart: options.restart,
        path,
        manifest_settings: json!({
            "plan": options.plan,
            "closed_book": options.closed_book,
            "near_duplicate": options.near_duplicate,
            "generator": setup.description,
        }),
        identity_settings: &identity_settings,
        tasks: &TASKS,
        journal: Journal {
            file: ITEMS_FILE,
            key: |line: &SlotLine| line.slot.clone(),
            failed: |line: &SlotLine| line.error.is_some(),
        },
        own_files: &[TESTSET_FILE],
        unit: "items",
    };
    QuestionRun::open(options_of_run, setup, observer)
}

/// Writes `testset.jsonl` and `summary.json`, and marks the run complete.
fn finish(
    mut run: QuestionRun<'_, SlotLine>,
    options: &TestsetOptions,
    plan: &Plan,
    lines: &[SlotLine],
    setup: &JudgeSetup,
    path: &Path,
) -> Result<Ended<Generated>> {
    let finished = set::finish_items(
        lines,
        &options.chunks,
        options.closed_book,
        options.near_duplicate,
    );
    run.write_lines(TESTSET_FILE, &finished.items)?;
    let summary = set::summarize(
        lines,
        &finished,
        plan,
        options.chunks.len(),
        options.closed_book,
        run.account(),
    );
    let footer = run.footer();
    run.finish(&json!({
        "command": "testset",
        "plan": options.plan,
        "generator": setup.description,
        "summary": summary,
    }))?;
    Ok(Ended::Complete(Generated {
        path: path.to_path_buf(),
        summary,
        footer,
    }))
}

/// SHA-256 over every chunk's id, document, location and text: the corpus's identity, the
/// same whether it was read from an index, a folder or a file.
pub fn chunks_sha256(chunks: &[SourceChunk]) -> String {
    let mut hasher = Sha256::new();
    for chunk in chunks {
        for part in [&chunk.id, &chunk.document, &chunk.location, &chunk.text] {
            hasher.update(part.as_bytes());
            hasher.update([0x1f]);
        }
        hasher.update([0x1e]);
    }
    format!("{:x}", hasher.finalize())
}
