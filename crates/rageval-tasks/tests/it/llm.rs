//! Every task's LLM path: the scripted answer becomes the typed value, the provenance names
//! the model and template, garbage ends in an error that keeps the raw text, and the pack
//! follows the question's script.

use rageval_judge::{Rung, TemplateId};
use rageval_tasks::{
    AnswerFromContexts, AnswerRubric, ContextAnswer, ContextRelevance, ContextUsefulness,
    ContextsCheck, ExtractEntities, GenerateQuestions, GradeRelevance, GradeRelevanceBatch,
    Implementation, Lang, LangChoice, MergeAnswers, OrderContexts, PairwisePreference, Preferred,
    QuestionSimilarity, SplitStatements, Support, SupportVerdicts,
};

use crate::support::{llm_router, scripted};

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn template_of<T>(judged: &rageval_tasks::Judged<T>) -> TemplateId {
    match &judged.by {
        Implementation::Llm { template, .. } => template.clone(),
        other => panic!("not an llm answer: {other:?}"),
    }
}

#[tokio::test]
async fn statements_are_cleaned_and_the_provenance_names_model_and_template() {
    let (mock, sent) = scripted(|_, _| {
        r#"{"statements": ["Paris is the capital of France. ", "  ", "Paris is the capital of France.", "Paris has 2 million people."]}"#.into()
    })
    .await;
    let judge = llm_router(&mock);
    let task = SplitStatements {
        question: "What is the capital of France?".into(),
        text: "Paris. It has 2 million people.".into(),
    };
    let out = judge.split_statements(&task).await.expect("statements");
    assert_eq!(
        out.value,
        [
            "Paris is the capital of France.",
            "Paris has 2 million people."
        ]
    );
    match &out.by {
        Implementation::Llm {
            backend,
            model,
            template,
            lang,
            after_thinking,
        } => {
            assert_eq!(*after_thinking, None);
            assert_eq!((backend.as_str(), model.as_str()), ("openai", "mock-chat"));
            assert_eq!(template.to_string(), "split_statements.en@2");
            assert_eq!(*lang, Lang::En);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(out.rung, Some(Rung::Direct));
    assert!(!out.cached);
    assert!(out.usage.total() > 0);
    let (system, user) = sent.messages(0);
    assert!(system.contains("atomic statements"), "{system}");
    assert!(user.contains("Paris. It has 2 million people."), "{user}");
}

#[tokio::test]
async fn support_verdicts_map_keys_labels_and_context_numbers() {
    let (mock, sent) = scripted(|_, _| {
        r#"{"verdicts": {
            "s2": {"reason": "context 2 says otherwise", "supporting_context": 2, "verdict": "contradicted"},
            "s1": {"reason": "context 1 states it", "supporting_context": 1, "verdict": "fully_supported"},
            "s3": {"reason": "nothing about it", "supporting_context": 0, "verdict": "not_supported"}
        }}"#
        .into()
    })
    .await;
    let task = SupportVerdicts {
        statements: strings(&["A is 1.", "B is 2.", "C is 3."]),
        contexts: strings(&["A is 1.", "B is 5."]),
        premise: Default::default(),
        history: Vec::new(),
    };
    let out = llm_router(&mock)
        .support_verdicts(&task)
        .await
        .expect("verdicts");
    let got: Vec<(Support, Option<usize>)> =
        out.value.iter().map(|v| (v.support, v.context)).collect();
    assert_eq!(
        got,
        [
            (Support::FullySupported, Some(0)),
            (Support::Contradicted, Some(1)),
            (Support::NotSupported, None)
        ]
    );
    assert_eq!(out.value[1].reason, "context 2 says otherwise");
    // One call for all statements; the prompt names the keys and the context count.
    assert_eq!(sent.all().len(), 1);
    let (system, user) = sent.messages(0);
    assert!(
        system.contains("s1, s2, s3") && system.contains("from 1 to 2"),
        "{system}"
    );
    assert!(
        user.contains("statement s3") && user.contains("context 2"),
        "{user}"
    );
    let schema = &sent.all()[0]["response_format"]["json_schema"]["schema"];
    assert_eq!(
        schema["properties"]["verdicts"]["required"],
        serde_json::json!(["s1", "s2", "s3"])
    );
}

