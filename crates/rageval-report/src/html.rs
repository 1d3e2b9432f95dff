//! `report.html`: one self-contained page per run — no script, no font, no image and no
//! style sheet from anywhere else, so it opens offline and can be mailed as one file.
//!
//! A `judge-check` run's page opens with its agreement with the human labels
//! ([`render_agreement`](crate::render_agreement)); a `rank` / `pipeline` run's shows the retriever's order against
//! the judge's per question ([`render_rank_agreement`](crate::render_rank_agreement)). Samples are listed in the
//! dataset's order when it is at hand. It shows per-metric means with 95% intervals, each metric's distribution as an inline SVG
//! histogram, undefined and failed counts with their reasons, the judge's calls, tokens, cost
//! and parse-ladder counts, and a per-sample table whose
//! rows link to the sample's drill-down: question, answer, references, the numbered
//! contexts, and every metric's outcome with each verdict, its reason and the contexts it
//! cites. Every string from data passes through [`escape_html`]; the templates are `format!`
//! strings rather than a template engine because the page is small, the escaping is one
//! function, and the compiler checks every placeholder.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use rageval_core::{Evidence, Outcome, Sample, Verdict, VerdictTarget};

use crate::agreement_render::{agreement_html, agreement_samples};
use crate::escape::escape_html as e;
use crate::judge_agreement::{chance_suffix, judges_html};
use crate::judge_report::judge_html;
use crate::outcome_text::detail_value;
use crate::page::{html_document, number, shorten};
use crate::rank_agreement_render::rank_agreement_html;
use crate::report_samples::{ReportSamples, choose_samples};
use crate::svg::{IntervalRow, histogram, interval_chart};
use crate::{JournalIndex, MetricSummary, Outcomes, ReportError, ReportTexts, RunData, RunInfo};

/// Characters of a context quoted under a verdict that cites it.
const QUOTE_CHARS: usize = 300;
/// Characters of a question shown in a sample's one-line heading.
const HEADING_CHARS: usize = 120;

/// The run's report as one HTML page. `samples` supplies questions, answers and context
/// texts for the drill-down; pass an empty slice when the dataset is not at hand, and the
/// page shows ids and indices only.
pub fn render_html(run: &RunData, samples: &[Sample]) -> String {
    let journal = JournalIndex::of_records(&run.records);
    let order = journal.input_order(samples.iter().map(|s| s.id.as_str()));
    let info = run.info();
    let listed = choose_samples(&journal, &info, &order);
    let by_id: HashMap<&str, &Sample> = samples.iter().map(|s| (s.id.as_str(), s)).collect();
    // Records in memory are read without I/O: reading their outcomes cannot fail.
    let outcomes = journal
        .outcomes(shown_samples(&info, &journal, &listed))
        .unwrap_or_default();
    render_listing(
        &info,
        &journal,
        &outcomes,
        listed,
        &by_id,
        !samples.is_empty(),
    )
}

/// [`render_html`] from the run's journal index, with texts from `texts`, of which only the
/// listed samples are kept in memory (a large run's page lists a few hundred), as are the
/// outcomes read back from the journal.
pub(crate) fn render_html_from(
    run: &RunInfo,
    journal: &JournalIndex,
    texts: &ReportTexts,
) -> Result<String, ReportError> {
    let listed = choose_samples(journal, run, &texts.order(journal)?);
    let wanted: HashSet<&str> = listed.listed.iter().map(|&at| journal.id(at)).collect();
    let picked = texts.pick(&wanted)?;
    let by_id: HashMap<&str, &Sample> = picked.iter().map(|(id, s)| (id.as_str(), s)).collect();
    let outcomes = journal.outcomes(shown_samples(run, journal, &listed))?;
    Ok(render_listing(
        run,
        journal,
        &outcomes,
        listed,
        &by_id,
        !texts.is_absent(),
    ))
}

/// The samples whose outcomes the page shows: those listed, and those the agreement
/// section cites.
fn shown_samples(run: &RunInfo, journal: &JournalIndex, listed: &ReportSamples) -> Vec<usize> {
    let mut shown = listed.listed.clone();
    shown.extend(agreement_samples(run, journal));
    shown
}

