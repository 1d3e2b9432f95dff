//! `rageval collect QUESTIONS --retriever es|local|http --generator http|baseline --out DATA.jsonl`:
//! settings resolved once from the settings file (`--config`, else `RAGEVAL_CONFIG`, else
//! `./rageval.toml`), the `RAGEVAL_ES_*` and `RAGEVAL_JUDGE_*` variables and flags; then every
//! question not yet in the output is asked, a few at a time, with progress on stderr.
//!
//! The summary line counts what was written, what failed, and the empty results (questions
//! without contexts, empty answers), which get a warning; `--fail-on-empty` makes them
//! failures. Exit code 2 when a question failed (the others are written; a rerun asks the
//! failed ones again, and the hint for empty results names the settings to check, since a
//! rerun with the same ones finds nothing either); failures with the same cause are
//! reported once, with their ids. When every question fails no output file is written.
//! Ctrl-C (or SIGTERM) asks nothing more and says how many records were written and how to
//! go on (exit 130, or 143); the same command resumes. `--show-settings` prints the
//! resolved settings as aligned `key  value` lines, secrets masked.
//!
//! `--generator baseline` answers with the chat model of the judge `rageval eval` would
//! build from the same `--judge-*` flags (`rageval_run::engine::judges::resolve`); like
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
    LocalRetriever, Progress, RagService, SourcesConfig, collect,
};

use rageval_run::{Event, Observer as _};

mod settings;
mod tell;

use settings::Section;
use tell::{Asked, tell};

use super::Exit;
use crate::cli::{CollectArgs, GeneratorKind, RetrieverKind};
use crate::commands::sources::{embedder_for, ranking, runtime};
use crate::ui::Ui;

pub fn run(args: &CollectArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
    if same_file(&args.questions, &args.out) {
        anyhow::bail!("--out must not be the questions file itself");
    }
    let env = |name: &str| std::env::var(name).ok();
    let config = SourcesConfig::locate(args.judge.config.as_deref(), &env)?;
    let concurrency = args.judge.concurrency.unwrap_or(DEFAULT_CONCURRENCY);
    // The baseline's chat judge, whose calls the progress line counts.
    let mut judge = None;
    let (generator, service): (Arc<dyn Generator>, Option<Section>) = match args.generator {
        GeneratorKind::Http => {
            let service = RagService::new(config.service(process_env())?)?;
            let section = Section::new("service", service.settings().shown());
            (Arc::new(service), Some(section))
        }
        GeneratorKind::Baseline => {
            let (generator, chat) = baseline(args, ui)?;
            judge = chat;
            (Arc::new(generator), None)
        }
    };
    let (contexts, retriever) = match args.retriever {
        RetrieverKind::Es => {
            let retriever = EsRetriever::new(config.elasticsearch(&env)?)?;
            let section = Section::new("elasticsearch", retriever.settings().shown());
            (ContextSource::Retriever(Arc::new(retriever)), Some(section))
        }
        RetrieverKind::Local => {
            let local = config.local(args.index.clone(), args.k, args.ranking.map(ranking))?;
            let section = Section::new(
                "local",
                vec![
                    ("index", local.index.display().to_string()),
                    ("k", local.k.to_string()),
                    ("ranking", local.ranking.name().to_owned()),
                ],
            );
            let index = Arc::new(LocalIndex::open(&local.index)?);
            let embedder = embedder_for(&index, local.ranking)?;
            let retriever = LocalRetriever::new(index, local.k, local.ranking, embedder)?;
            (ContextSource::Retriever(Arc::new(retriever)), Some(section))
        }
        RetrieverKind::Http => (ContextSource::Generator, service.clone()),
    };
    if args.show_settings {
        let sections = settings::sections(
            args,
            &contexts,
            generator.as_ref(),
            concurrency,
            retriever.as_ref(),
            service.as_ref(),
        );
        out.write_all(settings::render(&sections).as_bytes())?;
        return Ok(Exit::Success);
    }
    let options = ReadOptions {
        format: args.dataset.format,
        field_map: FieldMap::parse(&args.dataset.field_map)?,
        sheet: args.dataset.sheet.clone(),
    };
    let mut questions = read_all(&args.questions, &options)?;
    if let Some(n) = args.samples {
        questions.truncate(n);
    }
    let total = questions.len();
    let cancel = crate::signals::cancel_on_ctrl_c();
    ui.event(&Event::Stage {
        name: "collecting",
        total: None,
    });
    let progress = |p: Progress| {
        ui.event(&Event::Progress(rageval_run::Progress {
            done: p.finished as u64,
            total: Some(p.to_ask as u64),
            failed: p.failed as u64,
            ..rageval_run::Progress::of("collecting", judge.as_ref())
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
            cancel: Some(cancel),
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
    let asked = Asked {
        args,
        total,
        retriever: retriever.as_ref(),
        service: service.as_ref(),
    };
    tell(&report, &asked, ui, out)
}

/// The baseline RAG: the judge's chat model answering from the retrieved contexts.
/// The baseline generator, and the chat judge that answers for it.
fn baseline(
    args: &CollectArgs,
    ui: &Ui,
) -> anyhow::Result<(
    BaselineGenerator,
    Option<rageval_judge::Judge<rageval_judge::Models>>,
)> {
    if args.retriever == RetrieverKind::Http {
        bail!("--generator baseline answers from retrieved contexts: use --retriever local or es");
    }
    let options = crate::judge::options(&args.judge);
    let setup = rageval_run::engine::judges::resolve(&options, &crate::judge::env)?;
    rageval_run::commands::reference::require_writer(&setup, &options, "--generator baseline")?;
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
    Ok((generator, setup.chat.clone()))
}

fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// A judge that stopped the generator (a cap, a halted judge, Ctrl-C) ends `collect`
/// resumably with the exit every judged command gives for it: the records written so far
/// stay, and the same command asks the rest. The message counts the records in `out` and
/// names the way on that fits the stop.
fn judge_stopped(stop: &rageval_judge::JudgeError, out: &std::path::Path, ui: &Ui) -> Exit {
    use rageval_judge::JudgeError;
    let (exit, again) = match stop {
        JudgeError::BudgetExhausted { .. } => (Exit::CapReached, " with a larger cap or none"),
        JudgeError::Cancelled => (Exit::Interrupted, ""),
        _ => (
            Exit::JudgeFailed,
            " once the judge answers (check the endpoint, model and credentials)",
        ),
    };
    let records = std::fs::read_to_string(out)
        .map(|text| text.lines().filter(|l| !l.trim().is_empty()).count())
        .unwrap_or(0);
    let kept = match records {
        0 => format!("No record was written to {}", out.display()),
        n => format!(
            "{} in {}",
            rageval_run::engine::words::counted_are(n, "records"),
            out.display()
        ),
    };
    let rest = if records == 0 {
        "every question"
    } else {
        "the rest"
    };
    ui.warn(&format!(
        "stopped: {stop}. {kept}; run the same command again{again} to ask {rest}."
    ));
    exit
}
