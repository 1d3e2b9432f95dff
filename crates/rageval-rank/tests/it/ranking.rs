//! Rankings with scripted judges, pairwise designs graded one context per call: the shape of
//! the result, rounds and calls of each design, failures, position bias, reproducibility and
//! concurrency. The listwise design and batched grading are in `listwise.rs`.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rageval_rank::ranking::comparison::PairOutcome;
use rageval_rank::{Algorithm, CallRecord, Grade, RankError, RankSettings, Ranking, rank};

use crate::scripted::{ScriptedJudge, texts};

/// Utilities that are a permutation of 0..n, far from the retriever's order.
pub fn shuffled_utilities(n: usize, step: usize) -> Vec<f64> {
    (0..n).map(|i| ((i * step) % n) as f64).collect()
}

/// The Bradley–Terry design, one context per grading call.
pub fn pairwise() -> RankSettings {
    RankSettings {
        algorithm: Algorithm::BradleyTerry,
        grade_batch: 1,
        ..RankSettings::default()
    }
}

pub async fn run(judge: &ScriptedJudge, settings: &RankSettings) -> Ranking {
    let texts = texts(judge.utilities.len());
    let contexts: Vec<&str> = texts.iter().map(String::as_str).collect();
    match rank(judge, "which?", &contexts, settings).await {
        Ok(ranking) => ranking,
        Err(error) => panic!("rank failed: {error}"),
    }
}

pub fn by_utility(judge: &ScriptedJudge, items: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut items: Vec<usize> = items.collect();
    items.sort_by(|&a, &b| judge.utilities[b].total_cmp(&judge.utilities[a]));
    items
}

pub fn assert_permutation(ranking: &Ranking, n: usize) {
    let mut sorted = ranking.indices.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..n).collect::<Vec<_>>());
    let joined: Vec<usize> = ranking
        .good
        .iter()
        .chain(&ranking.bad)
        .chain(&ranking.ungraded)
        .copied()
        .collect();
    assert_eq!(joined, ranking.indices);
}

#[tokio::test]
async fn few_useful_contexts_are_compared_all_pairs_in_one_round() {
    let judge = ScriptedJudge::new(shuffled_utilities(20, 7), 9.5);
    let ranking = run(&judge, &pairwise()).await;
    assert_permutation(&ranking, 20);
    assert_eq!(
        ranking.good,
        by_utility(&judge, (0..20).filter(|&i| judge.utilities[i] > 9.5))
    );
    let bad: Vec<usize> = (0..20).filter(|&i| judge.utilities[i] <= 9.5).collect();
    assert_eq!(ranking.bad, bad, "bad contexts keep the retriever's order");
    assert_eq!(ranking.rounds, 2);
    assert_eq!(ranking.calls.grade, 20);
    assert_eq!(ranking.calls.compare, 10 * 9);
    assert_eq!(ranking.calls.failed, 0);
    assert_eq!(
        judge.asked.lock().map(|a| a.len()).unwrap_or(0),
        ranking.calls.compare
    );
    assert_eq!(ranking.position_inconsistency, Some(0.0));
    assert!(
        ranking
            .comparisons
            .iter()
            .all(|c| c.b_first.is_some() && c.round == 1)
    );
    assert!(ranking.good.iter().all(|&i| ranking.scores[i].is_some()));
    assert!(ranking.bad.iter().all(|&i| ranking.scores[i].is_none()));
}

#[tokio::test]
async fn many_useful_contexts_take_a_sparse_round_then_a_head_round() {
    let judge = ScriptedJudge::new(shuffled_utilities(150, 43), 49.5);
    let ranking = run(&judge, &pairwise()).await;
    assert_permutation(&ranking, 150);
    assert_eq!(ranking.good.len(), 100);
    assert_eq!(ranking.rounds, 3);
    let sparse = ranking.comparisons.iter().filter(|c| c.round == 1).count();
    let head = ranking.comparisons.iter().filter(|c| c.round == 2).count();
    assert!(
        (490..=500).contains(&sparse),
        "{sparse} sparse comparisons for 100 contexts × 10 opponents"
    );
    assert!(head > 0 && head <= 30 * 29 / 2, "{head}");
    assert_eq!(ranking.calls.compare, 2 * (sparse + head));
    let pairs: HashSet<(usize, usize)> = ranking
        .comparisons
        .iter()
        .map(|c| (c.a.min(c.b), c.a.max(c.b)))
        .collect();
    assert_eq!(
        pairs.len(),
        ranking.comparisons.len(),
        "no pair is asked twice"
    );
    // An exact judge: the head is compared all-pairs, so the top 10 come out exact.
    let truth = by_utility(&judge, ranking.good.iter().copied());
    assert_eq!(ranking.good[..10], truth[..10]);
}