/// The page around the samples `listed` (journal indices in the order shown), with their
/// `outcomes` and texts from `by_id`; `has_texts` says whether the dataset was at hand.
fn render_listing(
    run: &RunInfo,
    journal: &JournalIndex,
    outcomes: &Outcomes,
    listed: ReportSamples,
    by_id: &HashMap<&str, &Sample>,
    has_texts: bool,
) -> String {
    let metrics = journal.metric_names(&run.summary.metric_order);
    let title = format!("rageval report: {}", run.name());
    let mut page = format!("<h1>{}</h1>\n", e(&title));
    // A judge-check run is about its agreement with the labels: that comes first.
    page.push_str(&agreement_html(run, journal, outcomes, ""));
    page.push_str(&run_summary(run, journal));
    page.push_str(&rank_agreement_html(run, journal, ""));
    // Rows in the dataset's order (the samples that matter in a large run); each keeps its
    // journal index as its anchor.
    page.push_str("<h2 id=\"per-sample\">Per sample</h2>\n");
    if let Some(note) = listed.note() {
        let _ = writeln!(page, "<p class=\"muted\">{}</p>", e(&note));
    }
    page.push_str(&sample_table(
        journal,
        &metrics,
        outcomes,
        by_id,
        &listed.listed,
        "",
    ));
    page.push_str("<h2 id=\"samples\">Samples</h2>\n");
    if !has_texts {
        page.push_str(
            "<p class=\"muted\">The dataset was not available when this report was written: \
             the drill-down shows verdicts by index, without question, answer or context \
             texts.</p>\n",
        );
    }
    for index in listed.listed {
        let id = journal.id(index);
        page.push_str(&sample_details(
            index,
            id,
            by_id.get(id).copied(),
            &metrics,
            outcomes,
        ));
    }
    html_document(&title, &page)
}

/// The top of a run's report as an HTML fragment: run facts, the summary table with
/// intervals and histograms, the interval chart, undefined/failed reasons, and the judge's
/// calls, tokens, cost and parse ladder.
pub fn render_run_summary(run: &RunData) -> String {
    run_summary(&run.info(), &JournalIndex::of_records(&run.records))
}

/// [`render_run_summary`] from the run's journal index.
fn run_summary(run: &RunInfo, journal: &JournalIndex) -> String {
    let metrics = journal.metric_names(&run.summary.metric_order);
    let mut html = meta_table(run);
    html.push_str(&summary_section(run, journal, &metrics));
    html.push_str(&crate::calibrated_html(&run.summary));
    html.push_str(&crate::abstention_render::abstention_html(&run.summary));
    html.push_str(&crate::conversations::positions_html(
        &run.summary,
        &metrics,
    ));
    html.push_str(&reasons_section(run, &metrics));
    html.push_str(&judge_html(
        run.summary.judge.as_ref(),
        &run.manifest.settings,
    ));
    html
}

fn meta_table(run: &RunInfo) -> String {
    let m = &run.manifest;
    let rows = [
        ("dataset", m.dataset.path.clone()),
        ("dataset sha256", m.dataset.sha256.clone()),
        ("samples", run.summary.samples.to_string()),
        ("command", m.command.clone()),
        ("tool", format!("{} {}", m.tool.name, m.tool.version)),
        ("started", m.started_at.clone()),
        ("finished", m.finished_at.clone().unwrap_or_default()),
        (
            "intervals",
            format!(
                "{} bootstrap, {} resamples, seed {}, level {}",
                run.summary.bootstrap.method,
                run.summary.bootstrap.resamples,
                run.summary.bootstrap.seed,
                run.summary.bootstrap.level
            ),
        ),
    ];
    let mut html = String::from("<table class=\"meta\">\n");
    for (key, value) in rows {
        let _ = writeln!(html, "<tr><td>{key}</td><td>{}</td></tr>", e(&value));
    }
    html.push_str("</table>\n");
    html
}

fn summary_section(run: &RunInfo, journal: &JournalIndex, metrics: &[String]) -> String {
    let mut html = String::from(
        "<h2 id=\"summary\">Summary</h2>\n<table class=\"summary\"><thead><tr><th>metric</th>\
         <th class=\"num\">mean</th><th class=\"num\">95% CI</th><th class=\"num\">scored</th>\
         <th class=\"num\">undefined</th><th class=\"num\">failed</th><th>distribution</th>\
         </tr></thead><tbody>\n",
    );
    let mut rows = Vec::new();
    for name in metrics {
        let Some(m) = run.summary.metrics.get(name) else {
            continue;
        };
        let mut values: Vec<f64> = journal.scores(name).map(|(_, value)| value).collect();
        values.sort_by(f64::total_cmp);
        let _ = writeln!(
            html,
            "<tr><td><code>{}</code></td><td class=\"num\">{}{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td>{}</td></tr>",
            e(name),
            number(m.mean),
            chance_suffix(run, name),
            interval(m),
            m.n_scored,
            m.n_undefined,
            m.n_failed,
            histogram(&values, 180, 44)
        );
        if let (Some(mean), Some([low, high])) = (m.mean, m.ci95) {
            rows.push(IntervalRow {
                label: name.clone(),
                estimate: mean,
                low,
                high,
            });
        }
    }
    html.push_str("</tbody></table>\n");
    html.push_str(&judges_html(run, metrics));
    if !rows.is_empty() {
        html.push_str("<h3>Means with 95% intervals</h3>\n");
        html.push_str(&interval_chart(&rows, 640, false));
        html.push('\n');
    }
    html
}

