//! The output schemas of every task, in one registry: JSON Schema values strict enough that
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
    /// [`TaskKind::ContextsCheck`]: each context is judged useful or not.
    pub usefulness: bool,
    /// [`TaskKind::CustomRubric`]: a pass/fail verdict rather than a 1–5 score.
    pub pass_fail: bool,
    /// [`TaskKind::WriteTestItem`]: a follow-up, whose opening turn is written too.
    pub follow_up: bool,
}

/// The key of the `i`-th (0-based) item with prefix `prefix` (`s1`, `q3`, ...).
pub fn item_key(prefix: char, index: usize) -> String {
    format!("{prefix}{}", index + 1)
}

/// The key prefix of the items of `task`, for the tasks answered per item.
pub fn item_prefix(task: TaskKind) -> Option<char> {
    match task {
        TaskKind::SupportVerdicts | TaskKind::ContextsCheck => Some('s'),
        TaskKind::QuestionSimilarity => Some('q'),
        TaskKind::GradeRelevanceBatch | TaskKind::OrderContexts => Some('p'),
        _ => None,
    }
}

/// The labels of a support verdict, in the order prompts list them.
pub const SUPPORT_LABELS: [&str; 4] = [
    "fully_supported",
    "partially_supported",
    "not_supported",
    "contradicted",
];

/// The JSON Schema of `task`'s answer for a call of `shape`.
pub fn output_schema(task: TaskKind, shape: Shape) -> Value {
    match task {
        TaskKind::SplitStatements => object([("statements", text_list(None))]),
        TaskKind::SupportVerdicts => with_defs(
            object([("verdicts", keyed(&keys('s', shape.items), "support"))]),
            [("support", support_item(shape.contexts))],
        ),
        TaskKind::ContextsCheck => contexts_check(shape),
        TaskKind::ContextRelevance => verdict("relevant"),
        TaskKind::ContextUsefulness => verdict("useful"),
        TaskKind::AnswerRubric => object([("reason", reason()), ("score", integer(1, 5))]),
        // 0/1 rather than a boolean, as ragas asks: a model answers either equally well.
        TaskKind::GenerateQuestions => object([
            ("noncommittal", json!({"type": "integer", "enum": [0, 1]})),
            ("questions", text_list(Some(shape.items))),
        ]),
        TaskKind::QuestionSimilarity => with_defs(
            object([("verdicts", keyed(&keys('q', shape.items), "similar"))]),
            [("similar", verdict("similar"))],
        ),
        TaskKind::ExtractEntities => object([("entities", text_list(None))]),
        TaskKind::GradeRelevance => grade(),
        TaskKind::PairwisePreference => object([
            ("reason", reason()),
            (
                "winner",
                json!({"type": "string", "enum": ["A", "B", "tie"]}),
            ),
        ]),
        TaskKind::GradeRelevanceBatch => with_defs(
            object([("grades", keyed(&keys('p', shape.items), "grade"))]),
            [("grade", grade())],
        ),
        // The permutation as a list of the shown keys, exactly as many as shown. Whether each
        // key appears once is checked on conversion: `uniqueItems` is not in every provider's
        // structured-output subset.
        TaskKind::OrderContexts => object([
            ("reason", reason()),
            (
                "order",
                json!({
                    "type": "array",
                    "items": {"type": "string", "enum": keys('p', shape.items)},
                    "minItems": shape.items,
                    "maxItems": shape.items,
                }),
            ),
        ]),
        TaskKind::AnswerFromContexts => object([
            ("answer", json!({"type": "string"})),
            ("found", json!({"type": "boolean"})),
        ]),
        TaskKind::MergeAnswers => object([("answer", json!({"type": "string", "minLength": 1}))]),
        TaskKind::CustomRubric if shape.pass_fail => object([
            ("reason", reason()),
            (
                "verdict",
                json!({"type": "string", "enum": ["pass", "fail"]}),
            ),
        ]),
        TaskKind::CustomRubric => object([("reason", reason()), ("score", integer(1, 5))]),
        TaskKind::WriteTestItem => test_item(shape),
        TaskKind::AnswerClosedBook => object([
            ("answer", json!({"type": "string"})),
            ("known", json!({"type": "boolean"})),
        ]),
        TaskKind::Abstention => object([
            ("reason", reason()),
            ("refused", json!({"type": "boolean"})),
            ("supported", json!({"type": "boolean"})),
        ]),
    }
}

/// [`TaskKind::WriteTestItem`]: the question, its answer and key points; a follow-up also
/// writes its opening turn first.
fn test_item(shape: Shape) -> Value {
    let text = || json!({"type": "string", "minLength": 1});
    let mut fields = Vec::new();
    if shape.follow_up {
        fields.push(("opening_question", text()));
        fields.push(("opening_answer", text()));
    }
    fields.push(("question", text()));
    fields.push(("answer", text()));
    fields.push(("key_points", text_list(None)));
    object(fields)
}

/// [`TaskKind::ContextsCheck`]: `reference_claims` (split), `useful_passages` (usefulness,
/// keyed by passage number) and `verdicts` (given statements), each only when asked.
fn contexts_check(shape: Shape) -> Value {
    let mut fields = Vec::new();
    let mut defs = Vec::new();
    if shape.split {
        fields.push((
            "reference_claims",
            json!({"type": "array", "items": {"$ref": "#/$defs/claim"}}),
        ));
        let mut claim = support_item(shape.contexts);
        claim["properties"]["claim"] = json!({"type": "string", "minLength": 1});
        claim["required"] = json!(["claim", "reason", "supporting_context", "verdict"]);
        defs.push(("claim", claim));
    }
    if shape.usefulness {
        let passages: Vec<String> = (1..=shape.contexts).map(|n| n.to_string()).collect();
        fields.push(("useful_passages", keyed(&passages, "useful")));
        defs.push(("useful", verdict("useful")));
    }
    if shape.items > 0 {
        fields.push(("verdicts", keyed(&keys('s', shape.items), "support")));
        defs.push(("support", support_item(shape.contexts)));
    }
    with_defs(object(fields), defs)
}

/// One statement's support verdict, with the number of its supporting context (0 for none).
fn support_item(contexts: usize) -> Value {
    object([
        ("reason", reason()),
        (
            "supporting_context",
            json!({"type": "integer", "minimum": 0, "maximum": contexts}),
        ),
        ("verdict", json!({"type": "string", "enum": SUPPORT_LABELS})),
    ])
}

/// A closed object: every property required, nothing else allowed.
fn object<'a>(properties: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
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
fn with_defs<'a>(mut schema: Value, defs: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
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
fn keys(prefix: char, count: usize) -> Vec<String> {
    (0..count).map(|i| item_key(prefix, i)).collect()
}

/// An object with exactly `keys`, each matching `$defs/<def>`.
fn keyed(keys: &[String], def: &str) -> Value {
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

/// A 0–3 relevance grade with its reason.
fn grade() -> Value {
    object([("reason", reason()), ("relevance", integer(0, 3))])
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
