//! The dry run's stand-in for the judge's models. Metrics run as they would, through the
//! real task router and judge pipeline, so every prompt is rendered by the code that renders
//! it in a real run; only the model is replaced: [`Planner`]'s models answer each request
//! locally and at once with a schema-valid answer of typical size, and bill its prompt as the
//! judge counts tokens (tiktoken, the model's encoding or `o200k_base`). Nothing leaves the
//! process and no cache is opened.
//!
//! What a real answer would hold is estimated: statements not in the dataset are the
//! heuristic judge's sentence split of the text (one statement per sentence), generated
//! questions are the sample's question, verdicts are positive, and every reason is one short
//! sentence ([`REASON`], ≈ 20 tokens) — which is what completion tokens are counted from.

use std::sync::{Arc, Mutex, MutexGuard};

use rageval_core::Sample;
use rageval_judge::batch::{BatchOptions, FailedItems};
use rageval_judge::tokens::count_usage;
use rageval_judge::{
    AnyChatModel, BatchModel, BatchStore, ChatModel, ChatRequest, ChatResponse, Embedder, Judge,
    JudgeConfig, JudgeError, JudgeSettings, LimiterConfig, Models, PriceTable,
};
use rageval_tasks::{Heuristic, SplitStatements};
use serde_json::{Map, Value, json};

/// The reason given with every planned verdict: a typical judge reason's length.
pub const REASON: &str = "The context states this directly, so the claim follows from it \
                          without any further assumption.";
/// Items of a list whose length the schema leaves open (entities).
const OPEN_LIST_ITEMS: usize = 3;
/// Dimensions of the planned embeddings (any unit vector will do: nothing reads them).
const EMBEDDING_DIM: usize = 8;

/// What the sample being planned supplies to the answers: its question, and the texts a
/// metric may ask to split with their estimated statements.
#[derive(Debug, Default)]
struct Material {
    question: String,
    splits: Vec<(String, Vec<String>)>,
}

/// The planning models, shared by every planning judge of a dry run.
#[derive(Clone)]
pub struct Planner {
    models: Models,
    material: Arc<Mutex<Material>>,
    heuristic: Heuristic,
    prices: PriceTable,
}

impl Planner {
    /// Planning models named and kinded as the configured ones (no client connects).
    pub fn new(
        settings: &JudgeSettings,
        heuristic: Heuristic,
    ) -> crate::engine::error::Result<Self> {
        let models = settings
            .models()
            .map_err(crate::engine::error::RunError::Judge)?;
        Ok(Self::over(&models, settings, heuristic))
    }

    /// Planning models named and kinded as `real` (e.g. the embedded ones; none is loaded).
    /// Where the answer cache already holds answers of the chat model, each planned answer
    /// also thinks as long as those did on average (a reasoning judge bills its thinking as
    /// completion tokens); the cache is read, never written.
    pub fn over(real: &Models, settings: &JudgeSettings, heuristic: Heuristic) -> Self {
        let material = Arc::new(Mutex::new(Material::default()));
        let chat = real.chat.as_ref().map(|model| PlannedChat {
            kind: model.kind().to_owned(),
            model: model.model().to_owned(),
            material: Arc::clone(&material),
            thinking_per_answer: settings
                .cache_path
                .as_deref()
                .and_then(|path| rageval_judge::thinking_profile_at(path, model.model()))
                .filter(|profile| profile.answers > 0)
                .map_or(0, |profile| profile.reasoning_tokens / profile.answers),
        });
        let embedder = real.embedder.as_ref().map(|embedder| PlannedEmbedder {
            kind: embedder.embedding_kind().to_owned(),
            model: embedder.embedding_model().to_owned(),
        });
        let mut models = Models::default();
        if let Some(chat) = chat {
            models = Models::chat(chat);
        }
        if let Some(embedder) = embedder {
            models = models.with_embedder(embedder);
        }
        Planner {
            models,
            material,
            heuristic,
            prices: settings.prices.clone(),
        }
    }

    /// A fresh judge over the planning models, with its own books: no cache, no caps, no
    /// rate limits (nothing is sent).
    pub fn judge(&self) -> Judge<Models> {
        Judge::new(self.models.clone(), None, self.config())
    }

    /// No cache, no caps, no rate limits, the run's prices.
    fn config(&self) -> JudgeConfig {
        JudgeConfig {
            limiter: LimiterConfig {
                max_concurrency: 1024,
                ..LimiterConfig::default()
            },
            prices: self.prices.clone(),
            ..JudgeConfig::default()
        }
    }

    /// A fresh judge like [`Planner::judge`] whose chat model is in batch mode over `store`,
    /// asking the planning model at once for every request the store failed (the dry run
    /// of `--batch` answers a stage that way, [`crate::engine::batch::plan`]).
    pub fn batch_judge(&self, store: &BatchStore) -> Judge<Models> {
        let mut models = self.models.clone();
        models.chat = models.chat.map(|chat| {
            let options = BatchOptions {
                failed_items: FailedItems::Sync,
                ..BatchOptions::default()
            };
            AnyChatModel::new(BatchModel::with_options(chat, store.clone(), options))
        });
        Judge::new(models, None, self.config())
    }

