//! The seeds' worked examples, reproduced through the scripted judge. Each test names the
//! seed (shared/seeds, summarised in shared/MISSION.md) its numbers come from.

use rageval_core::{Outcome, VerdictTarget};

use crate::support::{close, cooperative, detail, sample, scripted, value};

/// Contexts whose usefulness follows `flags` (1 = useful, 0 = marked as noise).
fn contexts(flags: &[u8]) -> Vec<String> {
    flags
        .iter()
        .enumerate()
        .map(|(i, &f)| {
            if f == 1 {
                format!("passage {i} about the topic")
            } else {
                format!("passage {i} of noise")
            }
        })
        .collect()
}

async fn precision(spec: &str, flags: &[u8]) -> f64 {
    let judge = scripted(cooperative).await;
    let contexts = contexts(flags);
    let refs: Vec<&str> = contexts.iter().map(String::as_str).collect();
    let s = sample("What is asked?", &refs, "An answer.", "The reference.");
    value(&judge.one(&s, spec).await)
}

#[tokio::test]
async fn s1_average_precision_examples() {
    // Seed S1 (001_…txt §Context Precision): [1,0,1,0,1] → (1 + 2/3 + 3/5)/3 = 0.7556 (the
    // article rounds 2/3 to 0.67 and prints 0.7567); [1,1,1,0,0] → 1.0; [0,0,0,1,1] →
    // (1/4 + 2/5)/2 = 0.325.
    assert!(close(
        precision("context_precision", &[1, 0, 1, 0, 1]).await,
        0.7556
    ));
    assert_eq!(precision("context_precision", &[1, 1, 1, 0, 0]).await, 1.0);
    assert!(close(
        precision("context_precision", &[0, 0, 0, 1, 1]).await,
        0.325
    ));
    // No useful context ranks nothing well: 0, as S0 and ragas define it.
    assert_eq!(precision("context_precision", &[0, 0]).await, 0.0);
}

#[tokio::test]
async fn s2_strict_precision_charges_trailing_noise() {
    // Seed S2 (002_…txt): strict AP [1,0] → 0.75 and [0,1] → 0.25, where ragas-style AP
    // gives [1,0] → 1.0 (ragas itself 0.9999999999 because of its +1e-10).
    assert_eq!(precision("context_precision_strict", &[1, 0]).await, 0.75);
    assert_eq!(precision("context_precision_strict", &[0, 1]).await, 0.25);
    assert_eq!(precision("context_precision", &[1, 0]).await, 1.0);
    let ragas = precision("context_precision:ragas", &[1, 0]).await;
    assert!(
        (ragas - 0.9999999999).abs() < 1e-12 && ragas < 1.0,
        "{ragas}"
    );
}

#[tokio::test]
async fn s0_three_useful_contexts_score_one_with_reasons() {
    // Seed S0 (000_…txt): every context useful for the generated answer → 1.0.
    let judge = scripted(cooperative).await;
    let s = sample("Q?", &["a", "b", "c"], "An answer.", "");
    let outcome = judge.one(&s, "useful_context_precision").await;
    assert_eq!(value(&outcome), 1.0);
    let Outcome::Score { evidence, .. } = outcome else {
        unreachable!()
    };
    assert_eq!(evidence.verdicts.len(), 3);
    assert!(evidence.verdicts.iter().all(|v| v.reason.is_some()));
    assert_eq!(evidence.verdicts[2].target, VerdictTarget::Context(2));
    assert_eq!(judge.calls("context_usefulness"), 3);
}

#[tokio::test]
async fn s1_faithfulness_two_of_three_claims() {
    // Seed S1 (001_…txt §4.2.3): three claims, two fully supported, one not → 2/3 = 0.667.
    let judge = scripted(cooperative).await;
    let s = sample(
        "When did the theory appear?",
        &["The theory was published in 1905 and contains the equation."],
        "The theory appeared in 1905. The theory contains the equation. \
         The theory won a prize [no].",
        "",
    );
    let outcome = judge.one(&s, "faithfulness").await;
    assert!(close(value(&outcome), 2.0 / 3.0));
    assert_eq!(detail(&outcome, "claims"), 3);
    assert_eq!(detail(&outcome, "fully_supported"), 2);
    assert_eq!(detail(&outcome, "not_supported"), 1);
    let Outcome::Score { evidence, .. } = outcome else {
        unreachable!()
    };
    assert_eq!(evidence.verdicts[0].supporting_contexts, vec![0]);
    assert_eq!(evidence.verdicts[2].label.as_deref(), Some("not_supported"));
    assert!(evidence.verdicts[2].supporting_contexts.is_empty());
}

