//! A judge over the testkit mock whose chat answers are scripted per task, and helpers to
//! build samples and score them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rageval_core::{Context, Outcome, Sample};
use rageval_judge::{
    CacheMode, EndpointSettings, Judge, JudgeConfig, LimiterConfig, Models, OpenAiBackend,
    RetryPolicy,
};
use rageval_metrics::{Judges, ScoringContext, build};
use rageval_tasks::{Policy, TaskJudge};
use rageval_testkit::{MockConfig, MockServer, Reply};
use serde_json::{Value, json};

/// One chat request as the script sees it.
pub struct Asked<'a> {
    /// The task, from the schema name (`support_verdicts`, ...).
    pub task: &'a str,
    /// The user message.
    pub user: &'a str,
    /// The top-level fields of the answer's schema.
    pub fields: Vec<String>,
}

impl Asked<'_> {
    /// The fenced items whose label starts with `label` (`statement`, `context`, ...), in
    /// order, as (label, text).
    pub fn items(&self, label: &str) -> Vec<(String, String)> {
        let mut items = Vec::new();
        let mut lines = self.user.lines();
        while let Some(line) = lines.next() {
            let Some(rest) = line.strip_prefix("<<<") else {
                continue;
            };
            let Some((tag, name)) = rest.split_once(' ') else {
                continue;
            };
            let close = format!("{tag}>>>");
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != close).collect();
            if name.starts_with(label) {
                items.push((name.to_owned(), body.join("\n")));
            }
        }
        items
    }

    /// The text of the first fenced item labelled `label`.
    pub fn item(&self, label: &str) -> String {
        self.items(label)
            .into_iter()
            .next()
            .map(|(_, text)| text)
            .unwrap_or_default()
    }
}

/// What the script answers: a JSON value, or a raw text (for garbage).
pub enum Answer {
    Json(Value),
    Raw(String),
}

/// A scripted judge and its per-task request counts.
pub struct Scripted {
    pub mock: MockServer,
    pub judges: Judges,
    pub judge: Judge<Models>,
    calls: Arc<Mutex<BTreeMap<String, u32>>>,
}

impl Scripted {
    /// Chat requests made for `task` so far.
    pub fn calls(&self, task: &str) -> u32 {
        self.calls
            .lock()
            .map(|c| c.get(task).copied().unwrap_or(0))
            .unwrap_or(0)
    }

    /// Scores `sample` with every metric of `specs`, all concurrently in one context.
    pub async fn score(&self, sample: &Sample, specs: &[&str]) -> Vec<Outcome> {
        let metrics: Vec<_> = specs.iter().map(|s| build(s).expect("metric")).collect();
        let scoring = ScoringContext::new(&self.judges, sample);
        futures_util::future::join_all(metrics.iter().map(|m| m.score(sample, &scoring))).await
    }

    /// One metric's outcome.
    pub async fn one(&self, sample: &Sample, spec: &str) -> Outcome {
        self.score(sample, &[spec]).await.remove(0)
    }
}

/// Starts the mock with `script` answering chat requests; embeddings are the mock's own.
pub async fn scripted(script: impl Fn(&Asked) -> Answer + Send + Sync + 'static) -> Scripted {
    scripted_with_latency(Duration::ZERO, script).await
}

