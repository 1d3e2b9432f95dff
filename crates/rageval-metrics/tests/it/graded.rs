//! Graded support (issues 15 and 16): the recall-type metrics give partial support partial
//! credit, S4's counts stay available as the `binary` modes, and the heuristic judge's
//! degree of support separates answers that pass the same threshold.

use rageval_metrics::Judges;
use rageval_tasks::{Heuristic, PARTIAL_SUPPORT_CREDIT, Policy, TaskJudge};

use crate::support::{close, cooperative, detail, sample, scripted, value};

/// The heuristic judge alone, as `--judge heuristic` runs it.
fn heuristic() -> Judges {
    Judges::new(TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical()))
}

async fn score(judges: &Judges, s: &rageval_core::Sample, spec: &str) -> rageval_core::Outcome {
    let metric = rageval_metrics::build(spec).expect("metric");
    let scoring = rageval_metrics::ScoringContext::new(judges, s);
    metric.score(s, &scoring).await
}

/// Issue 15's case, with a chat judge: a reference statement the contexts partly hold is
/// `partially_supported`; S4's count gives it nothing, the default gives it half.
#[tokio::test]
async fn partial_support_earns_half_in_recall_and_nothing_in_the_binary_modes() {
    let judge = scripted(cooperative).await;
    let mut s = sample(
        "What drives the market?",
        &["policy and economy", "society"],
        "Policy drives it. Economy drives it.",
        "Policy matters. Society matters [partial].",
    );
    s.reference_statements = Some(vec![
        "Policy matters.".into(),
        "Society matters [partial].".into(),
    ]);
    let specs = [
        "context_recall",
        "context_recall:binary",
        "answer_correctness",
        "answer_correctness:binary",
    ];
    let outcomes = judge.score(&s, &specs).await;
    let half = (1.0 + PARTIAL_SUPPORT_CREDIT) / 2.0;
    assert!(close(value(&outcomes[0]), half), "{:?}", outcomes[0]);
    assert!(close(value(&outcomes[1]), 0.5), "{:?}", outcomes[1]);
    assert!(close(value(&outcomes[2]), half), "{:?}", outcomes[2]);
    assert!(close(value(&outcomes[3]), 0.5), "{:?}", outcomes[3]);
    assert_eq!(detail(&outcomes[0], "credit"), "graded");
    assert_eq!(detail(&outcomes[1], "credit"), "full_only");
    assert_eq!(detail(&outcomes[0], "partially_supported"), 1);
    // Faithfulness still counts full support only: a partly backed claim is not faithful.
    let mut claims = s.clone();
    claims.answer = Some("Policy drives it. Society drives it [partial].".into());
    assert!(close(value(&judge.one(&claims, "faithfulness").await), 0.5));
}

/// Issue 15's case on the heuristic judge: the facts of a Chinese reference statement are
/// in context 2, 8 of its 9 content words (`预计`, "expected", is not). Under version 2
/// that was `partially_supported` (0.89 < 0.90) and context recall scored 0; now the
/// statement earns its degree of support, 8/9, whichever side of the full-support
/// threshold it falls, and S4's count gives exactly what its label says.
#[tokio::test]
async fn regression_s4_partial_support_in_context_2_no_longer_scores_zero() {
    let s = sample(
        "预计2024年少儿编程教育市场规模是多少？",
        &[
            "少儿编程教育行业图谱，线上线下机构。",
            "数据来源：多鲸教育研究院整理。2024年少儿编程市场规模约为488亿人民币，千亿市场可期。",
        ],
        "",
        "少儿编程市场规模预计约488亿人民币。",
    );
    let judges = heuristic();
    let graded = score(&judges, &s, "context_recall").await;
    let binary = score(&judges, &s, "context_recall:binary").await;
    let rageval_core::Outcome::Score { evidence, .. } = &graded else {
        panic!("{graded:?}")
    };
    let verdict = &evidence.verdicts[0];
    assert_eq!(verdict.supporting_contexts, vec![1], "{verdict:?}");
    assert!(close(value(&graded), 8.0 / 9.0), "{graded:?}");
    let full = verdict.label.as_deref() == Some("fully_supported");
    assert_eq!(value(&binary), if full { 1.0 } else { 0.0 }, "{verdict:?}");
}

/// Issue 16's case: two answers whose claims both pass the full-support threshold no
/// longer score alike — the one the context states word for word scores higher — while
/// the `binary` mode, S1's count, still gives both 1.
#[tokio::test]
async fn the_degree_of_support_separates_answers_that_pass_the_same_threshold() {
    let context =
        "Oppenheimer is a 2023 film directed by Christopher Nolan in Los Alamos, New Mexico.";
    let word_for_word = "Oppenheimer is a 2023 film directed by Christopher Nolan.";
    // 8 of its 9 content words are in the context: above any full-support threshold ≤ 0.85.
    let mostly = "Oppenheimer is a 2023 film directed by Christopher Nolan in Los Alamos, Texas.";
    let judges = heuristic();
    let faithfulness = |answer: &'static str, spec: &'static str| {
        let judges = judges.clone();
        async move {
            let s = sample("Who directed Oppenheimer?", &[context], answer, "");
            value(&score(&judges, &s, spec).await)
        }
    };
    let exact = faithfulness(word_for_word, "faithfulness").await;
    let close_enough = faithfulness(mostly, "faithfulness").await;
    assert_eq!(exact, 1.0);
    assert!(
        close_enough > 0.0 && close_enough < exact,
        "{close_enough} against {exact}"
    );
    assert_eq!(
        faithfulness(word_for_word, "faithfulness:binary").await,
        1.0
    );
    assert_eq!(faithfulness(mostly, "faithfulness:binary").await, 1.0);
}
