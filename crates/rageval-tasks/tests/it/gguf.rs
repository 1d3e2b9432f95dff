//! Every typed task's real prompt pack and schema through the embedded GGUF chat model
//! (SmolLM2-135M-Instruct from the models folder that `scripts/fetch-models.sh` fills): 50
//! calls over the fifteen tasks, English and Chinese inputs, each answered by schema-valid
//! JSON on the first rung — the grammar derived from the schema leaves the model no other
//! output.

use rageval_judge::local::gguf_chat;
use rageval_judge::{GgufOptions, Judge, JudgeConfig, ModelFiles, Models, Rung};
use rageval_tasks::{
    Abstention, AnswerFromContexts, AnswerRubric, ContextRelevance, ContextUsefulness,
    ContextsCheck, ExtractEntities, GenerateQuestions, GradeRelevance, GradeRelevanceBatch,
    JudgeRubric, MergeAnswers, OrderContexts, PairwisePreference, Policy, QuestionSimilarity,
    Rubric, RubricField, RubricScale, SplitStatements, SupportVerdicts, TaskJudge, TaskKind,
};

/// (question, context, answer): five English, five Chinese.
const ITEMS: [(&str, &str, &str); 10] = [
    (
        "Where is the Eiffel Tower?",
        "The Eiffel Tower is a wrought-iron tower in Paris, finished in 1889.",
        "It is in Paris and was finished in 1889.",
    ),
    (
        "How often is interest paid on a savings account?",
        "Most savings accounts pay interest monthly; it compounds daily at some banks.",
        "Usually monthly.",
    ),
    (
        "Who wrote Pride and Prejudice?",
        "Pride and Prejudice is an 1813 novel by Jane Austen.",
        "Jane Austen wrote it in 1813.",
    ),
    (
        "What does photosynthesis produce?",
        "Photosynthesis turns light energy into chemical energy stored in glucose, releasing oxygen.",
        "Glucose and oxygen.",
    ),
    (
        "At what temperature does water boil at sea level?",
        "At sea level, pure water boils at 100 degrees Celsius.",
        "100 degrees Celsius.",
    ),
    (
        "中国的首都是哪里？",
        "北京是中华人民共和国的首都，也是全国的政治中心。",
        "北京。",
    ),
    (
        "光合作用产生什么？",
        "光合作用把光能转化为储存在葡萄糖中的化学能，并释放氧气。",
        "葡萄糖和氧气。",
    ),
    (
        "长江有多长？",
        "长江全长约6300公里，是中国第一长河。",
        "大约6300公里。",
    ),
    (
        "Scratch 适合几岁的孩子？",
        "Scratch 是麻省理工学院开发的图形化编程工具，适合8到16岁的孩子。",
        "8到16岁。",
    ),
    (
        "水在海平面的沸点是多少？",
        "在海平面，纯水的沸点是100摄氏度。",
        "100摄氏度。",
    ),
];