#[tokio::test]
async fn a_judge_that_always_prefers_the_first_position_decides_nothing() {
    let mut judge = ScriptedJudge::new(shuffled_utilities(12, 5), 3.5);
    judge.prefers_first = true;
    judge.grades = vec![1, 0, 3, 2, 1, 0, 3, 1, 2, 0, 1, 2];
    let ranking = run(&judge, &pairwise()).await;
    assert_eq!(ranking.position_inconsistency, Some(1.0));
    assert!(
        ranking
            .comparisons
            .iter()
            .all(|c| c.outcome == PairOutcome::Tie)
    );
    // All ties: the grade decides, then the retriever's order.
    assert_eq!(ranking.good, vec![2, 6, 3, 8, 11, 0, 4, 7, 10]);
}

#[tokio::test]
async fn the_seeds_insertion_sort_is_led_by_position_bias() {
    let mut judge = ScriptedJudge::new(shuffled_utilities(12, 5), -1.0);
    judge.prefers_first = true;
    let settings = RankSettings {
        algorithm: Algorithm::Insertion,
        ..pairwise()
    };
    let ranking = run(&judge, &settings).await;
    // Each new context is shown first, always wins, and lands on top: retriever order reversed.
    assert_eq!(ranking.good, (0..12).rev().collect::<Vec<_>>());
    assert_eq!(ranking.position_inconsistency, None);
}

#[tokio::test]
async fn insertion_is_exact_with_an_exact_judge_and_takes_a_round_per_comparison() {
    let judge = ScriptedJudge::new(shuffled_utilities(40, 17), 9.5);
    for both_orders in [false, true] {
        let settings = RankSettings {
            algorithm: Algorithm::Insertion,
            insertion_both_orders: both_orders,
            ..pairwise()
        };
        let ranking = run(&judge, &settings).await;
        assert_eq!(
            ranking.good,
            by_utility(&judge, ranking.good.iter().copied())
        );
        assert_eq!(ranking.good.len(), 30);
        let comparisons = ranking.comparisons.len();
        assert_eq!(ranking.rounds as usize, 1 + comparisons);
        assert_eq!(
            ranking.calls.compare,
            comparisons * (1 + usize::from(both_orders))
        );
        // Binary insertion of 30: at most Σ ceil(log2(k+1)) comparisons.
        let bound: usize = (1..30usize)
            .map(|k| (usize::BITS - k.leading_zeros()) as usize)
            .sum();
        assert!(comparisons <= bound, "{comparisons} > {bound}");
        assert!(ranking.scores.iter().all(Option::is_none));
    }
}

#[tokio::test]
async fn failed_calls_are_recorded_counted_and_left_out() {
    let mut judge = ScriptedJudge::new(shuffled_utilities(30, 7), 9.5);
    judge.failing_grades = [3, 7].into();
    let useful_failing = (0..30).find(|&i| judge.utilities[i] > 9.5 && ![3, 7].contains(&i));
    judge.failing_context = useful_failing;
    let ranking = run(&judge, &pairwise()).await;
    assert_permutation(&ranking, 30);
    assert_eq!(ranking.ungraded, vec![3, 7]);
    assert_eq!(ranking.indices[28..], [3, 7]);
    assert!(matches!(&ranking.grades[3], CallRecord::Failed(text) if text.contains("timed out")));
    let failed_comparisons = ranking
        .comparisons
        .iter()
        .filter(|c| c.outcome == PairOutcome::Failed)
        .count();
    let m = ranking.good.len();
    assert_eq!(
        failed_comparisons,
        m - 1,
        "every comparison with the failing context"
    );
    assert_eq!(ranking.calls.failed, 2 + 2 * (m - 1));
    // The others are still ordered exactly.
    let others: Vec<usize> = ranking
        .good
        .iter()
        .copied()
        .filter(|&i| Some(i) != useful_failing)
        .collect();
    assert_eq!(others, by_utility(&judge, others.iter().copied()));
}

