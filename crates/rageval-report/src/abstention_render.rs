//! The abstention table of a summary as people read it: per metric that has one, the 2×2
//! counts and the rates with their 95% Wilson intervals, in HTML, Markdown and a workbook
//! sheet. Renders only; `rageval_core::abstention` counts and computes.

use std::fmt::Write as _;

use rageval_core::Quadrant;
use rageval_core::abstention::Rate;
use rust_xlsxwriter::{Format, Workbook, XlsxError};

use crate::Summary;
use crate::escape::escape_html as e;
use crate::summary::AbstentionSummary;

/// What the table means, under it in every format.
const READING: &str = "Rows: do the contexts support an answer; columns: did the answer \
    decline. Abstention recall = declined ÷ unsupported; false abstention rate = declined ÷ \
    supported; abstention precision = unsupported ÷ declined; accuracy = right quadrants ÷ \
    samples. Intervals are 95% Wilson intervals; samples whose support the judge could not \
    tell are undefined and not counted.";

/// The rates in the order shown, with their names.
fn rates(summary: &AbstentionSummary) -> [(&'static str, &Rate); 4] {
    let r = &summary.rates;
    [
        ("abstention recall", &r.abstention_recall),
        ("false abstention rate", &r.false_abstention_rate),
        ("abstention precision", &r.abstention_precision),
        ("accuracy", &r.accuracy),
    ]
}

/// `0.5000 [0.0945, 0.9055] (1/2)`, or `— (0/0)`.
fn rate_text(rate: &Rate) -> String {
    match (rate.value, rate.ci95) {
        (Some(value), Some([low, high])) => format!(
            "{value:.4} [{low:.4}, {high:.4}] ({}/{})",
            rate.numerator, rate.denominator
        ),
        _ => format!("— ({}/{})", rate.numerator, rate.denominator),
    }
}

/// The two rates a comparison shows beside the mean: `abstention recall 0.5000 [0.0945,
/// 0.9055] (1/2) · false abstention rate …`.
pub(crate) fn headline_rates(summary: &AbstentionSummary) -> String {
    rates(summary)[..2]
        .iter()
        .map(|(label, rate)| format!("{label} {}", rate_text(rate)))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The metrics with a table, in the summary's order.
fn tables(summary: &Summary) -> Vec<(&String, &AbstentionSummary)> {
    summary
        .metric_order
        .iter()
        .filter_map(|name| Some((name, summary.metrics.get(name)?.abstention.as_ref()?)))
        .collect()
}

/// The HTML section, or nothing when no metric has a table.
pub fn abstention_html(summary: &Summary) -> String {
    let tables = tables(summary);
    if tables.is_empty() {
        return String::new();
    }
    let mut html = String::from("<h2 id=\"abstention\">Abstention</h2>\n");
    for (name, table) in tables {
        let t = &table.table;
        let _ = writeln!(
            html,
            "<h3><code>{}</code></h3>\n<table><thead><tr><th></th><th>answered</th>\
             <th>declined</th></tr></thead><tbody>\n<tr><td>supported</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n<tr><td>unsupported</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n</tbody></table>",
            e(name),
            t.count(Quadrant::AnsweredSupported),
            t.count(Quadrant::AbstainedSupported),
            t.count(Quadrant::AnsweredUnsupported),
            t.count(Quadrant::AbstainedUnsupported),
        );
        html.push_str(
            "<table><thead><tr><th>rate</th><th>value [95% CI] (k/n)</th></tr></thead><tbody>\n",
        );
        for (label, rate) in rates(table) {
            let _ = writeln!(
                html,
                "<tr><td>{}</td><td class=\"num\">{}</td></tr>",
                e(label),
                e(&rate_text(rate))
            );
        }
        html.push_str("</tbody></table>\n");
    }
    let _ = writeln!(html, "<p class=\"muted\">{}</p>", e(READING));
    html
}

/// The Markdown section, or nothing when no metric has a table.
pub fn abstention_markdown(summary: &Summary) -> String {
    let tables = tables(summary);
    if tables.is_empty() {
        return String::new();
    }
    let mut md = String::from("\n## Abstention\n");
    for (name, table) in tables {
        let t = &table.table;
        let _ = writeln!(
            md,
            "\n`{name}`\n\n| | answered | declined |\n|---|---:|---:|\n| supported | {} | {} |\n\
             | unsupported | {} | {} |\n",
            t.count(Quadrant::AnsweredSupported),
            t.count(Quadrant::AbstainedSupported),
            t.count(Quadrant::AnsweredUnsupported),
            t.count(Quadrant::AbstainedUnsupported),
        );
        md.push_str("| rate | value [95% CI] (k/n) |\n|---|---:|\n");
        for (label, rate) in rates(table) {
            let _ = writeln!(md, "| {label} | {} |", rate_text(rate));
        }
    }
    let _ = writeln!(md, "\n{READING}");
    md
}

/// An `abstention` sheet: per metric, the four counts and each rate with its interval.
pub(crate) fn add_abstention_sheet(
    workbook: &mut Workbook,
    summary: &Summary,
) -> Result<(), XlsxError> {
    let tables = tables(summary);
    if tables.is_empty() {
        return Ok(());
    }
    let bold = Format::new().set_bold();
    let number = Format::new().set_num_format("0.0000");
    let sheet = workbook.add_worksheet().set_name("abstention")?;
    let mut header = vec!["metric".to_owned()];
    header.extend(Quadrant::ALL.map(|q| q.name().to_owned()));
    for (label, _) in rates(tables[0].1) {
        let key = label.replace(' ', "_");
        header.extend([
            key.clone(),
            format!("{key}_ci95_low"),
            format!("{key}_ci95_high"),
        ]);
    }
    for (col, title) in (0u16..).zip(&header) {
        sheet.write_string_with_format(0, col, title, &bold)?;
    }
    for (row, (name, table)) in (1u32..).zip(tables) {
        sheet.write_string(row, 0, name)?;
        let mut col = 1u16;
        for quadrant in Quadrant::ALL {
            sheet.write_number(row, col, table.table.count(quadrant) as f64)?;
            col += 1;
        }
        for (_, rate) in rates(table) {
            let [low, high] = rate.ci95.map_or([None, None], |[l, h]| [Some(l), Some(h)]);
            for value in [rate.value, low, high] {
                if let Some(value) = value {
                    sheet.write_number_with_format(row, col, value, &number)?;
                }
                col += 1;
            }
        }
    }
    Ok(())
}
