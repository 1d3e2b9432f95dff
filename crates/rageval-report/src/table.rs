//! Plain-text tables for a terminal (the binary prints them): the summary, and the one
//! column aligner every other terminal table uses ([`aligned`]).

use crate::Summary;

/// One row per metric: mean, 95% interval and the counts, columns aligned.
pub fn render_summary_table(summary: &Summary) -> String {
    let header = ["metric", "mean", "95% CI", "scored", "undefined", "failed"];
    let mut rows: Vec<[String; 6]> = Vec::new();
    for name in &summary.metric_order {
        let Some(m) = summary.metrics.get(name) else {
            continue;
        };
        rows.push([
            name.clone(),
            m.mean.map_or("—".into(), |v| format!("{v:.4}")),
            m.ci95
                .map_or("—".into(), |[low, high]| format!("[{low:.4}, {high:.4}]")),
            m.n_scored.to_string(),
            m.n_undefined.to_string(),
            m.n_failed.to_string(),
        ]);
    }
    let mut lines = vec![header.map(String::from).to_vec()];
    lines.extend(rows.into_iter().map(Vec::from));
    aligned(&lines)
}

/// `lines` as a text table: columns two spaces apart, the first left-aligned (names), the
/// others right-aligned (numbers), widths in characters, no trailing spaces. The one table
/// aligner of the terminal's tables: summaries, dry-run estimates, batch plans, calibration.
pub fn aligned(lines: &[Vec<String>]) -> String {
    let columns = lines.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            lines
                .iter()
                .map(|line| line.get(c).map_or(0, |cell| cell.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for line in lines {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, &width))| {
                if c == 0 {
                    format!("{cell:<width$}")
                } else {
                    format!("{cell:>width$}")
                }
            })
            .collect();
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Aggregator;
    use rageval_core::Outcome;

    #[test]
    fn aligns_columns_and_shows_dashes_for_no_scores() {
        let mut aggregator = Aggregator::new(vec!["rouge_l".into(), "id_mrr".into()]);
        aggregator.add("rouge_l", &Outcome::bare(0.25));
        aggregator.add("id_mrr", &Outcome::undefined("no ids"));
        let table = render_summary_table(&aggregator.finish(1, 100, 1));
        assert_eq!(
            table,
            "metric     mean            95% CI  scored  undefined  failed\n\
             rouge_l  0.2500  [0.2500, 0.2500]       1          0       0\n\
             id_mrr        —                 —       0          1       0\n"
        );
    }
}
