//! The agreement section that leads every report of a `judge-check` run (`report.html`,
//! `report.md`, `rageval serve`'s run page) and the side-by-side of two judges in `compare`:
//! the label shape, each figure with its interval and whether it includes chance, the
//! counts, the binary thresholds, the stability of repeated verdicts, and the items where the
//! judge went against the label with the judge's own reasons and a link to the sample.
//! Every string from data passes through the escapes of [`crate::escape`].

use std::fmt::Write as _;

use rageval_core::{Outcome, VerdictTarget};

use crate::escape::{escape_html as e, escape_markdown_cell as cell};
use crate::page::shorten;
use crate::regression_gate::p_text;
use crate::{
    Agreement, AgreementDelta, AgreementFigure, FigureDelta, ItemResult, ItemVerdict, JournalIndex,
    Outcomes, RunData, RunInfo, chance_level,
};

/// Items listed under "where the judge disagreed".
const DISAGREEMENTS_SHOWN: usize = 20;
/// Unstable items listed under the stability of repeated verdicts.
const UNSTABLE_SHOWN: usize = 10;
/// Verdict reasons quoted per sample, and characters per reason.
const REASONS_PER_SAMPLE: usize = 3;
const REASON_CHARS: usize = 240;

/// What a figure measures, in words.
fn meaning(figure: &str) -> &'static str {
    match figure {
        "pairwise_accuracy" => "the preferred sample scored higher (ties count ½)",
        "balanced_accuracy" => "mean hit rate on good and on bad items, verdict score ≥ threshold",
        "accuracy" => "share of items whose verdict matches the label",
        "auroc" => "chance that a good item outscores a bad one (ties ½)",
        "balanced_accuracy_cv" => "balanced accuracy on held-out folds at the chosen threshold",
        "spearman" => "Spearman ρ of score against grade",
        "kendall_tau_b" => "Kendall τ-b of score against grade",
        "kendall_tau_b_within_groups" => "mean Kendall τ-b within a group",
        "cohen_kappa" => "Cohen's κ of score against grade",
        "weighted_kappa" => "quadratically weighted κ",
        _ => "",
    }
}

/// `[low, high]`, or `—` without an interval.
fn interval(figure: &AgreementFigure) -> String {
    figure.ci95.map_or_else(
        || "—".into(),
        |ci| format!("[{:.4}, {:.4}]", ci.low, ci.high),
    )
}

/// Where the interval lies against chance, and the class that colours it.
fn against_chance(name: &str, figure: &AgreementFigure) -> (String, &'static str) {
    match (chance_level(name), figure.ci95) {
        (Some(chance), Some(_)) if figure.includes_chance(name) => {
            (format!("includes chance ({chance})"), "bad")
        }
        (Some(chance), Some(ci)) if ci.high < chance => (format!("below chance ({chance})"), "bad"),
        (Some(chance), Some(_)) => (format!("above chance ({chance})"), "good"),
        _ => ("—".into(), "neutral"),
    }
}

/// The counts in one line: `agree 6 · tie 4 · disagree 0 · unscored 0`.
fn counts_line(agreement: &Agreement) -> String {
    let mut parts: Vec<String> = agreement
        .counts
        .iter()
        .map(|(name, count)| format!("{name} {count}"))
        .collect();
    parts.push(format!("unscored {}", agreement.unscored));
    parts.join(" · ")
}

/// The binary thresholds in words, if the labels are binary.
fn threshold_line(agreement: &Agreement) -> Option<String> {
    let threshold = agreement.threshold()?;
    let chosen = match agreement.cross_validated() {
        Some(Ok(cv)) => format!(
            "; best threshold by {}-fold cross-validation {:.4} (balanced accuracy {:.4} on \
             the items it was chosen on, {:.4} held out)",
            cv.folds, cv.threshold, cv.in_sample, cv.held_out
        ),
        Some(Err(why)) => format!("; no cross-validated threshold: {why}"),
        None => String::new(),
    };
    Some(format!("verdict “good” when score ≥ {threshold}{chosen}"))
}

