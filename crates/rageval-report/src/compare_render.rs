//! The comparison of runs rendered for people: how the runs' questions were paired and how
//! their datasets differ, the version table (each run's means and judge calls and cost, and
//! each later run's Δ against the first with its interval, p and reading), then every pair
//! with its deltas (and, where both runs have human labels, the difference of their
//! calibrated means), the samples that moved most, two judges' agreement with the same
//! labels side by side, and the pair's conversations and retrieval hops
//! ([`crate::compare_positions`]): an HTML page (or fragment, for `rageval serve`) and Markdown. The
//! numbers come from [`Comparison`]; nothing is computed here but formatting.

use std::fmt::Write as _;

use crate::agreement_render::{agreement_delta_html, agreement_delta_markdown};
use crate::blocks::{to_html, to_markdown};
use crate::compare::{CalibratedDelta, MetricDelta, PairComparison, Reading, RunRow};
use crate::compare_head_to_head::head_to_head_column;
use crate::compare_positions::position_delta_blocks;
use crate::escape::{escape_html as e, escape_markdown_cell as cell};
use crate::judge_report::cost;
use crate::page::{html_document, number};
use crate::svg::{IntervalRow, interval_chart};
use crate::{CompareSettings, Comparison};

/// `+0.2500`, or `—` without a value.
pub(crate) fn signed(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |v| format!("{v:+.4}"))
}

fn ci(value: Option<[f64; 2]>) -> String {
    value.map_or_else(|| "—".into(), |[l, h]| format!("[{l:+.4}, {h:+.4}]"))
}

fn p(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |v| format!("{v:.4}"))
}

/// How the numbers were drawn and read, in two sentences under the version table.
fn method(s: &CompareSettings) -> String {
    format!(
        "Δ = mean(candidate − baseline) over the questions scored in both runs. Interval: \
         paired percentile bootstrap ({} resamples, seed {}). p: two-sided paired sign-flip \
         permutation test ({} permutations, resolution {:.5}, seed {}). A Δ reads \"higher\" \
         or \"lower\" only where its {:.0}% interval excludes 0 and p < {:.2}.",
        s.resamples,
        s.seed,
        s.permutations,
        1.0 / (s.permutations as f64 + 1.0),
        s.seed.wrapping_add(1),
        s.level * 100.0,
        1.0 - s.level
    )
}

/// What the calibrated rows are, said once under the version table when any run has them.
fn calibrated_note(comparison: &Comparison) -> Option<String> {
    if comparison.runs.iter().all(|run| run.calibrated.is_empty()) {
        return None;
    }
    let mut note = String::from(
        "Calibrated: a run with human labels for a metric (eval --labels, rageval calibrate) \
         also shows its PPI++ mean, the judge's bias corrected by the labels, over all its \
         samples.",
    );
    if comparison.uses_calibrated() {
        note.push_str(
            " Where both runs of a pair have one and every question of both is compared, \
             their difference is read from the calibrated means: its 95% interval combines \
             the two runs' intervals as independent (conservative for two versions over the \
             same questions), and it reads \"higher\" or \"lower\" only where that interval \
             excludes 0. Where the judge's Δ and the calibrated Δ disagree, the calibrated \
             one is the one to trust.",
        );
    } else {
        note.push_str(
            " No pair has calibrated means on both sides over the same questions, so every Δ \
             here is the judge's.",
        );
    }
    Some(note)
}

/// A run's abstention recall and false abstention rate, for a metric with a 2×2 table.
fn abstention_rates(run: &RunRow, metric: &str) -> Option<String> {
    let summary = run.metrics.get(metric)?.abstention.as_ref()?;
    Some(crate::abstention_render::headline_rates(summary))
}

/// `calibrated 0.6800 [0.6100, 0.7500]`: a run's calibrated mean, if it has one.
fn calibrated_mean(run: &RunRow, metric: &str) -> Option<String> {
    let c = &run.calibrated.get(metric)?.estimate;
    Some(format!(
        "calibrated {:.4} [{:.4}, {:.4}] ({} labels)",
        c.mean, c.ci95.low, c.ci95.high, c.n_labels
    ))
}

/// `calibrated Δ +0.0300 [-0.0500, +0.1100] no clear difference`.
fn calibrated_against_first(c: &CalibratedDelta) -> String {
    calibrated_against_first_lines(c).join(" ")
}

