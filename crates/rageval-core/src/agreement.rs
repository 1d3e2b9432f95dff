//! Agreement between a judge's scores and human labels (what `rageval judge-check` reports):
//! pairwise accuracy with ties counted half, balanced accuracy, AUROC, a threshold chosen
//! under cross-validation, Cohen's κ (plain and quadratically weighted), and a seeded
//! bootstrap interval for any of them; [`paired_agreement_difference`], two judges on the
//! same labels compared item by item; and [`FigureKind`], what a published agreement figure
//! is out of sample from.
//!
//! Pure functions over numbers: no file, no judge. Rank correlations come from
//! [`crate::rank`]; the generator, quantiles and paired tests from [`crate::stats`] (the
//! exact sign test from [`crate::preference`]).

use serde::{Deserialize, Serialize};

use crate::preference::sign_test_p_value;
use crate::stats::{
    Interval, SplitMix64, paired_bootstrap_diff_ci, paired_sign_flip_p_value, quantile_sorted,
};

/// How one labelled pair came out: the judge's score of the item the person preferred
/// against its score of the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairResult {
    /// The preferred item scored higher.
    Agree,
    /// Both scored the same (counted half).
    Tie,
    /// The other item scored higher.
    Disagree,
}

impl PairResult {
    /// Compares the preferred item's score with the other's.
    pub fn of(preferred: f64, other: f64) -> Self {
        if preferred > other {
            Self::Agree
        } else if preferred == other {
            Self::Tie
        } else {
            Self::Disagree
        }
    }

    /// 1, ½ or 0.
    pub fn points(self) -> f64 {
        match self {
            Self::Agree => 1.0,
            Self::Tie => 0.5,
            Self::Disagree => 0.0,
        }
    }
}

/// Pairwise agreement counted as pairs arrive: the points of each pair (a tie worth ½)
/// over the pairs. The one pairwise accuracy of the codebase: judge-check's figures, the
/// measured figures of the heuristic judge and the WikiEval checks all count with it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PairwiseAgreement {
    /// Points: pairs where the preferred item scored higher, ties counted half.
    pub wins: f64,
    /// Pairs compared.
    pub pairs: usize,
}

impl PairwiseAgreement {
    /// Counts one pair by the scores of its preferred (better) and its other item.
    pub fn add(&mut self, better: f64, worse: f64) {
        self.add_result(PairResult::of(better, worse));
    }

    /// Counts one pair already compared.
    pub fn add_result(&mut self, result: PairResult) {
        self.pairs += 1;
        self.wins += result.points();
    }

    /// Points ÷ pairs; `None` without pairs.
    pub fn accuracy(&self) -> Option<f64> {
        (self.pairs > 0).then(|| self.wins / self.pairs as f64)
    }
}

/// Pairwise accuracy: points ÷ pairs, a tie worth ½; `None` without pairs.
pub fn pairwise_accuracy(results: &[PairResult]) -> Option<f64> {
    let mut agreement = PairwiseAgreement::default();
    for &result in results {
        agreement.add_result(result);
    }
    agreement.accuracy()
}

/// A binary agreement counted item by item: verdicts against labels. The one balanced
/// accuracy of the codebase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BinaryAgreement {
    /// Labelled yes, judged yes.
    pub true_positives: usize,
    /// Labelled yes, judged no.
    pub false_negatives: usize,
    /// Labelled no, judged no.
    pub true_negatives: usize,
    /// Labelled no, judged yes.
    pub false_positives: usize,
}

impl BinaryAgreement {
    /// Counts one item.
    pub fn add(&mut self, label: bool, verdict: bool) {
        match (label, verdict) {
            (true, true) => self.true_positives += 1,
            (true, false) => self.false_negatives += 1,
            (false, false) => self.true_negatives += 1,
            (false, true) => self.false_positives += 1,
        }
    }

    /// Items counted.
    pub fn items(&self) -> usize {
        self.true_positives + self.false_negatives + self.true_negatives + self.false_positives
    }

