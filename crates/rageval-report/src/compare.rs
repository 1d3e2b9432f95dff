//! Comparing runs: the version table of seed S4 (rows = system versions, columns =
//! metrics, each later version's Δ against the first) and, for each pair of runs,
//! per-metric paired differences.
//!
//! Two versions of a system are evaluated on two collected datasets — the same questions,
//! different contexts and answers — so runs are compared question by question, not dataset
//! by dataset: [`crate::compare_pairing`] pairs their samples (by id, and by question text
//! where ids differ) and says how the datasets differ. The question sets must overlap at
//! least [`CompareSettings::min_overlap`] (by default: be the same); with
//! [`CompareSettings::common`] only the questions every run holds are compared, and the
//! version table's means are over those.
//!
//! For a pair (A, B) and a metric, the paired samples are those scored in both runs. Over
//! them, Δ = mean(B − A); its 95% interval is a percentile bootstrap that resamples samples
//! (each keeps both its scores); its p-value is a two-sided paired permutation test by
//! random sign flips. Both are seeded: the bootstrap with `seed`, the sign flips with
//! `seed + 1`, so the same runs give the same numbers everywhere. A difference is read as
//! "higher" or "lower" only when the interval excludes zero and the test agrees
//! (p < 1 − level); with few pairs the percentile interval can exclude zero while the
//! exact test cannot reject (four pairs all lower give p = 0.125), and then the reading is
//! "no clear difference". Two `judge-check` runs over the same labels also get their
//! agreement figures side by side ([`AgreementDelta`]).
//!
//! Where both runs of a pair have human labels for a metric (`eval --labels`, `rageval
//! calibrate`) and every question of both is compared, the pair also gets the difference
//! of their calibrated (PPI++) means ([`CalibratedDelta`]): the judge's bias taken out of
//! each side. Its 95% interval combines the two runs' intervals as independent normal
//! estimates, which is wider than needed when the versions' errors are correlated — a
//! conservative reading, never an optimistic one.

use std::collections::{BTreeMap, HashMap, HashSet};

use rageval_core::Sample;
use rageval_core::calibration::Z_95;
use rageval_core::stats::{
    DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_PERMUTATIONS, DEFAULT_SEED, mean,
    paired_bootstrap_diff_ci, paired_sign_flip_p_value,
};
use serde::Serialize;

use crate::compare_pairing::{Pairing, RunSamples, pair_samples};
use crate::compare_positions::{ConversationDelta, HopDelta, conversation_delta, hop_delta};
use crate::{
    Aggregator, AgreementDelta, Calibrated, CallTally, MetricSummary, ReportError, RunData,
};

/// How the paired statistics are drawn and which questions are compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareSettings {
    /// Bootstrap resamples for the interval of Δ.
    pub resamples: usize,
    /// Sign-flip permutations; the p-value's resolution is `1 / (permutations + 1)`.
    pub permutations: usize,
    pub seed: u64,
    /// Confidence level of the interval (0.95); a difference is read as one when
    /// p < 1 − level too.
    pub level: f64,
    /// Samples listed per metric as flipping most.
    pub top_flips: usize,
    /// The least overlap of two runs' question sets accepted (`paired / union`); `None`:
    /// 1 (the same questions), or any overlap with `common`.
    pub min_overlap: Option<f64>,
    /// Compare only the questions every run holds.
    pub common: bool,
    /// The metrics compared, in this order (`compare --metrics`); empty: every metric any
    /// run scored.
    pub metrics: Vec<String>,
}

impl Default for CompareSettings {
    fn default() -> Self {
        Self {
            resamples: DEFAULT_BOOTSTRAP_RESAMPLES,
            permutations: DEFAULT_PERMUTATIONS,
            seed: DEFAULT_SEED,
            level: 0.95,
            top_flips: 5,
            min_overlap: None,
            common: false,
            metrics: Vec::new(),
        }
    }
}

impl CompareSettings {
    /// The overlap below which runs are refused.
    pub fn required_overlap(&self) -> f64 {
        self.min_overlap
            .unwrap_or(if self.common { 0.0 } else { 1.0 })
    }
}

/// One run's row of the version table.
#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    /// The run's name (its directory's; a pipeline's folder's for its `eval` stage).
    pub name: String,
    /// The version's name as every rendering shows it: the one given at compare time
    /// ([`Comparison::name_versions`]), else the run's `eval --name`, else its name.
    pub version: String,
    pub path: String,
    /// The dataset as its manifest records it, and its hash.
    pub dataset: String,
    pub dataset_sha256: String,
    /// Per metric, over the run's samples (over the common questions with `common`).
    pub metrics: BTreeMap<String, MetricSummary>,
    /// The judge's calls, tokens and cost over the run's sessions (`null` for a run written
    /// before rageval kept judge accounts).
    pub judge: Option<CallTally>,
    /// Per metric with human labels: the run's calibrated mean, over all its samples.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub calibrated: BTreeMap<String, Calibrated>,
    /// With `compare --pairwise`: this version judged head to head against the first, from
    /// this version's side ([`Comparison::add_head_to_head`]); none on the first row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_to_head: Option<crate::VersionPair>,
}

