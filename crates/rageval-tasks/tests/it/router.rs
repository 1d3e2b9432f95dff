//! The router: which implementation answers which task, what `describe` reports, rules that
//! answer without a call, and clear errors when nothing can answer.

use rageval_tasks::{
    Answerer, ContextRelevance, ExtractEntities, GenerateQuestions, Heuristic, Implementation,
    MergeAnswers, Policy, Route, SplitStatements, Support, SupportVerdicts, TaskError, TaskJudge,
    TaskKind,
};

use crate::support::{judge, scripted};

fn texts(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn offline_policy_sends_verdicts_to_the_heuristic_and_generation_to_the_model() {
    let (mock, sent) = scripted(|_, _| r#"{"entities": ["Paris"]}"#.into()).await;
    let router = TaskJudge::new(Policy::offline())
        .with_llm(judge(&mock))
        .with_heuristic(Heuristic::lexical());
    assert_eq!(
        router.route(TaskKind::SupportVerdicts).ok(),
        Some(Route::Heuristic)
    );
    assert_eq!(
        router.route(TaskKind::ExtractEntities).ok(),
        Some(Route::Llm)
    );
    // Splitting has a heuristic, but the policy prefers the model for generation.
    assert_eq!(
        router.route(TaskKind::SplitStatements).ok(),
        Some(Route::Llm)
    );
    let relevance = router
        .context_relevance(&ContextRelevance {
            question: "What is the capital of France?".into(),
            context: "Paris is the capital of France.".into(),
        })
        .await
        .expect("heuristic");
    assert!(matches!(relevance.by, Implementation::Heuristic(_)));
    assert!(sent.all().is_empty(), "a verdict went to the model");
    let entities = router
        .extract_entities(&ExtractEntities {
            text: "Paris is in France.".into(),
        })
        .await
        .expect("llm");
    assert_eq!(entities.value, ["Paris"]);
    assert_eq!(sent.all().len(), 1);

    let routes = router.describe();
    assert_eq!(routes.len(), TaskKind::ALL.len());
    let support = routes
        .iter()
        .find(|r| r.task == TaskKind::SupportVerdicts)
        .expect("listed");
    match &support.answered_by {
        Some(Answerer::Heuristic(info)) => {
            assert_eq!(info.name, "content_word_overlap");
            assert!(info.thresholds.iter().any(|t| t.name == "support_full.en"));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        support
            .summary()
            .contains("WikiEval faithfulness pairwise accuracy"),
        "{}",
        support.summary()
    );
    let entities = routes
        .iter()
        .find(|r| r.task == TaskKind::ExtractEntities)
        .expect("listed");
    match &entities.answered_by {
        Some(Answerer::Llm {
            model, templates, ..
        }) => {
            assert_eq!(model, "mock-chat");
            let ids: Vec<String> = templates.iter().map(ToString::to_string).collect();
            assert_eq!(ids, ["extract_entities.en@1", "extract_entities.zh@1"]);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn without_a_chat_model_generation_fails_clearly_and_verdicts_still_work() {
    let router = TaskJudge::new(Policy::llm()).with_heuristic(Heuristic::lexical());
    // The policy prefers the model, none is there: the heuristic answers what it can.
    assert_eq!(
        router.route(TaskKind::ContextRelevance).ok(),
        Some(Route::Heuristic)
    );
    let split = router
        .split_statements(&SplitStatements {
            question: "q".into(),
            text: "Paris is in France. Berlin is in Germany.".into(),
        })
        .await
        .expect("sentences");
    assert_eq!(split.value.len(), 2);
    let error = router
        .generate_questions(&GenerateQuestions {
            answer: "Paris.".into(),
            n: 3,
        })
        .await
        .expect_err("no model");
    assert!(matches!(error, TaskError::Unavailable { .. }));
    assert_eq!(
        error.to_string(),
        "generate_questions: no judge can answer it: it needs a chat model (it has no heuristic \
         implementation) and none is configured"
    );
    let routes = router.describe();
    let questions = routes
        .iter()
        .find(|r| r.task == TaskKind::GenerateQuestions)
        .expect("listed");
    assert!(questions.answered_by.is_none());
    assert_eq!(questions.summary(), "generate_questions: unavailable");
    let nothing = TaskJudge::new(Policy::offline());
    assert!(nothing.route(TaskKind::SupportVerdicts).is_err());
}

#[tokio::test]
async fn inputs_with_nothing_to_judge_are_answered_by_rules_without_calls() {
    let (mock, sent) = scripted(|_, _| "never asked".into()).await;
    let router = TaskJudge::new(Policy::llm()).with_llm(judge(&mock));
    let no_statements = router
        .support_verdicts(&SupportVerdicts {
            statements: vec![],
            contexts: texts(&["c"]),
            premise: Default::default(),
            history: Vec::new(),
        })
        .await
        .expect("rule");
    assert!(no_statements.value.is_empty());
    let no_contexts = router
        .support_verdicts(&SupportVerdicts {
            statements: texts(&["Paris is in France."]),
            contexts: texts(&["  "]),
            premise: Default::default(),
            history: Vec::new(),
        })
        .await
        .expect("rule");
    assert_eq!(no_contexts.value[0].support, Support::NotSupported);
    assert!(matches!(no_contexts.by, Implementation::Rule { .. }));
    let blank = router
        .split_statements(&SplitStatements {
            question: "q".into(),
            text: " ".into(),
        })
        .await
        .expect("rule");
    assert!(blank.value.is_empty());
    let one = router
        .merge_answers(&MergeAnswers {
            question: "q".into(),
            answers: texts(&["", " Paris. "]),
        })
        .await
        .expect("rule");
    assert_eq!(one.value, "Paris.");
    let none = router
        .merge_answers(&MergeAnswers {
            question: "q".into(),
            answers: vec![],
        })
        .await
        .expect_err("nothing to merge");
    assert!(matches!(none, TaskError::Input { .. }));
    assert!(sent.all().is_empty());
}