#[tokio::test]
async fn binary_verdicts_rubric_and_grade_parse() {
    let (mock, _) = scripted(|system, _| {
        if system.contains("relevant to a user's question") {
            r#"{"reason": "about it", "relevant": true}"#.into()
        } else if system.contains("useful for arriving") {
            r#"{"reason": "not used", "useful": false}"#.into()
        } else if system.contains("rate how well") {
            r#"{"reason": "mostly", "score": 4}"#.into()
        } else {
            r#"{"reason": "has the answer", "relevance": 3}"#.into()
        }
    })
    .await;
    let judge = llm_router(&mock);
    let (q, c) = (
        "Who wrote Hamlet?".to_owned(),
        "Shakespeare wrote Hamlet.".to_owned(),
    );
    let relevance = judge
        .context_relevance(&ContextRelevance {
            question: q.clone(),
            context: c.clone(),
        })
        .await
        .expect("relevance");
    assert!(relevance.value.relevant);
    assert_eq!(relevance.value.reason, "about it");
    let usefulness = judge
        .context_usefulness(&ContextUsefulness {
            question: q.clone(),
            answer: "Shakespeare.".into(),
            context: c.clone(),
        })
        .await
        .expect("usefulness");
    assert!(!usefulness.value.useful);
    let rubric = judge
        .answer_rubric(&AnswerRubric {
            question: q.clone(),
            answer: "Shakespeare.".into(),
        })
        .await
        .expect("rubric");
    assert_eq!(rubric.value.score, 4);
    assert_eq!(rubric.value.normalised(), 0.75);
    let grade = judge
        .grade_relevance(&GradeRelevance {
            question: q,
            context: c,
        })
        .await
        .expect("grade");
    assert_eq!(grade.value.grade, 3);
    assert_eq!(template_of(&grade).to_string(), "grade_relevance.en@1");
}

#[tokio::test]
async fn questions_similarity_entities_and_preference_parse() {
    let (mock, _) = scripted(|system, user| {
        if system.contains("noncommittal") && user.contains("don't know") {
            r#"{"noncommittal": 1, "questions": ["What is it?", "Who is it?", "Why?"]}"#.into()
        } else if system.contains("noncommittal") {
            r#"{"noncommittal": 0, "questions": ["Who wrote Hamlet?", "Which play did Shakespeare write?", "Who is Hamlet's author?"]}"#.into()
        } else if system.contains("candidate questions") {
            r#"{"verdicts": {"q1": {"reason": "same", "similar": true}, "q2": {"reason": "broader", "similar": false}}}"#.into()
        } else if system.contains("named entities") {
            r#"{"entities": ["Shakespeare", "Hamlet", "Shakespeare", " "]}"#.into()
        } else {
            r#"{"reason": "B has the answer", "winner": "B"}"#.into()
        }
    })
    .await;
    let judge = llm_router(&mock);
    let questions = judge
        .generate_questions(&GenerateQuestions {
            answer: "Shakespeare wrote Hamlet.".into(),
            n: 3,
        })
        .await
        .expect("questions");
    assert_eq!(questions.value.questions.len(), 3);
    assert!(!questions.value.noncommittal);
    // ragas's flag is the integer 0/1; 1 marks the answer evasive.
    let evasive = judge
        .generate_questions(&GenerateQuestions {
            answer: "I don't know.".into(),
            n: 3,
        })
        .await
        .expect("questions");
    assert!(evasive.value.noncommittal);
    let similar = judge
        .question_similarity(&QuestionSimilarity {
            question: "Who wrote Hamlet?".into(),
            candidates: strings(&[
                "Who is the author of Hamlet?",
                "What did Shakespeare write?",
            ]),
        })
        .await
        .expect("similarity");
    let flags: Vec<bool> = similar.value.iter().map(|v| v.similar).collect();
    assert_eq!(flags, [true, false]);
    let entities = judge
        .extract_entities(&ExtractEntities {
            text: "Shakespeare wrote Hamlet.".into(),
        })
        .await
        .expect("entities");
    assert_eq!(entities.value, ["Shakespeare", "Hamlet"]);
    let preference = judge
        .pairwise_preference(&PairwisePreference {
            question: "Who wrote Hamlet?".into(),
            first: "Hamlet is a play.".into(),
            second: "Shakespeare wrote Hamlet.".into(),
        })
        .await
        .expect("preference");
    assert_eq!(preference.value.preferred, Preferred::Second);
}