/// [`calibrated_against_first`] in the lines the HTML version table stacks.
fn calibrated_against_first_lines(c: &CalibratedDelta) -> [String; 3] {
    [
        format!("calibrated Δ {:+.4}", c.delta),
        ci(Some(c.ci95)),
        c.reading.words().to_string(),
    ]
}

/// A calibrated difference's cells, in the columns of [`delta_cells`].
fn calibrated_cells(c: &CalibratedDelta) -> [String; 6] {
    [
        format!("{} / {} labels", c.baseline_labels, c.candidate_labels),
        format!("{:.4}", c.baseline_mean),
        format!("{:.4}", c.candidate_mean),
        format!("{:+.4}", c.delta),
        ci(Some(c.ci95)),
        "—".into(),
    ]
}

/// The first 12 hex digits of a hash.
fn short(sha256: &str) -> &str {
    sha256.get(..12).unwrap_or(sha256)
}

/// How two runs' questions were paired and how their datasets differ, in one paragraph.
fn pairing_text(comparison: &Comparison, pair: &PairComparison) -> String {
    let (a, b) = (
        comparison.version_of(pair.baseline),
        comparison.version_of(pair.candidate),
    );
    let q = &pair.pairing;
    let union = q.paired + q.only_baseline.len() + q.only_candidate.len();
    let mut how = format!("{} by id", q.by_id);
    if q.by_question > 0 {
        let _ = write!(how, ", {} by question text", q.by_question);
    }
    if q.id_conflicts > 0 {
        let _ = write!(
            how,
            "; {} ids name different questions in the two datasets",
            q.id_conflicts
        );
    }
    let mut text = format!(
        "{a} and {b}: {} of {union} questions paired ({how}), overlap {:.2}.",
        q.paired, q.overlap
    );
    if !q.only_baseline.is_empty() || !q.only_candidate.is_empty() {
        let _ = write!(
            text,
            " {} only in {a}, {} only in {b}.",
            q.only_baseline.len(),
            q.only_candidate.len()
        );
    }
    let [sha_a, sha_b] = [pair.baseline, pair.candidate].map(|i| {
        comparison
            .runs
            .get(i)
            .map_or("", |run| short(&run.dataset_sha256))
    });
    if q.same_dataset {
        let _ = write!(text, " The same dataset (sha256 {sha_a}…).");
    } else if let Some(d) = &q.differences {
        let _ = write!(
            text,
            " Different datasets (sha256 {sha_a}… and {sha_b}…): of {} paired questions, {} \
             have different answers, {} different contexts, {} different references.",
            d.compared, d.answers, d.contexts, d.references
        );
        if d.references > 0 {
            text.push_str(
                " Scores that use the reference are measured against different references \
                 there.",
            );
        }
    } else {
        let _ = write!(
            text,
            " Different datasets (sha256 {sha_a}… and {sha_b}…), not at hand to compare \
             their texts: paired by id alone, so ids must mean the same questions in both."
        );
    }
    text
}

/// A run's judge calls and cost for the version table (`—` where the run kept no account
/// or a model had no price).
fn judge_cells(run: &RunRow) -> [String; 2] {
    match &run.judge {
        Some(total) => [total.calls.to_string(), cost(total.cost_usd)],
        None => ["—".into(), "—".into()],
    }
}

/// A delta's numbers as shown: paired count, both means, Δ, its interval, p.
fn delta_cells(d: &MetricDelta) -> [String; 6] {
    [
        d.n_paired.to_string(),
        number(d.baseline_mean),
        number(d.candidate_mean),
        signed(d.delta),
        ci(d.ci95),
        p(d.p_value),
    ]
}

/// `Δ +0.1000 [+0.0800, +0.1200] p 0.0010 higher`: a later version against the first.
fn against_first(d: &MetricDelta) -> String {
    against_first_lines(d).join(" ")
}

/// [`against_first`] in the lines the HTML version table stacks, so five metrics' columns
/// fit a 1,400-pixel window without scrolling sideways.
fn against_first_lines(d: &MetricDelta) -> [String; 3] {
    [
        format!("Δ {}", signed(d.delta)),
        ci(d.ci95),
        format!("p {} {}", p(d.p_value), d.reading.words()),
    ]
}

/// `lines` escaped, one under another, in a span of `class`.
fn stacked(class: &str, lines: &[String]) -> String {
    let lines: Vec<String> = lines.iter().map(|line| e(line)).collect();
    format!("<br><span class=\"{class}\">{}</span>", lines.join("<br>"))
}

