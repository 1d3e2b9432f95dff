//! Which samples a report page lists. Up to [`EVERY_SAMPLE_UP_TO`] samples it lists every
//! one; above that, the samples a reader acts on — every metric's worst and best, the failed
//! ones, and a seeded random sample — so a 100,000-sample run's report.html stays a page a
//! browser opens. `results.jsonl` and `results.xlsx` keep every sample, and `rageval serve`
//! pages through them; this module only chooses, it never drops data from a file.

use std::collections::HashSet;

use crate::RunData;

/// Runs up to this many samples list every sample in report.html.
pub const EVERY_SAMPLE_UP_TO: usize = 2_000;
/// Lowest and highest scores listed per metric in a large run.
const EXTREMES_PER_METRIC: usize = 25;
/// Samples with a failed cell listed in a large run (the summary counts them all).
const FAILED_LISTED: usize = 100;
/// Samples drawn at random (seeded by the run's bootstrap seed) in a large run.
const RANDOM_LISTED: usize = 200;

/// The samples a page lists, as journal indices in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportSamples {
    /// Journal indices of the listed samples, in the caller's order.
    pub listed: Vec<usize>,
    /// How many samples the run has.
    pub total: usize,
}

impl ReportSamples {
    /// A sentence for the page when it lists fewer samples than the run has.
    pub fn note(&self) -> Option<String> {
        (self.listed.len() < self.total).then(|| {
            format!(
                "This run has {} samples; this page lists {} of them: each metric's \
                 {EXTREMES_PER_METRIC} lowest and highest scores, up to {FAILED_LISTED} \
                 samples with a failed cell and {RANDOM_LISTED} drawn at random (seeded). \
                 Every sample is in results.jsonl and results.xlsx, and `rageval serve` \
                 pages through them.",
                self.total,
                self.listed.len()
            )
        })
    }
}

/// The samples of `run` a page lists, kept in `order` (journal indices, e.g. the dataset's
/// order). Every sample when the run is small; the samples that matter when it is large.
pub fn report_samples(run: &RunData, order: &[usize]) -> ReportSamples {
    let total = order.len();
    if total <= EVERY_SAMPLE_UP_TO {
        return ReportSamples {
            listed: order.to_vec(),
            total,
        };
    }
    let index = run.sample_index();
    let mut chosen: HashSet<usize> = HashSet::new();
    for metric in run.metric_names() {
        let mut scored: Vec<(f64, usize)> = run
            .scores(&metric)
            .into_iter()
            .filter_map(|(id, value)| Some((value, *index.get(id)?)))
            .collect();
        // Ties broken by journal index, so the choice does not depend on hash order.
        scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        chosen.extend(scored.iter().take(EXTREMES_PER_METRIC).map(|s| s.1));
        chosen.extend(scored.iter().rev().take(EXTREMES_PER_METRIC).map(|s| s.1));
    }
    let mut failed: Vec<usize> = run
        .records
        .iter()
        .filter(|r| matches!(r.outcome, rageval_core::Outcome::Failed { .. }))
        .filter_map(|r| index.get(r.sample_id.as_str()).copied())
        .collect();
    failed.sort_unstable();
    failed.dedup();
    chosen.extend(failed.into_iter().take(FAILED_LISTED));
    let seed = run.summary.bootstrap.seed;
    let mut drawn: Vec<(u64, usize)> = run
        .sample_ids()
        .into_iter()
        .enumerate()
        .map(|(at, id)| (draw_key(seed, id), at))
        .collect();
    drawn.sort_unstable();
    chosen.extend(drawn.into_iter().take(RANDOM_LISTED).map(|d| d.1));
    ReportSamples {
        listed: order
            .iter()
            .copied()
            .filter(|i| chosen.contains(i))
            .collect(),
        total,
    }
}

/// A sample's place in the seeded random draw: FNV-1a of the id mixed with the seed
/// (SplitMix64's finaliser), stable across platforms and Rust versions.
fn draw_key(seed: u64, id: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in id.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = hash ^ seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use rageval_core::{Evidence, Outcome};

    use super::*;
    use crate::testing::write_run;

    /// A finished run with metric `m` scoring sample `q{i}` at `scores[i]`; the last sample's
    /// cell failed when `failed_last`.
    fn run_with_scores(scores: &[f64], failed_last: bool) -> (tempfile::TempDir, RunData) {
        let dir = tempfile::tempdir().unwrap();
        let results: Vec<(String, &str, Outcome)> = scores
            .iter()
            .enumerate()
            .map(|(i, &value)| {
                let outcome = match failed_last && i + 1 == scores.len() {
                    true => Outcome::Failed {
                        error: "judge answer never parsed".into(),
                    },
                    false => Outcome::Score {
                        value,
                        evidence: Evidence::default(),
                    },
                };
                (format!("q{i}"), "m", outcome)
            })
            .collect();
        write_run(dir.path(), "sha", &results);
        let run = RunData::load(dir.path()).unwrap();
        (dir, run)
    }

    #[test]
    fn a_small_run_lists_every_sample_in_the_given_order() {
        let (_dir, run) = run_with_scores(&[0.5, 0.1, 0.9], false);
        let listed = report_samples(&run, &[2, 0, 1]);
        assert_eq!(listed.listed, vec![2, 0, 1]);
        assert_eq!(listed.note(), None);
    }

    #[test]
    fn a_large_run_lists_the_extremes_the_failed_and_a_seeded_draw() {
        let n = EVERY_SAMPLE_UP_TO * 3;
        // Sample i scores i / n, so the extremes are the first and last indices.
        let scores: Vec<f64> = (0..n).map(|i| i as f64 / n as f64).collect();
        let (_dir, run) = run_with_scores(&scores, true);
        let order: Vec<usize> = (0..n).collect();
        let listed = report_samples(&run, &order);
        // The last sample failed: the highest scores are the 25 before it.
        for i in (0..EXTREMES_PER_METRIC).chain(n - 1 - EXTREMES_PER_METRIC..n) {
            assert!(listed.listed.contains(&i), "extreme {i} listed");
        }
        // 25 lowest + 25 highest + 1 failed + 200 drawn, less the drawn ones counted twice.
        assert!(listed.listed.len() <= 2 * EXTREMES_PER_METRIC + 1 + RANDOM_LISTED);
        assert!(listed.listed.len() > RANDOM_LISTED);
        assert!(
            listed.listed.contains(&(n - 1)),
            "the failed sample is listed"
        );
        assert!(listed.listed.windows(2).all(|w| w[0] < w[1]), "order kept");
        assert_eq!(report_samples(&run, &order), listed, "the draw is seeded");
        let note = listed.note().unwrap();
        assert!(note.contains(&format!("{n} samples")), "{note}");
    }

    // Computed independently (FNV-1a then SplitMix64 in Python) for seed 1, id "q0".
    const DRAW_KEY_1_Q0: u64 = 2_635_174_302_946_534_914;

    #[test]
    fn draw_keys_are_stable() {
        // Pinned so a platform or toolchain change cannot move the draw silently.
        assert_eq!(draw_key(1, "q0"), DRAW_KEY_1_Q0);
        assert_ne!(draw_key(0, "a"), draw_key(1, "a"));
        assert_ne!(draw_key(0, "a"), draw_key(0, "b"));
    }
}