fn reasons_section(run: &RunInfo, metrics: &[String]) -> String {
    let mut html = String::from("<h2 id=\"reasons\">Undefined and failed</h2>\n");
    let mut any = false;
    for name in metrics {
        let Some(m) = run.summary.metrics.get(name) else {
            continue;
        };
        for (kind, reasons) in [
            ("undefined", &m.undefined_reasons),
            ("failed", &m.failed_errors),
        ] {
            if reasons.is_empty() {
                continue;
            }
            any = true;
            let _ = writeln!(html, "<h3><code>{}</code> — {kind}</h3><ul>", e(name));
            for (reason, count) in reasons {
                let _ = writeln!(html, "<li>{count} × {}</li>", e(reason));
            }
            html.push_str("</ul>\n");
        }
    }
    if !any {
        html.push_str("<p class=\"muted\">Every metric scored every sample.</p>\n");
    }
    html
}

/// The per-sample table as an HTML fragment: one row for each sample whose index (in
/// journal order, as in [`RunData::sample_ids`]) is in `shown`, one column per metric. Each
/// sample id links to `{link_base}#s{index}`, its drill-down in the run's report (`""` for
/// the same page). The question column appears when `samples` holds the dataset.
pub fn render_sample_table(
    run: &RunData,
    samples: &[Sample],
    shown: &[usize],
    link_base: &str,
) -> String {
    let by_id: HashMap<&str, &Sample> = samples.iter().map(|s| (s.id.as_str(), s)).collect();
    let journal = JournalIndex::of_records(&run.records);
    let metrics = journal.metric_names(&run.summary.metric_order);
    let known = shown.iter().copied().filter(|&at| at < journal.len());
    // Records in memory are read without I/O: reading their outcomes cannot fail.
    let outcomes = journal.outcomes(known).unwrap_or_default();
    sample_table(&journal, &metrics, &outcomes, &by_id, shown, link_base)
}