    /// The mean of the recall on positive and on negative items: 0.5 is chance whatever
    /// the class balance. `None` when either class is absent.
    pub fn balanced_accuracy(&self) -> Option<f64> {
        let positives = self.true_positives + self.false_negatives;
        let negatives = self.true_negatives + self.false_positives;
        if positives == 0 || negatives == 0 {
            return None;
        }
        let recall = self.true_positives as f64 / positives as f64;
        let specificity = self.true_negatives as f64 / negatives as f64;
        Some((recall + specificity) / 2.0)
    }
}

/// [`BinaryAgreement::balanced_accuracy`] of `verdicts` against `labels`. `None` when
/// either class is absent or the lengths differ.
pub fn balanced_accuracy(labels: &[bool], verdicts: &[bool]) -> Option<f64> {
    if labels.len() != verdicts.len() {
        return None;
    }
    let mut agreement = BinaryAgreement::default();
    for (&label, &verdict) in labels.iter().zip(verdicts) {
        agreement.add(label, verdict);
    }
    agreement.balanced_accuracy()
}

/// Area under the ROC curve of `scores` for telling positive from negative items: the
/// chance that a random positive outscores a random negative, ties counted half (the
/// Mann–Whitney U statistic ÷ (positives × negatives)). `None` when a class is absent, the
/// lengths differ or a score is not finite.
pub fn auroc(labels: &[bool], scores: &[f64]) -> Option<f64> {
    if labels.len() != scores.len() || scores.iter().any(|s| !s.is_finite()) {
        return None;
    }
    // Sort once; each run of equal scores shares the mean rank (U = R₊ − n₊(n₊+1)/2).
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let positives = labels.iter().filter(|&&l| l).count();
    let negatives = labels.len() - positives;
    if positives == 0 || negatives == 0 {
        return None;
    }
    let mut rank_sum = 0.0;
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && scores[order[end]] == scores[order[start]] {
            end += 1;
        }
        let shared = (start + 1 + end) as f64 / 2.0;
        let in_run = order[start..end].iter().filter(|&&i| labels[i]).count();
        rank_sum += shared * in_run as f64;
        start = end;
    }
    let p = positives as f64;
    Some((rank_sum - p * (p + 1.0) / 2.0) / (p * negatives as f64))
}

/// The threshold `t` (verdict: score ≥ t) with the best balanced accuracy on these items:
/// candidates are the midpoints between distinct scores and one above the highest; the
/// lowest of equally good ones wins. `None` when a class is absent.
pub fn best_threshold(labels: &[bool], scores: &[f64]) -> Option<(f64, f64)> {
    let mut distinct: Vec<f64> = scores.iter().copied().filter(|s| s.is_finite()).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    let first = *distinct.first()?;
    let mut candidates = vec![first];
    candidates.extend(distinct.windows(2).map(|w| (w[0] + w[1]) / 2.0));
    candidates.push(distinct[distinct.len() - 1] + 1.0);
    let mut best: Option<(f64, f64)> = None;
    for threshold in candidates {
        let verdicts: Vec<bool> = scores.iter().map(|&s| s >= threshold).collect();
        let accuracy = balanced_accuracy(labels, &verdicts)?;
        if best.is_none_or(|(_, b)| accuracy > b) {
            best = Some((threshold, accuracy));
        }
    }
    best
}

/// A threshold chosen by measurement, and how well it does on items it was not chosen on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CrossValidated {
    /// The best threshold on all items (what a user would set).
    pub threshold: f64,
    /// Its balanced accuracy on all items (optimistic: chosen on the same items).
    pub in_sample: f64,
    /// Balanced accuracy on held-out folds, each fold judged with the threshold chosen on
    /// the others: the honest figure.
    pub held_out: f64,
    /// Folds used.
    pub folds: usize,
}