/// [`scripted`], with every answer delayed by `latency`.
pub async fn scripted_with_latency(
    latency: Duration,
    script: impl Fn(&Asked) -> Answer + Send + Sync + 'static,
) -> Scripted {
    let calls = Arc::new(Mutex::new(BTreeMap::new()));
    let counted = Arc::clone(&calls);
    let mock = MockServer::start(MockConfig {
        embedding_dim: 16,
        latency,
        script: Some(Arc::new(move |body: &Value| {
            let name = body["response_format"]["json_schema"]["name"]
                .as_str()
                .unwrap_or_default();
            let task = name
                .strip_suffix("_en")
                .or_else(|| name.strip_suffix("_zh"))
                .unwrap_or(name);
            if let Ok(mut calls) = counted.lock() {
                *calls.entry(task.to_owned()).or_insert(0) += 1;
            }
            let messages = body["messages"].as_array().cloned().unwrap_or_default();
            let user = messages
                .iter()
                .filter(|m| m["role"] == "user")
                .map(|m| m["content"].as_str().unwrap_or_default())
                .next()
                .unwrap_or_default();
            let schema = &body["response_format"]["json_schema"]["schema"];
            let fields = schema["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            match script(&Asked { task, user, fields }) {
                Answer::Json(value) => Reply::Content(value.to_string()),
                Answer::Raw(text) => Reply::Content(text),
            }
        })),
        ..MockConfig::default()
    })
    .await
    .expect("mock starts");
    let settings = EndpointSettings::new(&mock.base_url, "mock-chat");
    let backend = OpenAiBackend::new(settings).expect("backend");
    let config = JudgeConfig {
        limiter: LimiterConfig {
            max_concurrency: 16,
            ..LimiterConfig::default()
        },
        retry: RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            max_retry_after: Duration::from_millis(5),
        },
        cache_mode: CacheMode::Off,
        ..JudgeConfig::default()
    };
    let judge = Judge::new(Models::both(backend), None, config);
    let tasks = TaskJudge::new(Policy::llm()).with_llm(judge.clone());
    let judges = Judges::new(tasks).with_embedder(judge.clone());
    Scripted {
        mock,
        judges,
        judge,
        calls,
    }
}

