//! `report.md`: the run's summary in Markdown, for pull requests and chat — a `judge-check`
//! run's agreement with the labels first, then the summary table, undefined and failed
//! counts with reasons, the judge's calls, tokens and cost, a `rank` / `pipeline` run's
//! retriever-versus-judge figures per question, and each metric's lowest-scoring samples.
//! Cells from data are escaped so a table never breaks and no HTML from an answer renders.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use rageval_core::Sample;

use crate::agreement_render::{agreement_markdown, agreement_samples};
use crate::escape::escape_markdown_cell as cell;
use crate::judge_agreement::{chance_suffix, judges_markdown};
use crate::judge_report::judge_markdown;
use crate::page::{number, shorten};
use crate::rank_agreement_render::rank_agreement_markdown;
use crate::report_samples::{Total, smallest};
use crate::{JournalIndex, Outcomes, RunData, RunInfo};

/// Samples listed per metric under "lowest-scoring samples".
const LOWEST: usize = 5;
/// The most characters of a question the lowest-scoring list shows.
const QUESTION_CHARS: usize = 60;

/// The run's report as Markdown. `samples` (the run's dataset, or an empty slice when it is
/// not at hand) gives the lowest-scoring samples their questions.
pub fn render_markdown(run: &RunData, samples: &[Sample]) -> String {
    let journal = JournalIndex::of_records(&run.records);
    let info = run.info();
    // Records in memory are read without I/O: reading their outcomes cannot fail.
    let outcomes = journal
        .outcomes(agreement_samples(&info, &journal))
        .unwrap_or_default();
    let lowest = lowest_scoring(&info, &journal);
    let listed: HashSet<&str> = lowest
        .iter()
        .flat_map(|(_, samples)| samples.iter().map(|&(_, at)| journal.id(at)))
        .collect();
    let questions = samples
        .iter()
        .filter(|sample| listed.contains(sample.id.as_str()))
        .map(|sample| (sample.id.clone(), sample.clone()))
        .collect();
    markdown(&info, &journal, &outcomes, &questions)
}

/// The samples "Lowest-scoring samples" lists: per metric in the report's order, the
/// [`LOWEST`] smallest scores with their samples' places in the journal, ties broken by id so the
/// file is the same on every run.
pub(crate) fn lowest_scoring(
    run: &RunInfo,
    journal: &JournalIndex,
) -> Vec<(String, Vec<(f64, usize)>)> {
    journal
        .metric_names(&run.summary.metric_order)
        .into_iter()
        .map(|name| {
            let scored = journal
                .scores(&name)
                .map(|(at, value)| (Total(value), journal.id(at), at));
            let lowest = smallest(scored, LOWEST)
                .into_iter()
                .map(|(Total(value), _, at)| (value, at));
            (name, lowest.collect())
        })
        .collect()
}

