//! Abstention and citation faithfulness through the scripted judge, with values worked by
//! hand in each test.

use rageval_core::{Context, Outcome, Quadrant};
use rageval_metrics::Judges;
use rageval_tasks::{Heuristic, Policy, TaskJudge};

use crate::support::{cooperative, detail, sample, scripted, value};

const CONTEXTS: [&str; 3] = [
    "Paris k1 is the capital of France.",
    "Berlin k2 is the capital of Germany.",
    "Rome k3 is the capital of Italy.",
];

/// The answer cites context 2 for a claim only context 1 holds, cites context 2 rightly,
/// cites a context 7 that was never retrieved, and leaves one claim uncited. By hand:
/// faithfulness = 4 supported ÷ 4 claims = 1; citation faithfulness = 1 supported by what
/// it cites ÷ 3 citing sentences = 1/3; coverage = 3 ÷ 4 sentences.
#[tokio::test]
async fn a_cited_but_unsupported_claim_lowers_citation_faithfulness_only() {
    let judge = scripted(cooperative).await;
    let answer = "Paris k1 is the capital of France [2]. Berlin k2 is the capital of Germany \
                  [2]. Rome k3 is the capital of Italy [7]. Madrid is in Spain.";
    let s = sample("Which cities are capitals?", &CONTEXTS, answer, "");
    let outcomes = judge
        .score(&s, &["faithfulness", "citation_faithfulness"])
        .await;
    assert_eq!(value(&outcomes[0]), 1.0);
    assert!(
        (value(&outcomes[1]) - 1.0 / 3.0).abs() < 1e-12,
        "{:?}",
        outcomes[1]
    );
    assert_eq!(detail(&outcomes[1], "cited_sentences"), 3);
    assert_eq!(detail(&outcomes[1], "citation_coverage"), 0.75);
    assert_eq!(
        detail(&outcomes[1], "dangling_citations"),
        serde_json::json!(["[7]"])
    );
    // One support call for faithfulness, one for the sentences citing context 2; the
    // sentence citing only a missing context is unsupported without a call.
    assert_eq!(judge.calls("support_verdicts"), 2);
    let Outcome::Score { evidence, .. } = &outcomes[1] else {
        panic!("a score");
    };
    let labels: Vec<&str> = evidence
        .verdicts
        .iter()
        .filter_map(|v| v.label.as_deref())
        .collect();
    assert_eq!(
        labels,
        ["not_supported", "fully_supported", "cites_no_context"]
    );
    assert_eq!(evidence.verdicts[0].supporting_contexts, [1]);
}

#[tokio::test]
async fn context_ids_and_chinese_brackets_are_citations() {
    let judge = scripted(cooperative).await;
    let mut s = sample(
        "哪些城市是首都？",
        &CONTEXTS,
        "Paris k1 is the capital of France [kb-a]。Berlin k2 is the capital of Germany【2】。",
        "",
    );
    s.contexts = CONTEXTS
        .iter()
        .zip(["kb-a", "kb-b", "kb-c"])
        .map(|(text, id)| Context {
            id: Some(id.to_owned()),
            ..Context::text(*text)
        })
        .collect();
    let outcome = judge.one(&s, "citation_faithfulness").await;
    assert_eq!(value(&outcome), 1.0);
    assert_eq!(judge.calls("support_verdicts"), 2);
}

#[tokio::test]
async fn an_answer_without_citations_is_undefined() {
    let judge = scripted(cooperative).await;
    let s = sample(
        "Which?",
        &CONTEXTS,
        "Paris k1 is the capital of France.",
        "",
    );
    let outcome = judge.one(&s, "citation_faithfulness").await;
    assert_eq!(outcome, Outcome::undefined("the answer cites no source"));
    assert_eq!(judge.calls("support_verdicts"), 0);
}

/// Five samples, one per line of the table by hand: supported + answered → 1,
/// supported + declined → 0, all-noise + answered → 0, all-noise + declined → 1 (twice,
/// once in Chinese).
#[tokio::test]
async fn each_quadrant_scores_its_behaviour() {
    let judge = scripted(cooperative).await;
    let cases = [
        (
            &["about the topic"][..],
            "The answer is 4.",
            Quadrant::AnsweredSupported,
            1.0,
        ),
        (
            &["about the topic"][..],
            "I don't know.",
            Quadrant::AbstainedSupported,
            0.0,
        ),
        (
            &["noise only"][..],
            "The answer is 4.",
            Quadrant::AnsweredUnsupported,
            0.0,
        ),
        (
            &["noise only"][..],
            "I don't know.",
            Quadrant::AbstainedUnsupported,
            1.0,
        ),
        (
            &["noise"][..],
            "根据资料无法回答。",
            Quadrant::AbstainedUnsupported,
            1.0,
        ),
    ];
    for (contexts, answer, quadrant, expected) in cases {
        let s = sample("What is asked?", contexts, answer, "");
        let outcome = judge.one(&s, "abstention").await;
        assert_eq!(value(&outcome), expected, "{answer}");
        assert_eq!(detail(&outcome, "abstention_quadrant"), quadrant.name());
    }
    assert_eq!(judge.calls("abstention"), 5);
}

#[tokio::test]
async fn the_heuristic_judge_says_it_cannot_tell_support() {
    let tasks = TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical());
    let judges = Judges::new(tasks);
    let s = sample(
        "What is asked?",
        &["about the topic"],
        "无法回答这个问题。",
        "",
    );
    let metric = rageval_metrics::build("abstention").expect("metric");
    let scoring = rageval_metrics::ScoringContext::new(&judges, &s);
    let outcome = metric.score(&s, &scoring).await;
    let Outcome::Undefined { reason } = outcome else {
        panic!("undefined, got {outcome:?}");
    };
    assert!(reason.contains("cannot tell whether the contexts support an answer"));
    assert!(reason.ends_with("(the answer declines)"), "{reason}");
}
