//! The `calibrated` block of a summary as people read it: one table, in HTML, Markdown, a
//! workbook sheet and plain rows for a terminal — the judge-only, labels-only and calibrated
//! (PPI++) means with their intervals, the labels used and λ. Renders only; it computes
//! nothing (`rageval_core::calibration` does).

use std::fmt::Write as _;

use rageval_core::calibration::Estimate;
use rust_xlsxwriter::{Format, Workbook, XlsxError};

use crate::Summary;
use crate::escape::escape_html as e;

/// Column headings of the calibrated table, in order.
pub const CALIBRATED_COLUMNS: [&str; 6] = [
    "metric",
    "judge only",
    "labels only",
    "calibrated (PPI++)",
    "labels",
    "λ",
];

/// What the table means, under it in every format.
const READING: &str = "The calibrated mean corrects the judge's scores on all samples by \
    its errors on the human-labelled ones (prediction-powered inference, PPI++): unbiased, \
    with a valid 95% interval, narrower than the labels-only one when the judge is \
    informative. The judge-only interval carries any bias of the judge.";

/// One row per metric with labels, in the summary's metric order, each cell as text.
pub fn calibrated_rows(summary: &Summary) -> Vec<[String; 6]> {
    summary
        .metric_order
        .iter()
        .filter_map(|name| Some((name, summary.calibrated.get(name)?)))
        .map(|(name, c)| {
            [
                name.clone(),
                with_interval(&c.judge_only),
                with_interval(&c.labels_only),
                with_interval(&c.estimate),
                c.estimate.n_labels.to_string(),
                c.estimate
                    .lambda
                    .map_or_else(|| "—".into(), |l| format!("{l:.2}")),
            ]
        })
        .collect()
}

fn with_interval(estimate: &Estimate) -> String {
    format!(
        "{:.4} [{:.4}, {:.4}]",
        estimate.mean, estimate.ci95.low, estimate.ci95.high
    )
}

/// Notes of the calibrated estimates (e.g. every label equal), each prefixed by its metric.
fn notes(summary: &Summary) -> Vec<String> {
    summary
        .metric_order
        .iter()
        .filter_map(|name| Some((name, summary.calibrated.get(name)?)))
        .flat_map(|(name, c)| c.estimate.notes.iter().map(move |n| format!("{name}: {n}")))
        .collect()
}

/// The HTML section, or nothing when the run has no labels.
pub fn calibrated_html(summary: &Summary) -> String {
    let rows = calibrated_rows(summary);
    if rows.is_empty() {
        return String::new();
    }
    let mut html = String::from("<h2 id=\"calibrated\">Calibrated with human labels</h2>\n");
    let _ = writeln!(html, "<p class=\"muted\">{}</p>", e(READING));
    html.push_str("<table><thead><tr>");
    for heading in CALIBRATED_COLUMNS {
        let _ = write!(html, "<th>{}</th>", e(heading));
    }
    html.push_str("</tr></thead><tbody>\n");
    for row in &rows {
        let _ = write!(html, "<tr><td><code>{}</code></td>", e(&row[0]));
        for cell in &row[1..] {
            let _ = write!(html, "<td class=\"num\">{}</td>", e(cell));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table>\n");
    for note in notes(summary) {
        let _ = writeln!(html, "<p class=\"muted\">{}</p>", e(&note));
    }
    html
}

/// The Markdown section, or nothing when the run has no labels.
pub fn calibrated_markdown(summary: &Summary) -> String {
    let rows = calibrated_rows(summary);
    if rows.is_empty() {
        return String::new();
    }
    let mut md = String::from("\n## Calibrated with human labels\n\n");
    let _ = writeln!(md, "| {} |", CALIBRATED_COLUMNS.join(" | "));
    md.push_str("|---|---:|---:|---:|---:|---:|\n");
    for row in &rows {
        let _ = writeln!(md, "| `{}` | {} |", row[0], row[1..].join(" | "));
    }
    let _ = writeln!(md, "\n{READING}");
    for note in notes(summary) {
        let _ = writeln!(md, "\n- {note}");
    }
    md
}

/// A `calibrated` sheet with the table's numbers as numbers, when the run has labels.
pub(crate) fn add_calibrated_sheet(
    workbook: &mut Workbook,
    summary: &Summary,
) -> Result<(), XlsxError> {
    if summary.calibrated.is_empty() {
        return Ok(());
    }
    let bold = Format::new().set_bold();
    let number = Format::new().set_num_format("0.0000");
    let sheet = workbook.add_worksheet().set_name("calibrated")?;
    let header = [
        "metric",
        "judge_only_mean",
        "judge_only_ci95_low",
        "judge_only_ci95_high",
        "labels_only_mean",
        "labels_only_ci95_low",
        "labels_only_ci95_high",
        "calibrated_mean",
        "calibrated_ci95_low",
        "calibrated_ci95_high",
        "n_labels",
        "lambda",
        "method",
        "labels_file",
    ];
    for (col, title) in (0u16..).zip(header) {
        sheet.write_string_with_format(0, col, title, &bold)?;
    }
    let mut row = 1u32;
    for name in &summary.metric_order {
        let Some(c) = summary.calibrated.get(name) else {
            continue;
        };
        sheet.write_string(row, 0, name)?;
        let mut col = 1u16;
        for estimate in [&c.judge_only, &c.labels_only, &c.estimate] {
            for value in [estimate.mean, estimate.ci95.low, estimate.ci95.high] {
                sheet.write_number_with_format(row, col, value, &number)?;
                col += 1;
            }
        }
        sheet.write_number(row, 10, c.estimate.n_labels as f64)?;
        if let Some(lambda) = c.estimate.lambda {
            sheet.write_number_with_format(row, 11, lambda, &number)?;
        }
        let method = serde_json::to_value(c.estimate.method)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        sheet.write_string(row, 12, &method)?;
        sheet.write_string(row, 13, &c.labels)?;
        row += 1;
    }
    Ok(())
}