/// [`render_markdown`] from the run's journal index, with the outcomes of the samples the
/// agreement section quotes and the questions of those [`lowest_scoring`] lists (by id; an
/// empty map when the dataset is not at hand, and the list shows ids only).
pub(crate) fn markdown(
    run: &RunInfo,
    journal: &JournalIndex,
    outcomes: &Outcomes,
    questions: &HashMap<String, Sample>,
) -> String {
    let m = &run.manifest;
    let mut md = format!("# rageval report: {}\n\n", cell(&run.name()));
    let _ = writeln!(
        md,
        "Dataset `{}` (sha256 `{}`), {} samples; {} {}, finished {}.\n",
        cell(&m.dataset.path),
        cell(&m.dataset.sha256),
        run.summary.samples,
        cell(&m.tool.name),
        cell(&m.tool.version),
        cell(m.finished_at.as_deref().unwrap_or("—"))
    );
    md.push_str(&agreement_markdown(run, journal, outcomes));
    md.push_str("| metric | mean | 95% CI | scored | undefined | failed |\n");
    md.push_str("|---|---:|---:|---:|---:|---:|\n");
    let metrics = journal.metric_names(&run.summary.metric_order);
    for name in &metrics {
        let Some(s) = run.summary.metrics.get(name) else {
            continue;
        };
        let _ = writeln!(
            md,
            "| `{}` | {}{} | {} | {} | {} | {} |",
            cell(name),
            number(s.mean),
            chance_suffix(run, name),
            s.ci95
                .map_or_else(|| "—".into(), |[l, h]| format!("[{l:.4}, {h:.4}]")),
            s.n_scored,
            s.n_undefined,
            s.n_failed
        );
    }
    let _ = writeln!(
        md,
        "\nIntervals: {} bootstrap of the mean, {} resamples, seed {}.",
        run.summary.bootstrap.method, run.summary.bootstrap.resamples, run.summary.bootstrap.seed
    );
    md.push_str(&judges_markdown(run, &metrics));
    md.push_str(&crate::calibrated_markdown(&run.summary));
    md.push_str(&crate::abstention_render::abstention_markdown(&run.summary));
    md.push_str(&crate::conversations::positions_markdown(
        &run.summary,
        &metrics,
    ));

    let mut reasons = String::new();
    for name in &metrics {
        let Some(s) = run.summary.metrics.get(name) else {
            continue;
        };
        for (kind, list) in [
            ("undefined", &s.undefined_reasons),
            ("failed", &s.failed_errors),
        ] {
            for (reason, count) in list {
                let _ = writeln!(
                    reasons,
                    "- `{}` {kind}: {count} × {}",
                    cell(name),
                    cell(reason)
                );
            }
        }
    }
    if !reasons.is_empty() {
        md.push_str("\n## Undefined and failed\n\n");
        md.push_str(&reasons);
    }
    md.push_str(&judge_markdown(
        run.summary.judge.as_ref(),
        &run.manifest.settings,
    ));
    md.push_str(&rank_agreement_markdown(run));

    md.push_str("\n## Lowest-scoring samples\n");
    for (name, lowest) in lowest_scoring(run, journal) {
        if lowest.is_empty() {
            continue;
        }
        let (header, rule) = if questions.is_empty() {
            ("| sample | score |", "|---|---:|")
        } else {
            ("| sample | question | score |", "|---|---|---:|")
        };
        let _ = writeln!(md, "\n### `{}`\n\n{header}\n{rule}", cell(&name));
        for (value, at) in lowest {
            let id = journal.id(at);
            let question = if questions.is_empty() {
                String::new()
            } else {
                let text = questions
                    .get(id)
                    .map(|s| shorten(&s.question, QUESTION_CHARS));
                format!(" {} |", cell(&text.unwrap_or_default()))
            };
            let _ = writeln!(md, "| `{}` |{question} {value:.4} |", cell(id));
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::write_run;
    use rageval_core::Outcome;

    #[test]
    fn lists_summary_reasons_and_lowest_samples() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        write_run(
            &path,
            "abc",
            &[
                ("a|b", "m", Outcome::bare(0.25)),
                ("c", "m", Outcome::bare(0.75)),
                ("d", "m", Outcome::undefined("no <answer>")),
            ],
        );
        let md = render_markdown(&RunData::load(&path).unwrap(), &[]);
        assert!(md.starts_with("# rageval report: run\n"));
        assert!(md.contains("| `m` | 0.5000 | ["), "{md}");
        assert!(md.contains("| 2 | 1 | 0 |"));
        assert!(md.contains("- `m` undefined: 1 × no &lt;answer&gt;"));
        assert!(md.contains("| `a\\|b` | 0.2500 |\n| `c` | 0.7500 |"));
    }

    /// Issue 39 item 9: the lowest-scoring samples name their questions when the dataset is
    /// at hand, cut to 60 characters and escaped; without it, ids only.
    #[test]
    fn regression_issue_39_lowest_scoring_samples_show_their_questions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        write_run(
            &path,
            "abc",
            &[
                ("a", "m", Outcome::bare(0.25)),
                ("b", "m", Outcome::bare(0.75)),
            ],
        );
        let run = RunData::load(&path).unwrap();
        let long = format!("Which | pipe {}?", "very ".repeat(20));
        let sample = |id: &str, question: &str| Sample {
            id: id.into(),
            question: question.into(),
            ..Sample::default()
        };
        let samples = [sample("a", &long), sample("b", "Short?")];
        let md = render_markdown(&run, &samples);
        let cut: String = long.chars().take(60).collect();
        let cut = cut.replace('|', "\\|");
        assert!(
            md.contains(&format!(
                "| sample | question | score |\n|---|---|---:|\n| `a` | {cut}… | 0.2500 |\n| `b` | Short? | 0.7500 |"
            )),
            "{md}"
        );
        let without = render_markdown(&run, &[]);
        assert!(without.contains("| sample | score |\n|---|---:|\n| `a` | 0.2500 |"));
    }
}
