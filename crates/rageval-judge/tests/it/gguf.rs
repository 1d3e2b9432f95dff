//! The embedded GGUF chat model (SmolLM2-135M-Instruct from the models folder, provisioned by
//! `scripts/fetch-models.sh`), through the real pipeline: every structured answer must match
//! its schema on the first rung, whatever the prompt or language.

use std::sync::OnceLock;

use rageval_judge::structured::validate;
use rageval_judge::{
    ChatModel, ChatRequest, GgufChat, GgufOptions, Judge, JudgeConfig, Message, ModelFiles, Models,
    Rung, Sampling, StructuredRequest, TemplateId,
};
use serde_json::{Value, json};

/// One model for the whole test binary: loading costs about a second, and the decoding
/// thread serves every test in turn.
fn model() -> &'static Models {
    static MODEL: OnceLock<Models> = OnceLock::new();
    MODEL.get_or_init(|| {
        let files = ModelFiles::locate(None).unwrap_or_else(|e| panic!("{e}"));
        let chat =
            GgufChat::open(&files.gguf, GgufOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        Models::chat(chat)
    })
}

fn judge() -> Judge<Models> {
    Judge::new(model().clone(), None, JudgeConfig::default())
}

fn text(max: u32) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": max})
}

fn object(properties: Value) -> Value {
    let required: Vec<&String> = properties
        .as_object()
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    })
}

/// Ten schema families a judge uses, each bounded (string lengths, item counts) so that a
/// complete answer fits in the token budget: a Chinese character can cost SmolLM2 three
/// tokens, and an answer cut by `max_tokens` is incomplete JSON whatever the grammar.
fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        (
            "support",
            object(
                json!({"reason": text(60), "verdict": {"type": "integer", "minimum": 0, "maximum": 1}}),
            ),
        ),
        (
            "relevance",
            object(json!({"label": {"enum": ["relevant", "partly", "irrelevant"]}})),
        ),
        (
            "score",
            object(
                json!({"score": {"type": "integer", "minimum": 1, "maximum": 5}, "certain": {"type": "boolean"}}),
            ),
        ),
        (
            "statements",
            object(
                json!({"statements": {"type": "array", "items": text(40), "minItems": 1, "maxItems": 3}}),
            ),
        ),
        (
            "questions",
            json!({"type": "array", "items": text(40), "minItems": 2, "maxItems": 3}),
        ),
        (
            "nested",
            object(json!({
                "claim": object(json!({"text": text(40), "supported": {"type": "boolean"}})),
                "evidence": object(json!({"source": {"enum": ["context", "answer", "none"]}, "quote": text(40)}))
            })),
        ),
        (
            "pairwise",
            object(
                json!({"preferred": {"enum": ["A", "B", "tie"]}, "margin": {"type": "integer", "minimum": 0, "maximum": 10}}),
            ),
        ),
        (
            "verdicts",
            object(
                json!({"verdicts": {"type": "array", "minItems": 1, "maxItems": 3, "items": object(json!({"statement": text(24), "verdict": {"enum": ["yes", "no"]}}))}}),
            ),
        ),
        (
            "chinese_keys",
            object(json!({"结论": {"enum": ["支持", "不支持"]}, "理由": text(30)})),
        ),
        (
            "answer",
            object(
                json!({"answer": text(60), "language": {"enum": ["en", "zh"]}, "cited": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}, "maxItems": 3}}),
            ),
        ),
    ]
}

/// Prompts for the families: three English, two Chinese. Each family is asked two of them, one
/// in each language ([`prompts_of`]); across the ten families every prompt is asked four
/// times. (Five per family, fifty calls, took a minute of CI's two cores for what twenty
/// show as well: the grammar, not the prompt, makes the answer valid.)
const PROMPTS: [&str; 5] = [
    "Context: The Eiffel Tower is in Paris and was finished in 1889.\nStatement: The Eiffel Tower was finished in 1889.",
    "Question: How often is interest paid on a savings account?\nAnswer: Usually monthly, and it compounds.",
    "Compare answer A (\"Water boils at 100 C at sea level.\") with answer B (\"Water boils at 50 C.\") for the question: at what temperature does water boil?",
    "上下文：北京是中华人民共和国的首都。\n陈述：上海是中国的首都。",
    "问题：光合作用产生什么？\n回答：光合作用把光能转化为储存在葡萄糖中的化学能。",
];

/// The two prompts family number `family` is asked: an English one and a Chinese one.
fn prompts_of(family: usize) -> [&'static str; 2] {
    [PROMPTS[family % 3], PROMPTS[3 + family % 2]]
}