/// What the judge said about one sample of an item: its verdicts' reasons (those against
/// first), or why there is no score.
fn judge_reasons(outcome: Option<&Outcome>) -> String {
    match outcome {
        Some(Outcome::Score { evidence, .. }) => {
            let mut verdicts: Vec<_> = evidence
                .verdicts
                .iter()
                .filter(|v| v.reason.is_some())
                .collect();
            verdicts.sort_by(|a, b| a.value.total_cmp(&b.value));
            let reasons: Vec<String> = verdicts
                .iter()
                .take(REASONS_PER_SAMPLE)
                .map(|v| {
                    let about = match v.target {
                        VerdictTarget::Context(j) => format!("context {j}"),
                        VerdictTarget::Statement(j) => format!("statement {j}"),
                        VerdictTarget::Question(j) => format!("question {j}"),
                    };
                    let label = v.label.as_deref().unwrap_or("");
                    let reason = shorten(v.reason.as_deref().unwrap_or(""), REASON_CHARS);
                    format!("{about} {label}: {reason}")
                })
                .collect();
            reasons.join("; ")
        }
        Some(Outcome::Undefined { reason }) => format!("undefined: {reason}"),
        Some(Outcome::Failed { error }) => format!("failed: {error}"),
        None => String::new(),
    }
}

fn score_text(score: Option<f64>) -> String {
    score.map_or_else(|| "no score".into(), |s| format!("{s:.4}"))
}

fn result_text(verdict: &ItemVerdict) -> &'static str {
    verdict.result.map_or("—", ItemResult::describe)
}

/// The run's metric (a judge-check run has one).
fn metric_of(run: &RunInfo, journal: &JournalIndex) -> String {
    let names = journal.metric_names(&run.summary.metric_order);
    names.into_iter().next().unwrap_or_default()
}

/// The samples whose outcomes the agreement section quotes (the first disagreements'),
/// as journal indices; none for a run without an agreement.
pub(crate) fn agreement_samples(run: &RunInfo, journal: &JournalIndex) -> Vec<usize> {
    let Some(agreement) = &run.agreement else {
        return Vec::new();
    };
    agreement
        .disagreements()
        .take(DISAGREEMENTS_SHOWN)
        .flat_map(|verdict| verdict.sample_ids())
        .filter_map(|id| journal.index_of(id.as_str()))
        .collect()
}

/// The agreement section of a judge-check run as an HTML fragment (empty for other runs).
/// Sample names link to `{link_base}#s{index}`, their drill-down in the run's report (`""`
/// for the same page).
pub fn render_agreement(run: &RunData, link_base: &str) -> String {
    let journal = JournalIndex::of_records(&run.records);
    let info = run.info();
    // Records in memory are read without I/O: reading their outcomes cannot fail.
    let outcomes = journal
        .outcomes(agreement_samples(&info, &journal))
        .unwrap_or_default();
    agreement_html(&info, &journal, &outcomes, link_base)
}

/// [`render_agreement`] from the run's journal index, with the outcomes of
/// [`agreement_samples`].
pub(crate) fn agreement_html(
    run: &RunInfo,
    journal: &JournalIndex,
    outcomes: &Outcomes,
    link_base: &str,
) -> String {
    let Some(agreement) = &run.agreement else {
        return String::new();
    };
    let metric = metric_of(run, journal);
    let labels = run.manifest.settings["labels"].as_str().unwrap_or("");
    let mut html = format!(
        "<h2 id=\"agreement\">Agreement with the human labels</h2>\n<p><b>{}</b> labels \
         <code>{}</code>: {} items, {} left out (a sample got no score); the judge's scores \
         of <code>{}</code> against them, 95% bootstrap intervals.</p>\n",
        agreement.shape.name(),
        e(labels),
        agreement.items,
        agreement.unscored,
        e(&metric)
    );
    if let Some(warning) = agreement.warning() {
        let _ = writeln!(html, "<p class=\"error\">{}</p>", e(warning));
    }
    html.push_str(
        "<table class=\"agreement\"><thead><tr><th>figure</th><th class=\"num\">value</th>\
         <th class=\"num\">95% CI</th><th>against chance</th><th>measures</th></tr></thead>\
         <tbody>\n",
    );
    for (name, figure) in &agreement.figures {
        let (chance, class) = against_chance(name, figure);
        let _ = writeln!(
            html,
            "<tr><td><code>{}</code></td><td class=\"num\">{:.4}</td><td class=\"num\">{}</td>\
             <td class=\"{class}\">{}</td><td class=\"muted\">{}</td></tr>",
            e(name),
            figure.value,
            interval(figure),
            e(&chance),
            meaning(name)
        );
    }
    html.push_str("</tbody></table>\n");
    let _ = writeln!(
        html,
        "<p class=\"agreement-counts\">Counts: {}</p>",
        e(&counts_line(agreement))
    );
    if let Some(line) = threshold_line(agreement) {
        let _ = writeln!(html, "<p>{}</p>", e(&line));
    }
    let notes = agreement.other_notes();
    if !notes.is_empty() {
        html.push_str("<ul class=\"muted\">");
        for (name, text) in notes {
            let _ = write!(html, "<li><code>{}</code>: {}</li>", e(name), e(&text));
        }
        html.push_str("</ul>\n");
    }
    html.push_str(&stability_html(agreement));
    let quoted = Quoted {
        journal,
        outcomes,
        metric: &metric,
    };
    html.push_str(&disagreements_html(agreement, &quoted, link_base));
    html
}