/// Chooses the threshold by `folds`-fold cross-validation (items shuffled with `seed`,
/// folds stratified by label). `None` when a class has fewer items than `folds` or
/// `folds < 2`.
pub fn cross_validated_threshold(
    labels: &[bool],
    scores: &[f64],
    folds: usize,
    seed: u64,
) -> Option<CrossValidated> {
    if folds < 2 || labels.len() != scores.len() {
        return None;
    }
    let (threshold, in_sample) = best_threshold(labels, scores)?;
    // Stratified folds: each class shuffled and dealt round-robin.
    let mut rng = SplitMix64::new(seed);
    let mut fold_of = vec![0usize; labels.len()];
    for class in [false, true] {
        let mut members: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] == class).collect();
        if members.len() < folds {
            return None;
        }
        for i in (1..members.len()).rev() {
            members.swap(i, rng.below(i + 1));
        }
        for (position, &item) in members.iter().enumerate() {
            fold_of[item] = position % folds;
        }
    }
    let mut verdicts = vec![false; labels.len()];
    for fold in 0..folds {
        let train: Vec<usize> = (0..labels.len()).filter(|&i| fold_of[i] != fold).collect();
        let train_labels: Vec<bool> = train.iter().map(|&i| labels[i]).collect();
        let train_scores: Vec<f64> = train.iter().map(|&i| scores[i]).collect();
        let (chosen, _) = best_threshold(&train_labels, &train_scores)?;
        for i in (0..labels.len()).filter(|&i| fold_of[i] == fold) {
            verdicts[i] = scores[i] >= chosen;
        }
    }
    Some(CrossValidated {
        threshold,
        in_sample,
        held_out: balanced_accuracy(labels, &verdicts)?,
        folds,
    })
}

/// Cohen's κ between two raters' categories, `1 − (1 − p_o)/(1 − p_e)`, unweighted
/// (`weighted = false`) or with quadratic weights over the categories' order
/// (`w_ij = (i − j)² / (k − 1)²`; Cohen 1968). Categories are the distinct values of both
/// sides, ordered. `None` with fewer than two items, different lengths, one category only,
/// or when chance agreement is total.
pub fn cohen_kappa(a: &[f64], b: &[f64], weighted: bool) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let mut categories: Vec<f64> = a.iter().chain(b).copied().collect();
    categories.sort_by(f64::total_cmp);
    categories.dedup();
    let k = categories.len();
    if k < 2 {
        return None;
    }
    let index = |v: f64| categories.partition_point(|&c| c < v);
    let n = a.len() as f64;
    let mut observed = vec![vec![0.0; k]; k];
    let (mut row, mut column) = (vec![0.0; k], vec![0.0; k]);
    for (&x, &y) in a.iter().zip(b) {
        let (i, j) = (index(x), index(y));
        observed[i][j] += 1.0 / n;
        row[i] += 1.0 / n;
        column[j] += 1.0 / n;
    }
    let disagreement = |i: usize, j: usize| {
        if weighted {
            let d = i as f64 - j as f64;
            d * d / ((k - 1) * (k - 1)) as f64
        } else {
            f64::from(u8::from(i != j))
        }
    };
    let (mut seen, mut expected) = (0.0, 0.0);
    for i in 0..k {
        for j in 0..k {
            seen += disagreement(i, j) * observed[i][j];
            expected += disagreement(i, j) * row[i] * column[j];
        }
    }
    if expected <= 0.0 {
        return None;
    }
    Some(1.0 - seen / expected)
}

/// Percentile bootstrap interval at `level` of a statistic over `n` items: each of
/// `resamples` draws picks `n` item indices with replacement (seeded SplitMix64) and asks
/// `statistic` for its value on them; draws where it is undefined are skipped. `None` when
/// no draw gave a value.
pub fn bootstrap_statistic(
    n: usize,
    level: f64,
    resamples: usize,
    seed: u64,
    statistic: impl Fn(&[usize]) -> Option<f64>,
) -> Option<Interval> {
    if n == 0 {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let mut indices = vec![0usize; n];
    let mut values = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for slot in &mut indices {
            *slot = rng.below(n);
        }
        if let Some(value) = statistic(&indices).filter(|v| v.is_finite()) {
            values.push(value);
        }
    }
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let alpha = (1.0 - level) / 2.0;
    Some(Interval {
        low: quantile_sorted(&values, alpha),
        high: quantile_sorted(&values, 1.0 - alpha),
    })
}

/// How [`paired_agreement_difference`] tested "the two judges agree with the labels equally
/// often".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairedAgreementTest {
    /// Every item was right (1) or wrong (0) for both judges: McNemar's exact test, the
    /// two-sided binomial sign test on the discordant items (McNemar 1947).
    #[serde(rename = "mcnemar_exact")]
    McNemarExact,
    /// Some item counted half (a pairwise tie): the sign-flip permutation test of the mean
    /// difference, as `compare` tests a metric.
    SignFlip,
}

