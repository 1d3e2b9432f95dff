//! Which samples a report page lists. Up to [`EVERY_SAMPLE_UP_TO`] samples it lists every
//! one; above that, the samples a reader acts on — every metric's worst and best, the failed
//! ones, and a seeded random sample — so a 100,000-sample run's report.html stays a page a
//! browser opens. `results.jsonl` and `results.xlsx` keep every sample, and `rageval serve`
//! pages through them; this module only chooses, it never drops data from a file.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

use crate::{JournalIndex, RunData, RunInfo};

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
    let journal = JournalIndex::of_records(&run.records);
    choose_samples(&journal, &run.info(), order)
}

/// [`report_samples`] from a run's journal index: each metric's extremes, the failed and
/// the draw are chosen in one pass each, holding no more than they keep.
pub(crate) fn choose_samples(
    journal: &JournalIndex,
    run: &RunInfo,
    order: &[usize],
) -> ReportSamples {
    let total = order.len();
    if total <= EVERY_SAMPLE_UP_TO {
        return ReportSamples {
            listed: order.to_vec(),
            total,
        };
    }
    let mut chosen: HashSet<usize> = HashSet::new();
    for metric in journal.metric_names(&run.summary.metric_order) {
        // Ties broken by journal index, so the choice does not depend on hash order.
        let scored = || {
            journal
                .scores(&metric)
                .map(|(at, value)| (Total(value), at))
        };
        chosen.extend(
            smallest(scored(), EXTREMES_PER_METRIC)
                .into_iter()
                .map(|s| s.1),
        );
        let highest = smallest(scored().map(Reverse), EXTREMES_PER_METRIC);
        chosen.extend(highest.into_iter().map(|s| s.0.1));
    }
    chosen.extend(journal.failed().take(FAILED_LISTED));
    let seed = run.summary.bootstrap.seed;
    let drawn = (0..journal.len()).map(|at| (draw_key(seed, journal.id(at)), at));
    chosen.extend(smallest(drawn, RANDOM_LISTED).into_iter().map(|d| d.1));
    ReportSamples {
        listed: order
            .iter()
            .copied()
            .filter(|i| chosen.contains(i))
            .collect(),
        total,
    }
}

/// The `k` smallest of `items`, in ascending order, holding no more than `k` at a time.
pub(crate) fn smallest<T: Ord>(items: impl Iterator<Item = T>, k: usize) -> Vec<T> {
    let mut kept = BinaryHeap::with_capacity(k + 1);
    for item in items {
        kept.push(item);
        if kept.len() > k {
            kept.pop();
        }
    }
    kept.into_sorted_vec()
}

/// A score ordered by [`f64::total_cmp`], so scores can be keys.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Total(pub f64);

impl PartialEq for Total {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Total {}

impl PartialOrd for Total {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Total {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
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

    /// The choice as it was made before the journal was streamed: every score sorted, every
    /// failed record and every draw listed. The bounded choice must pick the same samples.
    fn chosen_by_sorting_everything(run: &RunData, order: &[usize]) -> Vec<usize> {
        let index = run.sample_index();
        let mut chosen = HashSet::new();
        for metric in run.metric_names() {
            let mut scored: Vec<(f64, usize)> = run
                .scores(&metric)
                .into_iter()
                .map(|(id, value)| (value, index[id]))
                .collect();
            scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            chosen.extend(scored.iter().take(EXTREMES_PER_METRIC).map(|s| s.1));
            chosen.extend(scored.iter().rev().take(EXTREMES_PER_METRIC).map(|s| s.1));
        }
        let mut failed: Vec<usize> = run
            .records
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Failed { .. }))
            .map(|r| index[r.sample_id.as_str()])
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
        order
            .iter()
            .copied()
            .filter(|i| chosen.contains(i))
            .collect()
    }

    #[test]
    fn the_bounded_choice_is_the_choice_of_sorting_every_score() {
        // Scores on a coarse grid (many ties, also at the extremes), more failed samples
        // than are listed, cells journaled twice (the later line counts), and a journal
        // whose order is neither the samples' nor the dataset's.
        let mut rng = rageval_core::stats::SplitMix64::new(3);
        let mut grid = || (rng.unit() * 20.0).floor() / 20.0;
        let mut results: Vec<(u64, (String, &str, Outcome))> = Vec::new();
        for i in 0..5_000u64 {
            let id = format!("s{i}");
            let key = draw_key(9, &id);
            results.push((key, (id.clone(), "m", Outcome::bare(grid()))));
            let k = match i % 33 {
                0 => Outcome::failed("judge down"),
                7 => Outcome::undefined("no reference"),
                _ => Outcome::bare(grid()),
            };
            results.push((key.rotate_left(7), (id.clone(), "k", k)));
            if i % 50 == 0 {
                results.push((u64::MAX - i, (id, "m", Outcome::bare(1.0))));
            }
        }
        results.sort_by_key(|r| r.0);
        let results: Vec<_> = results.into_iter().map(|r| r.1).collect();
        let dir = tempfile::tempdir().unwrap();
        write_run(dir.path(), "sha", &results);
        let run = RunData::load(dir.path()).unwrap();
        let order: Vec<usize> = (0..run.sample_ids().len()).rev().collect();
        let listed = report_samples(&run, &order);
        assert_eq!(listed.listed, chosen_by_sorting_everything(&run, &order));
        assert!(listed.listed.len() > RANDOM_LISTED + FAILED_LISTED);
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
