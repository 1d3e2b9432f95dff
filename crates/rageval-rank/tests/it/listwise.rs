//! The listwise design and batched grading with scripted judges: rounds and calls, windows
//! asked in two orders, position bias, failures and garbage, the prompt window, the
//! evidence kept, reproducibility and concurrency.

use std::collections::HashSet;
use std::time::Duration;

use rageval_rank::{Algorithm, CallRecord, RankSettings, Ranking};

use crate::ranking::{assert_permutation, by_utility, run, shuffled_utilities};
use crate::scripted::{CONTEXT_TOKENS, FIXED_TOKENS, ScriptedJudge};

/// 200 contexts, the 60 of highest utility useful.
fn two_hundred() -> ScriptedJudge {
    ScriptedJudge::new(shuffled_utilities(200, 77), 139.5)
}

fn shown(judge: &ScriptedJudge) -> Vec<Vec<usize>> {
    judge.shown.lock().map(|s| s.clone()).unwrap_or_default()
}

#[tokio::test]
async fn sixty_useful_of_two_hundred_take_three_rounds_and_112_calls() {
    let judge = two_hundred();
    let ranking = run(&judge, &RankSettings::default()).await;
    assert_eq!(ranking.settings.algorithm, Algorithm::Listwise);
    assert_permutation(&ranking, 200);
    assert_eq!(ranking.good.len(), 60);
    assert_eq!(ranking.rounds, 3);
    // 20 batches of 10; round 1: 5 shuffles × 6 windows; round 2: 8 shuffles × 2 windows of
    // the head of 20; every window in two orders.
    assert_eq!(ranking.calls.grade, 20);
    assert_eq!(ranking.grade_batches.len(), 20);
    assert!(ranking.grade_batches.iter().all(|b| b.len() == 10));
    assert_eq!(ranking.calls.order, 2 * (5 * 6 + 8 * 2));
    assert_eq!(ranking.calls.compare, 0);
    assert_eq!(ranking.calls.failed, 0);
    assert_eq!(shown(&judge).len(), ranking.calls.total());
    assert_eq!(ranking.position_inconsistency, Some(0.0));
    let round_two: Vec<_> = ranking.windows.iter().filter(|w| w.round == 2).collect();
    assert_eq!(round_two.len(), 16);
    for window in &ranking.windows {
        assert!(window.shown.len() == 10, "{:?}", window.shown);
    }
    // Each window was shown as drawn and reversed.
    let asked: HashSet<Vec<usize>> = shown(&judge).into_iter().collect();
    for window in &ranking.windows {
        let reversed: Vec<usize> = window.shown.iter().rev().copied().collect();
        assert!(asked.contains(&window.shown) && asked.contains(&reversed));
    }
    // An exact judge: the head was re-ordered in round 2, so the top comes out exact.
    let truth = by_utility(&judge, ranking.good.iter().copied());
    assert_eq!(ranking.good[..10], truth[..10]);
    assert!(ranking.good.iter().all(|&i| ranking.scores[i].is_some()));
}

#[tokio::test]
async fn few_useful_contexts_take_one_ordering_round() {
    let judge = ScriptedJudge::new(shuffled_utilities(40, 7), 27.5);
    let ranking = run(&judge, &RankSettings::default()).await;
    assert_eq!(ranking.good.len(), 12);
    assert_eq!(ranking.rounds, 2, "12 useful fit the head: no round 2");
    // 5 + 8 shuffles of 12 in windows of 6, in two orders.
    assert_eq!(ranking.calls.order, 2 * 13 * 2);
    assert_eq!(
        ranking.good,
        by_utility(&judge, ranking.good.iter().copied())
    );
}

#[tokio::test]
async fn a_judge_that_returns_the_order_shown_decides_nothing() {
    let mut judge = ScriptedJudge::new(shuffled_utilities(12, 5), 3.5);
    judge.prefers_first = true;
    judge.grades = vec![1, 0, 3, 2, 1, 0, 3, 1, 2, 0, 1, 2];
    let ranking = run(&judge, &RankSettings::default()).await;
    assert_eq!(ranking.position_inconsistency, Some(1.0));
    assert!(ranking.games().iter().all(|g| g.score_a == 0.5));
    // All ties: the grade decides, then the retriever's order.
    assert_eq!(ranking.good, vec![2, 6, 3, 8, 11, 0, 4, 7, 10]);
}

#[tokio::test]
async fn a_failed_batch_leaves_exactly_its_contexts_ungraded() {
    let mut judge = two_hundred();
    judge.failing_grades = [3].into();
    let ranking = run(&judge, &RankSettings::default()).await;
    assert_permutation(&ranking, 200);
    let batch = ranking
        .grade_batches
        .iter()
        .find(|b| b.contains(&3))
        .cloned()
        .unwrap_or_default();
    let mut expected = batch.clone();
    expected.sort_unstable();
    assert_eq!(ranking.ungraded, expected);
    assert!(
        batch.iter().all(
            |&i| matches!(&ranking.grades[i], CallRecord::Failed(e) if e.contains("timed out"))
        )
    );
    assert_eq!(ranking.calls.failed, 1);
    assert_eq!(ranking.calls.grade, 20);
}

