//! `rank_agreement.jsonl`: per question, how far the retriever's order of the contexts
//! agrees with the judge's (seed S3's Spearman score and top-k similarity, and more), in a
//! run directory beside `results.jsonl`. This module is the file's contract for whoever
//! writes it (`rank`, `pipeline`) — the line type, the reader with its checks, and the
//! averages the reports show.
//!
//! One JSON object per line, one line per question, in the dataset's order:
//!
//! ```json
//! {"sample_id": "3", "question": "…", "spearman": 0.62, "kendall_tau_b": 0.5, "k": 10,
//!  "top_k_overlap": 0.7, "overlap_indices": [0, 2, 5], "ndcg_at_k": 0.81, "map": 0.77}
//! {"sample_id": "4", "question": "…", "k": 10, "left_out": "3 of 40 grades failed"}
//! ```
//!
//! A figure is `null` (or absent) where it is undefined (ρ over fewer than two graded
//! contexts, nDCG with no useful context). A question whose judge grades did not all come
//! back carries `left_out` with the reason and no figure at all. The reader refuses a line
//! that breaks this or holds a figure outside its range, naming the file and line.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::ReportError;

/// Its file name in a run directory.
pub const RANK_AGREEMENT_FILE: &str = "rank_agreement.jsonl";
/// The figures of a line, in the order the reports show them.
pub const FIGURE_NAMES: [&str; 5] = [
    "spearman",
    "kendall_tau_b",
    "top_k_overlap",
    "ndcg_at_k",
    "map",
];

/// One question's retriever-versus-judge agreement (one line of [`RANK_AGREEMENT_FILE`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankAgreementRow {
    /// The sample's id in the run's dataset.
    pub sample_id: String,
    #[serde(default)]
    pub question: String,
    /// Spearman's ρ between retriever position and judge position, in [−1, 1].
    #[serde(default)]
    pub spearman: Option<f64>,
    /// Kendall's τ-b over the same two rankings, in [−1, 1].
    #[serde(default)]
    pub kendall_tau_b: Option<f64>,
    /// The cut-off of `top_k_overlap` and `ndcg_at_k`.
    pub k: usize,
    /// Share of the judge's top k that is also in the retriever's top k, in [0, 1].
    #[serde(default)]
    pub top_k_overlap: Option<f64>,
    /// The contexts in both top-k lists (indices in retriever order, 0-based), in the
    /// judge's order.
    #[serde(default)]
    pub overlap_indices: Vec<usize>,
    /// nDCG@k of the retriever's order with the judge's grades as gains, in [0, 1].
    #[serde(default)]
    pub ndcg_at_k: Option<f64>,
    /// Average precision of the retriever's order, relevant = judged useful, in [0, 1].
    #[serde(default)]
    pub map: Option<f64>,
    /// Why this question has no figures (its judge grades did not all come back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
}

impl RankAgreementRow {
    /// The figures by name ([`FIGURE_NAMES`]), in the order the reports show them.
    pub fn figures(&self) -> [(&'static str, Option<f64>); 5] {
        let values = [
            self.spearman,
            self.kendall_tau_b,
            self.top_k_overlap,
            self.ndcg_at_k,
            self.map,
        ];
        let mut figures = [("", None); 5];
        for (slot, (name, value)) in figures.iter_mut().zip(FIGURE_NAMES.iter().zip(values)) {
            *slot = (*name, value);
        }
        figures
    }

    /// What is wrong with the line, if anything.
    fn problem(&self) -> Option<String> {
        if self.sample_id.is_empty() {
            return Some("`sample_id` is empty".into());
        }
        if let Some(reason) = &self.left_out {
            if reason.trim().is_empty() {
                return Some("`left_out` gives no reason".into());
            }
            let carried: Vec<&str> = self
                .figures()
                .iter()
                .filter(|(_, value)| value.is_some())
                .map(|(name, _)| *name)
                .collect();
            if !carried.is_empty() || !self.overlap_indices.is_empty() {
                return Some(format!(
                    "a left-out question carries figures ({})",
                    if carried.is_empty() {
                        "overlap_indices".to_string()
                    } else {
                        carried.join(", ")
                    }
                ));
            }
        }
        for (name, value) in self.figures() {
            let Some(value) = value else { continue };
            let low = if matches!(name, "spearman" | "kendall_tau_b") {
                -1.0
            } else {
                0.0
            };
            if !(low - 1e-9..=1.0 + 1e-9).contains(&value) {
                return Some(format!("`{name}` is {value}, outside [{low}, 1]"));
            }
        }
        None
    }
}

/// A figure's mean over the questions where it is defined.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FigureMean {
    pub mean: Option<f64>,
    /// Questions where it is defined.
    pub n: usize,
}

