//! The rank agreement (`rank_agreement.jsonl`) as people read it: a section of
//! `report.html` and `report.md` (the averages, then one row per question) and the
//! `rank_agreement` sheet of `results.xlsx`. Nothing is computed here but the averages of
//! [`RankAgreementSummary`] and formatting.

use std::fmt::Write as _;

use rust_xlsxwriter::{Format, Worksheet, XlsxError};

use crate::escape::{escape_html as e, escape_markdown_cell as cell};
use crate::page::{number, shorten};
use crate::xlsx::{write_header, write_text};
use crate::{FIGURE_NAMES, JournalIndex, RankAgreementRow, RankAgreementSummary, RunData, RunInfo};

/// Characters of a question shown in the tables.
const QUESTION_CHARS: usize = 80;

/// Column headers of the `rank_agreement` sheet.
pub const RANK_AGREEMENT_SHEET_COLUMNS: [&str; 10] = [
    "sample_id",
    "question",
    "k",
    "spearman",
    "kendall_tau_b",
    "top_k_overlap",
    "overlap_indices",
    "ndcg_at_k",
    "map",
    "left_out",
];
/// The first cell of the sheet's last row, which holds each figure's mean.
pub const MEAN_ROW_LABEL: &str = "(mean over questions)";

/// What each figure of [`crate::FIGURE_NAMES`] is called in the reports.
pub fn rank_figure_label(figure: &str) -> &'static str {
    match figure {
        "spearman" => "Spearman ρ",
        "kendall_tau_b" => "Kendall τ-b",
        "top_k_overlap" => "top-k overlap",
        "ndcg_at_k" => "nDCG@k",
        _ => "MAP",
    }
}

