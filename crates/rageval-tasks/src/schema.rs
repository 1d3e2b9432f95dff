//! The output schemas' shared parts: each task writes its schema in its own file from these
//! pieces, and [`output_schema`] looks one up by kind. JSON Schema values strict enough that
//! the judge's ladder rejects nonsense (every field required, no extra fields, enums for
//! labels, bounds for numbers, exact counts for per-item answers) and re-asks.
//!
//! Per-item answers are objects keyed by the item (`s1`, `s2`, … for statements; `q1`, … for
//! candidate questions; `1`, `2`, … for passages) rather than arrays, so that a missing or
//! invented item is a schema violation rather than a silent shift. The item schema is written
//! once under `$defs` and referenced per key: schemas are sent with every call and billed as
//! prompt tokens. Field names sort with `reason` before the verdict (and a claim's text before
//! both), so that models that follow key order reason before they decide.

use serde_json::{Map, Value, json};

pub use crate::task::SUPPORT_LABELS;
use crate::task::TaskKind;

/// The sizes and parts a schema depends on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    /// Items judged in one call (statements, candidate questions) or questions to write.
    pub items: usize,
    /// Contexts shown (bounds the supporting-context number).
    pub contexts: usize,
    /// [`TaskKind::ContextsCheck`]: the reference is split and its claims judged.
    pub split: bool,
    /// [`TaskKind::ContextsCheck`]: the answer is split and its claims judged.
    pub split_answer: bool,
    /// [`TaskKind::ContextsCheck`]: each context is judged useful or not.
    pub usefulness: bool,
    /// [`TaskKind::CustomRubric`]: a pass/fail verdict rather than a 1–5 score.
    pub pass_fail: bool,
    /// [`TaskKind::WriteTestItem`]: a follow-up, whose opening turn is written too.
    pub follow_up: bool,
    /// [`TaskKind::SupportVerdicts`]: the last turn of the conversation shown (bounds the
    /// supporting-turn number); 0 when no conversation is shown.
    pub turns: usize,
}

/// The key of the `i`-th (0-based) item with prefix `prefix` (`s1`, `q3`, ...).
pub fn item_key(prefix: char, index: usize) -> String {
    format!("{prefix}{}", index + 1)
}

/// The JSON Schema of `task`'s answer for a call of `shape` (each task writes its own, in
/// its file; this looks it up by kind).
pub fn output_schema(task: TaskKind, shape: Shape) -> Value {
    task.output_schema(shape)
}

/// A closed object: every property required, nothing else allowed.
pub(crate) fn object<'a>(properties: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    let properties: Vec<(&str, Value)> = properties.into_iter().collect();
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

/// `schema` with `defs` under `$defs` (where `keyed` points).
pub(crate) fn with_defs<'a>(
    mut schema: Value,
    defs: impl IntoIterator<Item = (&'a str, Value)>,
) -> Value {
    let defs: Map<String, Value> = defs
        .into_iter()
        .map(|(name, def)| (name.to_owned(), def))
        .collect();
    if !defs.is_empty() {
        schema["$defs"] = Value::Object(defs);
    }
    schema
}

/// The keys `p1..pn`.
pub(crate) fn keys(prefix: char, count: usize) -> Vec<String> {
    (0..count).map(|i| item_key(prefix, i)).collect()
}

/// An object with exactly `keys`, each matching `$defs/<def>`.
pub(crate) fn keyed(keys: &[String], def: &str) -> Value {
    let item = json!({"$ref": format!("#/$defs/{def}")});
    let properties: Map<String, Value> =
        keys.iter().map(|key| (key.clone(), item.clone())).collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": keys,
        "additionalProperties": false,
    })
}

pub(crate) fn reason() -> Value {
    json!({"type": "string", "minLength": 1})
}

pub(crate) fn integer(minimum: u32, maximum: u32) -> Value {
    json!({"type": "integer", "minimum": minimum, "maximum": maximum})
}

pub(crate) fn verdict(field: &str) -> Value {
    object([("reason", reason()), (field, json!({"type": "boolean"}))])
}

/// A list of non-empty strings, of exactly `count` items when given.
pub(crate) fn text_list(count: Option<usize>) -> Value {
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
                ..Shape::default()
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
                ..Shape::default()
            },
        );
        let two = json!({"noncommittal": 0, "questions": ["a?", "b?"]});
        assert!(validate(&two, &questions).is_err());
        let three = json!({"noncommittal": 0, "questions": ["a?", "b?", "c?"]});
        assert!(validate(&three, &questions).is_ok());
        let flag = json!({"noncommittal": 2, "questions": ["a?", "b?", "c?"]});
        assert!(validate(&flag, &questions).is_err());
    }

    #[test]
    fn batch_grades_need_every_key_and_an_order_only_the_shown_keys() {
        let shape = Shape {
            items: 2,
            ..Shape::default()
        };
        let grades = output_schema(TaskKind::GradeRelevanceBatch, shape);
        let grade = |g: i64| json!({"reason": "r", "relevance": g});
        let both = json!({"grades": {"p1": grade(3), "p2": grade(0)}});
        assert_eq!(validate(&both, &grades), Ok(()));
        assert!(validate(&json!({"grades": {"p1": grade(3)}}), &grades).is_err());
        let invented = json!({"grades": {"p1": grade(3), "p2": grade(0), "p3": grade(1)}});
        assert!(validate(&invented, &grades).is_err());
        assert!(
            validate(
                &json!({"grades": {"p1": grade(4), "p2": grade(0)}}),
                &grades
            )
            .is_err()
        );
        let order = output_schema(TaskKind::OrderContexts, shape);
        assert_eq!(
            validate(&json!({"reason": "r", "order": ["p2", "p1"]}), &order),
            Ok(())
        );
        assert!(validate(&json!({"reason": "r", "order": ["p2"]}), &order).is_err());
        assert!(validate(&json!({"reason": "r", "order": ["p2", "p3"]}), &order).is_err());
    }

    #[test]
    fn every_task_has_a_closed_object_schema() {
        for task in TaskKind::ALL {
            let schema = output_schema(
                task,
                Shape {
                    items: 2,
                    contexts: 2,
                    split: true,
                    usefulness: true,
                    ..Shape::default()
                },
            );
            assert_eq!(schema["type"], "object", "{task}");
            assert_eq!(schema["additionalProperties"], false, "{task}");
        }
    }
}