/// A sample whose score moved between the two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleFlip {
    /// The baseline's id.
    pub sample_id: String,
    /// The candidate's id, when it differs (paired by question).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate_sample_id: Option<String>,
    pub baseline: f64,
    pub candidate: f64,
    /// `candidate − baseline`.
    pub delta: f64,
    /// The baseline's question, when its dataset could be re-read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
}

/// What a difference says, in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    /// The interval is above zero and p < 1 − level.
    Higher,
    /// The interval is below zero and p < 1 − level.
    Lower,
    NoClearDifference,
    NoPairedSamples,
}

impl Reading {
    pub fn words(self) -> &'static str {
        match self {
            Self::Higher => "higher",
            Self::Lower => "lower",
            Self::NoClearDifference => "no clear difference",
            Self::NoPairedSamples => "no paired samples",
        }
    }
}

/// One metric compared between two runs over their paired samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricDelta {
    pub metric: String,
    /// Samples scored in both runs.
    pub n_paired: usize,
    /// Compared samples scored in exactly one of the two runs (left out of every number).
    pub n_unpaired: usize,
    pub baseline_mean: Option<f64>,
    pub candidate_mean: Option<f64>,
    /// Mean of `candidate − baseline` over the paired samples.
    pub delta: Option<f64>,
    /// Paired percentile-bootstrap interval of `delta`.
    pub ci95: Option<[f64; 2]>,
    /// Two-sided sign-flip permutation p-value of "Δ = 0".
    pub p_value: Option<f64>,
    /// "higher" / "lower" only where the interval excludes zero and p agrees.
    pub reading: Reading,
    /// The samples that moved most, largest |Δ| first.
    pub flips: Vec<SampleFlip>,
    /// Both runs' calibrated means and their difference, where both have labels for the
    /// metric and every question of both is compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<CalibratedDelta>,
}

/// One metric's calibrated (PPI++) means in two runs, each from its own human labels, and
/// their difference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibratedDelta {
    pub baseline_mean: f64,
    pub baseline_ci95: [f64; 2],
    pub baseline_labels: usize,
    pub candidate_mean: f64,
    pub candidate_ci95: [f64; 2],
    pub candidate_labels: usize,
    /// `candidate_mean − baseline_mean`.
    pub delta: f64,
    /// `delta ± z·√(se_a² + se_b²)`, each `se` its interval's half-width over z: the two
    /// estimates taken as independent.
    pub ci95: [f64; 2],
    /// "higher" / "lower" only where the interval excludes zero.
    pub reading: Reading,
}

impl CalibratedDelta {
    fn between(baseline: &Calibrated, candidate: &Calibrated) -> Self {
        let (a, b) = (&baseline.estimate, &candidate.estimate);
        let se = |c: &rageval_core::stats::Interval| ((c.high - c.low) / 2.0).max(0.0) / Z_95;
        let delta = b.mean - a.mean;
        let half = Z_95 * (se(&a.ci95).powi(2) + se(&b.ci95).powi(2)).sqrt();
        let ci95 = [delta - half, delta + half];
        let reading = if ci95[0] > 0.0 {
            Reading::Higher
        } else if ci95[1] < 0.0 {
            Reading::Lower
        } else {
            Reading::NoClearDifference
        };
        Self {
            baseline_mean: a.mean,
            baseline_ci95: [a.ci95.low, a.ci95.high],
            baseline_labels: a.n_labels,
            candidate_mean: b.mean,
            candidate_ci95: [b.ci95.low, b.ci95.high],
            candidate_labels: b.n_labels,
            delta,
            ci95,
            reading,
        }
    }
}

impl MetricDelta {
    /// Whether the difference is read as one: the interval excludes zero and the test
    /// rejects Δ = 0.
    pub fn is_clear(&self) -> bool {
        matches!(self.reading, Reading::Higher | Reading::Lower)
    }
}

