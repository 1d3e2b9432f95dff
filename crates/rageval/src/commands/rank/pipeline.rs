//! `rageval pipeline`: seed S3's chain in one command, into one directory:
//! `rank/` (the judge's order and retriever-versus-judge agreement), `reference/` (`GT_` /
//! `FULL_` files), `dataset.jsonl` (each question with its contexts, the system's answer and
//! the generated reference) and `eval/` (`rageval eval` on it with `--top-k` contexts, which
//! writes the report). Each part appears only once it is complete.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use rageval_core::Sample;
use rageval_rank::{Reference, TaskAnswerer};
use serde_json::json;

use super::output::{OutputDir, write_file};
use super::reference::{
    generate_all, note_missing, reference_settings, require_writer, summary_json, write_references,
};
use super::{
    default_out, note, rank_samples, rank_settings, read_samples, render_summary, runtime,
    summarize_rankings, task_judge, write_rankings,
};
use crate::cli::PipelineArgs;

/// The dataset `eval` scores.
pub const DATASET_FILE: &str = "dataset.jsonl";

pub fn run(mut args: Box<PipelineArgs>, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let eval = &args.eval;
    let samples = read_samples(
        &eval.data,
        &eval.field_map,
        eval.format,
        eval.sheet.clone(),
        eval.samples,
    )?;
    let setup = task_judge(&eval.judge)?;
    require_writer(&setup)?;
    let ranking = rank_settings(
        &args.ranking,
        eval.seed,
        setup.concurrency,
        setup.context_window,
    );
    let reference = reference_settings(
        &args.reference,
        setup.context_window,
        eval.seed,
        setup.concurrency,
    )?;
    let root = eval
        .out
        .clone()
        .unwrap_or_else(|| default_out(&eval.data, "pipeline"));
    let top_k = eval
        .top_k
        .unwrap_or(rageval_rank::agreement::DEFAULT_TOP_K as u64);
    let k = usize::try_from(top_k).unwrap_or(usize::MAX);
    let runtime = runtime()?;

    let rank_dir = OutputDir::create(&root.join("rank"), eval.overwrite)?;
    let rankings = runtime.block_on(rank_samples(
        &setup.judge,
        &samples,
        &ranking,
        k,
        args.ranking.questions_at_once,
    ))?;
    let summary = summarize_rankings(&rankings);
    let rank_json = json!({
        "command": "pipeline",
        "dataset": eval.data.display().to_string(),
        "settings": ranking,
        "k": k,
        "judge": setup.description,
        "summary": summary,
    });
    write_rankings(rank_dir.path(), &rankings, &rank_json)?;
    rank_dir.commit()?;
    out.write_all(render_summary(&summary, ranking.algorithm.name(), k).as_bytes())
        .context("cannot write to stdout")?;

    let reference_dir = OutputDir::create(&root.join("reference"), eval.overwrite)?;
    let answerer = TaskAnswerer::new(setup.judge.clone());
    let results = runtime.block_on(generate_all(&answerer, &samples, &reference, 4))?;
    let references: Vec<Option<String>> = results
        .iter()
        .map(|r| {
            r.as_ref()
                .ok()
                .and_then(|r: &Reference| r.ground_truth.clone())
        })
        .collect();
    let lines = write_references(reference_dir.path(), &samples, results)?;
    let summary = summary_json(&lines, &reference, &setup);
    write_file(
        reference_dir.path(),
        super::SUMMARY_FILE,
        serde_json::to_string_pretty(&summary)?.as_bytes(),
    )?;
    reference_dir.commit()?;
    note_missing(&lines);
    drop(runtime);

    let dataset = root.join(DATASET_FILE);
    write_dataset(&dataset, &samples, &references)?;
    note(&format!(
        "wrote {}, {} and {}; now eval on the top {top_k} contexts",
        root.join("rank").display(),
        root.join("reference").display(),
        dataset.display()
    ));
    args.eval.data = dataset;
    args.eval.out = Some(root.join("eval"));
    args.eval.top_k = Some(top_k);
    args.eval.field_map.clear();
    args.eval.format = None;
    args.eval.sheet = None;
    args.eval.samples = None;
    super::super::eval::run(&args.eval, out)
}

/// One JSON line per question: id, question, contexts (retriever order), the system's
/// answer, and the generated reference when there is one.
fn write_dataset(
    path: &Path,
    samples: &[Sample],
    references: &[Option<String>],
) -> anyhow::Result<()> {
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
        text.push_str(&serde_json::to_string(&row)?);
        text.push('\n');
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| DATASET_FILE.into());
    let partial = format!("{name}.partial");
    write_file(dir, &partial, text.as_bytes())?;
    std::fs::rename(dir.join(&partial), path)
        .with_context(|| format!("cannot write {}", path.display()))
}