#[tokio::test]
async fn answers_unknowns_and_merges_parse() {
    let (mock, _) = scripted(|system, user| {
        if system.contains("merge partial answers") {
            r#"{"answer": "Shakespeare wrote Hamlet around 1600."}"#.into()
        } else if user.contains("Macbeth") {
            r#"{"answer": "", "found": false}"#.into()
        } else {
            r#"{"answer": " Shakespeare. ", "found": true}"#.into()
        }
    })
    .await;
    let judge = llm_router(&mock);
    let ask = |context: &str| AnswerFromContexts {
        question: "Who wrote Hamlet?".into(),
        contexts: strings(&[context]),
    };
    let known = judge
        .answer_from_contexts(&ask("Shakespeare wrote Hamlet."))
        .await
        .expect("answer");
    assert_eq!(
        known.value,
        ContextAnswer {
            answer: Some("Shakespeare.".into())
        }
    );
    let unknown = judge
        .answer_from_contexts(&ask("Macbeth is a tragedy."))
        .await
        .expect("unknown");
    assert_eq!(unknown.value, ContextAnswer { answer: None });
    let merged = judge
        .merge_answers(&MergeAnswers {
            question: "Who wrote Hamlet?".into(),
            answers: strings(&["Shakespeare.", "Written around 1600."]),
        })
        .await
        .expect("merge");
    assert_eq!(merged.value, "Shakespeare wrote Hamlet around 1600.");
}

