//! The comparison of runs rendered for people (the version table with each run's judge calls
//! and cost, then the pairs, with two judges' agreement with the same labels side by side):
//! an HTML page (or fragment, for `rageval serve`) and Markdown. The numbers come from [`Comparison`]; nothing is computed
//! here but formatting and the one-word reading of each interval.

use std::fmt::Write as _;

use crate::agreement_render::{agreement_delta_html, agreement_delta_markdown};
use crate::compare::{MetricDelta, RunRow};
use crate::escape::{escape_html as e, escape_markdown_cell as cell};
use crate::judge_report::cost;
use crate::page::{html_document, number};
use crate::svg::{IntervalRow, interval_chart};
use crate::{CompareSettings, Comparison};

fn signed(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |v| format!("{v:+.4}"))
}

fn ci(value: Option<[f64; 2]>) -> String {
    value.map_or_else(|| "—".into(), |[l, h]| format!("[{l:+.4}, {h:+.4}]"))
}

fn p(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |v| format!("{v:.4}"))
}

/// How the numbers were drawn, in one sentence under the version table.
fn method(s: &CompareSettings) -> String {
    format!(
        "Δ = mean(candidate − baseline) over samples scored in both runs. Interval: paired \
         percentile bootstrap ({} resamples, seed {}). p: two-sided paired sign-flip \
         permutation test ({} permutations, resolution {:.5}, seed {}).",
        s.resamples,
        s.seed,
        s.permutations,
        1.0 / (s.permutations as f64 + 1.0),
        s.seed.wrapping_add(1)
    )
}

/// A delta's numbers as shown: paired count, both means, Δ, its interval, p.
/// A run's judge calls and cost for the version table (`—` where the run kept no account
/// or a model had no price).
fn judge_cells(run: &RunRow) -> [String; 2] {
    match &run.judge {
        Some(total) => [total.calls.to_string(), cost(total.cost_usd)],
        None => ["—".into(), "—".into()],
    }
}

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

/// What a delta says in words.
fn reading(delta: &MetricDelta) -> &'static str {
    match (delta.is_clear(), delta.delta) {
        (true, Some(d)) if d > 0.0 => "higher",
        (true, Some(_)) => "lower",
        (false, Some(_)) => "no clear difference",
        _ => "no paired samples",
    }
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
    let names: Vec<&str> = comparison.runs.iter().map(|r| r.name.as_str()).collect();
    format!("rageval compare: {}", names.join(" vs "))
}

/// The comparison page's content as an HTML fragment (no heading): the dataset hash, the
/// version table, and each pair's deltas, interval chart and the samples that moved most.
pub fn render_compare_body(comparison: &Comparison) -> String {
    let mut html = format!(
        "<p class=\"muted\">dataset sha256 <code>{}</code></p>\n",
        e(&comparison.dataset_sha256)
    );
    html.push_str(
        "<h2>Versions</h2>\n<div class=\"wide\"><table class=\"versions\"><thead><tr><th>run</th>",
    );
    for metric in &comparison.metrics {
        let _ = write!(html, "<th class=\"num\"><code>{}</code></th>", e(metric));
    }
    html.push_str("<th class=\"num\">judge calls</th><th class=\"num\">cost (USD)</th>");
    html.push_str("</tr></thead><tbody>\n");
    for run in &comparison.runs {
        let _ = write!(
            html,
            "<tr><td class=\"nowrap\" title=\"{}\">{}</td>",
            e(&run.path),
            e(&run.name)
        );
        for metric in &comparison.metrics {
            let shown = run.metrics.get(metric).map_or_else(
                || "—".to_string(),
                |m| match m.ci95 {
                    Some([l, h]) => format!(
                        "{}<br><span class=\"muted\">[{l:.4}, {h:.4}]</span>",
                        number(m.mean)
                    ),
                    None => number(m.mean),
                },
            );
            let _ = write!(html, "<td class=\"num\">{shown}</td>");
        }
        let [calls, usd] = judge_cells(run);
        let _ = write!(
            html,
            "<td class=\"num\">{calls}</td><td class=\"num\">{usd}</td>"
        );
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div>\n");
    let s = &comparison.settings;
    let _ = writeln!(html, "<p class=\"muted\">{}</p>", e(&method(s)));
    for pair in &comparison.pairs {
        let (a, b) = (
            comparison.run_name(pair.baseline),
            comparison.run_name(pair.candidate),
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
            let class = match reading(d) {
                "higher" => "good",
                "lower" => "bad",
                _ => "neutral",
            };
            let numbers: Vec<String> = delta_cells(d)
                .iter()
                .map(|n| format!("<td class=\"num\">{n}</td>"))
                .collect();
            let _ = writeln!(
                html,
                "<tr><td><code>{}</code></td>{}<td class=\"{class}\">{}</td></tr>",
                e(&d.metric),
                numbers.concat(),
                reading(d)
            );
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
                 <th>sample</th><th class=\"num\">{}</th><th class=\"num\">{}</th>\
                 <th class=\"num\">Δ</th></tr></thead><tbody>",
                e(&d.metric),
                e(a),
                e(b)
            );
            for flip in &d.flips {
                let _ = writeln!(
                    html,
                    "<tr><td><code>{}</code></td><td class=\"num\">{:.4}</td>\
                     <td class=\"num\">{:.4}</td><td class=\"num\">{:+.4}</td></tr>",
                    e(&flip.sample_id),
                    flip.baseline,
                    flip.candidate,
                    flip.delta
                );
            }
            html.push_str("</tbody></table>\n");
        }
    }
    html
}

/// The comparison as Markdown: the version table, then each pair's deltas and top flips.
pub fn render_compare_markdown(comparison: &Comparison) -> String {
    let mut md = String::from("# rageval compare\n\n");
    let _ = writeln!(
        md,
        "Dataset sha256 `{}`.\n",
        cell(&comparison.dataset_sha256)
    );
    md.push_str("| run |");
    for metric in &comparison.metrics {
        let _ = write!(md, " `{}` |", cell(metric));
    }
    md.push_str(" judge calls | cost (USD) |\n|---|");
    md.push_str(&"---:|".repeat(comparison.metrics.len() + 2));
    md.push('\n');
    for run in &comparison.runs {
        let _ = write!(md, "| {} |", cell(&run.name));
        for metric in &comparison.metrics {
            let _ = write!(
                md,
                " {} |",
                number(run.metrics.get(metric).and_then(|m| m.mean))
            );
        }
        let [calls, usd] = judge_cells(run);
        let _ = write!(md, " {calls} | {usd} |");
        md.push('\n');
    }
    let s = &comparison.settings;
    let _ = writeln!(md, "\n{}", method(s));
    for pair in &comparison.pairs {
        let (a, b) = (
            cell(comparison.run_name(pair.baseline)),
            cell(comparison.run_name(pair.candidate)),
        );
        let _ = writeln!(
            md,
            "\n## {a} → {b}\n\n| metric | paired | {a} | {b} | Δ | 95% CI | p | reading |\n\
             |---|---:|---:|---:|---:|---:|---:|---|"
        );
        for d in &pair.deltas {
            let _ = writeln!(
                md,
                "| `{}` | {} | {} |",
                cell(&d.metric),
                delta_cells(d).join(" | "),
                reading(d)
            );
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
                        "`{}` {:.4} → {:.4} ({:+.4})",
                        cell(&f.sample_id),
                        f.baseline,
                        f.candidate,
                        f.delta
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
    }
    md
}
