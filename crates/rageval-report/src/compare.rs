//! Comparing runs over the same dataset: a version table (rows = runs, columns = metrics)
//! and, for each pair of runs, per-metric paired differences.
//!
//! For a pair (A, B) and a metric, the paired samples are those scored in both runs. Over
//! them, Δ = mean(B − A); its 95% interval is a percentile bootstrap that resamples samples
//! (each keeps both its scores); its p-value is a two-sided paired permutation test by
//! random sign flips. Both are seeded: the bootstrap with `seed`, the sign flips with
//! `seed + 1`, so the same runs give the same numbers everywhere. Runs whose manifests name
//! different dataset hashes are refused: their samples are not pairs. Two `judge-check` runs
//! (one dataset hash: the same labelled items) also get their agreement figures side by side
//! ([`AgreementDelta`]).

use std::collections::{BTreeMap, HashMap};

use rageval_core::stats::{
    DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_PERMUTATIONS, DEFAULT_SEED, mean,
    paired_bootstrap_diff_ci, paired_sign_flip_p_value,
};
use serde::Serialize;

use crate::{AgreementDelta, CallTally, MetricSummary, ReportError, RunData};

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
    /// The judge's calls, tokens and cost over the run's sessions (`null` for a run written
    /// before rageval kept judge accounts).
    pub judge: Option<CallTally>,
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
    /// Two `judge-check` runs: the two judges' agreement with the labels side by side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agreement: Option<AgreementDelta>,
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
                let agreement = runs[i]
                    .agreement
                    .as_ref()
                    .zip(runs[j].agreement.as_ref())
                    .map(|(a, b)| AgreementDelta::between(a, b, settings.top_flips));
                pairs.push(PairComparison {
                    baseline: i,
                    candidate: j,
                    deltas,
                    agreement,
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
                    judge: run.summary.judge.as_ref().map(|j| j.usage.total.clone()),
                })
                .collect(),
            metrics,
            pairs,
            settings,
        })
    }

    pub(crate) fn run_name(&self, index: usize) -> &str {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::write_run;
    use crate::{render_compare_html, render_compare_markdown};
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
        // Runs written without judge accounts show no calls and no cost.
        assert!(
            md.contains("| a | 0.5000 | — | — |\n| b | 0.3667 | — | — |"),
            "{md}"
        );
        assert!(md.contains("Moved most, `m`: `y` 0.5000 → 0.0000 (-0.5000)"));
        let html = render_compare_html(&comparison);
        assert!(html.contains("<h2>a → b</h2>"));
        assert!(html.contains("class=\"zero\""));
    }

    #[test]
    fn the_version_table_shows_each_runs_judge_calls_and_cost() {
        let dir = tempfile::tempdir().unwrap();
        let mut runs = runs(dir.path());
        let mut usage = crate::JudgeUsage::default();
        usage.total.calls = 120;
        usage.total.cost_usd = Some(0.0123);
        runs[1].summary.judge = Some(crate::JudgeAccount {
            kind: "endpoint".into(),
            models: Vec::new(),
            endpoints: Vec::new(),
            sessions: 1,
            usage,
        });
        let comparison = Comparison::build(&runs, CompareSettings::default()).unwrap();
        assert_eq!(comparison.runs[1].judge.as_ref().unwrap().calls, 120);
        let md = render_compare_markdown(&comparison);
        assert!(md.contains("| judge calls | cost (USD) |"), "{md}");
        assert!(md.contains(" — | — |\n| shifted |"), "{md}");
        assert!(md.contains(" 120 | 0.012300 |"), "{md}");
        let html = render_compare_html(&comparison);
        assert!(
            html.contains("<td class=\"num\">120</td><td class=\"num\">0.012300</td>"),
            "{html}"
        );
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