#[tokio::test]
async fn garbage_ends_in_an_error_that_keeps_the_raw_text() {
    let (mock, sent) = scripted(|_, _| "I think it is relevant, probably yes!".into()).await;
    let judge = llm_router(&mock);
    let error = judge
        .context_relevance(&ContextRelevance {
            question: "Who wrote Hamlet?".into(),
            context: "Shakespeare wrote Hamlet.".into(),
        })
        .await
        .expect_err("garbage cannot parse");
    assert_eq!(
        error.raw_answer(),
        Some("I think it is relevant, probably yes!")
    );
    assert_eq!(
        error.task(),
        Some(rageval_tasks::TaskKind::ContextRelevance)
    );
    assert!(
        error.to_string().starts_with("context_relevance: "),
        "{error}"
    );
    // The ladder asked once more, quoting the error, then climbed once more afresh (ask and
    // re-ask: rageval_judge::judge::FRESH_ROUNDS) before giving up.
    assert_eq!(sent.all().len(), 4);
    let counts = judge.llm().expect("llm").rung_counts();
    assert_eq!(counts["context_relevance.en@1"].failed, 1);
    // An answer of the right JSON type but out of range is caught by the schema too.
    let (mock, _) = scripted(|_, _| r#"{"reason": "great", "score": 9}"#.into()).await;
    let error = llm_router(&mock)
        .answer_rubric(&AnswerRubric {
            question: "q".into(),
            answer: "a".into(),
        })
        .await
        .expect_err("9 is out of range");
    assert_eq!(
        error.raw_answer(),
        Some(r#"{"reason": "great", "score": 9}"#)
    );
}

#[tokio::test]
async fn the_pack_follows_the_question_script_unless_forced() {
    let (mock, sent) = scripted(|_, _| r#"{"reason": "相关", "relevant": true}"#.into()).await;
    let judge = llm_router(&mock);
    let chinese = ContextRelevance {
        question: "少儿编程的市场规模有多大？".into(),
        context: "The market was worth 30 billion yuan.".into(),
    };
    let out = judge.context_relevance(&chinese).await.expect("zh");
    assert_eq!(template_of(&out).to_string(), "context_relevance.zh@1");
    let (system, user) = sent.messages(0);
    assert!(system.contains("你的工作是判断"), "{system}");
    assert!(user.contains("问题："), "{user}");
    let english = ContextRelevance {
        question: "How large is the market?".into(),
        context: "市场规模约为三百亿元。".into(),
    };
    let out = judge.context_relevance(&english).await.expect("en");
    assert_eq!(template_of(&out).to_string(), "context_relevance.en@1");
    let forced = judge.clone().with_lang(LangChoice::Force(Lang::Zh));
    let out = forced.context_relevance(&english).await.expect("forced");
    assert_eq!(template_of(&out).to_string(), "context_relevance.zh@1");
    let (system, _) = sent.messages(2);
    assert!(system.contains("围栏"), "{system}");
}

#[tokio::test]
async fn one_contexts_check_splits_the_reference_and_judges_usefulness_and_statements() {
    let (mock, sent) = scripted(|_, _| {
        r#"{
            "reference_claims": [
                {"claim": "A is 1.", "reason": "passage 1 states it", "supporting_context": 1, "verdict": "fully_supported"},
                {"claim": "C is 3.", "reason": "no passage says so", "supporting_context": 0, "verdict": "not_supported"}
            ],
            "useful_passages": {
                "2": {"reason": "B is not in the reference", "useful": false},
                "1": {"reason": "holds A", "useful": true}
            },
            "verdicts": {"s1": {"reason": "passage 2 says 5", "supporting_context": 2, "verdict": "contradicted"}}
        }"#
        .into()
    })
    .await;
    let judge = llm_router(&mock);
    let mut task = ContextsCheck {
        question: "What are A and C?".into(),
        contexts: strings(&["A is 1.", "B is 5."]),
        reference: Some("A is 1 and C is 3.".into()),
        split_reference: true,
        usefulness: true,
        answer: None,
        statements: strings(&["B is 2."]),
    };
    let out = judge.contexts_check(&task).await.expect("checked");
    assert_eq!(out.value.reference_statements, ["A is 1.", "C is 3."]);
    let reference: Vec<_> = (out.value.reference_verdicts.iter())
        .map(|v| (v.support, v.context))
        .collect();
    assert_eq!(
        reference,
        [
            (Support::FullySupported, Some(0)),
            (Support::NotSupported, None)
        ]
    );
    let useful: Vec<_> = out.value.usefulness.iter().map(|v| v.useful).collect();
    assert_eq!(useful, [true, false]);
    assert_eq!(out.value.usefulness[1].reason, "B is not in the reference");
    assert_eq!(out.value.verdicts[0].support, Support::Contradicted);
    assert_eq!(out.value.verdicts[0].context, Some(1));
    assert_eq!(template_of(&out).to_string(), "contexts_check.en@2");
    // One call; the contexts and the reference are each sent once, fenced.
    let (system, user) = sent.messages(0);
    assert!(system.contains("reference_claims") && system.contains("useful_passages"));
    assert_eq!(user.matches("A is 1.").count(), 1, "{user}");
    assert!(
        user.contains("passage 2") && user.contains("statement s1"),
        "{user}"
    );
    let schema = &sent.all()[0]["response_format"]["json_schema"]["schema"];
    assert_eq!(
        schema["required"],
        serde_json::json!(["reference_claims", "useful_passages", "verdicts"])
    );

    // Only statements: no reference in the prompt, no parts about it in the schema.
    task.split_reference = false;
    task.usefulness = false;
    task.reference = None;
    let (mock, sent) = scripted(|_, _| {
        r#"{"verdicts": {"s1": {"reason": "r", "supporting_context": 0, "verdict": "not_supported"}}}"#.into()
    })
    .await;
    let out = llm_router(&mock)
        .contexts_check(&task)
        .await
        .expect("checked");
    assert!(out.value.reference_statements.is_empty() && out.value.usefulness.is_empty());
    let (system, user) = sent.messages(0);
    assert!(
        !system.contains("reference_claims") && !user.contains("Reference"),
        "{system}\n{user}"
    );
    assert!(!system.contains("[["), "{system}");

    // A missing passage verdict is the judge's error, not a silent gap.
    task.usefulness = true;
    task.reference = Some("A is 1.".into());
    let (mock, _) = scripted(|_, _| {
        r#"{"useful_passages": {"1": {"reason": "r", "useful": true}}, "verdicts": {"s1": {"reason": "r", "supporting_context": 0, "verdict": "not_supported"}}}"#.into()
    })
    .await;
    assert!(llm_router(&mock).contexts_check(&task).await.is_err());
}

#[tokio::test]
async fn one_contexts_check_splits_the_answer_too_and_sends_each_text_once() {
    let (mock, sent) = scripted(|_, _| {
        r#"{
            "answer_claims": [
                {"claim": "B is 2.", "reason": "passage 2 says 5", "supporting_context": 2, "verdict": "contradicted"},
                {"claim": " ", "reason": "blank", "supporting_context": 0, "verdict": "not_supported"},
                {"claim": "A is 1.", "reason": "passage 1 states it", "supporting_context": 1, "verdict": "fully_supported"}
            ],
            "reference_claims": [
                {"claim": "A is 1.", "reason": "passage 1 states it", "supporting_context": 1, "verdict": "fully_supported"}
            ]
        }"#
        .into()
    })
    .await;
    let mut task = ContextsCheck {
        question: "What are A and B?".into(),
        contexts: strings(&["A is 1.", "B is 5."]),
        reference: Some("A is one.".into()),
        split_reference: true,
        usefulness: false,
        answer: Some("B is two, and A is one as well.".into()),
        statements: Vec::new(),
    };
    let out = llm_router(&mock)
        .contexts_check(&task)
        .await
        .expect("checked");
    assert_eq!(out.value.answer_statements, ["B is 2.", "A is 1."]);
    let answer: Vec<_> = (out.value.answer_verdicts.iter())
        .map(|v| (v.support, v.context))
        .collect();
    assert_eq!(
        answer,
        [
            (Support::Contradicted, Some(1)),
            (Support::FullySupported, Some(0))
        ]
    );
    assert_eq!(out.value.reference_statements, ["A is 1."]);
    assert!(out.value.verdicts.is_empty());
    assert_eq!(template_of(&out).to_string(), "contexts_check.en@2");
    // The answer is sent once, with what a claim is said once for both splits.
    let (system, user) = sent.messages(0);
    assert_eq!(user.matches("B is two").count(), 1, "{user}");
    assert_eq!(system.matches("A claim states exactly one fact").count(), 1);
    assert!(system.contains("answer_claims") && system.contains("reference_claims"));
    let schema = &sent.all()[0]["response_format"]["json_schema"]["schema"];
    assert_eq!(
        schema["required"],
        serde_json::json!(["answer_claims", "reference_claims"])
    );
    // Both splits share one item schema; no keyed verdicts are asked.
    let defs: Vec<&String> = schema["$defs"].as_object().expect("defs").keys().collect();
    assert_eq!(defs, ["claim"]);

    // A blank answer to split is the caller's error, with no call.
    task.answer = Some("  ".into());
    let (mock, sent) = scripted(|_, _| "{}".into()).await;
    assert!(llm_router(&mock).contexts_check(&task).await.is_err());
    assert!(sent.all().is_empty());
}

#[tokio::test]
async fn batch_grades_and_orders_parse_and_a_wrong_permutation_fails() {
    let (mock, sent) = scripted(|system, user| {
        if system.contains("\"grades\"") {
            r#"{"grades": {"p2": {"reason": "off topic", "relevance": 0}, "p1": {"reason": "answers", "relevance": 3}}}"#.into()
        } else if user.contains("Macbeth") {
            r#"{"reason": "p1 twice", "order": ["p1", "p1"]}"#.into()
        } else {
            r#"{"reason": "p2 answers", "order": ["p2", "p1"]}"#.into()
        }
    })
    .await;
    let judge = llm_router(&mock);
    let question = "Who wrote Hamlet?";
    let contexts = strings(&["Shakespeare wrote Hamlet.", "Hamlet is a play."]);
    let grades = judge
        .grade_relevance_batch(&GradeRelevanceBatch {
            question: question.into(),
            contexts: contexts.clone(),
        })
        .await
        .expect("grades");
    let values: Vec<u8> = grades.value.iter().map(|g| g.grade).collect();
    assert_eq!(values, [3, 0]);
    assert_eq!(
        template_of(&grades).to_string(),
        "grade_relevance_batch.en@1"
    );
    let (system, user) = sent.messages(0);
    assert!(system.contains("(p1, p2)"), "{system}");
    assert!(user.contains("passage p2"), "{user}");
    let order = judge
        .order_contexts(&OrderContexts {
            question: question.into(),
            contexts: contexts.clone(),
        })
        .await
        .expect("order");
    assert_eq!(order.value.order, [1, 0]);
    let error = judge
        .order_contexts(&OrderContexts {
            question: question.into(),
            contexts: strings(&["Macbeth is a play.", "Hamlet is a play."]),
        })
        .await
        .expect_err("a repeated key is not a permutation");
    assert!(error.to_string().contains("`p1` twice"), "{error}");
    assert!(error.raw_answer().is_some_and(|raw| raw.contains("p1")));
}