fn stability_html(agreement: &Agreement) -> String {
    let Some(stability) = &agreement.stability else {
        return String::new();
    };
    let mut html = format!(
        "<h3 id=\"stability\">Stability over {} repeats</h3>\n<p>{:.1}% of samples scored the \
         same every time; mean score range {:.4}; {} unstable items.</p>\n",
        stability.repeats,
        stability.stable_sample_share * 100.0,
        stability.mean_score_range,
        stability.unstable_items.len()
    );
    let names: Vec<&String> = agreement.figures.keys().collect();
    html.push_str("<table class=\"stability\"><thead><tr><th>repeat</th>");
    for name in &names {
        let _ = write!(html, "<th class=\"num\"><code>{}</code></th>", e(name));
    }
    html.push_str("</tr></thead><tbody>\n");
    for (k, figures) in stability.figures_by_repeat.iter().enumerate() {
        let _ = write!(html, "<tr><td>{}</td>", k + 1);
        for name in &names {
            let shown = figures
                .get(*name)
                .map_or_else(|| "—".into(), |v| format!("{v:.4}"));
            let _ = write!(html, "<td class=\"num\">{shown}</td>");
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table>\n");
    if !stability.unstable_items.is_empty() {
        html.push_str("<p>Unstable items (scores per repeat, per sample):</p><ul>\n");
        for item in stability.unstable_items.iter().take(UNSTABLE_SHOWN) {
            let _ = writeln!(
                html,
                "<li><code>{}</code>: {}</li>",
                e(&item.id),
                e(&repeat_scores(&item.scores))
            );
        }
        html.push_str("</ul>\n");
    }
    html
}

/// `0.5000 / 0.7500 | 1.0000 / 1.0000`: each sample's scores over the repeats.
fn repeat_scores(scores: &[Vec<Option<f64>>]) -> String {
    scores
        .iter()
        .map(|per_repeat| {
            per_repeat
                .iter()
                .map(|s| score_text(*s))
                .collect::<Vec<_>>()
                .join(" / ")
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Where the judge's reasons for a sample come from: the run's outcomes of its metric.
struct Quoted<'q> {
    journal: &'q JournalIndex<'q>,
    outcomes: &'q Outcomes<'q>,
    metric: &'q str,
}

impl Quoted<'_> {
    /// The judge's reasons for the sample called `id`.
    fn reasons(&self, id: &str) -> String {
        let at = self.journal.index_of(id);
        judge_reasons(at.and_then(|at| self.outcomes.get(at, self.metric)))
    }
}

fn disagreements_html(agreement: &Agreement, quoted: &Quoted, link_base: &str) -> String {
    let mut html =
        String::from("<h3 id=\"disagreements\">Where the judge went against the label</h3>\n");
    let wrong: Vec<&ItemVerdict> = agreement.disagreements().collect();
    if agreement.verdicts.iter().all(|v| v.result.is_none()) {
        html.push_str(
            "<p class=\"muted\">Graded labels have no per-item verdict: the correlations \
             above are over all items.</p>\n",
        );
        return html;
    }
    if wrong.is_empty() {
        html.push_str("<p class=\"muted\">On no scored item.</p>\n");
        return html;
    }
    let _ = writeln!(
        html,
        "<p>{} of {} items; {}every item's verdict is in <code>agreement.json</code>.</p>",
        wrong.len(),
        agreement.items,
        if wrong.len() > DISAGREEMENTS_SHOWN {
            format!("the first {DISAGREEMENTS_SHOWN} are shown; ")
        } else {
            String::new()
        }
    );
    html.push_str(
        "<div class=\"wide\"><table class=\"disagreements\"><thead><tr><th>item</th>\
         <th>label</th><th>result</th><th>sample</th><th class=\"num\">score</th>\
         <th>the judge's reasons</th></tr></thead><tbody>\n",
    );
    for verdict in wrong.into_iter().take(DISAGREEMENTS_SHOWN) {
        let ids = verdict.sample_ids();
        for (i, id) in ids.iter().enumerate() {
            let head = if i == 0 {
                format!(
                    "<td rowspan=\"{}\"><code>{}</code></td><td rowspan=\"{0}\">{}</td>\
                     <td rowspan=\"{0}\" class=\"bad\">{}</td>",
                    ids.len(),
                    e(&verdict.id),
                    e(&verdict.label.describe()),
                    result_text(verdict)
                )
            } else {
                String::new()
            };
            let sample = match quoted.journal.index_of(id) {
                Some(at) => format!(
                    "<a href=\"{}#s{at}\"><code>{}</code></a>",
                    e(link_base),
                    e(id)
                ),
                None => format!("<code>{}</code>", e(id)),
            };
            let _ = writeln!(
                html,
                "<tr>{head}<td class=\"nowrap\">{sample}</td><td class=\"num\">{}</td>\
                 <td>{}</td></tr>",
                score_text(verdict.scores.get(i).copied().flatten()),
                e(&quoted.reasons(id))
            );
        }
    }
    html.push_str("</tbody></table></div>\n");
    html
}

/// The agreement section of a judge-check run as Markdown (empty for other runs).
pub(crate) fn agreement_markdown(
    run: &RunInfo,
    journal: &JournalIndex,
    outcomes: &Outcomes,
) -> String {
    let Some(agreement) = &run.agreement else {
        return String::new();
    };
    let metric = metric_of(run, journal);
    let mut md = format!(
        "## Agreement with the human labels\n\n{} labels, {} items, {} left out (no score); \
         the judge's scores of `{}`, 95% bootstrap intervals.\n\n",
        agreement.shape.name(),
        agreement.items,
        agreement.unscored,
        cell(&metric)
    );
    if let Some(warning) = agreement.warning() {
        let _ = writeln!(md, "> **Warning:** {}\n", cell(warning));
    }
    md.push_str("| figure | value | 95% CI | against chance |\n|---|---:|---:|---|\n");
    for (name, figure) in &agreement.figures {
        let _ = writeln!(
            md,
            "| `{}` | {:.4} | {} | {} |",
            cell(name),
            figure.value,
            interval(figure),
            against_chance(name, figure).0
        );
    }
    let _ = writeln!(md, "\nCounts: {}.", cell(&counts_line(agreement)));
    if let Some(line) = threshold_line(agreement) {
        let _ = writeln!(md, "\n{}.", cell(&line));
    }
    for (name, text) in agreement.other_notes() {
        let _ = writeln!(md, "\n- `{}`: {}", cell(name), cell(&text));
    }
    if let Some(stability) = &agreement.stability {
        let _ = writeln!(
            md,
            "\n### Stability over {} repeats\n\n{:.1}% of samples scored the same every time; \
             mean score range {:.4}; {} unstable items{}.",
            stability.repeats,
            stability.stable_sample_share * 100.0,
            stability.mean_score_range,
            stability.unstable_items.len(),
            stability
                .unstable_items
                .iter()
                .take(UNSTABLE_SHOWN)
                .map(|item| format!(" `{}` ({})", cell(&item.id), repeat_scores(&item.scores)))
                .collect::<Vec<_>>()
                .join(",")
        );
    }
    let wrong: Vec<&ItemVerdict> = agreement.disagreements().collect();
    if !wrong.is_empty() {
        let _ = writeln!(
            md,
            "\n### Where the judge went against the label\n\n{} of {} items{}.\n\n\
             | item | label | result | sample: score | the judge's reasons |\n|---|---|---|---|---|",
            wrong.len(),
            agreement.items,
            if wrong.len() > DISAGREEMENTS_SHOWN {
                format!(" (the first {DISAGREEMENTS_SHOWN} shown)")
            } else {
                String::new()
            }
        );
        let quoted = Quoted {
            journal,
            outcomes,
            metric: &metric,
        };
        for verdict in wrong.into_iter().take(DISAGREEMENTS_SHOWN) {
            let ids = verdict.sample_ids();
            let scores: Vec<String> = ids
                .iter()
                .enumerate()
                .map(|(i, id)| {
                    let score = score_text(verdict.scores.get(i).copied().flatten());
                    format!("`{}`: {score}", cell(id))
                })
                .collect();
            let reasons: Vec<String> = ids
                .iter()
                .map(|id| quoted.reasons(id))
                .filter(|r| !r.is_empty())
                .collect();
            let _ = writeln!(
                md,
                "| `{}` | {} | {} | {} | {} |",
                cell(&verdict.id),
                cell(&verdict.label.describe()),
                result_text(verdict),
                scores.join("; "),
                cell(&reasons.join(" / "))
            );
        }
    }
    md.push('\n');
    md
}

/// A figure of both runs (value and interval) and Δ, as table cells.
fn figure_delta_cells(figure: &FigureDelta) -> [String; 3] {
    let shown = |figure: Option<AgreementFigure>| {
        figure.map_or_else(
            || "—".into(),
            |f| format!("{:.4} {}", f.value, interval(&f)),
        )
    };
    [
        shown(figure.baseline),
        shown(figure.candidate),
        figure
            .delta
            .map_or_else(|| "—".into(), |d| format!("{d:+.4}")),
    ]
}

/// The two judges' paired difference in one sentence, with the run names `a` and `b` as the
/// caller escaped them; or why there is none.
fn paired_sentence(delta: &AgreementDelta, a: &str, b: &str) -> String {
    let Some(paired) = &delta.paired else {
        return format!(
            "Paired difference: undefined ({}).",
            delta
                .paired_undefined
                .as_deref()
                .unwrap_or("no paired items")
        );
    };
    let interval = paired.ci95.map_or_else(String::new, |ci| {
        format!(" [{:.4}, {:.4}]", ci.low, ci.high)
    });
    format!(
        "Paired over the {} items both judges scored: {b} − {a} = {:+.4}{interval}, p {} \
         ({}); {a} better on {} items, {b} on {}.",
        paired.items,
        paired.difference,
        p_text(paired.p_value),
        paired.test.label(),
        paired.baseline_better,
        paired.candidate_better
    )
}

fn result_cell(result: Option<ItemResult>) -> &'static str {
    result.map_or("no score", ItemResult::describe)
}

/// Two judges on the same labels as an HTML fragment: each figure side by side with Δ,
/// then the items whose verdict changed.
pub(crate) fn agreement_delta_html(delta: &AgreementDelta, a: &str, b: &str) -> String {
    let mut html = format!(
        "<h3>Agreement with the {} labels</h3>\n<table class=\"agreement-deltas\"><thead><tr>\
         <th>figure</th><th class=\"num\">{}</th><th class=\"num\">{}</th><th class=\"num\">Δ\
         </th></tr></thead><tbody>\n",
        delta.shape.name(),
        e(a),
        e(b)
    );
    for figure in &delta.figures {
        let cells: Vec<String> = figure_delta_cells(figure)
            .iter()
            .map(|c| format!("<td class=\"num\">{c}</td>"))
            .collect();
        let _ = writeln!(
            html,
            "<tr><td><code>{}</code></td>{}</tr>",
            e(&figure.figure),
            cells.concat()
        );
    }
    let _ = writeln!(
        html,
        "</tbody></table>\n<p>{}</p>\n<p>Unscored items: {} / {}. {} items changed verdict.</p>",
        e(&paired_sentence(delta, a, b)),
        delta.baseline_unscored,
        delta.candidate_unscored,
        delta.changed
    );
    if !delta.changes.is_empty() {
        let _ = writeln!(
            html,
            "<table class=\"verdict-changes\"><thead><tr><th>item</th><th>{}</th><th>{}</th>\
             </tr></thead><tbody>",
            e(a),
            e(b)
        );
        for change in &delta.changes {
            let _ = writeln!(
                html,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                e(&change.id),
                result_cell(change.baseline),
                result_cell(change.candidate)
            );
        }
        html.push_str("</tbody></table>\n");
    }
    html
}

/// Two judges on the same labels as Markdown.
pub(crate) fn agreement_delta_markdown(delta: &AgreementDelta, a: &str, b: &str) -> String {
    let mut md = format!(
        "\nAgreement with the {} labels:\n\n| figure | {a} | {b} | Δ |\n|---|---:|---:|---:|\n",
        delta.shape.name()
    );
    for figure in &delta.figures {
        let _ = writeln!(
            md,
            "| `{}` | {} |",
            cell(&figure.figure),
            figure_delta_cells(figure).join(" | ")
        );
    }
    let _ = writeln!(
        md,
        "\n{}\n\nUnscored items: {} / {}. {} items changed verdict{}",
        paired_sentence(delta, a, b),
        delta.baseline_unscored,
        delta.candidate_unscored,
        delta.changed,
        if delta.changes.is_empty() {
            ".".to_string()
        } else {
            format!(
                ": {}.",
                delta
                    .changes
                    .iter()
                    .map(|c| format!(
                        "`{}` {} → {}",
                        cell(&c.id),
                        result_cell(c.baseline),
                        result_cell(c.candidate)
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    );
    md
}

#[cfg(test)]
mod tests {
    use rageval_core::{Evidence, Verdict};
    use serde_json::json;

    use super::*;
    use crate::testing::write_run;
    use crate::{AGREEMENT_FILE, render_html, render_markdown};

    /// A pairwise judge-check run: pair `p1` agreed, `<p2>` went against the label (its
    /// preferred sample's verdict carries a hostile reason), `p3` tied.
    fn judge_check_run(dir: &std::path::Path, name: &str, second: f64) -> RunData {
        let path = dir.join(name);
        let against = Evidence {
            verdicts: vec![Verdict {
                target: VerdictTarget::Statement(0),
                value: 0.0,
                label: Some("unsupported".into()),
                text: None,
                reason: Some("no context says <script>x</script>".into()),
                supporting_contexts: vec![],
            }],
            details: serde_json::Map::new(),
        };
        write_run(
            &path,
            "labels",
            &[
                ("p1/a", "faithfulness", Outcome::bare(1.0)),
                ("p1/b", "faithfulness", Outcome::bare(0.0)),
                ("<p2>/a", "faithfulness", Outcome::score(0.2, against)),
                ("<p2>/b", "faithfulness", Outcome::bare(second)),
                ("p3/a", "faithfulness", Outcome::bare(0.5)),
                ("p3/b", "faithfulness", Outcome::bare(0.5)),
            ],
        );
        let agreement = json!({
            "shape": "pairwise", "items": 3, "unscored": 0,
            "figures": {"pairwise_accuracy": {"value": 0.5, "ci95": {"low": 0.0, "high": 1.0}}},
            "counts": {"agree": 1, "tie": 1, "disagree": 1},
            "notes": {"warning": "the 95% interval of pairwise_accuracy includes <chance>"},
            "verdicts": [
                {"id": "p1", "label": {"preferred": "a"}, "samples": ["p1/a", "p1/b"],
                 "scores": [1.0, 0.0], "result": "agree"},
                {"id": "<p2>", "label": {"preferred": "a"}, "samples": ["<p2>/a", "<p2>/b"],
                 "scores": [0.2, second], "result": "disagree"},
                {"id": "p3", "label": {"preferred": "a"}, "samples": ["p3/a", "p3/b"],
                 "scores": [0.5, 0.5], "result": "tie"}
            ],
            "stability": {"repeats": 2, "stable_sample_share": 0.5, "mean_score_range": 0.1,
                          "figures_by_repeat": [{"pairwise_accuracy": 0.5},
                                                {"pairwise_accuracy": 0.25}],
                          "unstable_items": [{"id": "p3", "scores": [[0.5, 0.4], [0.5, 0.5]]}]}
        });
        std::fs::write(path.join(AGREEMENT_FILE), agreement.to_string()).unwrap();
        RunData::load(&path).unwrap()
    }

    #[test]
    fn the_report_leads_with_the_figures_the_warning_and_the_disagreements() {
        let dir = tempfile::tempdir().unwrap();
        let run = judge_check_run(dir.path(), "run", 0.9);
        let html = render_html(&run, &[]);
        let agreement_at = html.find("id=\"agreement\"").unwrap();
        assert!(agreement_at < html.find("id=\"summary\"").unwrap());
        assert!(html.contains(
            "<td class=\"num\">0.5000</td><td class=\"num\">[0.0000, 1.0000]</td>\
             <td class=\"bad\">includes chance (0.5)</td>"
        ));
        assert!(html.contains("includes &lt;chance&gt;"));
        assert!(html.contains("Counts: agree 1 · disagree 1 · tie 1 · unscored 0"));
        // The one disagreement links to its samples' drill-downs (journal order: 2 and 3)
        // and quotes the judge's reason, escaped.
        assert!(html.contains("<a href=\"#s2\"><code>&lt;p2&gt;/a</code></a>"));
        assert!(html.contains("<a href=\"#s3\"><code>&lt;p2&gt;/b</code></a>"));
        assert!(html.contains("statement 0 unsupported: no context says &lt;script&gt;"));
        assert!(!html.contains("<script>") && !html.contains("<p2>"));
        assert!(html.contains("Stability over 2 repeats"));
        assert!(html.contains("0.5000 / 0.4000 | 0.5000 / 0.5000"));
        // The server's run page links to the full report instead.
        assert!(render_agreement(&run, "/runs/run/report").contains("/runs/run/report#s2"));

        let md = render_markdown(&run, &[]);
        assert!(md.find("## Agreement").unwrap() < md.find("| metric | mean").unwrap());
        assert!(md.contains(
            "| `pairwise_accuracy` | 0.5000 | [0.0000, 1.0000] | includes chance (0.5) |"
        ));
        assert!(md.contains(
            "| `&lt;p2&gt;` | a is better | disagree | `&lt;p2&gt;/a`: 0.2000; \
             `&lt;p2&gt;/b`: 0.9000 | statement 0 unsupported: no context says \
             &lt;script&gt;x&lt;/script&gt; |"
        ));
    }

    #[test]
    fn an_eval_run_has_no_agreement_section() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        write_run(&path, "abc", &[("s1", "m", Outcome::bare(0.5))]);
        let run = RunData::load(&path).unwrap();
        assert!(run.agreement.is_none());
        assert!(render_agreement(&run, "").is_empty());
        assert!(!render_markdown(&run, &[]).contains("Agreement"));
    }

    #[test]
    fn compare_puts_two_judges_side_by_side_with_the_difference() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = judge_check_run(dir.path(), "a", 0.9);
        let mut b = judge_check_run(dir.path(), "b", 0.1);
        let better = b.agreement.as_mut().unwrap();
        better.figures.get_mut("pairwise_accuracy").unwrap().value = 0.8333;
        better.verdicts[1].result =
            Some(ItemResult::Pair(rageval_core::agreement::PairResult::Agree));
        a.agreement.as_mut().unwrap().unscored = 1;
        let comparison =
            crate::Comparison::build(&[a, b], crate::CompareSettings::default()).unwrap();
        let html = crate::render_compare_html(&comparison);
        assert!(html.contains(
            "<td class=\"num\">0.5000 [0.0000, 1.0000]</td><td class=\"num\">0.8333 \
             [0.0000, 1.0000]</td><td class=\"num\">+0.3333</td>"
        ));
        assert!(html.contains("Unscored items: 1 / 0. 1 items changed verdict."));
        assert!(
            html.contains(
                "<tr><td><code>&lt;p2&gt;</code></td><td>disagree</td><td>agree</td></tr>"
            )
        );
        let md = crate::render_compare_markdown(&comparison);
        assert!(md.contains(
            "| `pairwise_accuracy` | 0.5000 [0.0000, 1.0000] | 0.8333 [0.0000, 1.0000] | +0.3333 |"
        ));
        assert!(md.contains("`&lt;p2&gt;` disagree → agree"));
        // Paired by id: p1 agrees in both (1, 1), p2 goes 0 → 1, p3 ties in both (½, ½), so
        // Δ = 1/3. The differences (0, 1, 0) have |sum| 1 under every sign flip: p = 1. A
        // resample misses p2 with chance (2/3)³ ≈ 0.30 and draws it thrice with 1/27 ≈ 0.037,
        // both above 0.025: the interval is [0, 1].
        let paired = "over the 3 items both judges scored: b − a = +0.3333 [0.0000, 1.0000], \
                      p 1.0000 (sign-flip permutation); a better on 0 items, b on 1.";
        assert!(md.contains(paired), "{md}");
        assert!(html.contains(paired));
        let json = serde_json::to_value(&comparison).unwrap();
        let written = &json["pairs"][0]["agreement"]["paired"];
        assert_eq!(written["test"], "sign_flip");
        assert_eq!(written["candidate_better"], 1);
    }
}