#[tokio::test]
async fn failed_and_garbage_orders_are_recorded_and_decide_nothing() {
    let mut judge = two_hundred();
    let useful = (0..200).find(|&i| judge.utilities[i] > 139.5);
    judge.failing_context = useful;
    let ranking = run(&judge, &RankSettings::default()).await;
    let failed: Vec<_> = ranking
        .windows
        .iter()
        .filter(|w| w.forward.answer_ref().is_none())
        .collect();
    assert!(!failed.is_empty());
    assert!(
        failed
            .iter()
            .all(|w| useful.is_some_and(|u| w.shown.contains(&u)))
    );
    assert_eq!(ranking.calls.failed, 2 * failed.len());
    assert!(
        ranking
            .games()
            .iter()
            .all(|g| Some(g.a) != useful && Some(g.b) != useful)
    );

    let mut judge = two_hundred();
    judge.garbage_orders = true;
    let ranking = run(&judge, &RankSettings::default()).await;
    assert_eq!(ranking.calls.failed, ranking.calls.order);
    assert!(ranking.games().is_empty());
    assert!(
        ranking.windows.iter().all(
            |w| matches!(&w.forward, CallRecord::Failed(e) if e.contains("not a permutation"))
        )
    );
    assert_eq!(ranking.position_inconsistency, None);
}

#[tokio::test]
async fn batches_and_windows_shrink_to_the_prompt_window() {
    let mut judge = two_hundred();
    let long = (0..200).find(|&i| judge.utilities[i] > 139.5).unwrap_or(0);
    judge.long_context = Some(long);
    let limit = FIXED_TOKENS + 4 * CONTEXT_TOKENS;
    let settings = RankSettings {
        max_prompt_tokens: Some(limit),
        ..RankSettings::default()
    };
    let ranking = run(&judge, &settings).await;
    let asked = shown(&judge);
    assert!(!asked.is_empty());
    assert!(
        asked.iter().all(|s| s.len() <= 4 && !s.contains(&long)),
        "every call within 4 contexts, the long one never sent"
    );
    assert!(ranking.windows.iter().all(|w| w.shown.len() <= 4));
    assert!(matches!(&ranking.grades[long], CallRecord::Failed(e) if e.starts_with("not sent")));
    assert_eq!(ranking.ungraded, vec![long]);
    assert_eq!(ranking.calls.grade, asked.len() - ranking.calls.order);
    assert_eq!(
        ranking.calls.failed, 0,
        "a call not sent is not a failed call"
    );
}

#[tokio::test]
async fn the_evidence_round_trips_and_re_aggregates_without_a_model() {
    let judge = ScriptedJudge::new(shuffled_utilities(30, 7), 9.5);
    let ranking = run(&judge, &RankSettings::default()).await;
    let json = serde_json::to_value(&ranking).unwrap_or_default();
    assert_eq!(json["settings"]["algorithm"], "listwise");
    assert_eq!(json["settings"]["listwise"]["window"], 10);
    assert!(json["windows"][0]["shown"].is_array());
    assert!(json["windows"][0]["forward"]["answer"].is_array());
    assert!(json["grade_batches"][0].is_array());
    assert_eq!(json["calls"]["order"], ranking.calls.order);
    let back: Ranking = serde_json::from_value(json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, ranking);
    let pairs: usize = ranking
        .windows
        .iter()
        .map(|w| w.shown.len() * (w.shown.len() - 1) / 2)
        .sum();
    assert_eq!(back.games().len(), pairs);
    // A ranking written before batching and listwise ordering still reads.
    let mut old = serde_json::to_value(&ranking).unwrap_or_default();
    for key in ["windows", "grade_batches"] {
        old.as_object_mut().map(|o| o.remove(key));
    }
    for key in ["listwise", "grade_batch", "max_prompt_tokens"] {
        old["settings"].as_object_mut().map(|o| o.remove(key));
    }
    let old: Ranking = serde_json::from_value(old).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(old.settings.grade_batch, 1);
}

#[tokio::test]
async fn the_same_seed_gives_the_same_windows_and_another_seed_others() {
    let judge = two_hundred();
    let settings = RankSettings {
        seed: 5,
        ..RankSettings::default()
    };
    let first = run(&judge, &settings).await;
    assert_eq!(first, run(&judge, &settings).await);
    let other = run(
        &judge,
        &RankSettings {
            seed: 6,
            ..settings
        },
    )
    .await;
    assert_ne!(first.windows, other.windows);
    assert_ne!(first.grade_batches, other.grade_batches);
}

#[tokio::test]
async fn invalid_listwise_settings_are_refused() {
    let judge = ScriptedJudge::new(vec![1.0], 0.0);
    let mut bad = Vec::new();
    for (window, partitions, head, grade_batch) in [
        (1, 4, 20, 10),
        (10, 0, 20, 10),
        (10, 4, 1, 10),
        (10, 4, 20, 0),
    ] {
        let mut settings = RankSettings::default();
        settings.listwise.window = window;
        settings.listwise.partitions = partitions;
        settings.listwise.head = head;
        settings.grade_batch = grade_batch;
        bad.push(settings);
    }
    for settings in bad {
        let result = rageval_rank::rank(&judge, "q", &["context 0"], &settings).await;
        assert!(result.is_err(), "{settings:?}");
    }
}

/// With a 100 ms judge and no bound, a listwise ranking takes rounds × 100 ms.
#[tokio::test(start_paused = true)]
async fn listwise_rounds_run_concurrently() {
    let latency = Duration::from_millis(100);
    let mut judge = two_hundred();
    judge.latency = Some(latency);
    let start = tokio::time::Instant::now();
    let ranking = run(&judge, &RankSettings::default()).await;
    assert_eq!(start.elapsed(), latency * ranking.rounds);
    assert_eq!(ranking.rounds, 3);
}
