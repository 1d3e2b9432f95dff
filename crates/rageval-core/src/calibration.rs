//! Calibrated means from a few human labels: prediction-powered inference (PPI) over a
//! judge's scores on every sample and a person's labels on a random subset of them.
//!
//! The labels alone give an unbiased mean with a wide interval; the judge's scores alone a
//! narrow interval around a possibly biased mean. PPI uses the labelled samples to measure
//! the judge's bias and the unlabelled ones to average the judge: with `n` labels `Y` (and
//! the judge's scores `f` on them) and the judge's scores `f̃` on `N` unlabelled samples,
//!
//! ```text
//! θ̂(λ)  = λ·mean(f̃) + mean(Y − λ·f)
//! se(λ)² = λ²·Var(f̃)/N + Var(Y − λ·f)/n          (Var with divisor n, resp. N)
//! λ̂      = clip₀¹( Cov(Y, f) / ((1 + n/N)·Var(f ∪ f̃)) )
//! ```
//!
//! and the 95% interval `θ̂ ± 1.96·se` (a normal approximation). λ = 1 is classical PPI
//! (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, Science 2023); the power-tuned λ̂ is
//! PPI++ (Angelopoulos, Duchi, Zrnic 2024, "PPI++: Efficient Prediction-Powered
//! Inference"), which is never much worse than the labels alone (λ = 0) and narrower when
//! the judge is informative. The estimators follow the reference implementation `ppi_py`
//! (`ppi_mean_ci`, `_calc_lam_glm`): `Cov` with divisor `n`, `Var(f ∪ f̃)` over labelled and
//! unlabelled scores with divisor `n + N − 1`, standard errors with divisor `n` and `N`.
//! The labelled samples must be a uniformly random subset of the samples; the estimand is
//! the mean label over the population the samples stand for.
//!
//! - [`calibrate`]: PPI++, PPI and labels-only estimates, and the judge-only mean.
//! - [`judge_only`]: the judge's mean alone, when there are no labels.
//! - [`labels`]: the labels file as `calibrate` reads it (the lines `judge-check` reads).
//! - [`matching`]: labels matched to a run's samples by id, per metric, with everything
//!   that could not be matched reported.
//!
//! Pure numbers: no file of a run, no judge.

pub mod labels;
pub mod matching;

use serde::{Deserialize, Serialize};

use crate::stats::{Interval, mean};

/// The 0.975 quantile of the standard normal distribution, Φ⁻¹(0.975): the half-width of a
/// 95% normal interval in standard errors.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// Which estimator produced an [`Estimate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    /// Prediction-powered inference with the power-tuned λ̂ (PPI++).
    #[serde(rename = "ppi++")]
    PpiPlusPlus,
    /// Classical prediction-powered inference, λ = 1.
    #[serde(rename = "ppi")]
    Ppi,
    /// The mean of the labels alone (λ = 0): unbiased, the interval PPI has to beat.
    #[serde(rename = "labels_only")]
    LabelsOnly,
    /// The mean of the judge's scores alone: no labels, so any bias of the judge is in it.
    #[serde(rename = "judge_only")]
    JudgeOnly,
}

impl Method {
    /// The name used in files and reports.
    pub fn name(self) -> &'static str {
        match self {
            Method::PpiPlusPlus => "ppi++",
            Method::Ppi => "ppi",
            Method::LabelsOnly => "labels_only",
            Method::JudgeOnly => "judge_only",
        }
    }
}

/// One estimate of a mean with its 95% normal-approximation interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub mean: f64,
    pub ci95: Interval,
    /// Labelled samples used (0 for [`Method::JudgeOnly`]).
    pub n_labels: usize,
    /// Samples used through the judge's score alone: the unlabelled ones (for
    /// [`Method::JudgeOnly`], every scored sample).
    pub n_unlabelled: usize,
    /// The weight of the judge's scores: 0 for labels only, 1 for PPI, λ̂ for PPI++; absent
    /// for the judge-only mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lambda: Option<f64>,
    pub method: Method,
    /// Why the estimate is less than it seems (e.g. every label equal: a zero-width
    /// interval); empty normally.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Every estimate of one mean from the same labels and scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The estimate to report: PPI++.
    pub ppi_plus_plus: Estimate,
    pub ppi: Estimate,
    pub labels_only: Estimate,
    pub judge_only: Estimate,
}