#[tokio::test]
async fn faithfulness_counts_partial_and_contradicted_beside_the_score() {
    let judge = scripted(cooperative).await;
    let s = sample(
        "Q?",
        &["c"],
        "One holds. Two is half [partial]. Three is wrong [contra]. Four holds.",
        "",
    );
    let outcome = judge.one(&s, "faithfulness").await;
    assert_eq!(value(&outcome), 0.5);
    assert_eq!(detail(&outcome, "partially_supported"), 1);
    assert_eq!(detail(&outcome, "contradicted"), 1);
}

#[tokio::test]
async fn s4_statement_fractions() {
    // Seed S4 (004_…txt): each metric's example is 4 of 5 → 0.8.
    let judge = scripted(cooperative).await;
    let mut s = sample(
        "What drives the market?",
        &[
            "policy",
            "economy",
            "society",
            "technology",
            "weather noise",
        ],
        "Policy drives it. Economy drives it. Society drives it. Technology drives it. \
         Weather drives it [no].",
        "Policy matters. Economy matters. Society matters. Technology matters. Luck matters.",
    );
    // Precomputed statements and questions are reused, not re-asked (S4).
    s.reference_statements = Some(vec![
        "Policy matters.".into(),
        "Economy matters.".into(),
        "Society matters.".into(),
        "Technology matters.".into(),
        "Luck matters [no].".into(),
    ]);
    s.simulated_questions = Some(vec![
        "What drives the market?".into(),
        "What drives the market now?".into(),
        "What drives the market most?".into(),
        "What drives the market today?".into(),
        "What other market exists?".into(),
    ]);
    let specs = [
        "context_recall",
        "context_relevance",
        "faithfulness",
        "answer_relevance",
        "answer_correctness",
    ];
    let outcomes = judge.score(&s, &specs).await;
    for (spec, outcome) in specs.iter().zip(&outcomes) {
        assert!(close(value(outcome), 0.8), "{spec}: {outcome:?}");
    }
    assert_eq!(detail(&outcomes[0], "statements_from"), "dataset");
    assert_eq!(judge.calls("generate_questions"), 0);
    // Only the answer was split; the reference's statements came with the sample.
    assert_eq!(judge.calls("split_statements"), 1);
}

#[tokio::test]
async fn s1_rubric_is_normalised() {
    // Seed S1 (§4.3): a 1–5 rubric score s maps to (s − 1)/4; the script says 4 → 0.75.
    let judge = scripted(cooperative).await;
    let s = sample("Q?", &[], "An answer.", "");
    let outcome = judge.one(&s, "answer_relevance:rubric").await;
    assert_eq!(value(&outcome), 0.75);
    assert_eq!(detail(&outcome, "rubric_score"), 4);
}

#[tokio::test]
async fn simulated_questions_are_judged_in_one_call() {
    let judge = scripted(cooperative).await;
    let s = sample("What is asked?", &[], "An answer.", "");
    let outcome = judge.one(&s, "answer_relevance").await;
    // Two of the three scripted questions are similar.
    assert!(close(value(&outcome), 2.0 / 3.0));
    assert_eq!(judge.calls("generate_questions"), 1);
    assert_eq!(judge.calls("question_similarity"), 1);
}

#[tokio::test]
async fn entity_recall_compares_case_folded_sets() {
    let judge = scripted(cooperative).await;
    let s = sample(
        "Q?",
        &["Paris hosts the Louvre."],
        "",
        "Paris and Lyon have museums like the Louvre.",
    );
    let outcome = judge.one(&s, "context_entity_recall").await;
    // Reference entities {paris, lyon, louvre}; contexts name paris and louvre.
    assert!(close(value(&outcome), 2.0 / 3.0));
    assert_eq!(detail(&outcome, "missing"), serde_json::json!(["lyon"]));
}
