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
        let described = match &contexts {
            ContextSource::Retriever(r) => r.describe(),
            ContextSource::Generator => "the service's answer".into(),
        };
        let run = Section::new(
            "",
            vec![
                ("questions", args.questions.display().to_string()),
                ("out", args.out.display().to_string()),
                ("retriever", described),
                ("generator", generator.describe()),
                ("concurrency", concurrency.to_string()),
                ("fail_on_empty", args.fail_on_empty.to_string()),
            ],
        );
        let mut sections = vec![run];
        if args.retriever != RetrieverKind::Http {
            sections.extend(retriever.clone());
        }
        sections.extend(service.clone());
        out.write_all(render_sections(&sections).as_bytes())?;
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
    let cancel = crate::ui::cancel_on_ctrl_c();
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
    for (error, ids) in failures_by_cause(&report.failed) {
        ui.note(&format!(
            "{} failed: {error}",
            count_with_ids(ids.len(), "question", &ids)
        ));
    }
    writeln!(
        out,
        "{}: {}, {} already there, {} written, {} failed; {} without contexts, {} with an empty answer",
        args.out.display(),
        count(total, "question"),
        report.already_done,
        report.written,
        report.failed.len(),
        report.without_contexts.len(),
        report.empty_answers.len(),
    )?;
    if report.interrupted {
        let have = report.already_done + report.written;
        ui.warn(&format!(
            "interrupted: {} written to {} in this run, {have} of {total} questions have one; \
             run the same command again to ask the other {} (the records there are kept)",
            count(report.written, "record"),
            args.out.display(),
            total.saturating_sub(have),
        ));
        return Ok(match crate::ui::stop_signal() {
            Some(crate::ui::StopSignal::Terminate) => Exit::Terminated,
            _ => Exit::Interrupted,
        });
    }
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
            "note: {} in {} have ids that are not in {} (kept)",
            count(report.unknown_ids, "record"),
            args.out.display(),
            args.questions.display()
        ));
    }
    if report.failed.is_empty() {
        return Ok(Exit::Success);
    }
    if args.out.exists() {
        ui.note(&format!(
            "{} is not complete: {} no record (the failures are listed above)",
            args.out.display(),
            count_verb(report.failed.len(), "question has", "questions have"),
        ));
    } else {
        ui.warn(&format!(
            "error: nothing was collected: every question asked failed (the failures are listed \
             above), so {} was not written",
            args.out.display()
        ));
    }
    let empty = report
        .failed
        .iter()
        .filter(|(_, error)| is_empty_result(error))
        .count();
    let others = report.failed.len() - empty;
    if others > 0 {
        let which = if empty == 0 {
            "failed questions".to_owned()
        } else {
            format!(
                "{} that failed for other reasons",
                count(others, "question")
            )
        };
        ui.note(&format!(
            "hint: the same command asks the {which} again, once their cause (above) is fixed \
             or has passed"
        ));
    }
    if empty > 0 {
        ui.note(&empty_hint(
            empty,
            if args.retriever == RetrieverKind::Http {
                service.as_ref()
            } else {
                retriever.as_ref()
            },
        ));
    }
    Ok(Exit::Error)
}

/// Named settings of one source, as `--show-settings` prints them under `[name]`.
#[derive(Debug, Clone)]
struct Section {
    name: &'static str,
    settings: Vec<(&'static str, String)>,
}

impl Section {
    fn new(name: &'static str, settings: Vec<(&'static str, String)>) -> Self {
        Section { name, settings }
    }

    /// `key value` pairs of the settings named by `keys`, in that order.
    fn pick(&self, keys: &[&str]) -> String {
        keys.iter()
            .filter_map(|key| {
                let (_, value) = self.settings.iter().find(|(name, _)| name == key)?;
                Some(format!("{key} {value}"))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The sections as TOML-like lines, values aligned: the unnamed one first, then `[name]`
/// and its keys for each other.
fn render_sections(sections: &[Section]) -> String {
    let width = sections
        .iter()
        .flat_map(|s| &s.settings)
        .map(|(key, _)| key.chars().count())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for section in sections {
        if !section.name.is_empty() {
            text.push_str(&format!("\n[{}]\n", section.name));
        }
        for (key, value) in &section.settings {
            text.push_str(&format!("{key:<width$}  {value}\n"));
        }
    }
    text
}

/// Whether `error` is an empty result made a failure by `--fail-on-empty`: asking again with
/// the same settings gives the same nothing.
fn is_empty_result(error: &SourceError) -> bool {
    matches!(
        error,
        SourceError::NoContexts { .. } | SourceError::EmptyAnswer { .. }
    )
}

/// What to check when `--fail-on-empty` failed questions: the settings of the source that
/// gave nothing, since a rerun with them finds nothing either.
fn empty_hint(empty: usize, source: Option<&Section>) -> String {
    let checked = source.map_or_else(
        || "the retriever's settings".to_owned(),
        |section| {
            let keys: &[&str] = match section.name {
                "elasticsearch" => &["index", "query_template", "text_field", "size"],
                "local" => &["index", "k", "ranking"],
                _ => &["url", "query", "body", "response"],
            };
            format!("[{}] {}", section.name, section.pick(keys))
        },
    );
    format!(
        "hint: asked again with the same settings, the {} with an empty result would get \
         nothing again: check the index name and the query's fields and filters ({checked}; \
         --show-settings prints every setting), or leave out --fail-on-empty to write such \
         questions with their empty result",
        count(empty, "question"),
    )
}

/// `1 question`, `3 questions`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `1 question has`, `3 questions have`.
fn count_verb(n: usize, singular: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { singular } else { plural })
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