/// Two runs compared: `candidate` against `baseline` (indices into [`Comparison::runs`]).
#[derive(Debug, Clone, Serialize)]
pub struct PairComparison {
    pub baseline: usize,
    pub candidate: usize,
    /// Which questions the two runs share, and how their datasets differ on them.
    pub pairing: Pairing,
    pub deltas: Vec<MetricDelta>,
    /// Two `judge-check` runs: the two judges' agreement with the labels side by side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agreement: Option<AgreementDelta>,
    /// Both runs have turns of conversations: their per-conversation figures side by side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversations: Option<ConversationDelta>,
    /// Both runs have retrieval-hop rows: their first-hop and later-hop figures side by
    /// side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hops: Option<HopDelta>,
}

/// Two or more runs compared.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub runs: Vec<RunRow>,
    /// Every metric of any run, in first-seen order.
    pub metrics: Vec<String>,
    /// Every pair `(i, j)` with `i < j`; the earlier run is the baseline.
    pub pairs: Vec<PairComparison>,
    /// With `common`: how many questions every run holds (all numbers are over those).
    pub common_questions: Option<usize>,
    pub settings: CompareSettings,
}

impl Comparison {
    /// Compares `runs` (at least two) pairing samples by id alone: [`Self::build_with_samples`]
    /// without the datasets.
    pub fn build(runs: &[RunData], settings: CompareSettings) -> Result<Self, ReportError> {
        Self::build_with_samples(runs, &[], settings)
    }

    /// Compares `runs` (at least two). `samples[i]` is run `i`'s dataset as read back (empty
    /// or missing when it is not at hand): with both datasets of a pair, samples pair by id
    /// and question, and the comparison says how the datasets differ.
    pub fn build_with_samples(
        runs: &[RunData],
        samples: &[Vec<Sample>],
        settings: CompareSettings,
    ) -> Result<Self, ReportError> {
        if runs.len() < 2 {
            return Err(ReportError::TooFewRuns { count: runs.len() });
        }
        let none = Vec::new();
        let sides: Vec<RunSamples<'_>> = runs
            .iter()
            .enumerate()
            .map(|(i, run)| RunSamples::new(run, samples.get(i).unwrap_or(&none)))
            .collect();
        let mut pairings: HashMap<(usize, usize), Pairing> = HashMap::new();
        for i in 0..runs.len() {
            for j in i + 1..runs.len() {
                let same = runs[i].manifest.dataset.sha256 == runs[j].manifest.dataset.sha256;
                let pairing = pair_samples(&sides[i], &sides[j], same);
                check_overlap(&runs[i], &runs[j], &pairing, &settings)?;
                pairings.insert((i, j), pairing);
            }
        }
        let common = if settings.common {
            Some(common_questions(runs, &sides, &pairings)?)
        } else {
            None
        };
        let mut metrics: Vec<String> = Vec::new();
        for run in runs {
            for name in run.metric_names() {
                if !metrics.contains(&name) {
                    metrics.push(name);
                }
            }
        }
        if let Some(unknown) = settings.metrics.iter().find(|m| !metrics.contains(m)) {
            return Err(ReportError::UnknownCompareMetric {
                metric: unknown.clone(),
                known: metrics.join(", "),
            });
        }
        if !settings.metrics.is_empty() {
            metrics.clone_from(&settings.metrics);
        }
        let mut pairs = Vec::new();
        for i in 0..runs.len() {
            for j in i + 1..runs.len() {
                let Some(pairing) = pairings.remove(&(i, j)) else {
                    continue;
                };
                let compared: Vec<(&str, &str)> = pairing
                    .pairs
                    .iter()
                    .filter(|(a, b)| {
                        common
                            .as_ref()
                            .is_none_or(|sets| sets[i].contains(a) && sets[j].contains(b))
                    })
                    .map(|(a, b)| (a.as_str(), b.as_str()))
                    .collect();
                // Calibrated means are over all of a run's samples: they answer for the pair
                // only when every question of both runs is compared.
                let whole = pairing.only_baseline.is_empty()
                    && pairing.only_candidate.is_empty()
                    && compared.len() == pairing.pairs.len();
                let deltas = metrics
                    .iter()
                    .map(|metric| {
                        let mut delta =
                            metric_delta(&runs[i], &runs[j], &compared, metric, &settings);
                        for flip in &mut delta.flips {
                            flip.question = sides[i].question_text(&flip.sample_id);
                        }
                        delta.calibrated = whole
                            .then(|| {
                                let a = runs[i].summary.calibrated.get(metric)?;
                                let b = runs[j].summary.calibrated.get(metric)?;
                                Some(CalibratedDelta::between(a, b))
                            })
                            .flatten();
                        delta
                    })
                    .collect();
                let agreement = runs[i]
                    .agreement
                    .as_ref()
                    .zip(runs[j].agreement.as_ref())
                    .filter(|_| pairing.same_dataset)
                    .map(|(a, b)| AgreementDelta::between(a, b, &settings));
                let both = [&runs[i], &runs[j]];
                let conversations =
                    conversation_delta(both, &sides[i], &compared, &metrics, settings.top_flips);
                pairs.push(PairComparison {
                    baseline: i,
                    candidate: j,
                    pairing,
                    deltas,
                    agreement,
                    conversations,
                    hops: hop_delta(both, &metrics),
                });
            }
        }
        let rows = runs
            .iter()
            .enumerate()
            .map(|(i, run)| RunRow {
                name: run.name(),
                version: run.version(),
                path: run.path.display().to_string(),
                dataset: run.manifest.dataset.path.clone(),
                dataset_sha256: run.manifest.dataset.sha256.clone(),
                metrics: match &common {
                    Some(sets) => summary_over(run, &sets[i], &settings),
                    None => run.summary.metrics.clone(),
                },
                judge: run.summary.judge.as_ref().map(|j| j.usage.total.clone()),
                calibrated: run.summary.calibrated.clone(),
                head_to_head: None,
            })
            .collect();
        Ok(Self {
            runs: rows,
            metrics,
            pairs,
            common_questions: common.as_ref().map(|sets| sets[0].len()),
            settings,
        })
    }

