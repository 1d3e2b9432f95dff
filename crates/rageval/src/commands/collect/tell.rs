//! What `collect` tells when it has asked every question: failures grouped by cause, the
//! summary line on stdout, warnings for empty results, and the hint that fits what failed.
//! The exit code follows from the same report.

use std::io::Write;

use rageval_run::engine::words::{counted, counted_have};
use rageval_sources::SourceError;
use rageval_sources::collect::CollectReport;

use super::settings::Section;
use crate::cli::{CollectArgs, RetrieverKind};
use crate::commands::Exit;
use crate::ui::Ui;

/// What was asked: the command's arguments, the number of questions read and the sources'
/// settings (for the hint on empty results).
pub(super) struct Asked<'a> {
    pub args: &'a CollectArgs,
    pub total: usize,
    pub retriever: Option<&'a Section>,
    pub service: Option<&'a Section>,
}

/// Tells what `report` holds and chooses the exit: success, an interruption, or an error
/// when a question failed.
pub(super) fn tell(
    report: &CollectReport,
    asked: &Asked<'_>,
    ui: &Ui,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let Asked { args, total, .. } = *asked;
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
        counted(total, "questions"),
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
            counted(report.written, "records"),
            args.out.display(),
            total.saturating_sub(have),
        ));
        return Ok(match crate::signals::stop_signal() {
            Some(crate::signals::StopSignal::Terminate) => Exit::Terminated,
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
            counted(report.unknown_ids, "records"),
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
            counted_have(report.failed.len(), "questions"),
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
                counted(others, "questions")
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
                asked.service
            } else {
                asked.retriever
            },
        ));
    }
    Ok(Exit::Error)
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
        counted(empty, "questions"),
    )
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