#[tokio::test]
async fn the_same_seed_gives_the_same_ranking_and_another_seed_other_pairs() {
    let judge = ScriptedJudge::new(shuffled_utilities(120, 7), 39.5);
    let settings = RankSettings {
        seed: 11,
        ..pairwise()
    };
    let first = run(&judge, &settings).await;
    let again = run(&judge, &settings).await;
    assert_eq!(first, again);
    let other = run(
        &judge,
        &RankSettings {
            seed: 12,
            ..settings
        },
    )
    .await;
    assert_ne!(first.comparisons, other.comparisons);
}

#[tokio::test]
async fn nothing_to_rank_takes_no_comparison() {
    let judge = ScriptedJudge::new(Vec::new(), 0.0);
    let empty = run(&judge, &pairwise()).await;
    assert_eq!((empty.rounds, empty.calls.total()), (0, 0));
    assert!(empty.indices.is_empty() && empty.position_inconsistency.is_none());
    let judge = ScriptedJudge::new(vec![1.0, 2.0, 3.0], 10.0);
    let all_bad = run(&judge, &pairwise()).await;
    assert_eq!((all_bad.rounds, all_bad.calls.total()), (1, 3));
    assert_eq!(all_bad.bad, vec![0, 1, 2]);
    let judge = ScriptedJudge::new(vec![1.0, 20.0, 3.0], 10.0);
    let one = run(&judge, &pairwise()).await;
    assert_eq!((one.rounds, one.indices.clone()), (1, vec![1, 0, 2]));
}

#[tokio::test]
async fn invalid_settings_are_refused() {
    let judge = ScriptedJudge::new(vec![1.0], 0.0);
    for settings in [
        RankSettings {
            max_in_flight: 0,
            ..pairwise()
        },
        RankSettings {
            opponents: 0,
            ..pairwise()
        },
        RankSettings {
            head: 1,
            ..pairwise()
        },
    ] {
        let result = rank(&judge, "q", &["context 0"], &settings).await;
        assert!(
            matches!(result, Err(RankError::InvalidSetting { .. })),
            "{settings:?}"
        );
    }
}

#[tokio::test]
async fn the_output_has_the_seeds_fields_and_the_comparison_graph() {
    let judge = ScriptedJudge::new(shuffled_utilities(6, 5), 1.5);
    let ranking = run(&judge, &pairwise()).await;
    let json = serde_json::to_value(&ranking).unwrap_or_default();
    for key in [
        "indices",
        "good",
        "bad",
        "ungraded",
        "grades",
        "scores",
        "comparisons",
        "position_inconsistency",
        "calls",
        "rounds",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(json["settings"]["algorithm"], "bradley-terry");
    assert_eq!(json["settings"]["seed"], 20_240_601);
    let comparison = &json["comparisons"][0];
    assert!(
        comparison["a_first"]["answer"].is_string() && comparison["b_first"]["answer"].is_string()
    );
    assert!(json["grades"][0]["answer"].is_u64());
    let back: Ranking = serde_json::from_value(json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, ranking);
    assert_eq!(back.grade(0), Grade::new(judge.grades[0]));
}

/// Calls within a round overlap: with a 100 ms judge, a ranking takes rounds × 100 ms of
/// (virtual) time when nothing waits for a slot, and waves of the bound when it does.
#[tokio::test(start_paused = true)]
async fn calls_of_a_round_run_concurrently_within_the_bound() {
    let latency = Duration::from_millis(100);
    let mut judge = ScriptedJudge::new(shuffled_utilities(80, 7), 29.5);
    judge.latency = Some(latency);
    let unbounded = RankSettings {
        max_in_flight: 10_000,
        ..pairwise()
    };
    let start = tokio::time::Instant::now();
    let ranking = run(&judge, &unbounded).await;
    assert_eq!(ranking.rounds, 3);
    assert_eq!(start.elapsed(), latency * ranking.rounds);

    let judge = ScriptedJudge {
        latency: Some(latency),
        ..ScriptedJudge::new(shuffled_utilities(80, 7), 29.5)
    };
    let bounded = RankSettings {
        max_in_flight: 8,
        ..pairwise()
    };
    let start = tokio::time::Instant::now();
    let ranking = run(&judge, &bounded).await;
    let per_round = |round: u32| -> usize {
        if round == 0 {
            80
        } else {
            2 * ranking
                .comparisons
                .iter()
                .filter(|c| c.round == round)
                .count()
        }
    };
    let waves: u32 = (0..ranking.rounds)
        .map(|r| per_round(r).div_ceil(8) as u32)
        .sum();
    assert_eq!(start.elapsed(), latency * waves);
    assert_eq!(judge.peak_in_flight.load(Ordering::SeqCst), 8);
}
