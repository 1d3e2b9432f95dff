//! The output schemas of every task, in one registry: JSON Schema values strict enough that
//! the judge's ladder rejects nonsense (every field required, no extra fields, enums for
//! labels, bounds for numbers, exact counts for per-item answers) and re-asks.
//!
//! Per-item answers are objects keyed by the item (`s1`, `s2`, … for statements; `q1`, … for
//! candidate questions) rather than arrays, so that a missing or invented item is a schema
//! violation rather than a silent shift. Field names sort with `reason` before the verdict,
//! so that models that follow key order reason before they decide.

use serde_json::{Map, Value, json};

use crate::task::TaskKind;

/// The sizes a schema depends on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    /// Items judged in one call (statements, candidate questions) or questions to write.
    pub items: usize,
    /// Contexts shown (bounds the supporting-context number).
    pub contexts: usize,
}

/// The key of the `i`-th (0-based) item with prefix `prefix` (`s1`, `q3`, ...).
pub fn item_key(prefix: char, index: usize) -> String {
    format!("{prefix}{}", index + 1)
}

/// The key prefix of the items of `task`, for the tasks answered per item.
pub fn item_prefix(task: TaskKind) -> Option<char> {
    match task {
        TaskKind::SupportVerdicts => Some('s'),
        TaskKind::QuestionSimilarity => Some('q'),
        _ => None,
    }
}

/// The JSON Schema of `task`'s answer for a call of `shape`.
pub fn output_schema(task: TaskKind, shape: Shape) -> Value {
    match task {
        TaskKind::SplitStatements => object([("statements", text_list(None))]),
        TaskKind::SupportVerdicts => object([(
            "verdicts",
            keyed(
                's',
                shape.items,
                &object([
                    ("reason", reason()),
                    (
                        "supporting_context",
                        json!({"type": "integer", "minimum": 0, "maximum": shape.contexts}),
                    ),
                    (
                        "verdict",
                        json!({"type": "string", "enum": [
                            "fully_supported", "partially_supported", "not_supported", "contradicted"
                        ]}),
                    ),
                ]),
            ),
        )]),
        TaskKind::ContextRelevance => verdict("relevant"),
        TaskKind::ContextUsefulness => verdict("useful"),
        TaskKind::AnswerRubric => object([("reason", reason()), ("score", integer(1, 5))]),
        TaskKind::GenerateQuestions => object([
            ("noncommittal", json!({"type": "boolean"})),
            ("questions", text_list(Some(shape.items))),
        ]),
        TaskKind::QuestionSimilarity => {
            object([("verdicts", keyed('q', shape.items, &verdict("similar")))])
        }
        TaskKind::ExtractEntities => object([("entities", text_list(None))]),
        TaskKind::GradeRelevance => object([("reason", reason()), ("relevance", integer(0, 3))]),
        TaskKind::PairwisePreference => object([
            ("reason", reason()),
            (
                "winner",
                json!({"type": "string", "enum": ["A", "B", "tie"]}),
            ),
        ]),
        TaskKind::AnswerFromContexts => object([
            ("answer", json!({"type": "string"})),
            ("found", json!({"type": "boolean"})),
        ]),
        TaskKind::MergeAnswers => object([("answer", json!({"type": "string", "minLength": 1}))]),
    }
}

/// A closed object: every property required, nothing else allowed.
fn object<const N: usize>(properties: [(&str, Value); N]) -> Value {
    let required: Vec<&str> = properties.iter().map(|(name, _)| *name).collect();
    let properties: Map<String, Value> = properties
        .into_iter()
        .map(|(name, schema)| (name.to_owned(), schema))
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// An object with exactly the keys `p1..pn`, each matching `item`.
fn keyed(prefix: char, count: usize, item: &Value) -> Value {
    let keys: Vec<String> = (0..count).map(|i| item_key(prefix, i)).collect();
    let properties: Map<String, Value> =
        keys.iter().map(|key| (key.clone(), item.clone())).collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": keys,
        "additionalProperties": false,
    })
}

fn reason() -> Value {
    json!({"type": "string", "minLength": 1})
}

fn integer(minimum: u32, maximum: u32) -> Value {
    json!({"type": "integer", "minimum": minimum, "maximum": maximum})
}

fn verdict(field: &str) -> Value {
    object([("reason", reason()), (field, json!({"type": "boolean"}))])
}

/// A list of non-empty strings, of exactly `count` items when given.
fn text_list(count: Option<usize>) -> Value {
    let mut schema = json!({"type": "array", "items": {"type": "string", "minLength": 1}});
    if let Some(count) = count {
        schema["minItems"] = json!(count);
        schema["maxItems"] = json!(count);
    }
    schema
}

#[cfg(test)]
mod tests {
    use rageval_judge::structured::validate;

    use super::*;

    #[test]
    fn support_schema_rejects_missing_items_bad_labels_and_out_of_range_contexts() {
        let schema = output_schema(
            TaskKind::SupportVerdicts,
            Shape {
                items: 2,
                contexts: 3,
            },
        );
        let item = |verdict: &str, context: i64| json!({"reason": "r", "supporting_context": context, "verdict": verdict});
        let good =
            json!({"verdicts": {"s1": item("fully_supported", 2), "s2": item("contradicted", 0)}});
        assert_eq!(validate(&good, &schema), Ok(()));
        let missing = json!({"verdicts": {"s1": item("fully_supported", 2)}});
        assert!(validate(&missing, &schema).is_err());
        let extra = json!({"verdicts": {"s1": item("not_supported", 1), "s2": item("not_supported", 1), "s3": item("not_supported", 1)}});
        assert!(validate(&extra, &schema).is_err());
        let label = json!({"verdicts": {"s1": item("yes", 1), "s2": item("not_supported", 1)}});
        assert!(validate(&label, &schema).is_err());
        let range =
            json!({"verdicts": {"s1": item("fully_supported", 4), "s2": item("not_supported", 0)}});
        assert!(validate(&range, &schema).is_err());
    }

    #[test]
    fn scores_grades_and_counts_are_bounded() {
        let rubric = output_schema(TaskKind::AnswerRubric, Shape::default());
        assert!(validate(&json!({"reason": "r", "score": 5}), &rubric).is_ok());
        assert!(validate(&json!({"reason": "r", "score": 6}), &rubric).is_err());
        assert!(validate(&json!({"reason": "", "score": 3}), &rubric).is_err());
        let grade = output_schema(TaskKind::GradeRelevance, Shape::default());
        assert!(validate(&json!({"reason": "r", "relevance": -1}), &grade).is_err());
        let questions = output_schema(
            TaskKind::GenerateQuestions,
            Shape {
                items: 3,
                contexts: 0,
            },
        );
        let two = json!({"noncommittal": false, "questions": ["a?", "b?"]});
        assert!(validate(&two, &questions).is_err());
        let three = json!({"noncommittal": false, "questions": ["a?", "b?", "c?"]});
        assert!(validate(&three, &questions).is_ok());
    }

    #[test]
    fn every_task_has_a_closed_object_schema() {
        for task in TaskKind::ALL {
            let schema = output_schema(
                task,
                Shape {
                    items: 2,
                    contexts: 2,
                },
            );
            assert_eq!(schema["type"], "object", "{task}");
            assert_eq!(schema["additionalProperties"], false, "{task}");
        }
    }
}