/// [`render_sample_table`] from the run's journal index, with the shown samples' outcomes
/// and texts by id.
fn sample_table(
    journal: &JournalIndex,
    metrics: &[String],
    outcomes: &Outcomes,
    by_id: &HashMap<&str, &Sample>,
    shown: &[usize],
    link_base: &str,
) -> String {
    let mut html =
        String::from("<div class=\"wide\"><table class=\"per-sample\"><thead><tr><th>sample</th>");
    if !by_id.is_empty() {
        html.push_str("<th>question</th>");
    }
    for name in metrics {
        let _ = write!(html, "<th class=\"num\"><code>{}</code></th>", e(name));
    }
    html.push_str("</tr></thead><tbody>\n");
    for &index in shown {
        if index >= journal.len() {
            continue;
        }
        let id = journal.id(index);
        let _ = write!(
            html,
            "<tr><td class=\"nowrap\"><a href=\"{}#s{index}\"><code>{}</code></a></td>",
            e(link_base),
            e(id)
        );
        if !by_id.is_empty() {
            let question = by_id
                .get(id)
                .map(|s| shorten(&s.question, HEADING_CHARS))
                .unwrap_or_default();
            let _ = write!(html, "<td>{}</td>", e(&question));
        }
        for name in metrics {
            html.push_str(&match outcomes.get(index, name) {
                Some(Outcome::Score { value, .. }) => {
                    format!("<td class=\"num\">{value:.4}</td>")
                }
                Some(Outcome::Undefined { reason }) => format!(
                    "<td class=\"num cell-undefined\" title=\"undefined: {}\">undefined</td>",
                    e(reason)
                ),
                Some(Outcome::Failed { error }) => format!(
                    "<td class=\"num cell-failed\" title=\"failed: {}\">failed</td>",
                    e(error)
                ),
                None => "<td class=\"num muted\">·</td>".into(),
            });
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div>\n");
    html
}

fn sample_details(
    index: usize,
    id: &str,
    sample: Option<&Sample>,
    metrics: &[String],
    outcomes: &Outcomes,
) -> String {
    let heading = sample
        .map(|s| shorten(&s.question, HEADING_CHARS))
        .unwrap_or_default();
    let mut html = format!(
        "<details class=\"sample\" id=\"s{index}\"><summary><code>{}</code> {}</summary>\n",
        e(id),
        e(&heading)
    );
    if let Some(sample) = sample {
        text_block(&mut html, "question", Some(&sample.question));
        text_block(&mut html, "answer", sample.answer.as_deref());
        for (i, reference) in sample.references.iter().enumerate() {
            let label = if i == 0 {
                "reference".to_string()
            } else {
                format!("reference {}", i + 1)
            };
            text_block(&mut html, &label, Some(reference));
        }
        if !sample.contexts.is_empty() {
            html.push_str("<h4>retrieved contexts</h4><ol class=\"contexts\" start=\"0\">\n");
            for (j, context) in sample.contexts.iter().enumerate() {
                let _ = writeln!(
                    html,
                    "<li id=\"s{index}-c{j}\"><span class=\"muted\">{}{}</span>\
                     <div class=\"text\">{}</div></li>",
                    context
                        .id
                        .as_deref()
                        .map(|cid| format!("id {} ", e(cid)))
                        .unwrap_or_default(),
                    context
                        .score
                        .map(|s| format!("score {s:.4}"))
                        .unwrap_or_default(),
                    e(&context.text)
                );
            }
            html.push_str("</ol>\n");
        }
    }
    for name in metrics {
        let Some(outcome) = outcomes.get(index, name) else {
            continue;
        };
        let _ = write!(
            html,
            "<div class=\"outcome\"><h3><code>{}</code>: ",
            e(name)
        );
        match outcome {
            Outcome::Score { value, evidence } => {
                let _ = writeln!(html, "{value:.4}</h3>");
                html.push_str(&evidence_html(index, evidence, sample));
            }
            Outcome::Undefined { reason } => {
                let _ = writeln!(html, "undefined</h3><p class=\"muted\">{}</p>", e(reason));
            }
            Outcome::Failed { error } => {
                let _ = writeln!(
                    html,
                    "<span class=\"bad\">failed</span></h3><p class=\"reason\">{}</p>",
                    e(error)
                );
            }
        }
        html.push_str("</div>\n");
    }
    html.push_str("</details>\n");
    html
}

fn evidence_html(index: usize, evidence: &Evidence, sample: Option<&Sample>) -> String {
    let mut html = String::new();
    if !evidence.details.is_empty() {
        html.push_str("<p class=\"muted\">");
        let parts: Vec<String> = evidence
            .details
            .iter()
            .map(|(key, value)| format!("{} = {}", e(key), e(&detail_value(value))))
            .collect();
        html.push_str(&parts.join(" · "));
        html.push_str("</p>\n");
    }
    if evidence.verdicts.is_empty() {
        return html;
    }
    html.push_str(
        "<table class=\"verdicts\"><thead><tr><th>about</th><th class=\"num\">verdict</th>\
         <th>text</th><th>reason and cited contexts</th></tr></thead><tbody>\n",
    );
    for verdict in &evidence.verdicts {
        html.push_str(&verdict_row(index, verdict, sample));
    }
    html.push_str("</tbody></table>\n");
    html
}

fn verdict_row(index: usize, verdict: &Verdict, sample: Option<&Sample>) -> String {
    let (about, text) = match verdict.target {
        VerdictTarget::Context(j) => (
            format!("<a href=\"#s{index}-c{j}\">context {j}</a>"),
            verdict.text.clone().or_else(|| {
                sample
                    .and_then(|s| s.contexts.get(j))
                    .map(|c| shorten(&c.text, QUOTE_CHARS))
            }),
        ),
        VerdictTarget::Statement(j) => (
            format!("statement {j}"),
            verdict.text.clone().or_else(|| {
                sample
                    .and_then(|s| s.answer_statements.as_ref())
                    .and_then(|statements| statements.get(j).cloned())
            }),
        ),
        VerdictTarget::Question(j) => (format!("question {j}"), verdict.text.clone()),
    };
    let shown_value = match &verdict.label {
        Some(label) => format!("{} ({})", e(label), verdict.value),
        None => verdict.value.to_string(),
    };
    let mut cell = verdict.reason.as_deref().map(e).unwrap_or_default();
    for &j in &verdict.supporting_contexts {
        let quote = sample
            .and_then(|s| s.contexts.get(j))
            .map(|c| {
                format!(
                    "<blockquote>{}</blockquote>",
                    e(&shorten(&c.text, QUOTE_CHARS))
                )
            })
            .unwrap_or_default();
        let _ = write!(
            cell,
            "<div>cites <a href=\"#s{index}-c{j}\">context {j}</a>{quote}</div>"
        );
    }
    format!(
        "<tr><td>{about}</td><td class=\"num\">{shown_value}</td><td>{}</td><td>{cell}</td></tr>\n",
        e(text.as_deref().unwrap_or(""))
    )
}

fn text_block(html: &mut String, label: &str, text: Option<&str>) {
    if let Some(text) = text {
        let _ = writeln!(
            html,
            "<h4>{label}</h4><div class=\"text\">{}</div>",
            e(text)
        );
    }
}

fn interval(m: &MetricSummary) -> String {
    m.ci95.map_or_else(
        || "—".into(),
        |[low, high]| format!("[{low:.4}, {high:.4}]"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::write_run;
    use rageval_core::Context;

    fn hostile_run() -> (tempfile::TempDir, RunData, Vec<Sample>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        let evidence = Evidence {
            verdicts: vec![Verdict {
                target: VerdictTarget::Statement(0),
                value: 0.0,
                label: Some("unsupported".into()),
                text: Some("Paris is <b>big</b>".into()),
                reason: Some("no context says <img src=x onerror=alert(1)>".into()),
                supporting_contexts: vec![1],
            }],
            details: serde_json::Map::new(),
        };
        write_run(
            &path,
            "abc",
            &[
                (
                    "<script>id</script>",
                    "faithfulness",
                    Outcome::score(0.25, evidence),
                ),
                (
                    "q2",
                    "faithfulness",
                    Outcome::undefined("answer has <no> statements"),
                ),
                (
                    "q3",
                    "faithfulness",
                    Outcome::failed("judge returned </td>"),
                ),
            ],
        );
        let sample = Sample {
            id: "<script>id</script>".into(),
            question: "What is <script>alert('q')</script>?".into(),
            answer: Some("An answer with <iframe src=\"http://evil\">".into()),
            contexts: vec![
                Context::text("first context"),
                Context::text("second context cites <style>body{}</style>"),
            ],
            ..Sample::default()
        };
        let run = RunData::load(&path).unwrap();
        (dir, run, vec![sample])
    }

    #[test]
    fn every_string_from_data_is_escaped() {
        let (_dir, run, samples) = hostile_run();
        let html = render_html(&run, &samples);
        for raw in [
            "<script>",
            "<img",
            "<iframe",
            "<b>big",
            "<no>",
            "</td>\"",
            "<style>body",
        ] {
            assert!(!html.contains(raw), "unescaped {raw}");
        }
        assert!(html.contains("&lt;script&gt;alert(&#39;q&#39;)&lt;/script&gt;"));
        assert!(html.contains("no context says &lt;img src=x onerror=alert(1)&gt;"));
        // Our own markup is the only markup: exactly one <style> and no <script> element.
        assert_eq!(html.matches("<style>").count(), 1);
    }

    #[test]
    fn loads_nothing_from_the_network() {
        let (_dir, run, samples) = hostile_run();
        let html = render_html(&run, &samples);
        // The only URL is the SVG namespace, which browsers never fetch.
        let without_namespace = html.replace("http://www.w3.org/2000/svg", "");
        assert!(
            !without_namespace.contains("src=\""),
            "an element loads something"
        );
        assert!(!without_namespace.contains("href=\"http"));
        assert!(!without_namespace.contains("<link"));
        assert!(!without_namespace.contains("@import"));
        assert!(!without_namespace.contains("url("));
        assert!(!without_namespace.contains("https://"));
        // The hostile answer's URL survives only as escaped text.
        assert!(without_namespace.contains("src=&quot;http://evil&quot;"));
    }

    #[test]
    fn the_drill_down_shows_verdicts_reasons_and_cited_contexts() {
        let (_dir, run, samples) = hostile_run();
        let html = render_html(&run, &samples);
        assert!(html.contains("<a href=\"#s0\">"));
        assert!(html.contains("id=\"s0-c1\""));
        assert!(html.contains("cites <a href=\"#s0-c1\">context 1</a><blockquote>second context"));
        assert!(html.contains("unsupported (0)"));
        assert!(html.contains("1 × answer has &lt;no&gt; statements"));
        assert!(html.contains("1 × judge returned &lt;/td&gt;"));
        assert!(html.contains("class=\"hist\""));
        // Without the dataset, the page says what it cannot show.
        assert!(render_html(&run, &[]).contains("The dataset was not available"));
    }
}
