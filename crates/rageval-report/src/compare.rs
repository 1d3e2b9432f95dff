//! Comparing runs over the same dataset: a version table (rows = runs, columns = metrics)
//! and, for each pair of runs, per-metric paired differences.
//!
//! For a pair (A, B) and a metric, the paired samples are those scored in both runs. Over
//! them, Δ = mean(B − A); its 95% interval is a percentile bootstrap that resamples samples
//! (each keeps both its scores); its p-value is a two-sided paired permutation test by
//! random sign flips. Both are seeded: the bootstrap with `seed`, the sign flips with
//! `seed + 1`, so the same runs give the same numbers everywhere. Runs whose manifests name
//! different dataset hashes are refused: their samples are not pairs.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use rageval_core::stats::{
    DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_PERMUTATIONS, DEFAULT_SEED, mean,
    paired_bootstrap_diff_ci, paired_sign_flip_p_value,
};
use serde::Serialize;

use crate::escape::{escape_html as e, escape_markdown_cell as cell};
use crate::html::{STYLE, number};
use crate::svg::{IntervalRow, interval_chart};
use crate::{MetricSummary, ReportError, RunData};

/// How the paired statistics are drawn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareSettings {
    /// Bootstrap resamples for the interval of Δ.
    pub resamples: usize,
    /// Sign-flip permutations; the p-value's resolution is `1 / (permutations + 1)`.
    pub permutations: usize,
    pub seed: u64,
    /// Confidence level of the interval (0.95).
    pub level: f64,
    /// Samples listed per metric as flipping most.
    pub top_flips: usize,
}

impl Default for CompareSettings {
    fn default() -> Self {
        Self {
            resamples: DEFAULT_BOOTSTRAP_RESAMPLES,
            permutations: DEFAULT_PERMUTATIONS,
            seed: DEFAULT_SEED,
            level: 0.95,
            top_flips: 5,
        }
    }
}

/// One run's row of the version table.
#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    pub name: String,
    pub path: String,
    pub metrics: BTreeMap<String, MetricSummary>,
}

/// A sample whose score moved between the two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleFlip {
    pub sample_id: String,
    pub baseline: f64,
    pub candidate: f64,
    /// `candidate − baseline`.
    pub delta: f64,
}

/// One metric compared between two runs over their paired samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricDelta {
    pub metric: String,
    /// Samples scored in both runs.
    pub n_paired: usize,
    /// Samples scored in exactly one of the two runs (left out of every number here).
    pub n_unpaired: usize,
    pub baseline_mean: Option<f64>,
    pub candidate_mean: Option<f64>,
    /// Mean of `candidate − baseline` over the paired samples.
    pub delta: Option<f64>,
    /// Paired percentile-bootstrap interval of `delta`.
    pub ci95: Option<[f64; 2]>,
    /// Two-sided sign-flip permutation p-value of "Δ = 0".
    pub p_value: Option<f64>,
    /// The samples that moved most, largest |Δ| first.
    pub flips: Vec<SampleFlip>,
}

impl MetricDelta {
    /// Whether the interval excludes zero.
    pub fn is_clear(&self) -> bool {
        self.ci95.is_some_and(|[low, high]| low > 0.0 || high < 0.0)
    }
}

/// Two runs compared: `candidate` against `baseline` (indices into [`Comparison::runs`]).
#[derive(Debug, Clone, Serialize)]
pub struct PairComparison {
    pub baseline: usize,
    pub candidate: usize,
    pub deltas: Vec<MetricDelta>,
}

/// Two or more runs over one dataset.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub dataset_sha256: String,
    pub runs: Vec<RunRow>,
    /// Every metric of any run, in first-seen order.
    pub metrics: Vec<String>,
    /// Every pair `(i, j)` with `i < j`; the earlier run is the baseline.
    pub pairs: Vec<PairComparison>,
    pub settings: CompareSettings,
}