/// The answers a cooperative judge gives, decided by marker words in the material:
/// a statement holding a key word `k1`, `k2`, ... is fully supported by the first context
/// holding that key and not supported when none does; otherwise a statement with `[no]`,
/// `[partial]` or `[contra]` gets that verdict (else fully supported, by context 1); a context with `noise` is neither useful nor relevant; a
/// candidate question with `other` is not similar; statements are the text's sentences
/// split at `. ` / `。`; questions are three fixed ones; the rubric says 4; an answer with
/// `don't know` or `无法回答` declines, and contexts support an answer unless all are noise.
/// The cooperative judge's statements of `text`: its sentences.
fn split(text: &str) -> Vec<String> {
    text.split(['。', '\n'])
        .flat_map(|s| s.split(". "))
        .map(|s| s.trim().trim_end_matches('.').to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The cooperative verdicts on fenced statements, keyed `s1..`.
fn keyed_support(statements: &[(String, String)], contexts: &[(String, String)]) -> Value {
    let verdicts: serde_json::Map<String, Value> = statements
        .iter()
        .map(|(label, text)| {
            let key = label.trim_start_matches("statement ").to_owned();
            (key, support(text, contexts))
        })
        .collect();
    Value::Object(verdicts)
}

/// The cooperative verdict on one statement: by its key token when it has one (supported by
/// the first context naming it), else by its marker (`[no]`, `[partial]`, `[contra]`).
fn support(text: &str, contexts: &[(String, String)]) -> Value {
    if let Some(token) = text.split_whitespace().find(|w| is_key(w)) {
        let holder = contexts.iter().position(|(_, c)| {
            c.split(|ch: char| !ch.is_alphanumeric())
                .any(|w| w == token)
        });
        let (verdict, context) = match holder {
            Some(index) => ("fully_supported", index + 1),
            None => ("not_supported", 0),
        };
        return json!({"reason": "judged by key", "supporting_context": context,
                      "verdict": verdict});
    }
    let verdict = if text.contains("[no]") {
        "not_supported"
    } else if text.contains("[partial]") {
        "partially_supported"
    } else if text.contains("[contra]") {
        "contradicted"
    } else {
        "fully_supported"
    };
    let context = if verdict == "not_supported" { 0 } else { 1 };
    json!({"reason": format!("{verdict} per the passages"), "supporting_context": context,
           "verdict": verdict})
}

pub fn cooperative(asked: &Asked) -> Answer {
    Answer::Json(match asked.task {
        "split_statements" => json!({ "statements": split(&asked.item("text")) }),
        "support_verdicts" => {
            let contexts = asked.items("context");
            json!({ "verdicts": keyed_support(&asked.items("statement"), &contexts) })
        }
        "contexts_check" => {
            let passages = asked.items("passage");
            let mut answer = serde_json::Map::new();
            for field in &asked.fields {
                let claims = |text: String| -> Value {
                    split(&text)
                        .into_iter()
                        .map(|claim| {
                            let mut item = support(&claim, &passages);
                            item["claim"] = json!(claim);
                            item
                        })
                        .collect()
                };
                let value = match field.as_str() {
                    "answer_claims" => claims(asked.item("answer")),
                    "reference_claims" => claims(asked.item("reference")),
                    "useful_passages" => passages
                        .iter()
                        .map(|(label, text)| {
                            let key = label.trim_start_matches("passage ").to_owned();
                            let useful = !text.contains("noise");
                            (key, json!({"reason": "judged by marker", "useful": useful}))
                        })
                        .collect(),
                    "verdicts" => keyed_support(&asked.items("statement"), &passages),
                    other => json!({ "unexpected_field": other }),
                };
                answer.insert(field.clone(), value);
            }
            Value::Object(answer)
        }
        "context_usefulness" => {
            let useful = !asked.item("context").contains("noise");
            json!({"reason": "judged by marker", "useful": useful})
        }
        "context_relevance" => {
            let relevant = !asked.item("context").contains("noise");
            json!({"reason": "judged by marker", "relevant": relevant})
        }
        "answer_rubric" => json!({"reason": "mostly addresses it", "score": 4}),
        "generate_questions" => json!({
            "noncommittal": u8::from(asked.item("answer").contains("not sure")),
            "questions": ["What is asked?", "What other thing?", "What is asked here?"]
        }),
        "question_similarity" => {
            let verdicts: serde_json::Map<String, Value> = asked
                .items("candidate")
                .into_iter()
                .map(|(label, text)| {
                    let key = label.trim_start_matches("candidate ").to_owned();
                    let similar = !text.contains("other");
                    (
                        key,
                        json!({"reason": "judged by marker", "similar": similar}),
                    )
                })
                .collect();
            json!({ "verdicts": verdicts })
        }
        "extract_entities" => {
            let text = asked.item("text");
            let entities: Vec<&str> = text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
                .collect();
            json!({ "entities": entities })
        }
        "abstention" => {
            let answer = asked.item("answer");
            let refused = answer.contains("don't know") || answer.contains("无法回答");
            let supported = asked
                .items("passage")
                .iter()
                .any(|(_, text)| !text.contains("noise"));
            json!({"reason": "judged by marker", "refused": refused, "supported": supported})
        }
        other => json!({ "unexpected_task": other }),
    })
}

/// A sample with the given parts.
pub fn sample(question: &str, contexts: &[&str], answer: &str, reference: &str) -> Sample {
    Sample {
        id: "1".into(),
        question: question.into(),
        contexts: contexts.iter().map(|c| Context::text(*c)).collect(),
        answer: (!answer.is_empty()).then(|| answer.to_owned()),
        references: if reference.is_empty() {
            Vec::new()
        } else {
            vec![reference.to_owned()]
        },
        ..Sample::default()
    }
}

/// The score, or a panic naming the outcome.
pub fn value(outcome: &Outcome) -> f64 {
    match outcome {
        Outcome::Score { value, .. } => *value,
        other => panic!("expected a score, got {other:?}"),
    }
}

/// The evidence detail `key` of a score.
pub fn detail(outcome: &Outcome, key: &str) -> Value {
    match outcome {
        Outcome::Score { evidence, .. } => evidence.details.get(key).cloned().unwrap_or_default(),
        other => panic!("expected a score, got {other:?}"),
    }
}

pub fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 1e-4
}

/// `k` followed by digits.
fn is_key(word: &str) -> bool {
    word.strip_prefix('k')
        .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()))
}