    /// Makes `sample` the one whose requests are answered next (samples are planned one at
    /// a time).
    pub fn set_sample(&self, sample: &Sample) {
        *lock(&self.material) = Material::of(sample, &self.heuristic);
    }
}

impl Material {
    /// The sample's question, and its answer and reference split into sentences.
    fn of(sample: &Sample, heuristic: &Heuristic) -> Self {
        let texts = [sample.answer.clone(), sample.reference_text()];
        let splits = texts
            .into_iter()
            .flatten()
            .filter(|text| !text.trim().is_empty())
            .map(|text| {
                let task = SplitStatements {
                    question: sample.question.clone(),
                    text: text.clone(),
                };
                let statements = heuristic.split_statements(&task).value;
                (text, statements)
            })
            .collect();
        Material {
            question: sample.question.clone(),
            splits,
        }
    }
}

fn lock(material: &Mutex<Material>) -> MutexGuard<'_, Material> {
    material
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

struct PlannedChat {
    kind: String,
    model: String,
    material: Arc<Mutex<Material>>,
    /// Reasoning tokens each answer adds: the mean of the model's cached answers (0 when
    /// none thought or none is cached).
    thinking_per_answer: u64,
}

impl ChatModel for PlannedChat {
    fn kind(&self) -> &str {
        &self.kind
    }
    fn model(&self) -> &str {
        &self.model
    }
    fn endpoint(&self) -> String {
        "dry run (no request is sent)".into()
    }
    /// The schema always travels beside the prompt, so the answer can be shaped by it; with
    /// `schema_mode = "in_prompt"` a real request carries the same schema in its text, plus
    /// one sentence of instruction.
    fn supports_response_schema(&self) -> bool {
        true
    }
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, JudgeError> {
        let text = match &request.response_schema {
            Some(schema) => {
                let material = lock(&self.material);
                let statements = statements_asked(&material, request);
                let root = &schema.schema;
                fill(root, root, "", &material.question, statements).to_string()
            }
            None => REASON.to_owned(),
        };
        let mut usage = count_usage(&self.model, request, &text);
        if self.thinking_per_answer > 0 {
            usage.completion_tokens += self.thinking_per_answer;
            usage.reasoning_tokens = Some(self.thinking_per_answer);
        }
        Ok(ChatResponse {
            usage,
            text,
            finish_reason: None,
            thinking: None,
            thinking_text: String::new(),
        })
    }
}

/// The statements of the text a split request quotes: the longest of the sample's texts
/// that the request contains.
fn statements_asked<'a>(material: &'a Material, request: &ChatRequest) -> &'a [String] {
    material
        .splits
        .iter()
        .filter(|(text, _)| request.messages.iter().any(|m| m.content.contains(text)))
        .max_by_key(|(text, _)| text.len())
        .map_or(&[], |(_, statements)| statements.as_slice())
}

struct PlannedEmbedder {
    kind: String,
    model: String,
}

impl Embedder for PlannedEmbedder {
    fn embedding_kind(&self) -> &str {
        &self.kind
    }
    fn embedding_model(&self) -> &str {
        &self.model
    }
    async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, JudgeError> {
        let mut unit = vec![0.0; EMBEDDING_DIM];
        unit[0] = 1.0;
        Ok(vec![unit; inputs.len()])
    }
}