fn structured(template: &str, prompt: &str, schema: &Value) -> StructuredRequest {
    StructuredRequest {
        template: TemplateId::new(template, 1),
        messages: vec![
            Message::system("You are a careful judge. Answer in JSON."),
            Message::user(prompt),
        ],
        schema: schema.clone(),
        sampling: Sampling {
            max_tokens: Some(512),
            ..Sampling::default()
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_varied_prompts_all_answer_schema_valid_json_directly() {
    let judge = judge();
    let mut requests = Vec::new();
    for (number, (family, schema)) in schemas().into_iter().enumerate() {
        for prompt in prompts_of(number) {
            requests.push(structured(&format!("gguf.{family}"), prompt, &schema));
        }
    }
    assert_eq!(requests.len(), 20);
    let answers = judge.ask_all::<Value>(requests.clone()).await;
    for (request, answer) in requests.iter().zip(&answers) {
        let answer = answer
            .as_ref()
            .unwrap_or_else(|e| panic!("{}: {e}", request.template));
        assert_eq!(
            answer.rung,
            Rung::Direct,
            "{}: {}",
            request.template,
            answer.raw
        );
        validate(&answer.value, &request.schema)
            .unwrap_or_else(|e| panic!("{}: {e}: {}", request.template, answer.raw));
        assert!(answer.usage.prompt_tokens > 20, "{:?}", answer.usage);
        assert!(answer.usage.completion_tokens > 0, "{:?}", answer.usage);
    }
    let longest = answers
        .iter()
        .flatten()
        .map(|a| a.usage.completion_tokens)
        .max();
    println!("gguf: longest answer {longest:?} tokens of 512 allowed");
    let counts = judge.rung_counts();
    assert_eq!(counts.len(), 10);
    for (template, count) in counts {
        assert_eq!(
            (count.direct, count.total()),
            (2, 2),
            "{template}: {count:?}"
        );
    }
}

fn plain(prompt: &str, max_tokens: u32) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(prompt)],
        sampling: Sampling {
            max_tokens: Some(max_tokens),
            ..Sampling::default()
        },
        response_schema: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn temperature_zero_repeats_itself_and_max_tokens_is_a_hard_cap() {
    let chat = model();
    assert_eq!(
        (chat.kind(), chat.model()),
        ("gguf", "SmolLM2-135M-Instruct.Q4_1")
    );
    let request = plain("Write a long story about a lighthouse keeper.", 12);
    let first = chat.chat(&request).await.expect("first");
    let second = chat.chat(&request).await.expect("second");
    assert_eq!(first, second);
    assert_eq!(first.usage.completion_tokens, 12);
    assert_eq!(first.finish_reason.as_deref(), Some("length"));
    assert!(!first.text.trim().is_empty());

    let short = chat.chat(&plain("Say hi.", 200)).await.expect("short");
    assert_eq!(short.finish_reason.as_deref(), Some("stop"), "{short:?}");
    assert!(short.usage.completion_tokens < 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_longer_than_the_context_fails_clearly() {
    let request = plain(&"word ".repeat(9000), 10);
    let error = model().chat(&request).await.expect_err("too long");
    let message = error.to_string();
    assert!(
        message.contains("SmolLM2-135M-Instruct.Q4_1.gguf"),
        "{message}"
    );
    assert!(message.contains("context window"), "{message}");
    assert!(
        matches!(error, rageval_judge::JudgeError::PromptTooLong { prompt_tokens, window, .. }
            if prompt_tokens > window),
        "{error:?}"
    );
}

/// A prompt that fits the window but leaves less than the answer's room is refused before
/// decoding (the answer would be cut off), as the same typed error.
#[tokio::test]
async fn a_prompt_without_room_for_the_answer_is_too_long() {
    // About 7,900 tokens: under the 8,192 window, over it with 512 kept for the answer.
    let request = plain(&"word ".repeat(7900), 10);
    let unbounded = ChatRequest {
        sampling: Sampling::default(),
        ..request
    };
    let error = model().chat(&unbounded).await.expect_err("no room");
    match error {
        rageval_judge::JudgeError::PromptTooLong {
            prompt_tokens,
            answer_tokens,
            window,
            ..
        } => {
            assert!(prompt_tokens < window, "{prompt_tokens} {window}");
            assert!(prompt_tokens + answer_tokens > window);
        }
        other => panic!("{other:?}"),
    }
}

/// Opening `contents` (or nothing, when `None`) as `name` fails with a message holding the
/// file name and `reason`.
fn assert_open_fails(dir: &std::path::Path, name: &str, contents: Option<&[u8]>, reason: &str) {
    let path = dir.join(name);
    if let Some(bytes) = contents {
        std::fs::write(&path, bytes).expect("write");
    }
    let message = GgufChat::open(&path, GgufOptions::default())
        .expect_err(name)
        .to_string();
    assert!(
        message.contains(name) && message.contains(reason),
        "{message}"
    );
}

#[test]
fn missing_and_corrupt_files_fail_naming_the_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert_open_fails(dir.path(), "absent.gguf", None, "cannot read");
    let garbage = b"this is not a model at all";
    assert_open_fails(dir.path(), "garbage.gguf", Some(garbage), "not a GGUF file");
    // A real model cut short: right magic, broken body.
    let files = ModelFiles::locate(None).unwrap_or_else(|e| panic!("{e}"));
    let bytes = std::fs::read(&files.gguf).expect("read model");
    let cut = &bytes[..bytes.len() / 3];
    assert_open_fails(dir.path(), "truncated.gguf", Some(cut), "cannot load");
}