impl Comparison {
    /// Compares `runs` (at least two, all over the same dataset hash).
    pub fn build(runs: &[RunData], settings: CompareSettings) -> Result<Self, ReportError> {
        let Some(first) = runs.first().filter(|_| runs.len() >= 2) else {
            return Err(ReportError::TooFewRuns { count: runs.len() });
        };
        for other in &runs[1..] {
            if other.manifest.dataset.sha256 != first.manifest.dataset.sha256 {
                return Err(ReportError::DifferentDatasets {
                    first: first.path.clone(),
                    other: other.path.clone(),
                    first_sha256: first.manifest.dataset.sha256.clone(),
                    other_sha256: other.manifest.dataset.sha256.clone(),
                });
            }
        }
        let mut metrics: Vec<String> = Vec::new();
        for run in runs {
            for name in run.metric_names() {
                if !metrics.contains(&name) {
                    metrics.push(name);
                }
            }
        }
        let mut pairs = Vec::new();
        for i in 0..runs.len() {
            for j in i + 1..runs.len() {
                let deltas = metrics
                    .iter()
                    .map(|metric| metric_delta(&runs[i], &runs[j], metric, &settings))
                    .collect();
                pairs.push(PairComparison {
                    baseline: i,
                    candidate: j,
                    deltas,
                });
            }
        }
        Ok(Self {
            dataset_sha256: first.manifest.dataset.sha256.clone(),
            runs: runs
                .iter()
                .map(|run| RunRow {
                    name: run.name(),
                    path: run.path.display().to_string(),
                    metrics: run.summary.metrics.clone(),
                })
                .collect(),
            metrics,
            pairs,
            settings,
        })
    }

    fn run_name(&self, index: usize) -> &str {
        self.runs.get(index).map_or("?", |r| r.name.as_str())
    }
}

fn metric_delta(
    baseline: &RunData,
    candidate: &RunData,
    metric: &str,
    settings: &CompareSettings,
) -> MetricDelta {
    let a: HashMap<&str, f64> = baseline.scores(metric);
    let b: HashMap<&str, f64> = candidate.scores(metric);
    // Baseline journal order keeps the resampling, and so the numbers, reproducible.
    let paired: Vec<(&str, f64, f64)> = baseline
        .sample_ids()
        .into_iter()
        .filter_map(|id| Some((id, *a.get(id)?, *b.get(id)?)))
        .collect();
    let n_unpaired = a.len() + b.len() - 2 * paired.len();
    let xs: Vec<f64> = paired.iter().map(|p| p.1).collect();
    let ys: Vec<f64> = paired.iter().map(|p| p.2).collect();
    let differences: Vec<f64> = paired.iter().map(|p| p.2 - p.1).collect();
    let mut flips: Vec<SampleFlip> = paired
        .iter()
        .filter(|p| p.2 != p.1)
        .map(|&(id, x, y)| SampleFlip {
            sample_id: id.to_string(),
            baseline: x,
            candidate: y,
            delta: y - x,
        })
        .collect();
    flips.sort_by(|p, q| {
        q.delta
            .abs()
            .total_cmp(&p.delta.abs())
            .then_with(|| p.sample_id.cmp(&q.sample_id))
    });
    flips.truncate(settings.top_flips);
    MetricDelta {
        metric: metric.to_string(),
        n_paired: paired.len(),
        n_unpaired,
        baseline_mean: mean(&xs),
        candidate_mean: mean(&ys),
        delta: mean(&differences),
        ci95: paired_bootstrap_diff_ci(&xs, &ys, settings.level, settings.resamples, settings.seed)
            .map(|i| [i.low, i.high]),
        p_value: paired_sign_flip_p_value(
            &differences,
            settings.permutations,
            settings.seed.wrapping_add(1),
        ),
        flips,
    }
}

fn signed(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |v| format!("{v:+.4}"))
}

fn ci(value: Option<[f64; 2]>) -> String {
    value.map_or_else(|| "—".into(), |[l, h]| format!("[{l:+.4}, {h:+.4}]"))
}

fn p(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |v| format!("{v:.4}"))
}

/// What a delta says in words.
fn reading(delta: &MetricDelta) -> &'static str {
    match (delta.is_clear(), delta.delta) {
        (true, Some(d)) if d > 0.0 => "higher",
        (true, Some(_)) => "lower",
        (false, Some(_)) => "no clear difference",
        _ => "not comparable",
    }
}