fn class(reading: Reading) -> &'static str {
    match reading {
        Reading::Higher => "good",
        Reading::Lower => "bad",
        _ => "neutral",
    }
}

/// The delta of `metric` in `pair`, if the pair has it.
fn delta_of<'a>(pair: Option<&'a PairComparison>, metric: &str) -> Option<&'a MetricDelta> {
    pair?.deltas.iter().find(|d| d.metric == metric)
}

/// "Only the N questions every run holds are compared…", when they are.
fn common_note(comparison: &Comparison) -> Option<String> {
    comparison.common_questions.map(|n| {
        format!(
            "Only the {n} questions every run holds are compared: the means below are over \
             them."
        )
    })
}

/// The comparison as one self-contained HTML page.
pub fn render_compare_html(comparison: &Comparison) -> String {
    let title = compare_title(comparison);
    let body = format!(
        "<h1>{}</h1>\n{}",
        e(&title),
        render_compare_body(comparison)
    );
    html_document(&title, &body)
}

/// `rageval compare: a vs b vs c`.
pub fn compare_title(comparison: &Comparison) -> String {
    let names: Vec<&str> = comparison.runs.iter().map(|r| r.version.as_str()).collect();
    format!("rageval compare: {}", names.join(" vs "))
}

/// The comparison page's content as an HTML fragment (no heading): how the questions were
/// paired, the version table, and each pair's deltas, interval chart and the samples that
/// moved most.
pub fn render_compare_body(comparison: &Comparison) -> String {
    let mut html = String::from("<h2>Questions</h2>\n");
    for pair in &comparison.pairs {
        let _ = writeln!(html, "<p>{}</p>", e(&pairing_text(comparison, pair)));
    }
    if let Some(note) = common_note(comparison) {
        let _ = writeln!(html, "<p><b>{}</b></p>", e(&note));
    }
    html.push_str(
        "<h2>Versions</h2>\n<div class=\"wide\"><table class=\"versions\"><thead><tr><th>run</th>",
    );
    for metric in &comparison.metrics {
        let _ = write!(html, "<th class=\"num\"><code>{}</code></th>", e(metric));
    }
    html.push_str("<th class=\"num\">judge calls</th><th class=\"num\">cost (USD)</th>");
    let head_to_head = head_to_head_column(comparison);
    if let Some((heading, _)) = &head_to_head {
        let _ = write!(html, "<th>{}</th>", e(heading));
    }
    html.push_str("</tr></thead><tbody>\n");
    for (index, run) in comparison.runs.iter().enumerate() {
        let _ = write!(
            html,
            "<tr><td class=\"nowrap\" title=\"{}\">{}</td>",
            e(&run.path),
            e(&run.version)
        );
        let pair = comparison.against_first(index);
        for metric in &comparison.metrics {
            let mut shown = run.metrics.get(metric).map_or_else(
                || "—".to_string(),
                |m| match m.ci95 {
                    Some([l, h]) => format!(
                        "{}<br><span class=\"muted\">[{l:.4}, {h:.4}]</span>",
                        number(m.mean)
                    ),
                    None => number(m.mean),
                },
            );
            let delta = delta_of(pair, metric);
            if let Some(d) = delta {
                shown.push_str(&stacked(class(d.reading), &against_first_lines(d)));
            }
            if let Some(mean) = calibrated_mean(run, metric) {
                let _ = write!(shown, "<br><span class=\"muted\">{}</span>", e(&mean));
            }
            if let Some(rates) = abstention_rates(run, metric) {
                let _ = write!(shown, "<br><span class=\"muted\">{}</span>", e(&rates));
            }
            if let Some(c) = delta.and_then(|d| d.calibrated.as_ref()) {
                shown.push_str(&stacked(
                    class(c.reading),
                    &calibrated_against_first_lines(c),
                ));
            }
            let _ = write!(html, "<td class=\"num\">{shown}</td>");
        }
        let [calls, usd] = judge_cells(run);
        let _ = write!(
            html,
            "<td class=\"num\">{calls}</td><td class=\"num\">{usd}</td>"
        );
        if let Some((_, cells)) = &head_to_head {
            let _ = write!(html, "<td>{}</td>", e(&cells[index]));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div>\n");
    let s = &comparison.settings;
    let _ = writeln!(html, "<p class=\"muted\">{}</p>", e(&method(s)));
    if let Some(note) = calibrated_note(comparison) {
        let _ = writeln!(html, "<p class=\"muted\">{}</p>", e(&note));
    }
    for pair in &comparison.pairs {
        let (a, b) = (
            comparison.version_of(pair.baseline),
            comparison.version_of(pair.candidate),
        );
        let _ = writeln!(
            html,
            "<h2>{} → {}</h2>\n<table class=\"deltas\"><thead><tr><th>metric</th><th class=\"num\">paired</th>\
             <th class=\"num\">{}</th><th class=\"num\">{}</th><th class=\"num\">Δ</th>\
             <th class=\"num\">95% CI</th><th class=\"num\">p</th><th>reading</th></tr></thead><tbody>",
            e(a),
            e(b),
            e(a),
            e(b)
        );
        let mut rows = Vec::new();
        for d in &pair.deltas {
            let numbers: Vec<String> = delta_cells(d)
                .iter()
                .map(|n| format!("<td class=\"num\">{n}</td>"))
                .collect();
            let _ = writeln!(
                html,
                "<tr><td><code>{}</code></td>{}<td class=\"{}\">{}</td></tr>",
                e(&d.metric),
                numbers.concat(),
                class(d.reading),
                d.reading.words()
            );
            if let Some(c) = &d.calibrated {
                let numbers: Vec<String> = calibrated_cells(c)
                    .iter()
                    .map(|n| format!("<td class=\"num\">{}</td>", e(n)))
                    .collect();
                let _ = writeln!(
                    html,
                    "<tr class=\"calibrated\"><td><code>{}</code> calibrated</td>{}\
                     <td class=\"{}\">{}</td></tr>",
                    e(&d.metric),
                    numbers.concat(),
                    class(c.reading),
                    c.reading.words()
                );
            }
            if let (Some(delta), Some([low, high])) = (d.delta, d.ci95) {
                rows.push(IntervalRow {
                    label: d.metric.clone(),
                    estimate: delta,
                    low,
                    high,
                });
            }
        }
        html.push_str("</tbody></table>\n");
        if !rows.is_empty() {
            html.push_str(&interval_chart(&rows, 640, true));
            html.push('\n');
        }
        if let Some(agreement) = &pair.agreement {
            html.push_str(&agreement_delta_html(agreement, a, b));
        }
        for d in pair.deltas.iter().filter(|d| !d.flips.is_empty()) {
            let _ = writeln!(
                html,
                "<h3>Samples that moved most: <code>{}</code></h3><table><thead><tr>\
                 <th>sample</th><th>question</th><th class=\"num\">{}</th>\
                 <th class=\"num\">{}</th>\
                 <th class=\"num\">Δ</th></tr></thead><tbody>",
                e(&d.metric),
                e(a),
                e(b)
            );
            for flip in &d.flips {
                let _ = writeln!(
                    html,
                    "<tr><td><code>{}</code></td><td>{}</td><td class=\"num\">{:.4}</td>\
                     <td class=\"num\">{:.4}</td><td class=\"num\">{:+.4}</td></tr>",
                    e(&flip_id(flip)),
                    e(&flip_question(flip)),
                    flip.baseline,
                    flip.candidate,
                    flip.delta
                );
            }
            html.push_str("</tbody></table>\n");
        }
        html.push_str(&to_html(&position_delta_blocks(
            pair.conversations.as_ref(),
            pair.hops.as_ref(),
            [a, b],
        )));
    }
    html
}

/// A moved sample's id: `a → b` when the two runs call it differently.
fn flip_id(flip: &crate::SampleFlip) -> String {
    match &flip.candidate_sample_id {
        Some(other) => format!("{} → {other}", flip.sample_id),
        None => flip.sample_id.clone(),
    }
}

/// The most characters of a question a list of moved samples shows.
const QUESTION_CHARS: usize = 60;

/// A moved sample's question, cut to [`QUESTION_CHARS`] with `…`; empty when unknown.
fn flip_question(flip: &crate::SampleFlip) -> String {
    let Some(question) = &flip.question else {
        return String::new();
    };
    match question.char_indices().nth(QUESTION_CHARS) {
        Some((at, _)) => format!("{}…", &question[..at]),
        None => question.clone(),
    }
}

/// The comparison as Markdown: how the questions were paired, the version table with each
/// later run's Δ against the first, then each pair's deltas and top flips.
pub fn render_compare_markdown(comparison: &Comparison) -> String {
    let mut md = String::from("# rageval compare\n\n");
    for pair in &comparison.pairs {
        let _ = writeln!(md, "{}\n", cell(&pairing_text(comparison, pair)));
    }
    if let Some(note) = common_note(comparison) {
        let _ = writeln!(md, "**{note}**\n");
    }
    md.push_str("| run |");
    for metric in &comparison.metrics {
        let _ = write!(md, " `{}` |", cell(metric));
    }
    md.push_str(" judge calls | cost (USD) |");
    let head_to_head = head_to_head_column(comparison);
    if let Some((heading, _)) = &head_to_head {
        let _ = write!(md, " {} |", cell(heading));
    }
    md.push_str("\n|---|");
    md.push_str(&"---:|".repeat(comparison.metrics.len() + 2));
    if head_to_head.is_some() {
        md.push_str("---|");
    }
    md.push('\n');
    for (index, run) in comparison.runs.iter().enumerate() {
        let _ = write!(md, "| {} |", cell(&run.version));
        let pair = comparison.against_first(index);
        for metric in &comparison.metrics {
            let mut shown = number(run.metrics.get(metric).and_then(|m| m.mean));
            let delta = delta_of(pair, metric);
            if let Some(d) = delta {
                let _ = write!(shown, " · {}", against_first(d));
            }
            if let Some(mean) = calibrated_mean(run, metric) {
                let _ = write!(shown, " · {mean}");
            }
            if let Some(rates) = abstention_rates(run, metric) {
                let _ = write!(shown, " · {rates}");
            }
            if let Some(c) = delta.and_then(|d| d.calibrated.as_ref()) {
                let _ = write!(shown, " · {}", calibrated_against_first(c));
            }
            let _ = write!(md, " {} |", cell(&shown));
        }
        let [calls, usd] = judge_cells(run);
        let _ = write!(md, " {calls} | {usd} |");
        if let Some((_, cells)) = &head_to_head {
            let _ = write!(md, " {} |", cell(&cells[index]));
        }
        md.push('\n');
    }
    let s = &comparison.settings;
    let _ = writeln!(md, "\n{}", method(s));
    if let Some(note) = calibrated_note(comparison) {
        let _ = writeln!(md, "\n{note}");
    }
    for pair in &comparison.pairs {
        let (a, b) = (
            cell(comparison.version_of(pair.baseline)),
            cell(comparison.version_of(pair.candidate)),
        );
        let _ = writeln!(
            md,
            "\n## {a} → {b}\n\n| metric | paired | {a} | {b} | Δ | 95% CI | p | reading |\n\
             |---|---:|---:|---:|---:|---:|---:|---|"
        );
        for d in &pair.deltas {
            let metric = format!("`{}`", cell(&d.metric));
            let row = |label: &str, cells: [String; 6], reading: Reading| {
                format!(
                    "| {label} | {} | {} |\n",
                    cells.join(" | "),
                    reading.words()
                )
            };
            md.push_str(&row(&metric, delta_cells(d), d.reading));
            if let Some(c) = &d.calibrated {
                md.push_str(&row(
                    &format!("{metric} calibrated"),
                    calibrated_cells(c),
                    c.reading,
                ));
            }
        }
        if let Some(agreement) = &pair.agreement {
            md.push_str(&agreement_delta_markdown(agreement, &a, &b));
        }
        for d in pair.deltas.iter().filter(|d| !d.flips.is_empty()) {
            let _ = writeln!(
                md,
                "\nMoved most, `{}`: {}",
                cell(&d.metric),
                d.flips
                    .iter()
                    .map(|f| format!(
                        "`{}`{} {:.4} → {:.4} ({:+.4})",
                        cell(&flip_id(f)),
                        match flip_question(f) {
                            q if q.is_empty() => String::new(),
                            q => format!(" “{}”", cell(&q)),
                        },
                        f.baseline,
                        f.candidate,
                        f.delta
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
        let positions = position_delta_blocks(
            pair.conversations.as_ref(),
            pair.hops.as_ref(),
            [
                comparison.version_of(pair.baseline),
                comparison.version_of(pair.candidate),
            ],
        );
        if !positions.is_empty() {
            let _ = write!(md, "\n{}", to_markdown(&positions));
        }
    }
    md
}