impl Calibration {
    /// The four estimates, PPI++ first.
    pub fn all(&self) -> [&Estimate; 4] {
        [
            &self.ppi_plus_plus,
            &self.ppi,
            &self.labels_only,
            &self.judge_only,
        ]
    }
}

/// Inputs [`calibrate`] cannot use.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    #[error(
        "{labels} labels and {scores} judge scores on them: every label needs the judge's score of the same sample"
    )]
    Unpaired { labels: usize, scores: usize },
    #[error("{labels} usable label(s): a calibrated interval needs at least 2")]
    TooFewLabels { labels: usize },
    #[error("{what} value {index} is {value}, not a finite number")]
    NotFinite {
        what: &'static str,
        index: usize,
        value: f64,
    },
}

const NOTE_NO_UNLABELLED: &str =
    "every scored sample is labelled: the judge adds nothing and the labels alone are the estimate";
const NOTE_CONSTANT_JUDGE: &str =
    "the judge gave every sample the same score: it carries no information, so λ = 0";

/// The PPI++, PPI and labels-only means with their 95% intervals, and the judge-only mean.
///
/// `labels[i]` is the person's label of a sample and `judge_labelled[i]` the judge's score of
/// the same sample; `judge_unlabelled` holds the judge's scores of the samples nobody
/// labelled. Fewer than 2 labels is an error (no spread to estimate). Never NaN: a judge
/// that scores everything alike gets λ = 0, and with no unlabelled sample every method is
/// the labels alone (both said in the estimates' notes).
pub fn calibrate(
    labels: &[f64],
    judge_labelled: &[f64],
    judge_unlabelled: &[f64],
) -> Result<Calibration, CalibrationError> {
    if labels.len() != judge_labelled.len() {
        return Err(CalibrationError::Unpaired {
            labels: labels.len(),
            scores: judge_labelled.len(),
        });
    }
    check_finite("label", labels)?;
    check_finite("judge score of a labelled sample", judge_labelled)?;
    check_finite("judge score of an unlabelled sample", judge_unlabelled)?;
    if labels.len() < 2 {
        return Err(CalibrationError::TooFewLabels {
            labels: labels.len(),
        });
    }
    let data = Paired {
        labels,
        judge_labelled,
        judge_unlabelled,
    };
    let tuned = data.power_tuned_lambda();
    let mut ppi_plus_plus = data.rectified(tuned, Method::PpiPlusPlus);
    if data.judge_is_constant() && !judge_unlabelled.is_empty() {
        ppi_plus_plus.notes.push(NOTE_CONSTANT_JUDGE.to_owned());
    }
    let mut all_scores = judge_labelled.to_vec();
    all_scores.extend_from_slice(judge_unlabelled);
    Ok(Calibration {
        ppi_plus_plus,
        ppi: data.rectified(1.0, Method::Ppi),
        labels_only: data.rectified(0.0, Method::LabelsOnly),
        judge_only: normal_estimate(&all_scores),
    })
}

/// The mean of the judge's scores alone with its 95% normal interval (`mean ± 1.96·sd/√N`,
/// divisor `N`); `None` without scores. It measures the judge, not the labels: a biased
/// judge gives a narrow interval around the wrong mean.
pub fn judge_only(scores: &[f64]) -> Result<Option<Estimate>, CalibrationError> {
    check_finite("judge score", scores)?;
    Ok((!scores.is_empty()).then(|| normal_estimate(scores)))
}

/// The labelled pairs and the unlabelled scores, checked: at least 2 labels, all finite.
struct Paired<'a> {
    labels: &'a [f64],
    judge_labelled: &'a [f64],
    judge_unlabelled: &'a [f64],
}