impl PairedAgreementTest {
    /// The test's name, as printed beside its p-value.
    pub fn label(self) -> &'static str {
        match self {
            PairedAgreementTest::McNemarExact => "exact McNemar",
            PairedAgreementTest::SignFlip => "sign-flip permutation",
        }
    }
}

/// Two judges' agreement with the same labels, item by item: per item each judge scores 1
/// (matches the label), ½ (a pairwise tie) or 0, and the difference is `candidate −
/// baseline` over the items both judges scored.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedAgreementDifference {
    /// Items both judges scored (the pairs).
    pub items: usize,
    /// The baseline judge's mean points over those items.
    pub baseline: f64,
    /// The candidate judge's mean points over those items.
    pub candidate: f64,
    /// `candidate − baseline`.
    pub difference: f64,
    /// Paired percentile bootstrap interval of the difference.
    pub ci95: Option<Interval>,
    /// Items where the baseline scored more points than the candidate.
    pub baseline_better: usize,
    /// Items where the candidate scored more points than the baseline.
    pub candidate_better: usize,
    pub test: PairedAgreementTest,
    /// Two-sided p-value of "no difference"; `None` when no item differs under McNemar's
    /// test (there is nothing to test).
    pub p_value: Option<f64>,
}

/// The paired difference of two judges' per-item points (`baseline[i]` and `candidate[i]`
/// are the same label item): its mean, a seeded paired bootstrap interval at `level`
/// ([`paired_bootstrap_diff_ci`], seed `seed`) and a two-sided p-value — McNemar's exact test
/// when every point is 0 or 1, else the sign-flip test with `permutations` draws (seed
/// `seed + 1`, as `compare` seeds it). `None` when the slices are empty or differ in length.
pub fn paired_agreement_difference(
    baseline: &[f64],
    candidate: &[f64],
    level: f64,
    resamples: usize,
    permutations: usize,
    seed: u64,
) -> Option<PairedAgreementDifference> {
    let items = baseline.len();
    if items == 0 || candidate.len() != items {
        return None;
    }
    let mean = |points: &[f64]| points.iter().sum::<f64>() / items as f64;
    let (baseline_mean, candidate_mean) = (mean(baseline), mean(candidate));
    let pairs = || baseline.iter().zip(candidate);
    let baseline_better = pairs().filter(|(a, b)| a > b).count();
    let candidate_better = pairs().filter(|(a, b)| b > a).count();
    let whole = |p: &f64| *p == 0.0 || *p == 1.0;
    let (test, p_value) = if baseline.iter().chain(candidate).all(whole) {
        (
            PairedAgreementTest::McNemarExact,
            sign_test_p_value(candidate_better, baseline_better),
        )
    } else {
        let differences: Vec<f64> = pairs().map(|(a, b)| b - a).collect();
        (
            PairedAgreementTest::SignFlip,
            paired_sign_flip_p_value(&differences, permutations, seed.wrapping_add(1)),
        )
    };
    Some(PairedAgreementDifference {
        items,
        baseline: baseline_mean,
        candidate: candidate_mean,
        difference: candidate_mean - baseline_mean,
        ci95: paired_bootstrap_diff_ci(baseline, candidate, level, resamples, seed),
        baseline_better,
        candidate_better,
        test,
        p_value,
    })
}

/// How a measured agreement figure stands to the choice of the judge's settings: whether a
/// user whose data is unlike the labelled sets can expect it. Figures recorded before the
/// kind was read as [`FigureKind::InSet`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FigureKind {
    /// Leave one set out: the settings were chosen without any part of the figure's set.
    HeldOutBySet,
    /// The set took part in choosing the settings (another part of it), or it is the task's
    /// only set: no out-of-sample figure exists.
    #[default]
    InSet,
}

