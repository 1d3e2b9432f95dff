//! `rageval collect QUESTIONS --retriever es|local|http --generator http|baseline --out DATA.jsonl`:
//! settings resolved once from the settings file (`--config`, else `RAGEVAL_CONFIG`, else
//! `./rageval.toml`), the `RAGEVAL_ES_*` and `RAGEVAL_JUDGE_*` variables and flags; then every
//! question not yet in the output is asked, a few at a time, with progress on stderr.
//!
//! The summary line counts what was written, what failed, and the empty results (questions
//! without contexts, empty answers), which get a warning; `--fail-on-empty` makes them
//! failures. Exit code 2 when a question failed (the others are written; a rerun asks the
//! failed ones again); failures with the same cause are reported once, with their ids.
//!
//! `--generator baseline` answers with the chat model of the judge `rageval eval` would
//! build from the same `--judge-*` flags (`rageval_run::judges::resolve`); like
//! `reference`, it needs a model that writes — an endpoint, or `--judge gguf:PATH` — and
//! refuses to use the embedded 135M model unasked.

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use rageval_core::dataset::{FieldMap, ReadOptions, read_all};
use rageval_sources::collect::DEFAULT_CONCURRENCY;
use rageval_sources::config::process_env;
use rageval_sources::{
    BaselineGenerator, CollectOptions, ContextSource, EsRetriever, Generator, LocalIndex,
    LocalRetriever, Progress, RagService, SourceError, SourcesConfig, collect,
};
use serde_json::json;

use rageval_run::{Event, Observer as _};

use super::Exit;
use super::sources::{embedder_for, ranking, runtime};
use crate::cli::{CollectArgs, GeneratorKind, RetrieverKind};
use crate::ui::Ui;

pub fn run(args: &CollectArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
    if same_file(&args.questions, &args.out) {
        anyhow::bail!("--out must not be the questions file itself");
    }
    let env = |name: &str| std::env::var(name).ok();
    let config = SourcesConfig::locate(args.judge.config.as_deref(), &env)?;
    let concurrency = args.judge.concurrency.unwrap_or(DEFAULT_CONCURRENCY);
    let (generator, service): (Arc<dyn Generator>, Option<String>) = match args.generator {
        GeneratorKind::Http => {
            let service = RagService::new(config.service(process_env())?)?;
            let settings = format!("{:?}", service.settings());
            (Arc::new(service), Some(settings))
        }
        GeneratorKind::Baseline => (Arc::new(baseline(args, ui)?), None),
    };
    let contexts = match args.retriever {
        RetrieverKind::Es => {
            ContextSource::Retriever(Arc::new(EsRetriever::new(config.elasticsearch(&env)?)?))
        }
        RetrieverKind::Local => {
            let local = config.local(args.index.clone(), args.k, args.ranking.map(ranking))?;
            let index = Arc::new(LocalIndex::open(&local.index)?);
            let embedder = embedder_for(&index, local.ranking)?;
            ContextSource::Retriever(Arc::new(LocalRetriever::new(
                index,
                local.k,
                local.ranking,
                embedder,
            )?))
        }
        RetrieverKind::Http => ContextSource::Generator,
    };
    if args.show_settings {
        let retriever = match &contexts {
            ContextSource::Retriever(r) => r.describe(),
            ContextSource::Generator => "the service's answer".into(),
        };
        let settings = json!({
            "questions": args.questions,
            "out": args.out,
            "retriever": retriever,
            "generator": generator.describe(),
            "concurrency": concurrency,
            "service": service,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&settings)?)?;
        return Ok(Exit::Success);
    }
    let options = ReadOptions {
        format: args.format.map(super::eval::format_of),
        field_map: FieldMap::parse(&args.field_map)?,
        ..ReadOptions::default()
    };
    let mut questions = read_all(&args.questions, &options)?;
    if let Some(n) = args.samples {
        questions.truncate(n);
    }
    let total = questions.len();
    ui.event(&Event::Stage {
        name: "collecting",
        total: None,
    });
    let progress = |p: Progress| {
        ui.event(&Event::Progress(rageval_run::Progress {
            stage: "collecting",
            done: p.finished as u64,
            total: Some(p.to_ask as u64),
            failed: p.failed as u64,
            ..rageval_run::Progress::default()
        }));
    };
    let report = runtime()?.block_on(collect(
        questions,
        contexts,
        generator,
        &args.out,
        &CollectOptions {
            concurrency,
            fail_on_empty: args.fail_on_empty,
        },
        &progress,
    ));
    ui.event(&Event::StageEnd);
    let report = match report {
        Ok(report) => report,
        Err(error) => {
            if let Some(stop) = error.judge_stop() {
                return Ok(judge_stopped(stop, &args.out, ui));
            }
            return Err(anyhow::Error::new(error)
                .context(format!("collecting into {}", args.out.display())));
        }
    };
    for (error, ids) in failures_by_cause(&report.failed) {
        ui.note(&format!(
            "{} failed: {error}",
            count_with_ids(ids.len(), "question", &ids)
        ));
    }
    writeln!(
        out,
        "{}: {} questions, {} already there, {} written, {} failed; {} without contexts, {} with an empty answer",
        args.out.display(),
        total,
        report.already_done,
        report.written,
        report.failed.len(),
        report.without_contexts.len(),
        report.empty_answers.len(),
    )?;
    if !report.without_contexts.is_empty() {
        ui.warn(&format!(
            "warning: {} got no contexts from the retriever; hint: check the query's filters \
             (a collection name that matches nothing gives no hits), or pass --fail-on-empty \
             to make empty results errors",
            count_with_ids(
                report.without_contexts.len(),
                "question",
                &report.without_contexts
            )
        ));
    }
    if !report.empty_answers.is_empty() {
        ui.warn(&format!(
            "warning: {} got an empty answer from the generator; pass --fail-on-empty to make \
             empty results errors",
            count_with_ids(
                report.empty_answers.len(),
                "question",
                &report.empty_answers
            )
        ));
    }
    if report.unknown_ids > 0 {
        ui.note(&format!(
            "note: {} records in {} have ids that are not in {} (kept)",
            report.unknown_ids,
            args.out.display(),
            args.questions.display()
        ));
    }
    if report.failed.is_empty() {
        Ok(Exit::Success)
    } else {
        ui.note(&format!(
            "{} is not complete: run the same command again to ask the failed questions again",
            args.out.display()
        ));
        Ok(Exit::Error)
    }
}