impl Paired<'_> {
    /// Whether the judge gave every sample, labelled or not, the same score.
    fn judge_is_constant(&self) -> bool {
        let first = self.judge_labelled[0];
        self.judge_labelled
            .iter()
            .chain(self.judge_unlabelled)
            .all(|&score| score == first)
    }

    /// λ̂ = Cov(Y, f) / ((1 + n/N)·Var(f ∪ f̃)), clipped to [0, 1]; 0 when there is no
    /// unlabelled sample or the judge's scores do not vary.
    fn power_tuned_lambda(&self) -> f64 {
        let n = self.labels.len() as f64;
        let unlabelled = self.judge_unlabelled.len() as f64;
        if self.judge_unlabelled.is_empty() || self.judge_is_constant() {
            return 0.0;
        }
        let covariance = population_covariance(self.labels, self.judge_labelled);
        let all: Vec<f64> = self
            .judge_labelled
            .iter()
            .chain(self.judge_unlabelled)
            .copied()
            .collect();
        let variance = sum_of_squares(&all) / (all.len() - 1) as f64;
        (covariance / ((1.0 + n / unlabelled) * variance)).clamp(0.0, 1.0)
    }

    /// θ̂(λ) and its interval. Without unlabelled samples λ is 0: the labels alone.
    fn rectified(&self, lambda: f64, method: Method) -> Estimate {
        let mut notes = Vec::new();
        let lambda = if self.judge_unlabelled.is_empty() {
            if method != Method::LabelsOnly {
                notes.push(NOTE_NO_UNLABELLED.to_owned());
            }
            0.0
        } else {
            lambda
        };
        let n = self.labels.len() as f64;
        let rectifier: Vec<f64> = self
            .labels
            .iter()
            .zip(self.judge_labelled)
            .map(|(y, f)| y - lambda * f)
            .collect();
        let mut point = average(&rectifier);
        let mut variance = sum_of_squares(&rectifier) / n / n;
        if !self.judge_unlabelled.is_empty() {
            let unlabelled = self.judge_unlabelled.len() as f64;
            point += lambda * average(self.judge_unlabelled);
            variance +=
                lambda * lambda * sum_of_squares(self.judge_unlabelled) / unlabelled / unlabelled;
        }
        if variance == 0.0 {
            notes.push(format!(
                "the {} labelled values do not vary, so their spread cannot be estimated: the \
                 interval has zero width and understates the uncertainty",
                self.labels.len()
            ));
        }
        Estimate {
            ci95: interval(point, variance.sqrt()),
            mean: point,
            n_labels: self.labels.len(),
            n_unlabelled: self.judge_unlabelled.len(),
            lambda: Some(lambda),
            method,
            notes,
        }
    }
}

/// The judge-only mean of non-empty `scores` with a normal interval (divisor n).
fn normal_estimate(scores: &[f64]) -> Estimate {
    let point = average(scores);
    let n = scores.len() as f64;
    let standard_error = (sum_of_squares(scores) / n).sqrt() / n.sqrt();
    Estimate {
        mean: point,
        ci95: interval(point, standard_error),
        n_labels: 0,
        n_unlabelled: scores.len(),
        lambda: None,
        method: Method::JudgeOnly,
        notes: Vec::new(),
    }
}

fn interval(point: f64, standard_error: f64) -> Interval {
    Interval {
        low: point - Z_95 * standard_error,
        high: point + Z_95 * standard_error,
    }
}

/// The mean of a slice this module has checked is non-empty.
fn average(values: &[f64]) -> f64 {
    mean(values).unwrap_or(0.0)
}

/// Σ (x − x̄)², by two passes (exactly 0 when every value is equal).
fn sum_of_squares(values: &[f64]) -> f64 {
    let centre = average(values);
    values.iter().map(|x| (x - centre) * (x - centre)).sum()
}

/// Σ (x − x̄)(y − ȳ) / n over paired slices of equal, non-zero length.
fn population_covariance(x: &[f64], y: &[f64]) -> f64 {
    let (x_centre, y_centre) = (average(x), average(y));
    x.iter()
        .zip(y)
        .map(|(a, b)| (a - x_centre) * (b - y_centre))
        .sum::<f64>()
        / x.len() as f64
}