impl FigureKind {
    /// `held out by set` or `in-set`, as printed beside a figure.
    pub fn label(self) -> &'static str {
        match self {
            FigureKind::HeldOutBySet => "held out by set",
            FigureKind::InSet => "in-set",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_count_half_and_balanced_accuracy_ignores_class_sizes() {
        let mut pairs = PairwiseAgreement::default();
        pairs.add(1.0, 0.0);
        pairs.add(0.5, 0.5);
        pairs.add(0.0, 1.0);
        assert_eq!(pairs.accuracy(), Some(0.5));
        let mut binary = BinaryAgreement::default();
        for _ in 0..9 {
            binary.add(false, false);
        }
        binary.add(true, false);
        assert_eq!(binary.items(), 10);
        assert_eq!(binary.balanced_accuracy(), Some(0.5));
        let one_class = BinaryAgreement {
            true_negatives: 3,
            ..BinaryAgreement::default()
        };
        assert_eq!(one_class.balanced_accuracy(), None);
        assert_eq!(PairwiseAgreement::default().accuracy(), None);
    }

    #[test]
    fn pairwise_ties_count_half() {
        use PairResult::*;
        assert_eq!(
            pairwise_accuracy(&[Agree, Tie, Disagree, Agree]),
            Some(0.625)
        );
        assert_eq!(PairResult::of(0.5, 0.5), Tie);
        assert_eq!(pairwise_accuracy(&[]), None);
    }

    #[test]
    fn auroc_matches_a_hand_count() {
        // Positives 0.9, 0.5; negatives 0.5, 0.1: pairs (0.9>0.5) 1, (0.9>0.1) 1,
        // (0.5=0.5) ½, (0.5>0.1) 1 → 3.5 / 4 (sklearn.metrics.roc_auc_score agrees).
        let labels = [true, true, false, false];
        let scores = [0.9, 0.5, 0.5, 0.1];
        assert_eq!(auroc(&labels, &scores), Some(0.875));
        assert_eq!(auroc(&[true, true], &[0.1, 0.2]), None);
        let flipped: Vec<bool> = labels.iter().map(|l| !l).collect();
        assert_eq!(auroc(&flipped, &scores), Some(0.125));
    }

    #[test]
    fn balanced_accuracy_ignores_class_sizes() {
        let labels = [false, false, false, false, true];
        assert_eq!(balanced_accuracy(&labels, &[false; 5]), Some(0.5));
        assert_eq!(balanced_accuracy(&[true, true], &[true, true]), None);
    }

    #[test]
    fn threshold_separates_and_cross_validation_is_seeded() {
        let scores: Vec<f64> = (0..20).map(|i| f64::from(i) / 20.0).collect();
        let labels: Vec<bool> = (0..20).map(|i| i >= 12).collect();
        let (threshold, accuracy) = best_threshold(&labels, &scores).unwrap();
        assert_eq!(accuracy, 1.0);
        assert!((threshold - 0.575).abs() < 1e-12, "{threshold}");
        let cv = cross_validated_threshold(&labels, &scores, 4, 9).unwrap();
        assert_eq!(
            cv,
            cross_validated_threshold(&labels, &scores, 4, 9).unwrap()
        );
        assert!(cv.held_out > 0.8 && cv.held_out <= cv.in_sample, "{cv:?}");
        assert_eq!(cross_validated_threshold(&labels, &scores, 30, 9), None);
    }

    #[test]
    fn kappa_matches_published_examples() {
        // Unweighted: 2×2 table [[20, 5], [10, 15]] → p_o 0.7, p_e 0.5, κ 0.4
        // (the Wikipedia "Cohen's kappa" worked example).
        let mut a = Vec::new();
        let mut b = Vec::new();
        for (x, y, count) in [
            (1.0, 1.0, 20),
            (1.0, 0.0, 5),
            (0.0, 1.0, 10),
            (0.0, 0.0, 15),
        ] {
            a.extend(std::iter::repeat_n(x, count));
            b.extend(std::iter::repeat_n(y, count));
        }
        assert!((cohen_kappa(&a, &b, false).unwrap() - 0.4).abs() < 1e-12);
        // Weighted on two categories equals unweighted; identical raters give 1.
        assert!((cohen_kappa(&a, &b, true).unwrap() - 0.4).abs() < 1e-12);
        let grades = [0.0, 1.0, 2.0, 2.0, 1.0];
        assert_eq!(cohen_kappa(&grades, &grades, true), Some(1.0));
        // By hand: two off-by-one disagreements of 5 weigh ¼ each → observed 0.1; margins
        // (.4, .2, .4) on both sides → expected Σ w·r·c = 0.4; κ_w = 1 − 0.1/0.4 = 0.75.
        let w = cohen_kappa(&[0.0, 1.0, 2.0, 2.0, 0.0], &[0.0, 2.0, 2.0, 1.0, 0.0], true);
        assert!((w.unwrap() - 0.75).abs() < 1e-12);
        assert_eq!(cohen_kappa(&[1.0, 1.0], &[1.0, 1.0], false), None);
    }

    #[test]
    fn bootstrap_of_a_statistic_is_seeded_and_brackets_it() {
        let values: Vec<f64> = (0..40).map(|i| f64::from(i % 3)).collect();
        let mean = |ix: &[usize]| Some(ix.iter().map(|&i| values[i]).sum::<f64>() / 40.0);
        let a = bootstrap_statistic(40, 0.95, 500, 3, mean).unwrap();
        assert_eq!(a, bootstrap_statistic(40, 0.95, 500, 3, mean).unwrap());
        assert!(a.low < 0.975 && 0.975 < a.high, "{a:?}");
        assert_eq!(bootstrap_statistic(0, 0.95, 10, 1, mean), None);
    }

    /// Ten binary labels. Judge A is right on items 1–6, judge B on items 1–5 and 7–9; both
    /// miss item 10. Accuracy: A 6/10 = 0.6, B 8/10 = 0.8, difference +0.2. Discordant items:
    /// A alone right on item 6 (1), B alone right on items 7, 8, 9 (3), so n = 4. Exact
    /// McNemar: X ~ Bin(4, ½), P(X ≤ 1) = (C(4,0) + C(4,1)) / 16 = 5/16, two-sided
    /// 2 · 5/16 = 0.625.
    #[test]
    fn mcnemar_by_hand_on_ten_labels() {
        let a = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0];
        let b = [1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0];
        let d = paired_agreement_difference(&a, &b, 0.95, 2000, 10_000, 7).unwrap();
        assert_eq!((d.items, d.baseline_better, d.candidate_better), (10, 1, 3));
        assert!((d.baseline - 0.6).abs() < 1e-12 && (d.candidate - 0.8).abs() < 1e-12);
        assert!((d.difference - 0.2).abs() < 1e-12);
        assert_eq!(d.test, PairedAgreementTest::McNemarExact);
        assert_eq!(serde_json::to_value(d.test).unwrap(), "mcnemar_exact");
        assert!((d.p_value.unwrap() - 0.625).abs() < 1e-12);
        // The bootstrap differences are means of ten values in {−1, 0, 1}: multiples of 0.1
        // between −1 and 1; with p = 0.625 the interval holds 0 as well as the estimate.
        let ci = d.ci95.unwrap();
        assert!(ci.low < 0.0 && 0.2 < ci.high && ci.low >= -1.0 && ci.high <= 1.0);
        // Swapping the judges mirrors everything but the p-value.
        let back = paired_agreement_difference(&b, &a, 0.95, 2000, 10_000, 7).unwrap();
        assert!((back.difference + 0.2).abs() < 1e-12);
        assert_eq!(back.p_value, d.p_value);
        // The same judge twice: nothing discordant, nothing to test.
        let same = paired_agreement_difference(&a, &a, 0.95, 200, 200, 7).unwrap();
        assert_eq!((same.difference, same.p_value), (0.0, None));
        assert_eq!(
            paired_agreement_difference(&a, &b[..9], 0.95, 200, 200, 7),
            None
        );
    }

    #[test]
    fn pairwise_ties_are_tested_by_sign_flips() {
        // A ties on every pair (½ each); B agrees on all eight: +0.5 on each item, so every
        // sign-flip draw but the all-positive one is less extreme and p is small.
        let a = [0.5; 8];
        let b = [1.0; 8];
        let d = paired_agreement_difference(&a, &b, 0.95, 500, 2000, 7).unwrap();
        assert_eq!(d.test, PairedAgreementTest::SignFlip);
        assert_eq!(d.difference, 0.5);
        // Exact p would be 2/256; the Monte-Carlo estimate sits near it.
        assert!(d.p_value.unwrap() < 0.02);
        let ci = d.ci95.unwrap();
        assert_eq!((ci.low, ci.high), (0.5, 0.5));
    }
}
