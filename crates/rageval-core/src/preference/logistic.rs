//! Logistic regression on one covariate, fitted by Newton's method: `pairwise` fits a
//! version's outcome (1 won, ½ tied, 0 lost) on the log ratio of the two answers' lengths,
//! and reads the fitted probability at a ratio of 1 — the win rate with length held equal.
//!
//! The model is `P(y = 1 | x) = σ(b₀ + b₁·x)`. Outcomes of ½ enter the likelihood as half a
//! success and half a failure (a quasi-binomial fit), which keeps it concave, so Newton's
//! method from (0, 0) climbs to its one maximum when there is one. There is none when the
//! outcomes are separated by `x` (every longer answer won): the coefficients then run off
//! to infinity, and the fit says so instead of returning a number.

/// Newton steps at most; a fit that has a maximum reaches it in under 20.
const MAX_STEPS: usize = 100;
/// Stop when no coefficient moves more than this in one step.
const TOLERANCE: f64 = 1e-10;
/// A coefficient past this means the fit is running off to infinity: σ(40) is 1 − 4e-18.
const DIVERGED: f64 = 40.0;

/// A fitted `σ(intercept + slope·x)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogisticFit {
    pub intercept: f64,
    pub slope: f64,
}

impl LogisticFit {
    /// The fitted probability at `x`.
    pub fn probability(&self, x: f64) -> f64 {
        sigmoid(self.intercept + self.slope * x)
    }
}

/// Why a logistic fit has no finite maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoFit {
    /// No data, or `x` and `y` of different lengths.
    Empty,
    /// Every `x` is the same, so the slope is not determined.
    NoSpread,
    /// The outcomes are separated by `x` (or all equal): the maximum is at infinity.
    Separated,
}

impl NoFit {
    /// The reason in words.
    pub fn words(self) -> &'static str {
        match self {
            NoFit::Empty => "no outcomes to fit",
            NoFit::NoSpread => "every question has the same length ratio",
            NoFit::Separated => {
                "the outcomes are separated by length, so the fit has no finite maximum"
            }
        }
    }
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// Fits `σ(b₀ + b₁·x)` to outcomes `y` in [0, 1] by Newton's method (iteratively
/// reweighted least squares): with `p_i = σ(b₀ + b₁·x_i)` and weights `w_i = p_i(1 − p_i)`,
/// each step solves `(Σ w_i [1, x_i]ᵀ[1, x_i]) Δ = Σ (y_i − p_i) [1, x_i]ᵀ`.
pub fn fit_logistic(x: &[f64], y: &[f64]) -> Result<LogisticFit, NoFit> {
    if x.is_empty() || x.len() != y.len() {
        return Err(NoFit::Empty);
    }
    let first = x[0];
    if x.iter().all(|v| (v - first).abs() < 1e-12) {
        return Err(NoFit::NoSpread);
    }
    let (mut b0, mut b1) = (0.0_f64, 0.0_f64);
    for _ in 0..MAX_STEPS {
        let (mut g0, mut g1, mut h00, mut h01, mut h11) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (&xi, &yi) in x.iter().zip(y) {
            let p = sigmoid(b0 + b1 * xi);
            let w = p * (1.0 - p);
            g0 += yi - p;
            g1 += (yi - p) * xi;
            h00 += w;
            h01 += w * xi;
            h11 += w * xi * xi;
        }
        let determinant = h00 * h11 - h01 * h01;
        if determinant <= f64::EPSILON * (h00 * h11).max(f64::MIN_POSITIVE) {
            return Err(NoFit::Separated);
        }
        let step0 = (h11 * g0 - h01 * g1) / determinant;
        let step1 = (h00 * g1 - h01 * g0) / determinant;
        b0 += step0;
        b1 += step1;
        if !b0.is_finite() || !b1.is_finite() || b0.abs() > DIVERGED || b1.abs() > DIVERGED {
            return Err(NoFit::Separated);
        }
        if step0.abs().max(step1.abs()) < TOLERANCE {
            return Ok(LogisticFit {
                intercept: b0,
                slope: b1,
            });
        }
    }
    Err(NoFit::Separated)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand: with a 0/1 covariate the model is saturated, so the fit reproduces
    /// each group's share. At x = 0 the outcomes are 1, 0, 1 (share 2/3, so b₀ = ln 2); at
    /// x = 1 they are 1, 1, 1, 0 (share 3/4, so b₀ + b₁ = ln 3 and b₁ = ln 3/2).
    #[test]
    fn a_saturated_fit_reproduces_each_groups_share() {
        let x = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0];
        let y = [1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0];
        let fit = fit_logistic(&x, &y).unwrap();
        assert!((fit.intercept - 2f64.ln()).abs() < 1e-9, "{fit:?}");
        assert!((fit.slope - 1.5f64.ln()).abs() < 1e-9, "{fit:?}");
        assert!((fit.probability(0.0) - 2.0 / 3.0).abs() < 1e-9);
    }

    /// Ties count half: at x = 0 a win and a tie (share 3/4), at x = 1 a tie and a loss
    /// (share 1/4), so b₀ = ln 3 and b₁ = ln(1/3) − ln 3 = −2 ln 3.
    #[test]
    fn ties_count_as_half_a_win() {
        let fit = fit_logistic(&[0.0, 0.0, 1.0, 1.0], &[1.0, 0.5, 0.5, 0.0]).unwrap();
        assert!((fit.intercept - 3f64.ln()).abs() < 1e-9, "{fit:?}");
        assert!((fit.slope + 2.0 * 3f64.ln()).abs() < 1e-9, "{fit:?}");
    }

    #[test]
    fn no_finite_maximum_is_said_not_returned() {
        // Every longer answer won, every shorter one lost.
        assert_eq!(
            fit_logistic(&[-1.0, -0.5, 0.5, 1.0], &[0.0, 0.0, 1.0, 1.0]),
            Err(NoFit::Separated)
        );
        assert_eq!(fit_logistic(&[0.3, 0.3], &[1.0, 0.0]), Err(NoFit::NoSpread));
        assert_eq!(fit_logistic(&[], &[]), Err(NoFit::Empty));
        assert_eq!(fit_logistic(&[1.0], &[]), Err(NoFit::Empty));
    }
}