/// The failures grouped by their message (the whole cause chain), in order of first
/// appearance, with the ids of each group.
fn failures_by_cause(failed: &[(String, SourceError)]) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for (id, error) in failed {
        let causes: Vec<String> =
            std::iter::successors(Some(error as &dyn std::error::Error), |e| e.source())
                .map(ToString::to_string)
                .collect();
        let message = causes.join(": ");
        match groups.iter_mut().find(|(m, _)| *m == message) {
            Some((_, ids)) => ids.push(id.clone()),
            None => groups.push((message, vec![id.clone()])),
        }
    }
    groups
}

/// `3 questions (ids 1, 2, 5)`, naming at most ten ids.
fn count_with_ids(count: usize, noun: &str, ids: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut shown = ids
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        shown.push_str(&format!(", … {} more", ids.len() - SHOWN));
    }
    let (plural, label) = if count == 1 { ("", "id") } else { ("s", "ids") };
    format!("{count} {noun}{plural} ({label} {shown})")
}

/// The baseline RAG: the judge's chat model answering from the retrieved contexts.
fn baseline(args: &CollectArgs, ui: &Ui) -> anyhow::Result<BaselineGenerator> {
    if args.retriever == RetrieverKind::Http {
        bail!("--generator baseline answers from retrieved contexts: use --retriever local or es");
    }
    let options = crate::judge::options(&args.judge);
    let setup = rageval_run::judges::resolve(&options, &crate::judge::env)?;
    rageval_run::reference::require_writer(&setup, &options, "--generator baseline")?;
    let tasks = setup
        .judges
        .tasks()
        .cloned()
        .context("the judge settings give no task judge")?;
    let lang = options.lang;
    let generator = BaselineGenerator::new(tasks, lang).context(
        "--generator baseline needs a chat model: pass --judge-base-url and --judge-model, \
         or set [judge] in the settings file",
    )?;
    ui.note(&format!("answers by {}", generator.describe()));
    Ok(generator)
}

fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// A judge that stopped the generator (a cap, a halted judge, Ctrl-C) ends `collect`
/// resumably with the exit every judged command gives for it: the records written so far
/// stay, and the same command asks the rest.
fn judge_stopped(stop: &rageval_judge::JudgeError, out: &std::path::Path, ui: &Ui) -> Exit {
    use rageval_judge::JudgeError;
    let exit = match stop {
        JudgeError::BudgetExhausted { .. } => Exit::CapReached,
        JudgeError::Cancelled => Exit::Interrupted,
        _ => Exit::JudgeFailed,
    };
    ui.warn(&format!(
        "stopped: {stop}. The records written so far stay in {}; run the same command again \
         (with a larger cap, or once the judge answers) to ask the rest.",
        out.display()
    ));
    exit
}
