//! The baseline RAG (seed S4's "V1.0"): the local index's contexts answered by a chat model
//! through the typed task, here the testkit's mock endpoint scripted per question; an
//! "unknown" answer, no chat model, and refused credentials.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rageval_core::dataset::{ReadOptions, read_all};
use rageval_judge::{
    CacheMode, EndpointSettings, Judge, JudgeConfig, Models, OpenAiBackend, RetryPolicy,
};
use rageval_sources::baseline::UNKNOWN_ANSWER_ZH;
use rageval_sources::{BaselineGenerator, CollectOptions, SourceError, collect};
use rageval_tasks::{Heuristic, LangChoice, Policy, TaskJudge};
use rageval_testkit::{MockConfig, MockServer, Reply};
use serde_json::{Value, json};

use super::collect::{questions, retriever};

/// A task judge whose chat model is `mock`.
fn tasks(mock: &MockServer, key: Option<&str>) -> TaskJudge {
    let mut settings = EndpointSettings::new(&mock.base_url, "mock-chat");
    if let Some(key) = key {
        settings.api_key = Some(rageval_judge::ApiKey::new(key));
    }
    let config = JudgeConfig {
        retry: RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            max_retry_after: Duration::from_millis(50),
        },
        cache_mode: CacheMode::Off,
        ..JudgeConfig::default()
    };
    let judge = Judge::new(
        Models::both(OpenAiBackend::new(settings).unwrap()),
        None,
        config,
    );
    TaskJudge::new(Policy::llm()).with_llm(judge)
}