fn indices(row: &RankAgreementRow) -> String {
    row.overlap_indices
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One sentence on what the section shows, with the cut-offs and the left-out count.
fn lead(summary: &RankAgreementSummary) -> String {
    let k: Vec<String> = summary.k.iter().map(usize::to_string).collect();
    let left_out = match summary.left_out {
        0 => String::new(),
        n => format!(
            " {n} left out: their judge grades did not all come back, so they have no figures."
        ),
    };
    format!(
        "The retriever's order of each question's contexts against the judge's, over {} \
         questions (k = {}).{left_out}",
        summary.questions,
        k.join(", ")
    )
}

/// The run's rank agreement as an HTML section (empty when the run has none): the means,
/// then one row per question. Sample ids link to their drill-down, `{link_base}#s{index}`
/// (`""` for the same page).
pub fn render_rank_agreement(run: &RunData, link_base: &str) -> String {
    rank_agreement_html(
        &run.info(),
        &JournalIndex::of_records(&run.records),
        link_base,
    )
}

/// [`render_rank_agreement`] with anchors from the run's journal index.
pub(crate) fn rank_agreement_html(
    run: &RunInfo,
    journal: &JournalIndex,
    link_base: &str,
) -> String {
    let Some(rows) = &run.rank_agreement else {
        return String::new();
    };
    let summary = RankAgreementSummary::of(rows);
    let mut html = format!(
        "<h2 id=\"rank-agreement\">Retriever versus judge</h2>\n<p class=\"muted\">{}</p>\n\
         <table class=\"summary\"><thead><tr><th>figure</th><th class=\"num\">mean</th>\
         <th class=\"num\">questions</th></tr></thead><tbody>\n",
        e(&lead(&summary))
    );
    for (name, mean) in &summary.figures {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            rank_figure_label(name),
            number(mean.mean),
            mean.n
        );
    }
    html.push_str(
        "</tbody></table>\n<div class=\"wide\"><table class=\"rank-agreement\"><thead><tr>\
         <th>sample</th><th>question</th><th class=\"num\">k</th>",
    );
    for name in FIGURE_NAMES {
        if name == "ndcg_at_k" {
            html.push_str("<th>overlapping</th>");
        }
        let _ = write!(html, "<th class=\"num\">{}</th>", rank_figure_label(name));
    }
    html.push_str("</tr></thead><tbody>\n");
    for row in rows {
        let id = match journal.index_of(&row.sample_id) {
            Some(index) => format!(
                "<a href=\"{}#s{index}\"><code>{}</code></a>",
                e(link_base),
                e(&row.sample_id)
            ),
            None => format!("<code>{}</code>", e(&row.sample_id)),
        };
        let _ = write!(
            html,
            "<tr><td class=\"nowrap\">{id}</td><td>{}</td><td class=\"num\">{}</td>",
            e(&shorten(&row.question, QUESTION_CHARS)),
            row.k
        );
        match &row.left_out {
            Some(reason) => {
                let _ = write!(
                    html,
                    "<td colspan=\"6\" class=\"cell-undefined\">left out: {}</td>",
                    e(reason)
                );
            }
            None => {
                for (name, value) in row.figures() {
                    if name == "ndcg_at_k" {
                        let _ = write!(html, "<td>{}</td>", indices(row));
                    }
                    let _ = write!(html, "<td class=\"num\">{}</td>", number(value));
                }
            }
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div>\n");
    html
}

/// The run's rank agreement as a Markdown section (empty when the run has none).
pub(crate) fn rank_agreement_markdown(run: &RunInfo) -> String {
    let Some(rows) = &run.rank_agreement else {
        return String::new();
    };
    let summary = RankAgreementSummary::of(rows);
    let mut md = format!(
        "\n## Retriever versus judge\n\n{}\n\n| figure | mean | questions |\n|---|---:|---:|\n",
        lead(&summary)
    );
    for (name, mean) in &summary.figures {
        let _ = writeln!(
            md,
            "| {} | {} | {} |",
            rank_figure_label(name),
            number(mean.mean),
            mean.n
        );
    }
    md.push_str(
        "\n| sample | question | k | Spearman ρ | Kendall τ-b | top-k overlap | overlapping | \
         nDCG@k | MAP |\n|---|---|---:|---:|---:|---:|---|---:|---:|\n",
    );
    for row in rows {
        let _ = write!(
            md,
            "| `{}` | {} | {} |",
            cell(&row.sample_id),
            cell(&shorten(&row.question, QUESTION_CHARS)),
            row.k
        );
        match &row.left_out {
            Some(reason) => {
                let _ = writeln!(md, " left out: {} | | | | | |", cell(reason));
            }
            None => {
                let [rho, tau, overlap, ndcg, map] = row.figures().map(|(_, v)| number(v));
                let _ = writeln!(
                    md,
                    " {rho} | {tau} | {overlap} | {} | {ndcg} | {map} |",
                    indices(row)
                );
            }
        }
    }
    md
}

/// The `rank_agreement` sheet: one row per question, then the means.
pub(crate) fn rank_agreement_sheet(
    sheet: &mut Worksheet,
    rows: &[RankAgreementRow],
    bold: &Format,
) -> Result<(), XlsxError> {
    sheet.set_name("rank_agreement")?;
    write_header(sheet, &RANK_AGREEMENT_SHEET_COLUMNS, bold)?;
    // Figures sit in columns 3, 4, 5, 7 and 8; 6 holds the overlapping indices.
    let figure_columns: [u16; 5] = [3, 4, 5, 7, 8];
    let mut row_number = 1u32;
    for row in rows {
        write_text(sheet, row_number, 0, &row.sample_id)?;
        write_text(sheet, row_number, 1, &row.question)?;
        sheet.write_number(row_number, 2, row.k as f64)?;
        for (col, (_, value)) in figure_columns.iter().zip(row.figures()) {
            if let Some(value) = value {
                sheet.write_number(row_number, *col, value)?;
            }
        }
        write_text(sheet, row_number, 6, &indices(row))?;
        write_text(sheet, row_number, 9, row.left_out.as_deref().unwrap_or(""))?;
        row_number += 1;
    }
    let summary = RankAgreementSummary::of(rows);
    sheet.write_string_with_format(row_number, 0, MEAN_ROW_LABEL, bold)?;
    for (col, (_, mean)) in figure_columns.iter().zip(&summary.figures) {
        if let Some(value) = mean.mean {
            sheet.write_number_with_format(row_number, *col, value, bold)?;
        }
    }
    if summary.left_out > 0 {
        write_text(
            sheet,
            row_number,
            9,
            &format!(
                "{} of {} questions left out",
                summary.left_out, summary.questions
            ),
        )?;
    }
    sheet.set_column_width(1, 40)?;
    sheet.set_column_width(9, 40)?;
    sheet.set_freeze_panes(1, 1)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::write_run;
    use crate::{RANK_AGREEMENT_FILE, render_html, render_markdown};
    use rageval_core::Outcome;

    /// Regression: report.html and report.md did not show the retriever-versus-judge
    /// figures of a `rank` / `pipeline` run.
    #[test]
    fn the_reports_show_the_rank_agreement() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        write_run(
            &path,
            "abc",
            &[
                ("a", "m", Outcome::bare(0.5)),
                ("b", "m", Outcome::bare(1.0)),
            ],
        );
        let before = RunData::load(&path).unwrap();
        assert!(!render_html(&before, &[]).contains("Retriever versus judge"));
        assert!(!render_markdown(&before, &[]).contains("Retriever versus judge"));
        std::fs::write(
            path.join(RANK_AGREEMENT_FILE),
            concat!(
                r#"{"sample_id": "b", "question": "why <b>?", "spearman": 0.5, "kendall_tau_b": 0.25, "k": 5, "top_k_overlap": 0.4, "overlap_indices": [3, 1], "ndcg_at_k": 0.75, "map": 0.5}"#,
                "\n",
                r#"{"sample_id": "a", "question": "q|a", "k": 5, "left_out": "grades failed"}"#,
                "\n",
            ),
        )
        .unwrap();
        let run = RunData::load(&path).unwrap();
        let html = render_html(&run, &[]);
        assert!(html.contains("<h2 id=\"rank-agreement\">Retriever versus judge</h2>"));
        assert!(
            html.contains("over 2 questions (k = 5). 1 left out"),
            "{html}"
        );
        assert!(html.contains(
            "<tr><td>Spearman ρ</td><td class=\"num\">0.5000</td><td class=\"num\">1</td></tr>"
        ));
        assert!(html.contains(
            "<a href=\"#s1\"><code>b</code></a></td><td>why &lt;b&gt;?</td><td class=\"num\">5</td>\
             <td class=\"num\">0.5000</td><td class=\"num\">0.2500</td><td class=\"num\">0.4000</td>\
             <td>3, 1</td><td class=\"num\">0.7500</td>"
        ), "{html}");
        assert!(html.contains("left out: grades failed"));
        let md = render_markdown(&run, &[]);
        assert!(md.contains("| Kendall τ-b | 0.2500 | 1 |"), "{md}");
        assert!(
            md.contains(
                "| `b` | why <b>? | 5 | 0.5000 | 0.2500 | 0.4000 | 3, 1 | 0.7500 | 0.5000 |"
            ) || md.contains(
                "| `b` | why &lt;b&gt;? | 5 | 0.5000 | 0.2500 | 0.4000 | 3, 1 | 0.7500 | 0.5000 |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| `a` | q\\|a | 5 | left out: grades failed |"),
            "{md}"
        );
    }
}
