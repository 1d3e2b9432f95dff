//! The ragas-compatible modes: embedding answer relevance, ragas answer correctness,
//! semantic similarity and noise sensitivity, checked against values computed here from the
//! same embeddings and scripted verdicts.

use rageval_tasks::heuristic::cosine;

use crate::support::{Scripted, close, cooperative, detail, sample, scripted, value};

async fn vectors(judge: &Scripted, texts: &[&str]) -> Vec<Vec<f32>> {
    let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    judge.judge.embed(&texts).await.expect("embeds").vectors
}

#[tokio::test]
async fn embedding_relevance_is_the_mean_cosine_of_generated_questions() {
    // ragas ResponseRelevancy (shared/research/ragas.md §4.1): mean_i cos(q, g_i), 0 when
    // the answer is noncommittal.
    let judge = scripted(cooperative).await;
    let s = sample("What is asked?", &[], "An answer.", "");
    let outcome = judge.one(&s, "answer_relevancy").await;
    let v = vectors(
        &judge,
        &[
            "What is asked?",
            "What is asked?",
            "What other thing?",
            "What is asked here?",
        ],
    )
    .await;
    let expected = (1..4).map(|i| cosine(&v[i], &v[0])).sum::<f64>() / 3.0;
    assert!(
        close(value(&outcome), expected),
        "{outcome:?} vs {expected}"
    );
    // The first generated question equals the real one: its cosine is 1.
    assert!(close(
        expected * 3.0 - cosine(&v[2], &v[0]) - cosine(&v[3], &v[0]),
        1.0
    ));

    let evasive = sample("What is asked?", &[], "I am not sure.", "");
    let outcome = judge.one(&evasive, "answer_relevance:embedding").await;
    assert_eq!(value(&outcome), 0.0);
    assert_eq!(detail(&outcome, "noncommittal"), true);
}

#[tokio::test]
async fn ragas_correctness_blends_f1_and_similarity() {
    // ragas AnswerCorrectness (ragas.md §5.1): answer {k1 TP, k3 FP}, reference {k1, k2 FN}:
    // P = R = 0.5, F1 = 0.5; score = 0.75·0.5 + 0.25·cos(answer, reference).
    let judge = scripted(cooperative).await;
    let (answer, reference) = ("k1 fact. k3 fact", "k1 fact. k2 fact");
    let s = sample("Q?", &[], answer, reference);
    let outcome = judge.one(&s, "answer_correctness:ragas").await;
    let v = vectors(&judge, &[answer, reference]).await;
    let expected = 0.75 * 0.5 + 0.25 * cosine(&v[0], &v[1]);
    assert!(
        close(value(&outcome), expected),
        "{outcome:?} vs {expected}"
    );
    assert_eq!(
        (
            detail(&outcome, "tp"),
            detail(&outcome, "fp"),
            detail(&outcome, "fn")
        ),
        (1.into(), 1.into(), 1.into())
    );
    // The S4 mode on the same sample: 1 of 2 reference statements supported.
    assert_eq!(value(&judge.one(&s, "answer_correctness").await), 0.5);
}

#[tokio::test]
async fn semantic_similarity_is_the_cosine_of_answer_and_reference() {
    let judge = scripted(cooperative).await;
    let s = sample("Q?", &[], "Paris.", "It is Paris.");
    let outcome = judge.one(&s, "semantic_similarity").await;
    let v = vectors(&judge, &["Paris.", "It is Paris."]).await;
    assert!(close(value(&outcome), cosine(&v[0], &v[1])));
}

#[tokio::test]
async fn noise_sensitivity_follows_the_ragas_matrices() {
    // ragas NoiseSensitivity (ragas.md §6.2). Context 1 "k1 k3" supports reference statement
    // k1, so it is relevant; context 2 "k4" supports none. Answer statements: k1 (correct),
    // k3 (wrong, backed by the relevant context), k4 (wrong, backed only by the irrelevant
    // one), k5 (wrong, backed by none). relevant = 1/4, irrelevant = 1/4.
    let judge = scripted(cooperative).await;
    let s = sample(
        "Q?",
        &["k1 k3", "k4"],
        "k1 fact. k3 fact. k4 fact. k5 fact",
        "k1 fact. k2 fact",
    );
    let outcomes = judge
        .score(&s, &["noise_sensitivity", "noise_sensitivity:irrelevant"])
        .await;
    assert_eq!(value(&outcomes[0]), 0.25);
    assert_eq!(value(&outcomes[1]), 0.25);
    assert_eq!(
        detail(&outcomes[0], "relevant_contexts"),
        serde_json::json!([0])
    );
}