/// The user message of a chat request.
fn user_message(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_questions_answered_from_the_local_index() {
    if super::fixtures::skip_without_kids("twenty_questions_answered_from_the_local_index") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&prompts);
    // Answers only when the passages hold the market size, like a model told to answer
    // from the contexts alone.
    let mock = MockServer::start(MockConfig {
        script: Some(Arc::new(move |body: &Value| {
            let user = user_message(body);
            let reply = if user.contains("488") {
                json!({"answer": "约488亿元。", "found": true})
            } else {
                json!({"answer": "", "found": false})
            };
            seen.lock().unwrap().push(user);
            Reply::Content(reply.to_string())
        })),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let generator = BaselineGenerator::new(tasks(&mock, None), LangChoice::Auto).unwrap();
    let out = dir.path().join("data.jsonl");
    let report = collect(
        questions(),
        retriever(dir.path()).await,
        Arc::new(generator),
        &out,
        &CollectOptions {
            concurrency: 4,
            ..CollectOptions::default()
        },
        &|_| {},
    )
    .await
    .unwrap();
    assert_eq!((report.written, report.failed.len()), (20, 0));
    assert_eq!(mock.stats().chat_requests, 20);

    let samples = read_all(&out, &ReadOptions::default()).unwrap();
    assert_eq!(samples.len(), 20);
    let prompts = prompts.lock().unwrap();
    let (mut known, mut unknown) = (0, 0);
    for sample in &samples {
        assert_eq!(sample.contexts.len(), 3);
        // The model was shown the contexts the record keeps, with the question.
        let prompt = prompts
            .iter()
            .find(|p| p.contains(&sample.question))
            .unwrap_or_else(|| panic!("{:?} not in {:?}", sample.question, prompts.first()));
        for context in &sample.contexts {
            assert!(context.id.is_some() && context.score.is_some());
            assert!(prompt.contains(&context.text), "{}", sample.id);
        }
        let generation = &sample.metadata["collected"]["generation"];
        assert_eq!(generation["model"], "mock-chat");
        assert!(
            generation["template"]
                .as_str()
                .unwrap()
                .starts_with("answer_from_contexts.zh@"),
            "{generation}"
        );
        if generation["found"] == true {
            known += 1;
            assert_eq!(sample.answer.as_deref(), Some("约488亿元。"));
        } else {
            unknown += 1;
            assert_eq!(sample.answer.as_deref(), Some(UNKNOWN_ANSWER_ZH));
        }
        assert!(!sample.references.is_empty(), "the reference is kept");
    }
    assert!(known > 0 && unknown > 0, "{known} known, {unknown} unknown");
}

#[test]
fn no_chat_model_is_a_fatal_error_before_any_question() {
    let offline = TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical());
    let error = BaselineGenerator::new(offline, LangChoice::Auto).unwrap_err();
    assert!(matches!(error, SourceError::Answer(_)), "{error:?}");
    assert!(error.is_fatal());
    let why = std::error::Error::source(&error).unwrap().to_string();
    assert!(why.contains("answer_from_contexts"), "{why}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_credentials_stop_the_run() {
    if super::fixtures::skip_without_kids("refused_credentials_stop_the_run") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mock = MockServer::start(MockConfig {
        api_key: Some("right".into()),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let generator = BaselineGenerator::new(tasks(&mock, Some("wrong")), LangChoice::Auto).unwrap();
    let out = dir.path().join("data.jsonl");
    let error = collect(
        questions(),
        retriever(dir.path()).await,
        Arc::new(generator),
        &out,
        &CollectOptions {
            concurrency: 2,
            ..CollectOptions::default()
        },
        &|_| {},
    )
    .await
    .unwrap_err();
    assert!(error.is_fatal(), "{error:?}");
    assert!(
        mock.stats().chat_requests <= 4,
        "no new question starts after the 401: {:?}",
        mock.stats()
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap_or_default(), "");
}

/// A chat model whose window holds `max_chars` characters of prompt: longer prompts get
/// the typed `PromptTooLong`, as the embedded GGUF model gives them.
struct SmallWindow {
    max_chars: usize,
    prompts: Arc<Mutex<Vec<usize>>>,
}

impl rageval_judge::ChatModel for SmallWindow {
    fn kind(&self) -> &str {
        "test"
    }
    fn model(&self) -> &str {
        "small-window"
    }
    fn endpoint(&self) -> String {
        "in-process".into()
    }
    fn supports_response_schema(&self) -> bool {
        true
    }
    async fn chat(
        &self,
        request: &rageval_judge::ChatRequest,
    ) -> Result<rageval_judge::ChatResponse, rageval_judge::JudgeError> {
        let chars: usize = request.messages.iter().map(|m| m.content.len()).sum();
        self.prompts.lock().unwrap().push(chars);
        if chars > self.max_chars {
            return Err(rageval_judge::JudgeError::PromptTooLong {
                model: "small-window".into(),
                prompt_tokens: chars as u64,
                answer_tokens: 0,
                window: self.max_chars as u64,
            });
        }
        Ok(rageval_judge::ChatResponse {
            text: json!({"answer": "from the best passages", "found": true}).to_string(),
            usage: rageval_judge::Usage::default(),
            finish_reason: Some("stop".into()),
            thinking: None,
            thinking_text: String::new(),
        })
    }
}

/// A prompt too long for the model's window is asked again without the lowest-ranked
/// context until it fits; the answer keeps the contexts it was written from and says how
/// many were left out. When even one context does not fit, the question fails with the
/// window error.
#[tokio::test]
async fn contexts_that_do_not_fit_the_window_are_left_out_from_the_lowest() {
    let passage = |i: usize| rageval_sources::Retrieved {
        id: format!("c{i}"),
        text: "x".repeat(2_000),
        score: Some(1.0 / (i + 1) as f64),
        fields: Default::default(),
    };
    let retrieved: Vec<_> = (0..4).map(passage).collect();
    let sample = rageval_core::Sample {
        id: "1".into(),
        question: "What do the passages say?".into(),
        ..Default::default()
    };
    let generator = |max_chars: usize, prompts: &Arc<Mutex<Vec<usize>>>| {
        let chat = SmallWindow {
            max_chars,
            prompts: Arc::clone(prompts),
        };
        let config = JudgeConfig {
            cache_mode: CacheMode::Off,
            ..JudgeConfig::default()
        };
        let judge = Judge::new(Models::chat(chat), None, config);
        let tasks = TaskJudge::new(Policy::llm()).with_llm(judge);
        BaselineGenerator::new(tasks, LangChoice::Auto).unwrap()
    };
    use rageval_sources::Generator as _;

    // Room for two passages and the template, not three.
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let generated = generator(6_500, &prompts)
        .generate(&sample, &retrieved)
        .await
        .unwrap();
    let kept = generated.contexts.expect("the contexts it answered from");
    assert_eq!(
        kept.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["c0", "c1"]
    );
    assert_eq!(generated.details["contexts_left_out"]["count"], 2);
    assert_eq!(prompts.lock().unwrap().len(), 3, "4, 3, then 2 contexts");

    // Everything fits: nothing left out, the retrieved contexts stand.
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let generated = generator(100_000, &prompts)
        .generate(&sample, &retrieved)
        .await
        .unwrap();
    assert!(generated.contexts.is_none());
    assert!(generated.details.get("contexts_left_out").is_none());

    // Not even one passage fits: the question fails with the window error.
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let error = generator(1_000, &prompts)
        .generate(&sample, &retrieved)
        .await
        .unwrap_err();
    assert!(format!("{error:?}").contains("PromptTooLong"), "{error:?}");
    assert_eq!(prompts.lock().unwrap().len(), 4, "4, 3, 2, then 1 context");
}