/// A typical instance of `schema` (the subset the task schemas use: closed objects, string
/// lists, enums, bounded integers, booleans, `#/$defs/…` references into `root`). `name` is
/// the property being filled.
fn fill(root: &Value, schema: &Value, name: &str, question: &str, statements: &[String]) -> Value {
    if let Some(target) = schema["$ref"].as_str() {
        let def = target
            .strip_prefix("#/$defs/")
            .map_or(&Value::Null, |def| &root["$defs"][def]);
        return fill(root, def, name, question, statements);
    }
    // An evasive answer would skip later calls: plan for the committal one.
    if name == "noncommittal" {
        return if schema["type"] == "boolean" {
            json!(false)
        } else {
            json!(0)
        };
    }
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    match schema["type"].as_str().unwrap_or_default() {
        "object" => {
            let properties = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            let object: Map<String, Value> = properties
                .iter()
                .map(|(key, sub)| (key.clone(), fill(root, sub, key, question, statements)))
                .collect();
            Value::Object(object)
        }
        "array" => {
            let count = schema["minItems"].as_u64().map(|n| n as usize);
            let items: Vec<Value> = match name {
                "statements" => statements.iter().map(|s| json!(s)).collect(),
                // A contexts check splits the reference into claims, each with its verdict.
                "reference_claims" => statements
                    .iter()
                    .map(|statement| {
                        let mut claim = fill(root, &schema["items"], "", question, statements);
                        claim["claim"] = json!(statement);
                        claim
                    })
                    .collect(),
                "questions" => vec![json!(question); count.unwrap_or(1)],
                // An ordering: every shown key once.
                _ if is_permutation(schema) => schema["items"]["enum"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default(),
                _ => {
                    let item = fill(root, &schema["items"], "", question, statements);
                    vec![item; count.unwrap_or(OPEN_LIST_ITEMS)]
                }
            };
            Value::Array(items)
        }
        "integer" | "number" => {
            let low = schema["minimum"].as_i64().unwrap_or(0);
            let high = schema["maximum"].as_i64().unwrap_or(i64::MAX).max(low);
            json!(1.clamp(low, high))
        }
        "boolean" => json!(true),
        // A written question (`testset`'s items) is the sample's: later calls ask it, in its
        // language.
        _ if matches!(name, "question" | "opening_question") => json!(question),
        _ => json!(if name == "reason" {
            REASON
        } else {
            "an answer"
        }),
    }
}

/// An array of exactly as many items as its items' enum has values: a permutation of them
/// (the shape of an ordering task's answer).
fn is_permutation(schema: &Value) -> bool {
    let values = schema["items"]["enum"].as_array().map_or(0, Vec::len) as u64;
    values > 0
        && schema["minItems"].as_u64() == Some(values)
        && schema["maxItems"].as_u64() == Some(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rageval_judge::chat::OutputSchema;
    use rageval_judge::structured::validate;
    use rageval_judge::{Message, Sampling};

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "verdicts": {"type": "object", "properties": {
                    "s1": {"type": "object", "properties": {
                        "reason": {"type": "string", "minLength": 1},
                        "supporting_context": {"type": "integer", "minimum": 0, "maximum": 2},
                        "verdict": {"type": "string", "enum": ["fully_supported", "not_supported"]}
                    }, "required": ["reason", "supporting_context", "verdict"], "additionalProperties": false}
                }, "required": ["s1"], "additionalProperties": false},
                "noncommittal": {"type": "boolean"},
                "questions": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 2, "maxItems": 2},
                "statements": {"type": "array", "items": {"type": "string", "minLength": 1}}
            },
            "required": ["verdicts", "noncommittal", "questions", "statements"],
            "additionalProperties": false
        })
    }

    /// The contexts check's shape: items behind `$defs` references, an integer
    /// noncommittal flag, reference claims split from the quoted text.
    #[test]
    fn references_are_resolved_and_claims_follow_the_statements() {
        let schema = json!({
            "type": "object",
            "properties": {
                "noncommittal": {"type": "integer", "enum": [0, 1]},
                "reference_claims": {"type": "array", "items": {"$ref": "#/$defs/claim"}},
                "useful_passages": {"type": "object", "properties": {
                    "1": {"$ref": "#/$defs/useful"}
                }, "required": ["1"], "additionalProperties": false}
            },
            "required": ["noncommittal", "reference_claims", "useful_passages"],
            "additionalProperties": false,
            "$defs": {
                "claim": {"type": "object", "properties": {
                    "claim": {"type": "string", "minLength": 1},
                    "verdict": {"type": "string", "enum": ["fully_supported", "not_supported"]}
                }, "required": ["claim", "verdict"], "additionalProperties": false},
                "useful": {"type": "object", "properties": {
                    "useful": {"type": "boolean"}
                }, "required": ["useful"], "additionalProperties": false}
            }
        });
        let statements = vec!["One.".to_owned(), "Two.".to_owned()];
        let value = fill(&schema, &schema, "", "Why?", &statements);
        assert_eq!(validate(&value, &schema), Ok(()));
        assert_eq!(value["noncommittal"], 0);
        assert_eq!(value["reference_claims"][1]["claim"], "Two.");
        assert_eq!(value["useful_passages"]["1"]["useful"], true);
    }

    #[test]
    fn filled_answers_match_their_schema() {
        let statements = vec!["One.".to_owned(), "Two.".to_owned()];
        let value = fill(&schema(), &schema(), "", "Why?", &statements);
        assert_eq!(validate(&value, &schema()), Ok(()));
        assert_eq!(value["verdicts"]["s1"]["verdict"], "fully_supported");
        assert_eq!(value["verdicts"]["s1"]["supporting_context"], 1);
        assert_eq!(value["noncommittal"], false);
        assert_eq!(value["questions"], json!(["Why?", "Why?"]));
        assert_eq!(value["statements"], json!(["One.", "Two."]));
    }

    #[test]
    fn a_split_request_gets_the_sentences_of_the_text_it_quotes() {
        let sample = Sample {
            question: "What is it?".into(),
            answer: Some("It is red. It is round.".into()),
            references: vec!["It is red. It is round. It rolls.".into()],
            ..Sample::default()
        };
        let material = Material::of(&sample, &Heuristic::lexical());
        let request = |text: &str| ChatRequest {
            messages: vec![Message::user(format!("Split this:\n{text}"))],
            sampling: Sampling::default(),
            response_schema: Some(OutputSchema {
                name: "s".into(),
                schema: json!({}),
            }),
        };
        // The reference quotes the answer too: the longer text quoted wins.
        assert_eq!(
            statements_asked(&material, &request("It is red. It is round.")).len(),
            2
        );
        assert_eq!(
            statements_asked(&material, &request("It is red. It is round. It rolls.")).len(),
            3
        );
        assert!(statements_asked(&material, &request("Something else.")).is_empty());
    }
}