    /// The version name of run `index`, as the tables show it.
    pub(crate) fn version_of(&self, index: usize) -> &str {
        self.runs.get(index).map_or("?", |r| r.version.as_str())
    }

    /// Names the versions in run order (`compare --name`): the first name the first run,
    /// and so on; a run without a name keeps its own.
    pub fn name_versions(&mut self, names: &[String]) {
        for (row, name) in self.runs.iter_mut().zip(names) {
            row.version.clone_from(name);
        }
    }

    /// Whether any pair reads a metric from calibrated means.
    pub fn uses_calibrated(&self) -> bool {
        self.pairs
            .iter()
            .any(|p| p.deltas.iter().any(|d| d.calibrated.is_some()))
    }

    /// Run `candidate` compared with the first run (the version table's Δ).
    pub fn against_first(&self, candidate: usize) -> Option<&PairComparison> {
        self.pairs
            .iter()
            .find(|p| p.baseline == 0 && p.candidate == candidate)
    }
}

/// Refuses two runs whose question sets overlap less than the settings accept, or not at
/// all.
fn check_overlap(
    first: &RunData,
    other: &RunData,
    pairing: &Pairing,
    settings: &CompareSettings,
) -> Result<(), ReportError> {
    let required = settings.required_overlap();
    if pairing.paired > 0 && pairing.overlap + 1e-12 >= required {
        return Ok(());
    }
    let examples = |ids: &[String]| {
        let shown: Vec<String> = ids.iter().take(3).map(|id| format!("`{id}`")).collect();
        let more = if ids.len() > 3 { ", …" } else { "" };
        format!("{}{more}", shown.join(", "))
    };
    let mut only = Vec::new();
    if !pairing.only_baseline.is_empty() {
        only.push(format!(
            "{} only in {} ({})",
            pairing.only_baseline.len(),
            first.version(),
            examples(&pairing.only_baseline)
        ));
    }
    if !pairing.only_candidate.is_empty() {
        only.push(format!(
            "{} only in {} ({})",
            pairing.only_candidate.len(),
            other.version(),
            examples(&pairing.only_candidate)
        ));
    }
    Err(ReportError::QuestionsDiffer {
        runs: format!("{} and {}", first.version(), other.version()),
        paired: pairing.paired,
        union: pairing.paired + pairing.only_baseline.len() + pairing.only_candidate.len(),
        overlap: pairing.overlap,
        required,
        only: if only.is_empty() {
            String::new()
        } else {
            format!(": {}", only.join("; "))
        },
        how: if pairing.questions_known {
            "by id and question"
        } else {
            "by id (the datasets were not at hand to compare questions)"
        },
    })
}