fn router() -> TaskJudge {
    let files = ModelFiles::locate(None).unwrap_or_else(|e| panic!("{e}"));
    // A build without the `gguf` feature stops here, naming it.
    let chat = gguf_chat(&files.gguf, GgufOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let judge = Judge::new(Models::chat(chat), None, JudgeConfig::default());
    TaskJudge::new(Policy::llm()).with_llm(judge)
}

/// Asks task `kind` about `item`; returns the rung the answer ended on.
async fn ask(router: &TaskJudge, kind: TaskKind, item: (&str, &str, &str)) -> Option<Rung> {
    let (question, context, answer) = (item.0.to_owned(), item.1.to_owned(), item.2.to_owned());
    let outcome = match kind {
        TaskKind::SplitStatements => router
            .split_statements(&SplitStatements {
                question,
                text: answer,
            })
            .await
            .map(|j| j.rung),
        TaskKind::SupportVerdicts => router
            .support_verdicts(&SupportVerdicts {
                statements: vec![answer],
                contexts: vec![context],
                premise: Default::default(),
                history: Vec::new(),
            })
            .await
            .map(|j| j.rung),
        TaskKind::ContextRelevance => router
            .context_relevance(&ContextRelevance { question, context })
            .await
            .map(|j| j.rung),
        TaskKind::ContextUsefulness => router
            .context_usefulness(&ContextUsefulness {
                question,
                answer,
                context,
            })
            .await
            .map(|j| j.rung),
        TaskKind::AnswerRubric => router
            .answer_rubric(&AnswerRubric { question, answer })
            .await
            .map(|j| j.rung),
        TaskKind::GenerateQuestions => router
            .generate_questions(&GenerateQuestions { answer, n: 2 })
            .await
            .map(|j| j.rung),
        TaskKind::QuestionSimilarity => router
            .question_similarity(&QuestionSimilarity {
                candidates: vec![format!("{question}?"), context],
                question,
            })
            .await
            .map(|j| j.rung),
        TaskKind::ExtractEntities => router
            .extract_entities(&ExtractEntities { text: context })
            .await
            .map(|j| j.rung),
        TaskKind::GradeRelevance => router
            .grade_relevance(&GradeRelevance { question, context })
            .await
            .map(|j| j.rung),
        TaskKind::GradeRelevanceBatch => router
            .grade_relevance_batch(&GradeRelevanceBatch {
                question,
                contexts: vec![context, answer],
            })
            .await
            .map(|j| j.rung),
        TaskKind::OrderContexts => router
            .order_contexts(&OrderContexts {
                question,
                contexts: vec![context, answer],
            })
            .await
            .map(|j| j.rung),
        TaskKind::PairwisePreference => router
            .pairwise_preference(&PairwisePreference {
                question,
                first: context,
                second: answer,
            })
            .await
            .map(|j| j.rung),
        TaskKind::AnswerFromContexts => router
            .answer_from_contexts(&AnswerFromContexts {
                question,
                contexts: vec![context],
            })
            .await
            .map(|j| j.rung),
        TaskKind::ContextsCheck => router
            .contexts_check(&ContextsCheck {
                question,
                contexts: vec![context.clone()],
                reference: Some(context),
                split_reference: true,
                usefulness: true,
                answer: Some(answer.clone()),
                statements: vec![answer],
            })
            .await
            .map(|j| j.rung),
        TaskKind::Abstention => router
            .abstention(&Abstention {
                question,
                contexts: vec![context],
                answer,
            })
            .await
            .map(|j| j.rung),
        TaskKind::MergeAnswers => router
            .merge_answers(&MergeAnswers {
                question,
                answers: vec![answer, context],
            })
            .await
            .map(|j| j.rung),
        TaskKind::CustomRubric => router
            .judge_rubric(&JudgeRubric {
                rubric: std::sync::Arc::new(Rubric {
                    name: "grounded".into(),
                    summary: None,
                    criterion_en: "The answer says only what the passage says.".into(),
                    criterion_zh: None,
                    reads: vec![RubricField::Contexts, RubricField::Answer],
                    scale: RubricScale::PassFail,
                    examples: Vec::new(),
                }),
                question,
                answer,
                contexts: vec![context],
                reference: String::new(),
            })
            .await
            .map(|j| j.rung),
        TaskKind::WriteTestItem => router
            .write_test_item(&rageval_tasks::WriteTestItem {
                category: rageval_core::testset::Category::Fact,
                passages: vec![context],
            })
            .await
            .map(|j| j.rung),
        TaskKind::AnswerClosedBook => router
            .answer_closed_book(&rageval_tasks::AnswerClosedBook { question })
            .await
            .map(|j| j.rung),
        TaskKind::CompareAnswers => router
            .compare_answers(&rageval_tasks::CompareAnswers {
                question,
                reference: String::new(),
                first: rageval_tasks::ShownAnswer {
                    answer: answer.clone(),
                    contexts: vec![context.clone()],
                },
                second: rageval_tasks::ShownAnswer {
                    answer: context,
                    contexts: Vec::new(),
                },
                criterion: None,
            })
            .await
            .map(|j| j.rung),
        TaskKind::KnowledgeRetention => router
            .knowledge_retention(&rageval_tasks::KnowledgeRetention {
                question: question.clone(),
                answer,
                history: vec![rageval_core::Turn::new(
                    1,
                    rageval_core::Role::User,
                    context,
                )],
            })
            .await
            .map(|j| j.rung),
        TaskKind::ResolveQuestion => router
            .resolve_question(&rageval_tasks::ResolveQuestion {
                question: format!("{question}?"),
                history: vec![rageval_core::Turn::new(
                    1,
                    rageval_core::Role::User,
                    question,
                )],
            })
            .await
            .map(|j| j.rung),
        TaskKind::ToolArgumentMeaning => router
            .tool_argument_meaning(&rageval_tasks::ToolArgumentMeaning::new(
                "search",
                [("query".to_owned(), question, answer)],
            ))
            .await
            .map(|j| j.rung),
    };
    outcome.unwrap_or_else(|e| panic!("{kind} on {item:?}: {e}"))
}

// Not in CI: about 9 minutes on 2 cores, and it fails today — on `answer_rubric` the model's
// reason string runs to the token limit, the cut-off answer is re-asked, and the re-ask
// quoting it no longer fitted the window (measured with a 4,096-token window; the window is
// 8,192 now and a prompt without room for the answer is refused before decoding). The grammar-level check that CI
// runs is `rageval-judge`'s `gguf::twenty_varied_prompts_all_answer_schema_valid_json_directly`.
#[ignore = "slow (~9 min on 2 cores) and failing on answer_rubric; see the comment"]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_typed_task_prompts_in_english_and_chinese_answer_schema_valid_json() {
    let router = router();
    // 15 tasks against 10 items (5 English, then 5 Chinese): over the 50 calls every task
    // meets items of both languages.
    for call in 0..50 {
        let kind = TaskKind::ALL[call % TaskKind::ALL.len()];
        let item = ITEMS[call % ITEMS.len()];
        let rung = ask(&router, kind, item).await;
        assert_eq!(rung, Some(Rung::Direct), "call {call}: {kind} on {item:?}");
    }
}
