//! PPI++ against a known truth: a synthetic judge with bias and noise scores every sample,
//! labels come from the truth on a random subset, and the 95% interval must cover the true
//! mean in 93–97% of 1,000 seeded trials per label budget — narrower than the labels alone
//! when the judge is informative, and no worse than them when it is not.

use rageval_core::calibration::{Calibration, calibrate};
use rageval_core::stats::SplitMix64;

/// Unlabelled samples per trial.
const UNLABELLED: usize = 1000;
const TRIALS: usize = 1000;

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut SplitMix64) -> f64 {
    let radius = (-2.0 * (1.0 - rng.unit()).ln()).sqrt();
    radius * (std::f64::consts::TAU * rng.unit()).cos()
}

/// A sample: its binary label and the judge's score.
type Draw = fn(&mut SplitMix64) -> (f64, f64);

/// Quality q ~ U(0, 1); the person says good with probability q (so the true mean is 0.5);
/// the judge scores 0.3 + 0.6·q plus noise of sd 0.15, clipped to [0, 1]: informative,
/// biased upwards by about 0.1.
fn informative(rng: &mut SplitMix64) -> (f64, f64) {
    let quality = rng.unit();
    let label = f64::from(u8::from(rng.unit() < quality));
    let score = (0.3 + 0.6 * quality + 0.15 * normal(rng)).clamp(0.0, 1.0);
    (label, score)
}

/// The person says good with probability 0.3 (true mean 0.3); the judge's score is
/// uniform and unrelated to the label.
fn uninformative(rng: &mut SplitMix64) -> (f64, f64) {
    let label = f64::from(u8::from(rng.unit() < 0.3));
    (label, rng.unit())
}

/// Figures over the trials of one label budget.
#[derive(Debug, Default)]
struct Tally {
    ppi_plus_plus_covers: usize,
    labels_only_covers: usize,
    judge_only_covers: usize,
    width_ratio_sum: f64,
    lambda_sum: f64,
}

fn simulate(draw: Draw, truth: f64, labels: usize, seed: u64) -> Tally {
    let mut rng = SplitMix64::new(seed);
    let mut tally = Tally::default();
    let width = |e: &rageval_core::calibration::Estimate| e.ci95.high - e.ci95.low;
    let covers =
        |e: &rageval_core::calibration::Estimate| e.ci95.low <= truth && truth <= e.ci95.high;
    for _ in 0..TRIALS {
        let (label, judged): (Vec<f64>, Vec<f64>) = (0..labels).map(|_| draw(&mut rng)).unzip();
        let unlabelled: Vec<f64> = (0..UNLABELLED).map(|_| draw(&mut rng).1).collect();
        let Calibration {
            ppi_plus_plus,
            labels_only,
            judge_only,
            ..
        } = calibrate(&label, &judged, &unlabelled).expect("at least 2 finite labels");
        tally.ppi_plus_plus_covers += usize::from(covers(&ppi_plus_plus));
        tally.labels_only_covers += usize::from(covers(&labels_only));
        tally.judge_only_covers += usize::from(covers(&judge_only));
        tally.width_ratio_sum += width(&ppi_plus_plus) / width(&labels_only);
        tally.lambda_sum += ppi_plus_plus.lambda.expect("PPI++ has a λ");
    }
    tally
}

fn share(count: usize) -> f64 {
    count as f64 / TRIALS as f64
}

#[test]
fn ppi_plus_plus_covers_the_truth_and_beats_labels_alone_with_an_informative_judge() {
    for (labels, seed) in [(50, 11), (100, 12), (200, 13)] {
        let tally = simulate(informative, 0.5, labels, seed);
        let coverage = share(tally.ppi_plus_plus_covers);
        let width_ratio = tally.width_ratio_sum / TRIALS as f64;
        // Shown with `--nocapture`: the figures docs/calibration.md quotes.
        println!("informative judge, n = {labels}: {tally:?}");
        assert!(
            (0.93..=0.97).contains(&coverage),
            "n = {labels}: PPI++ covered the true mean in {coverage} of trials ({tally:?})"
        );
        assert!(
            width_ratio < 0.95,
            "n = {labels}: PPI++ is {width_ratio} as wide as the labels alone ({tally:?})"
        );
        assert!(tally.lambda_sum / TRIALS as f64 > 0.5, "{tally:?}");
        // The judge alone is biased: its narrow interval almost never holds the truth.
        assert!(share(tally.judge_only_covers) < 0.05, "{tally:?}");
        assert!(share(tally.labels_only_covers) > 0.92, "{tally:?}");
    }
}

#[test]
fn an_uninformative_judge_gets_lambda_near_zero_and_the_labels_interval() {
    let tally = simulate(uninformative, 0.3, 100, 14);
    let coverage = share(tally.ppi_plus_plus_covers);
    let mean_lambda = tally.lambda_sum / TRIALS as f64;
    let width_ratio = tally.width_ratio_sum / TRIALS as f64;
    println!("uninformative judge, n = 100: {tally:?}");
    assert!((0.93..=0.97).contains(&coverage), "{tally:?}");
    assert!(mean_lambda < 0.1, "mean λ̂ {mean_lambda} ({tally:?})");
    assert!(
        (0.97..=1.01).contains(&width_ratio),
        "PPI++ is {width_ratio} as wide as the labels alone ({tally:?})"
    );
}