/// The comparison as one self-contained HTML page.
pub fn render_compare_html(comparison: &Comparison) -> String {
    let names: Vec<&str> = comparison.runs.iter().map(|r| r.name.as_str()).collect();
    let title = format!("rageval compare: {}", names.join(" vs "));
    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{0}</title><style>{STYLE}</style></head><body>\n<h1>{0}</h1>\n\
         <p class=\"muted\">dataset sha256 <code>{1}</code></p>\n",
        e(&title),
        e(&comparison.dataset_sha256)
    );
    html.push_str("<h2>Versions</h2>\n<table><thead><tr><th>run</th>");
    for metric in &comparison.metrics {
        let _ = write!(html, "<th class=\"num\"><code>{}</code></th>", e(metric));
    }
    html.push_str("</tr></thead><tbody>\n");
    for run in &comparison.runs {
        let _ = write!(
            html,
            "<tr><td title=\"{}\">{}</td>",
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
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table>\n");
    let s = &comparison.settings;
    let _ = writeln!(
        html,
        "<p class=\"muted\">Δ = mean(candidate − baseline) over samples scored in both runs; \
         interval: paired percentile bootstrap, {} resamples, seed {}; p: two-sided paired \
         sign-flip permutation test, {} permutations (resolution {:.5}), seed {}.</p>",
        s.resamples,
        s.seed,
        s.permutations,
        1.0 / (s.permutations as f64 + 1.0),
        s.seed.wrapping_add(1)
    );
    for pair in &comparison.pairs {
        let (a, b) = (
            comparison.run_name(pair.baseline),
            comparison.run_name(pair.candidate),
        );
        let _ = writeln!(
            html,
            "<h2>{} → {}</h2>\n<table><thead><tr><th>metric</th><th class=\"num\">paired</th>\
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
            let _ = writeln!(
                html,
                "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"{class}\">{}</td></tr>",
                e(&d.metric),
                d.n_paired,
                number(d.baseline_mean),
                number(d.candidate_mean),
                signed(d.delta),
                ci(d.ci95),
                p(d.p_value),
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
    html.push_str("</body></html>\n");
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
    md.push_str("\n|---|");
    md.push_str(&"---:|".repeat(comparison.metrics.len()));
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
        md.push('\n');
    }
    let s = &comparison.settings;
    let _ = writeln!(
        md,
        "\nΔ = mean(candidate − baseline) over samples scored in both runs. Interval: paired \
         percentile bootstrap ({} resamples, seed {}). p: two-sided paired sign-flip \
         permutation test ({} permutations, resolution {:.5}, seed {}).",
        s.resamples,
        s.seed,
        s.permutations,
        1.0 / (s.permutations as f64 + 1.0),
        s.seed.wrapping_add(1)
    );
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
                "| `{}` | {} | {} | {} | {} | {} | {} | {} |",
                cell(&d.metric),
                d.n_paired,
                number(d.baseline_mean),
                number(d.candidate_mean),
                signed(d.delta),
                ci(d.ci95),
                p(d.p_value),
                reading(d)
            );
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::write_run;
    use rageval_core::Outcome;
    use rageval_core::stats::SplitMix64;

    /// Three runs over one dataset of 60 samples: `base`; `shifted`, whose `m_shift` is
    /// base + 0.1 ± 0.02 (a real difference) and whose `m_null` is base ± 0.05 with the signs
    /// balanced (a mean difference of exactly zero); and `same`, a copy of base.
    fn runs(dir: &std::path::Path) -> Vec<RunData> {
        let mut rng = SplitMix64::new(42);
        let base: Vec<f64> = (0..60).map(|_| 0.2 + 0.6 * rng.unit()).collect();
        let sign = |i: usize| if i % 2 == 0 { 1.0 } else { -1.0 };
        let ids: Vec<String> = (0..60).map(|i| format!("q{i}")).collect();
        let mut results = [Vec::new(), Vec::new(), Vec::new()];
        for (i, id) in ids.iter().enumerate() {
            for (run, shift, null) in [
                (0, 0.0, 0.0),
                (1, 0.1 + 0.02 * sign(i / 2), 0.05 * sign(i)),
                (2, 0.0, 0.0),
            ] {
                results[run].push((id.as_str(), "m_shift", Outcome::bare(base[i] + shift)));
                results[run].push((id.as_str(), "m_null", Outcome::bare(base[i] + null)));
            }
        }
        ["base", "shifted", "same"]
            .iter()
            .zip(&results)
            .map(|(name, results)| {
                let path = dir.join(name);
                write_run(&path, "same-data", results);
                RunData::load(&path).unwrap()
            })
            .collect()
    }

    #[test]
    fn an_injected_difference_is_found_and_a_null_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let runs = runs(dir.path());
        let comparison = Comparison::build(&runs, CompareSettings::default()).unwrap();
        assert_eq!(comparison.pairs.len(), 3);
        let pair = &comparison.pairs[0];
        assert_eq!((pair.baseline, pair.candidate), (0, 1));

        let shift = &pair.deltas[0];
        assert_eq!(shift.metric, "m_shift");
        assert_eq!(shift.n_paired, 60);
        assert!((shift.delta.unwrap() - 0.1).abs() < 1e-9);
        let [low, high] = shift.ci95.unwrap();
        assert!(low > 0.0 && low <= 0.1 && 0.1 <= high, "[{low}, {high}]");
        assert!(shift.is_clear());
        // Every sign flip but the observed assignment gives a smaller |mean|.
        assert_eq!(shift.p_value, Some(1.0 / 10_001.0));

        let null = &pair.deltas[1];
        assert_eq!(null.metric, "m_null");
        assert!(null.delta.unwrap().abs() < 1e-9);
        let [low, high] = null.ci95.unwrap();
        assert!(low < 0.0 && 0.0 < high, "[{low}, {high}]");
        assert!(!null.is_clear());
        assert!(null.p_value.unwrap() > 0.5);

        // Identical runs: Δ = 0, nothing moved.
        let same = &comparison.pairs[1];
        assert_eq!((same.baseline, same.candidate), (0, 2));
        assert_eq!(same.deltas[0].delta, Some(0.0));
        assert_eq!(same.deltas[0].p_value, Some(1.0));
        assert!(same.deltas[0].flips.is_empty());
    }

    #[test]
    fn the_same_seed_gives_the_same_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let runs = runs(dir.path());
        let settings = CompareSettings {
            permutations: 500,
            resamples: 300,
            ..CompareSettings::default()
        };
        let one = Comparison::build(&runs[..2], settings.clone()).unwrap();
        let two = Comparison::build(&runs[..2], settings).unwrap();
        assert_eq!(one.pairs[0].deltas, two.pairs[0].deltas);
    }

    #[test]
    fn flips_are_the_largest_moves_first() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        write_run(
            &a,
            "d",
            &[
                ("x", "m", Outcome::bare(0.5)),
                ("y", "m", Outcome::bare(0.5)),
                ("z", "m", Outcome::bare(0.5)),
                ("w", "m", Outcome::bare(0.5)),
            ],
        );
        write_run(
            &b,
            "d",
            &[
                ("x", "m", Outcome::bare(0.6)),
                ("y", "m", Outcome::bare(0.0)),
                ("z", "m", Outcome::bare(0.5)),
                ("w", "m", Outcome::undefined("no answer")),
            ],
        );
        let runs = [RunData::load(&a).unwrap(), RunData::load(&b).unwrap()];
        let comparison = Comparison::build(&runs, CompareSettings::default()).unwrap();
        let delta = &comparison.pairs[0].deltas[0];
        assert_eq!((delta.n_paired, delta.n_unpaired), (3, 1));
        let ids: Vec<&str> = delta.flips.iter().map(|f| f.sample_id.as_str()).collect();
        assert_eq!(ids, vec!["y", "x"]);
        assert_eq!(delta.flips[0].delta, -0.5);

        let md = render_compare_markdown(&comparison);
        assert!(md.contains("| a | 0.5000 |\n| b | 0.3667 |"), "{md}");
        assert!(md.contains("Moved most, `m`: `y` 0.5000 → 0.0000 (-0.5000)"));
        let html = render_compare_html(&comparison);
        assert!(html.contains("<h2>a → b</h2>"));
        assert!(html.contains("class=\"zero\""));
    }

    #[test]
    fn runs_over_different_datasets_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        write_run(&a, "aaa", &[("x", "m", Outcome::bare(0.5))]);
        write_run(&b, "bbb", &[("x", "m", Outcome::bare(0.5))]);
        let runs = [RunData::load(&a).unwrap(), RunData::load(&b).unwrap()];
        let error = Comparison::build(&runs, CompareSettings::default()).unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("are over different datasets (sha256 aaa vs bbb)"),
            "{message}"
        );
        assert!(matches!(
            Comparison::build(&runs[..1], CompareSettings::default()),
            Err(ReportError::TooFewRuns { count: 1 })
        ));
    }
}
