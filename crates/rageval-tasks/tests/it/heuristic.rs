//! The heuristic judge through the router: verdicts, the shares and thresholds its reasons
//! state, Chinese text, and the cosine path with an embedding model (the mock's
//! `/v1/embeddings`).

use rageval_tasks::heuristic::{SIMILAR_COSINE, SUPPORT_FULL};
use rageval_tasks::{
    Abstention, AnswerRubric, ContextRelevance, ContextUsefulness, GradeRelevance,
    GradeRelevanceBatch, Heuristic, Implementation, OrderContexts, PairwisePreference, Policy,
    Preferred, QuestionSimilarity, Support, SupportVerdicts, TaskJudge,
};
use rageval_testkit::{MockConfig, MockServer};

use crate::support::judge;

fn lexical() -> TaskJudge {
    TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical())
}

fn texts(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn support_reasons_state_the_share_the_context_and_the_threshold() {
    let task = SupportVerdicts {
        statements: texts(&[
            "The mission launched on Sunday, 30 July 2023 from Sriharikota.",
            "The mission launched on Monday, 30 August 2024 from Sriharikota.",
            "Brad Pitt stars as Oppenheimer.",
        ]),
        contexts: texts(&[
            "ISRO was founded in 1969.",
            "The mission is scheduled to launch on Sunday, 30 July 2023 at 06:30 IST from Sriharikota.",
        ]),
        premise: Default::default(),
        history: Vec::new(),
    };
    let out = lexical().support_verdicts(&task).await.expect("verdicts");
    let [full, partial, none] = out.value.as_slice() else {
        panic!("{:?}", out.value)
    };
    assert_eq!(
        (full.support, full.context),
        (Support::FullySupported, Some(1))
    );
    assert_eq!(
        full.reason,
        format!(
            "1.00 of the statement's 7 content words appear in context 2 (≥ {:.2}); degree \
             of support 1.00",
            SUPPORT_FULL.en
        )
    );
    assert_eq!(full.score, Some(1.0));
    assert_eq!(partial.support, Support::PartiallySupported);
    let partial_degree = partial.score.expect("a degree");
    assert!(
        partial_degree > 0.0 && partial_degree < 1.0,
        "{}",
        partial.reason
    );
    assert!(
        partial
            .reason
            .contains("0.57 of the statement's 7 content words"),
        "{}",
        partial.reason
    );
    assert_eq!(none.support, Support::NotSupported);
    assert!(none.reason.starts_with("only 0.00"), "{}", none.reason);
    assert_eq!(none.score, Some(0.0));
    match &out.by {
        Implementation::Heuristic(info) => {
            assert_eq!(info.name, "content_word_overlap");
            assert_eq!(info.thresholds[0].value, SUPPORT_FULL.en);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_missing_number_keeps_a_statement_from_full_support() {
    let task = SupportVerdicts {
        statements: texts(&["PharmaCann was founded in 2010 by Theodore Scott in Illinois."]),
        contexts: texts(&[
            "PharmaCann was founded in 2014 by Theodore Scott; it is based in Illinois.",
        ]),
        premise: Default::default(),
        history: Vec::new(),
    };
    let out = lexical().support_verdicts(&task).await.expect("verdict");
    assert_eq!(out.value[0].support, Support::PartiallySupported);
    assert!(
        out.value[0]
            .reason
            .contains("; 2010 appears in no context; degree of support "),
        "{}",
        out.value[0].reason
    );
}

#[tokio::test]
async fn chinese_words_match_across_segmentations() {
    let task = SupportVerdicts {
        statements: texts(&["少儿编程市场规模持续扩大。"]),
        contexts: texts(&["报告显示，中国少儿编程的市场规模在持续扩大，家长日益重视。"]),
        premise: Default::default(),
        history: Vec::new(),
    };
    let out = lexical().support_verdicts(&task).await.expect("verdict");
    assert_eq!(
        out.value[0].support,
        Support::FullySupported,
        "{}",
        out.value[0].reason
    );
    let relevance = lexical()
        .context_relevance(&ContextRelevance {
            question: "少儿编程的市场规模有多大？".into(),
            context: "天气预报说明天会下雨。".into(),
        })
        .await
        .expect("verdict");
    assert!(!relevance.value.relevant, "{}", relevance.value.reason);
}

#[tokio::test]
async fn relevance_usefulness_grade_rubric_and_preference_follow_their_shares() {
    let judge = lexical();
    let question = "Who directed the film Oppenheimer?";
    let on_topic = "Oppenheimer is a 2023 film directed by Christopher Nolan.";
    let off_topic = "The Eiffel Tower is in Paris.";
    let relevant = judge
        .context_relevance(&ContextRelevance {
            question: question.into(),
            context: on_topic.into(),
        })
        .await
        .expect("relevance");
    assert!(relevant.value.relevant);
    assert_eq!(
        relevant.value.reason,
        "1.00 of the question's 3 content words appear in the context (≥ 0.45)"
    );
    let grade = |context: &str| GradeRelevance {
        question: question.into(),
        context: context.into(),
    };
    assert_eq!(
        judge
            .grade_relevance(&grade(on_topic))
            .await
            .expect("grade")
            .value
            .grade,
        3
    );
    assert_eq!(
        judge
            .grade_relevance(&grade(off_topic))
            .await
            .expect("grade")
            .value
            .grade,
        0
    );
    let useful = judge
        .context_usefulness(&ContextUsefulness {
            question: question.into(),
            answer: "Christopher Nolan directed it.".into(),
            context: on_topic.into(),
        })
        .await
        .expect("usefulness");
    assert!(useful.value.useful, "{}", useful.value.reason);
    assert!(
        useful
            .value
            .reason
            .contains("content words beyond the question")
    );
    let rubric = |answer: &str| AnswerRubric {
        question: question.into(),
        answer: answer.into(),
    };
    let direct = judge
        .answer_rubric(&rubric("Christopher Nolan directed the film Oppenheimer."))
        .await;
    assert_eq!(direct.expect("rubric").value.score, 5);
    let evasive = judge
        .answer_rubric(&rubric(
            "The director of Oppenheimer has not been provided.",
        ))
        .await;
    let evasive = evasive.expect("rubric").value;
    assert_eq!(evasive.score, 1);
    assert_eq!(
        evasive.reason,
        "the answer is noncommittal (\"not been provided\")"
    );
    let pair = |first: &str, second: &str| PairwisePreference {
        question: question.into(),
        first: first.into(),
        second: second.into(),
    };
    let forward = judge
        .pairwise_preference(&pair(on_topic, off_topic))
        .await
        .expect("pair");
    let backward = judge
        .pairwise_preference(&pair(off_topic, on_topic))
        .await
        .expect("pair");
    assert_eq!(forward.value.preferred, Preferred::First);
    assert_eq!(backward.value.preferred, Preferred::Second);
    let padded = format!("{on_topic} The Eiffel Tower is in Paris. Berlin is in Germany.");
    let focused = judge
        .pairwise_preference(&pair(&padded, on_topic))
        .await
        .expect("pair");
    assert_eq!(
        focused.value.preferred,
        Preferred::Second,
        "{}",
        focused.value.reason
    );
    let same = judge
        .pairwise_preference(&pair(on_topic, on_topic))
        .await
        .expect("pair");
    assert_eq!(same.value.preferred, Preferred::Tie);
}

#[tokio::test]
async fn question_similarity_uses_cosine_when_an_embedder_is_configured() {
    let mock = MockServer::start(MockConfig {
        embedding_dim: 64,
        ..MockConfig::default()
    })
    .await
    .expect("mock");
    let with_cosine =
        TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::with_embeddings(judge(&mock)));
    let task = QuestionSimilarity {
        question: "Who wrote Hamlet?".into(),
        // The mock embeds the same text (case and spaces aside) to the same vector, others
        // to unrelated random vectors.
        candidates: texts(&["who  wrote HAMLET?", "Where is Paris?"]),
    };
    let out = with_cosine
        .question_similarity(&task)
        .await
        .expect("cosine");
    let flags: Vec<bool> = out.value.iter().map(|v| v.similar).collect();
    assert_eq!(flags, [true, false]);
    assert_eq!(
        out.value[0].reason,
        format!("embedding cosine 1.00 ≥ {SIMILAR_COSINE:.2}")
    );
    match &out.by {
        Implementation::Heuristic(info) => {
            assert_eq!(info.name, "embedding_cosine");
            assert_eq!(info.embedder.as_deref(), Some("mock-chat"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(mock.stats().embedding_requests, 1);
    let lexical = lexical().question_similarity(&task).await.expect("overlap");
    assert!(lexical.value[0].similar && !lexical.value[1].similar);
    assert!(
        lexical.value[0]
            .reason
            .starts_with("content-word overlap (Dice) 1.00")
    );
}

#[tokio::test]
async fn batch_grades_match_single_grades_and_an_order_sorts_by_coverage() {
    let judge = lexical();
    let question = "Who directed the film Oppenheimer?";
    let contexts = [
        "The Eiffel Tower is in Paris.",
        "Oppenheimer is a 2023 film directed by Christopher Nolan.",
        "Oppenheimer was a physicist.",
    ];
    let batch = judge
        .grade_relevance_batch(&GradeRelevanceBatch {
            question: question.into(),
            contexts: contexts.iter().map(|c| (*c).to_owned()).collect(),
        })
        .await
        .expect("grades");
    for (context, batched) in contexts.iter().zip(&batch.value) {
        let single = judge
            .grade_relevance(&GradeRelevance {
                question: question.into(),
                context: (*context).into(),
            })
            .await
            .expect("grade");
        assert_eq!(&single.value, batched);
    }
    let order = |shown: &[&str]| OrderContexts {
        question: question.into(),
        contexts: shown.iter().map(|c| (*c).to_owned()).collect(),
    };
    let forward = judge
        .order_contexts(&order(&contexts))
        .await
        .expect("order");
    assert_eq!(forward.value.order, [1, 2, 0], "{}", forward.value.reason);
    let reversed = [contexts[2], contexts[1], contexts[0]];
    let backward = judge
        .order_contexts(&order(&reversed))
        .await
        .expect("order");
    assert_eq!(backward.value.order, [1, 0, 2]);
    let one = judge
        .order_contexts(&order(&contexts[..1]))
        .await
        .expect("order");
    assert_eq!(one.value.order, [0]);
    assert!(matches!(one.by, Implementation::Rule { .. }));
}

/// Refusals in both languages are found; a hedge is not a refusal, and 不确定性
/// ("uncertainty", in a kids-coding reference answer) is no 不确定. Support is left
/// undecided, with the reason saying so.
#[tokio::test]
async fn abstention_finds_refusals_and_leaves_support_undecided() {
    let ask = |answer: &str| {
        let task = Abstention {
            question: "What is asked?".into(),
            contexts: texts(&["Some passage."]),
            answer: answer.into(),
        };
        async move { lexical().abstention(&task).await.map(|j| j.value) }
    };
    for refusal in [
        "I can not answer the question because of the insufficient information in documents.",
        "I don't know.",
        "文档信息不足，因此我无法基于提供的文档回答该问题。",
        "根据资料，无法回答。",
    ] {
        let verdict = ask(refusal).await.unwrap();
        assert!(verdict.refused, "{refusal}");
        assert_eq!(verdict.supported, None);
        assert!(
            verdict
                .reason
                .contains("cannot tell whether the contexts support")
        );
    }
    for answer in [
        "It is probably 42, though I am not sure.",
        "为了让孩子适应充满不确定性的环境。",
    ] {
        assert!(!ask(answer).await.unwrap().refused, "{answer}");
    }
}