fn check_finite(what: &'static str, values: &[f64]) -> Result<(), CalibrationError> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(CalibrationError::NotFinite {
            what,
            index,
            value: values[index],
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64) {
        assert!(
            (actual - expected).abs() < 1e-12,
            "{actual} is not {expected}"
        );
    }

    /// Worked by hand, with `ppi_py`'s formulas (`ppi_mean_ci`, `_calc_lam_glm`, `alpha=0.05`):
    ///
    /// Labels Y = [1, 0, 1, 1], the judge on them f = [0.8, 0.4, 0.6, 1.0], the judge on
    /// the unlabelled samples f̃ = [0.2, 0.4, 0.6, 0.8]; n = N = 4.
    /// - Ȳ = 0.75, f̄ = 0.7, mean(f̃) = 0.5.
    /// - Cov(Y, f) = (0.25·0.1 + (−0.75)(−0.3) + 0.25·(−0.1) + 0.25·0.3) / 4 = 0.3 / 4 = 0.075.
    /// - f ∪ f̃ has mean 0.6 and squared deviations 0.04, 0.04, 0, 0.16, 0.16, 0.04, 0, 0.04
    ///   (sum 0.48): Var = 0.48 / 7.
    /// - λ̂ = 0.075 / ((1 + 4/4) · 0.48/7) = 0.525 / 0.96 = 0.546875 (= 35/64).
    /// - θ̂ = λ̂·0.5 + (0.75 − λ̂·0.7) = 0.75 − 0.2·λ̂ = 0.640625.
    /// - Var(f̃) = (0.09 + 0.01 + 0.01 + 0.09) / 4 = 0.05; Var(Y) = 0.1875; Var(f) = 0.05;
    ///   Var(Y − λ̂f) = 0.1875 − 2·λ̂·0.075 + λ̂²·0.05 = 0.12042236328125.
    /// - se² = λ̂²·0.05/4 + 0.12042236328125/4 = 0.0037384033203125 + 0.0301055908203125
    ///   = 0.033843994140625; se = 0.1839673724893…; interval 0.640625 ± 1.959964·se
    ///   = [0.2800556, 1.0011944].
    /// - PPI (λ = 1): θ̂ = 0.5 + (0.75 − 0.7) = 0.55; Y − f = [0.2, −0.4, 0.4, 0] has
    ///   variance 0.35/4 = 0.0875, so se² = 0.05/4 + 0.0875/4 = 0.034375.
    /// - Labels only: 0.75, se² = 0.1875/4 = 0.046875.
    /// - Judge only: the 8 scores' mean 0.6, se² = (0.48/8)/8 = 0.0075.
    #[test]
    fn hand_computed_example() {
        let result = calibrate(
            &[1.0, 0.0, 1.0, 1.0],
            &[0.8, 0.4, 0.6, 1.0],
            &[0.2, 0.4, 0.6, 0.8],
        )
        .unwrap();
        let check = |estimate: &Estimate, mean: f64, variance: f64| {
            close(estimate.mean, mean);
            close(estimate.ci95.low, mean - Z_95 * variance.sqrt());
            close(estimate.ci95.high, mean + Z_95 * variance.sqrt());
        };
        let tuned = &result.ppi_plus_plus;
        close(tuned.lambda.unwrap(), 0.546875);
        check(tuned, 0.640625, 0.033843994140625);
        close(tuned.ci95.low, 0.280_055_575_590_463_9);
        assert_eq!((tuned.n_labels, tuned.n_unlabelled), (4, 4));
        assert_eq!(tuned.method, Method::PpiPlusPlus);
        assert!(tuned.notes.is_empty());
        check(&result.ppi, 0.55, 0.034375);
        assert_eq!(result.ppi.lambda, Some(1.0));
        check(&result.labels_only, 0.75, 0.046875);
        assert_eq!(result.labels_only.lambda, Some(0.0));
        check(&result.judge_only, 0.6, 0.0075);
        assert_eq!(result.judge_only.lambda, None);
        assert_eq!(result.judge_only.n_unlabelled, 8);
    }

    #[test]
    fn serialises_with_the_summary_field_names() {
        let result = calibrate(&[1.0, 0.0], &[0.9, 0.1], &[0.5]).unwrap();
        let json = serde_json::to_value(&result.ppi_plus_plus).unwrap();
        for field in [
            "mean",
            "ci95",
            "n_labels",
            "n_unlabelled",
            "lambda",
            "method",
        ] {
            assert!(json.get(field).is_some(), "{field} missing in {json}");
        }
        assert_eq!(json["method"], "ppi++");
        assert!(json["ci95"]["low"].is_number() && json["ci95"]["high"].is_number());
        let back: Estimate = serde_json::from_value(json).unwrap();
        assert_eq!(back, result.ppi_plus_plus);
        assert_eq!(
            serde_json::to_value(&result.judge_only).unwrap()["method"],
            "judge_only"
        );
    }

    fn assert_finite(calibration: &Calibration) {
        for estimate in calibration.all() {
            assert!(
                estimate.mean.is_finite()
                    && estimate.ci95.low.is_finite()
                    && estimate.ci95.high.is_finite()
                    && estimate.lambda.is_none_or(f64::is_finite),
                "{estimate:?}"
            );
        }
    }

    #[test]
    fn fewer_than_two_labels_is_an_error_not_nan() {
        assert_eq!(
            calibrate(&[1.0], &[0.5], &[0.2, 0.3]),
            Err(CalibrationError::TooFewLabels { labels: 1 })
        );
        assert_eq!(
            calibrate(&[], &[], &[0.2]),
            Err(CalibrationError::TooFewLabels { labels: 0 })
        );
        assert_eq!(
            calibrate(&[1.0, 0.0], &[0.5], &[]),
            Err(CalibrationError::Unpaired {
                labels: 2,
                scores: 1
            })
        );
        let error = calibrate(&[1.0, f64::NAN], &[0.5, 0.5], &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "label value 1 is NaN, not a finite number"
        );
        assert_eq!(judge_only(&[]), Ok(None));
    }

    #[test]
    fn a_judge_that_scores_everything_alike_gets_lambda_zero() {
        let result = calibrate(&[1.0, 0.0, 1.0], &[0.5; 3], &[0.5; 5]).unwrap();
        assert_finite(&result);
        assert_eq!(result.ppi_plus_plus.lambda, Some(0.0));
        assert_eq!(result.ppi_plus_plus.mean, result.labels_only.mean);
        assert_eq!(result.ppi_plus_plus.ci95, result.labels_only.ci95);
        assert!(result.ppi_plus_plus.notes[0].contains("same score"));
        // Classical PPI is still defined: the constant cancels out.
        close(result.ppi.mean, 2.0 / 3.0);
    }

    #[test]
    fn equal_labels_give_a_zero_width_interval_with_a_note() {
        let result = calibrate(&[1.0; 4], &[0.9, 0.7, 0.8, 0.6], &[0.5, 0.9]).unwrap();
        assert_finite(&result);
        // Cov(Y, f) = 0, so λ̂ = 0 and PPI++ is the labels alone.
        assert_eq!(result.ppi_plus_plus.lambda, Some(0.0));
        assert_eq!(
            result.ppi_plus_plus.ci95,
            Interval {
                low: 1.0,
                high: 1.0
            }
        );
        assert!(result.ppi_plus_plus.notes[0].contains("do not vary"));
        assert!(result.labels_only.notes[0].contains("do not vary"));
        assert!(result.ppi.notes.is_empty());
    }

    #[test]
    fn every_sample_labelled_means_labels_only() {
        // N = n: no unlabelled sample, so the judge adds nothing.
        let result = calibrate(&[1.0, 0.0, 1.0], &[0.9, 0.2, 0.7], &[]).unwrap();
        assert_finite(&result);
        for estimate in [&result.ppi_plus_plus, &result.ppi] {
            assert_eq!(estimate.lambda, Some(0.0));
            assert_eq!(estimate.mean, result.labels_only.mean);
            assert_eq!(estimate.ci95, result.labels_only.ci95);
            assert_eq!(estimate.n_unlabelled, 0);
            assert!(estimate.notes[0].contains("every scored sample is labelled"));
        }
        assert!(result.labels_only.notes.is_empty());
        assert_eq!(result.judge_only.n_unlabelled, 3);
    }

    #[test]
    fn lambda_is_clipped_to_the_unit_interval() {
        // A judge that runs against the labels: Cov < 0, λ̂ clipped to 0.
        let against = calibrate(&[1.0, 0.0, 1.0, 0.0], &[0.1, 0.9, 0.2, 0.8], &[0.5, 0.4]);
        assert_eq!(against.unwrap().ppi_plus_plus.lambda, Some(0.0));
        // Labels that move twice as far as the judge: Cov > Var, λ̂ clipped to 1.
        let steep = calibrate(&[1.0, 0.0, 1.0, 0.0], &[0.7, 0.3, 0.7, 0.3], &[0.5; 400]);
        assert_eq!(steep.unwrap().ppi_plus_plus.lambda, Some(1.0));
    }
}