/// Per run, the ids of the questions every run holds: the first run's questions paired in
/// every pair with it, and their partners.
fn common_questions(
    runs: &[RunData],
    sides: &[RunSamples<'_>],
    pairings: &HashMap<(usize, usize), Pairing>,
) -> Result<Vec<HashSet<String>>, ReportError> {
    let partners: Vec<HashMap<&str, &str>> = (1..runs.len())
        .map(|j| {
            pairings
                .get(&(0, j))
                .map(|p| {
                    p.pairs
                        .iter()
                        .map(|(a, b)| (a.as_str(), b.as_str()))
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    let kept: Vec<&str> = sides[0]
        .ids
        .iter()
        .copied()
        .filter(|id| partners.iter().all(|map| map.contains_key(id)))
        .collect();
    if kept.is_empty() {
        return Err(ReportError::NoCommonQuestions {
            runs: runs
                .iter()
                .map(RunData::name)
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    let mut sets = vec![kept.iter().map(|id| id.to_string()).collect::<HashSet<_>>()];
    for map in &partners {
        sets.push(kept.iter().map(|id| map[id].to_string()).collect());
    }
    Ok(sets)
}

/// The run's metric summaries over the samples in `ids` only (bootstrap as the comparison's).
fn summary_over(
    run: &RunData,
    ids: &HashSet<String>,
    settings: &CompareSettings,
) -> BTreeMap<String, MetricSummary> {
    let metrics = run.metric_names();
    let mut aggregator = Aggregator::new(metrics.clone());
    let outcomes = run.outcomes();
    // Journal order, so the bootstrap draws the same resamples every time.
    for id in run.sample_ids().into_iter().filter(|id| ids.contains(*id)) {
        for metric in &metrics {
            if let Some(outcome) = outcomes.get(&(id, metric.as_str())) {
                aggregator.add(metric, outcome);
            }
        }
    }
    aggregator
        .finish(ids.len(), settings.resamples, settings.seed)
        .metrics
}

fn metric_delta(
    baseline: &RunData,
    candidate: &RunData,
    compared: &[(&str, &str)],
    metric: &str,
    settings: &CompareSettings,
) -> MetricDelta {
    let a: HashMap<&str, f64> = baseline.scores(metric);
    let b: HashMap<&str, f64> = candidate.scores(metric);
    // Baseline journal order keeps the resampling, and so the numbers, reproducible.
    let paired: Vec<(&str, &str, f64, f64)> = compared
        .iter()
        .filter_map(|&(x, y)| Some((x, y, *a.get(x)?, *b.get(y)?)))
        .collect();
    let scored_once = compared
        .iter()
        .filter(|(x, y)| a.contains_key(x) != b.contains_key(y))
        .count();
    let xs: Vec<f64> = paired.iter().map(|p| p.2).collect();
    let ys: Vec<f64> = paired.iter().map(|p| p.3).collect();
    let differences: Vec<f64> = paired.iter().map(|p| p.3 - p.2).collect();
    let mut flips: Vec<SampleFlip> = paired
        .iter()
        .filter(|p| p.3 != p.2)
        .map(|&(x_id, y_id, x, y)| SampleFlip {
            sample_id: x_id.to_string(),
            candidate_sample_id: (x_id != y_id).then(|| y_id.to_string()),
            baseline: x,
            candidate: y,
            delta: y - x,
            question: None,
        })
        .collect();
    flips.sort_by(|p, q| {
        q.delta
            .abs()
            .total_cmp(&p.delta.abs())
            .then_with(|| p.sample_id.cmp(&q.sample_id))
    });
    flips.truncate(settings.top_flips);
    let delta = mean(&differences);
    let ci95 =
        paired_bootstrap_diff_ci(&xs, &ys, settings.level, settings.resamples, settings.seed)
            .map(|i| [i.low, i.high]);
    let p_value = paired_sign_flip_p_value(
        &differences,
        settings.permutations,
        settings.seed.wrapping_add(1),
    );
    MetricDelta {
        metric: metric.to_string(),
        n_paired: paired.len(),
        n_unpaired: scored_once,
        baseline_mean: mean(&xs),
        candidate_mean: mean(&ys),
        delta,
        ci95,
        p_value,
        reading: reading(delta, ci95, p_value, settings.level),
        flips,
        calibrated: None,
    }
}

/// "higher" / "lower" only when the interval excludes zero and p < 1 − level.
fn reading(delta: Option<f64>, ci95: Option<[f64; 2]>, p: Option<f64>, level: f64) -> Reading {
    let Some(delta) = delta else {
        return Reading::NoPairedSamples;
    };
    let excludes_zero = ci95.is_some_and(|[low, high]| low > 0.0 || high < 0.0);
    let rejects = p.is_some_and(|p| p < 1.0 - level);
    match (excludes_zero && rejects, delta > 0.0) {
        (true, true) => Reading::Higher,
        (true, false) => Reading::Lower,
        (false, _) => Reading::NoClearDifference,
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
            md.contains("| a | 0.5000 | — | — |\n| b | 0.3667 · Δ -0.1333 ["),
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

    /// Seed S4's two versions: the same questions in two collected datasets (different
    /// hashes, contexts and answers) are compared, never refused.
    #[test]
    fn two_versions_over_different_datasets_are_compared() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("v1.0");
        let b = dir.path().join("v1.1");
        write_run(
            &a,
            "aaa",
            &[
                ("x", "m", Outcome::bare(0.5)),
                ("y", "m", Outcome::bare(0.7)),
            ],
        );
        write_run(
            &b,
            "bbb",
            &[
                ("y", "m", Outcome::bare(0.9)),
                ("x", "m", Outcome::bare(0.6)),
            ],
        );
        let runs = [RunData::load(&a).unwrap(), RunData::load(&b).unwrap()];
        let comparison = Comparison::build(&runs, CompareSettings::default()).unwrap();
        let pair = &comparison.pairs[0];
        assert_eq!((pair.pairing.paired, pair.pairing.overlap), (2, 1.0));
        assert!(!pair.pairing.same_dataset && !pair.pairing.questions_known);
        assert_eq!(pair.deltas[0].n_paired, 2);
        assert!((pair.deltas[0].delta.unwrap() - 0.15).abs() < 1e-12);
        let md = render_compare_markdown(&comparison);
        assert!(
            md.contains(
                "v1.0 and v1.1: 2 of 2 questions paired (2 by id), overlap 1.00. Different \
                 datasets (sha256 aaa… and bbb…), not at hand to compare their texts"
            ),
            "{md}"
        );
        assert!(matches!(
            Comparison::build(&runs[..1], CompareSettings::default()),
            Err(ReportError::TooFewRuns { count: 1 })
        ));
    }

    /// With the datasets at hand, a renumbered question pairs by its text and the
    /// comparison counts what differs.
    #[test]
    fn questions_pair_by_text_where_ids_differ() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        write_run(
            &a,
            "aaa",
            &[
                ("1", "m", Outcome::bare(0.2)),
                ("2", "m", Outcome::bare(0.4)),
            ],
        );
        write_run(
            &b,
            "bbb",
            &[
                ("1", "m", Outcome::bare(0.9)),
                ("2", "m", Outcome::bare(0.3)),
            ],
        );
        let runs = [RunData::load(&a).unwrap(), RunData::load(&b).unwrap()];
        let sample = |id: &str, question: &str, answer: &str| Sample {
            id: id.into(),
            question: question.into(),
            answer: Some(answer.into()),
            references: vec!["ref".into()],
            ..Sample::default()
        };
        let samples = vec![
            vec![sample("1", "alpha?", "x"), sample("2", "beta?", "y")],
            vec![sample("1", "beta?", "y"), sample("2", "alpha?", "z")],
        ];
        let comparison =
            Comparison::build_with_samples(&runs, &samples, CompareSettings::default()).unwrap();
        let pair = &comparison.pairs[0];
        assert_eq!(
            (
                pair.pairing.by_id,
                pair.pairing.by_question,
                pair.pairing.id_conflicts
            ),
            (0, 2, 2)
        );
        // alpha: 0.2 → 0.3, beta: 0.4 → 0.9.
        assert!((pair.deltas[0].delta.unwrap() - 0.3).abs() < 1e-12);
        let differences = pair.pairing.differences.as_ref().unwrap();
        assert_eq!((differences.answers, differences.references), (1, 0));
        assert_eq!(
            pair.deltas[0].flips[0].candidate_sample_id.as_deref(),
            Some("1")
        );
        let md = render_compare_markdown(&comparison);
        assert!(md.contains("(0 by id, 2 by question text; 2 ids name different questions"));
        assert!(
            md.contains("of 2 paired questions, 1 have different answers, 0 different contexts")
        );
        // Each moved sample with its question (issue 39, item 9).
        assert!(md.contains("`2 → 1` “beta?” 0.4000 → 0.9000"), "{md}");
    }

    #[test]
    fn question_sets_that_differ_are_refused_below_the_overlap_asked() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        let c = dir.path().join("c");
        let ids: Vec<String> = (0..10).map(|i| format!("q{i}")).collect();
        let results = |skip: usize, value: f64| -> Vec<(String, &str, Outcome)> {
            ids.iter()
                .skip(skip)
                .map(|id| (id.clone(), "m", Outcome::bare(value)))
                .collect()
        };
        write_run(&a, "aaa", &results(0, 0.5));
        write_run(&b, "bbb", &results(1, 0.6));
        write_run(&c, "ccc", &results(2, 0.7));
        let runs = [a, b, c].map(|p| RunData::load(&p).unwrap());
        let error = Comparison::build(&runs, CompareSettings::default()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "runs a and b share 9 of 10 questions, paired by id (the datasets were not at hand \
             to compare questions) (overlap 0.90, below the 1.00 required): 1 only in a (`q0`); \
             hint: compare only the questions every run holds (--common), or accept a lower \
             overlap (--min-overlap)"
        );
        let lenient = CompareSettings {
            min_overlap: Some(0.8),
            ..CompareSettings::default()
        };
        let comparison = Comparison::build(&runs, lenient).unwrap();
        // Without `common`, each run's means are over its own samples.
        assert_eq!(comparison.runs[0].metrics["m"].n_scored, 10);
        assert_eq!(comparison.pairs[0].deltas[0].n_paired, 9);
        assert_eq!(comparison.pairs[1].deltas[0].n_paired, 8);

        let common = CompareSettings {
            common: true,
            ..CompareSettings::default()
        };
        let comparison = Comparison::build(&runs, common).unwrap();
        assert_eq!(comparison.common_questions, Some(8));
        for run in &comparison.runs {
            assert_eq!(run.metrics["m"].n_scored, 8);
        }
        for pair in &comparison.pairs {
            assert_eq!(pair.deltas[0].n_paired, 8);
        }
        assert!(
            render_compare_markdown(&comparison)
                .contains("**Only the 8 questions every run holds are compared")
        );
        let strict_common = CompareSettings {
            common: true,
            min_overlap: Some(0.95),
            ..CompareSettings::default()
        };
        assert!(matches!(
            Comparison::build(&runs, strict_common),
            Err(ReportError::QuestionsDiffer { .. })
        ));
    }

    /// Regression: `compare` read a Δ as "lower" while its own p-value was 0.126. Four pairs
    /// all lower: every percentile-bootstrap resample is below zero, yet the exact test
    /// cannot reject (2 of 16 sign assignments are as extreme, p = 0.125).
    #[test]
    fn a_difference_is_read_only_where_interval_and_test_agree() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        let ids = ["1", "2", "3", "4"];
        let before = [0.8, 0.7, 0.9, 0.6];
        let after = [0.5, 0.5, 0.6, 0.4];
        let run = |values: [f64; 4]| -> Vec<(&str, &str, Outcome)> {
            ids.iter()
                .zip(values)
                .map(|(id, v)| (*id, "m", Outcome::bare(v)))
                .collect()
        };
        write_run(&a, "d", &run(before));
        write_run(&b, "d", &run(after));
        let runs = [RunData::load(&a).unwrap(), RunData::load(&b).unwrap()];
        let comparison = Comparison::build(&runs, CompareSettings::default()).unwrap();
        let delta = &comparison.pairs[0].deltas[0];
        let [low, high] = delta.ci95.unwrap();
        assert!(
            low < high && high < 0.0,
            "the interval excludes zero: [{low}, {high}]"
        );
        let p = delta.p_value.unwrap();
        assert!((p - 0.125).abs() < 0.01, "p = {p}");
        assert_eq!(delta.reading, Reading::NoClearDifference);
        assert!(!delta.is_clear());
        let md = render_compare_markdown(&comparison);
        assert!(md.contains("| no clear difference |"), "{md}");
        assert!(!md.contains(" lower |"), "{md}");
    }

    /// Seed S4's version table with three versions: each later one against V1.0.
    #[test]
    fn a_three_version_table_shows_each_version_against_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut runs = Vec::new();
        for (name, shift) in [("V1.0", 0.0), ("V1.1", 0.1), ("V1.2", -0.1)] {
            let path = dir.path().join(name);
            write_run(&path, name, &crate::testing::scores(shift));
            runs.push(RunData::load(&path).unwrap());
        }
        let comparison = Comparison::build(&runs, CompareSettings::default()).unwrap();
        assert_eq!(comparison.pairs.len(), 3);
        let md = render_compare_markdown(&comparison);
        assert!(md.contains("| V1.0 | 0.6000 | 0.9000 | — | — |\n"), "{md}");
        assert!(
            md.contains(
                "| V1.1 | 0.7000 · Δ +0.1000 [+0.1000, +0.1000] p 0.0001 higher | 0.9000 · Δ \
                 +0.0000 [+0.0000, +0.0000] p 1.0000 no clear difference | — | — |\n"
            ),
            "{md}"
        );
        assert!(
            md.contains("| V1.2 | 0.5000 · Δ -0.1000 [-0.1000, -0.1000] p 0.0001 lower |"),
            "{md}"
        );
        let html = render_compare_html(&comparison);
        assert!(html.contains(
            "<span class=\"good\">Δ +0.1000<br>[+0.1000, +0.1000]<br>p 0.0001 higher</span>"
        ));
        assert!(html.contains("<span class=\"bad\">Δ -0.1000"));
    }

    /// PPI++ from labels on the first 20 of a run's 40 `faithfulness` scores, each label the
    /// judge's score minus `bias`, plus or minus 0.05 in turn.
    fn calibrated_with_bias(run: &RunData, bias: f64) -> Calibrated {
        let scores = run.scores("faithfulness");
        let judge: Vec<f64> = (0..40).map(|i| scores[format!("q{i}").as_str()]).collect();
        let labels: Vec<f64> = judge[..20]
            .iter()
            .enumerate()
            .map(|(i, x)| x - bias + if i % 2 == 0 { 0.05 } else { -0.05 })
            .collect();
        let c = rageval_core::calibration::calibrate(&labels, &judge[..20], &judge[20..]).unwrap();
        Calibrated {
            estimate: c.ppi_plus_plus,
            labels_only: c.labels_only,
            judge_only: c.judge_only,
            labels: "labels.jsonl".into(),
        }
    }

    #[test]
    fn calibrated_means_are_compared_where_both_runs_have_labels() {
        let dir = tempfile::tempdir().unwrap();
        let mut runs = Vec::new();
        for (name, shift) in [("V1.0", 0.0), ("V1.1", 0.1), ("V1.2", 0.0)] {
            let path = dir.path().join(name);
            write_run(&path, name, &crate::testing::scores(shift));
            runs.push(RunData::load(&path).unwrap());
        }
        // The judge is fair to V1.0 and overrates V1.1 by 0.1: by the labels the two are
        // alike. V1.2 has no labels.
        let fair = calibrated_with_bias(&runs[0], 0.0);
        let flattering = calibrated_with_bias(&runs[1], 0.1);
        runs[0]
            .summary
            .calibrated
            .insert("faithfulness".into(), fair);
        runs[1]
            .summary
            .calibrated
            .insert("faithfulness".into(), flattering);
        let comparison = Comparison::build(&runs, CompareSettings::default()).unwrap();
        assert!(comparison.uses_calibrated());
        let delta = |pair: usize, metric: &str| {
            comparison
                .against_first(pair)
                .unwrap()
                .deltas
                .iter()
                .find(|d| d.metric == metric)
                .unwrap()
                .clone()
        };
        let judged = delta(1, "faithfulness");
        assert_eq!(judged.reading, Reading::Higher);
        let calibrated = judged.calibrated.expect("both runs have labels");
        assert!(calibrated.delta.abs() < 0.03, "{calibrated:?}");
        assert_eq!(calibrated.reading, Reading::NoClearDifference);
        assert_eq!(
            (calibrated.baseline_labels, calibrated.candidate_labels),
            (20, 20)
        );
        // No labels on one side, or none for the metric: the judge's Δ alone.
        assert!(delta(2, "faithfulness").calibrated.is_none());
        assert!(delta(1, "context_recall").calibrated.is_none());

        let md = render_compare_markdown(&comparison);
        assert!(md.contains("calibrated Δ "), "{md}");
        assert!(
            md.contains("| `faithfulness` calibrated | 20 / 20 labels |"),
            "{md}"
        );
        assert!(
            md.contains("the calibrated one is the one to trust"),
            "{md}"
        );
        let html = render_compare_html(&comparison);
        assert!(html.contains("<tr class=\"calibrated\"><td><code>faithfulness</code> calibrated"));
        assert!(html.contains("calibrated 0.6"), "{html}");
    }

    #[test]
    fn a_calibrated_difference_combines_both_intervals() {
        // Hand computation: a = 0.6 [0.5, 0.7], b = 0.8 [0.7, 0.9]; each se = 0.1 / z, so
        // the half-width of Δ is z·√2·0.1/z = 0.141421…; Δ = 0.2, [0.058579, 0.341421].
        let side = |mean: f64, low: f64, high: f64| {
            let estimate = rageval_core::calibration::Estimate {
                mean,
                ci95: rageval_core::stats::Interval { low, high },
                n_labels: 50,
                n_unlabelled: 950,
                lambda: Some(0.8),
                method: rageval_core::calibration::Method::PpiPlusPlus,
                notes: Vec::new(),
            };
            Calibrated {
                estimate: estimate.clone(),
                labels_only: estimate.clone(),
                judge_only: estimate,
                labels: "labels.jsonl".into(),
            }
        };
        let d = CalibratedDelta::between(&side(0.6, 0.5, 0.7), &side(0.8, 0.7, 0.9));
        assert!((d.delta - 0.2).abs() < 1e-12);
        assert!((d.ci95[0] - (0.2 - 0.1 * 2f64.sqrt())).abs() < 1e-12);
        assert!((d.ci95[1] - (0.2 + 0.1 * 2f64.sqrt())).abs() < 1e-12);
        assert_eq!(d.reading, Reading::Higher);
        let d = CalibratedDelta::between(&side(0.6, 0.4, 0.8), &side(0.8, 0.6, 1.0));
        assert_eq!(d.reading, Reading::NoClearDifference);
        let d = CalibratedDelta::between(&side(0.8, 0.7, 0.9), &side(0.6, 0.5, 0.7));
        assert_eq!(d.reading, Reading::Lower);
    }
}