/// The rank agreement averaged over questions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankAgreementSummary {
    pub questions: usize,
    /// Questions left out (no figures).
    pub left_out: usize,
    /// The cut-offs used (one, normally).
    pub k: Vec<usize>,
    /// Per figure, in [`RankAgreementRow::figures`]'s order.
    pub figures: Vec<(&'static str, FigureMean)>,
}

impl RankAgreementSummary {
    pub fn of(rows: &[RankAgreementRow]) -> Self {
        let mut k: Vec<usize> = rows.iter().map(|r| r.k).collect();
        k.sort_unstable();
        k.dedup();
        let figures = FIGURE_NAMES
            .iter()
            .enumerate()
            .map(|(index, &name)| {
                let values: Vec<f64> = rows.iter().filter_map(|r| r.figures()[index].1).collect();
                let mean = rageval_core::stats::mean(&values);
                (
                    name,
                    FigureMean {
                        mean,
                        n: values.len(),
                    },
                )
            })
            .collect();
        Self {
            questions: rows.len(),
            left_out: rows.iter().filter(|r| r.left_out.is_some()).count(),
            k,
            figures,
        }
    }
}

/// Reads `rank_agreement.jsonl` from a run directory; `None` when the run has none. Blank
/// lines are skipped; a line that does not parse or breaks the contract is an error naming
/// the file and line.
pub fn read_rank_agreement(dir: &Path) -> Result<Option<Vec<RankAgreementRow>>, ReportError> {
    let path = dir.join(RANK_AGREEMENT_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ReportError::Read { path, source }),
    };
    let mut rows = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: RankAgreementRow =
            serde_json::from_str(line).map_err(|source| ReportError::DecodeRankAgreement {
                path: path.clone(),
                line: index + 1,
                source,
            })?;
        if let Some(why) = row.problem() {
            return Err(ReportError::BadRankAgreement {
                path,
                line: index + 1,
                why,
            });
        }
        rows.push(row);
    }
    Ok(Some(rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_LINES: &str = concat!(
        r#"{"sample_id": "1", "question": "少儿编程是什么？", "spearman": 0.5, "kendall_tau_b": 0.4, "k": 3, "top_k_overlap": 0.6666666666666666, "overlap_indices": [0, 2], "ndcg_at_k": 0.9, "map": 0.8}"#,
        "\n\n",
        r#"{"sample_id": "2", "question": "q2", "k": 3, "left_out": "2 of 5 grades failed"}"#,
        "\n"
    );

    #[test]
    fn reads_figures_and_left_out_questions() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_rank_agreement(dir.path()).unwrap(), None);
        fs::write(dir.path().join(RANK_AGREEMENT_FILE), TWO_LINES).unwrap();
        let rows = read_rank_agreement(dir.path()).unwrap().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].overlap_indices, vec![0, 2]);
        assert_eq!(rows[1].left_out.as_deref(), Some("2 of 5 grades failed"));
        assert_eq!(rows[1].spearman, None);
        let summary = RankAgreementSummary::of(&rows);
        assert_eq!((summary.questions, summary.left_out), (2, 1));
        assert_eq!(summary.k, vec![3]);
        assert_eq!(
            summary.figures[0],
            (
                "spearman",
                FigureMean {
                    mean: Some(0.5),
                    n: 1
                }
            )
        );
        // Written back, a line reads the same.
        let line = serde_json::to_string(&rows[1]).unwrap();
        assert_eq!(
            serde_json::from_str::<RankAgreementRow>(&line).unwrap(),
            rows[1]
        );
    }

    #[test]
    fn a_line_that_breaks_the_contract_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RANK_AGREEMENT_FILE);
        for (line, says) in [
            (
                r#"{"sample_id": "1", "k": 3, "spearman": 0.2, "left_out": "grades failed"}"#,
                "a left-out question carries figures (spearman)",
            ),
            (
                r#"{"sample_id": "1", "k": 3, "left_out": " "}"#,
                "`left_out` gives no reason",
            ),
            (
                r#"{"sample_id": "1", "k": 3, "map": 1.5}"#,
                "`map` is 1.5, outside [0, 1]",
            ),
            (
                r#"{"sample_id": "1", "k": 3, "spearman": -1.2}"#,
                "`spearman` is -1.2, outside [-1, 1]",
            ),
        ] {
            fs::write(
                &path,
                format!("{}\n{line}\n", TWO_LINES.lines().next().unwrap()),
            )
            .unwrap();
            let error = read_rank_agreement(dir.path()).unwrap_err().to_string();
            assert!(
                error.ends_with(&format!("rank_agreement.jsonl:2: {says}")),
                "{error}"
            );
        }
        fs::write(&path, "{\"question\": \"no id\"}\n").unwrap();
        let error = read_rank_agreement(dir.path()).unwrap_err().to_string();
        assert!(
            error.ends_with("rank_agreement.jsonl:1: not a rank agreement line"),
            "{error}"
        );
    }
}
