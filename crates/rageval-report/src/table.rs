//! The summary as a plain-text table for a terminal (the binary prints it).

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
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut push_row = |cells: &[String]| {
        let line: Vec<String> = cells
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (cell, width))| {
                let pad = width - cell.chars().count();
                if i == 0 {
                    format!("{cell}{}", " ".repeat(pad))
                } else {
                    format!("{}{cell}", " ".repeat(pad))
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    };
    push_row(&header.map(String::from));
    for row in &rows {
        push_row(row);
    }
    out
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
