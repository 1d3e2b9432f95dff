//! The structured-output ladder: from a model's text to a value that matches a JSON schema.
//!
//! Rungs, in order: the text is the JSON ([`Rung::Direct`]); the JSON is inside code fences
//! or prose ([`Rung::Extracted`]); it needed `jsonrepair` (trailing commas, single quotes:
//! [`Rung::Repaired`]); then validation against the schema. Truncated JSON (a bracket or
//! string left open at the end) is never repaired: closing it would turn a cut-off list into
//! a shorter answer that looks complete, so it goes to the re-ask instead. A failure earns one
//! re-ask quoting the error ([`Rung::Reasked`]); a second failure is [`Rung::Failed`] with
//! the raw text kept. [`RungCounts`] tallies where each call ended, per prompt template.
//! The validator covers the schema subset our prompt packs use (see [`validate`]); this
//! module makes no calls itself — [`Judge::ask`](crate::Judge::ask) drives it.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::{Message, Sampling};

/// A prompt template's identity; part of every cache key, so that editing a prompt (and
/// bumping its version) never replays stale answers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TemplateId {
    /// Template name, e.g. `faithfulness.statements`.
    pub id: String,
    /// Template version.
    pub version: u32,
}

impl TemplateId {
    /// `id` at `version`.
    pub fn new(id: impl Into<String>, version: u32) -> Self {
        TemplateId {
            id: id.into(),
            version,
        }
    }
}

impl fmt::Display for TemplateId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.id, self.version)
    }
}

/// A call whose answer must match `schema`.
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredRequest {
    /// Which prompt template rendered `messages`.
    pub template: TemplateId,
    /// The rendered conversation.
    pub messages: Vec<Message>,
    /// The JSON Schema of the answer.
    pub schema: Value,
    /// Sampling parameters.
    pub sampling: Sampling,
}

/// Where on the ladder a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rung {
    /// The text was valid JSON matching the schema.
    Direct,
    /// JSON found inside code fences or surrounding prose.
    Extracted,
    /// JSON that needed repair.
    Repaired,
    /// Matched only after one re-ask quoting the error.
    Reasked,
    /// Never matched; the raw text is kept in the error.
    Failed,
    /// No answer at all (transport error after retries, offline miss, ...).
    Errored,
}

/// How many calls of one template ended on each rung.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RungCounts {
    /// See [`Rung::Direct`].
    pub direct: u64,
    /// See [`Rung::Extracted`].
    pub extracted: u64,
    /// See [`Rung::Repaired`].
    pub repaired: u64,
    /// See [`Rung::Reasked`].
    pub reasked: u64,
    /// See [`Rung::Failed`].
    pub failed: u64,
    /// See [`Rung::Errored`].
    pub errored: u64,
}

impl RungCounts {
    /// Counts one call.
    pub fn add(&mut self, rung: Rung) {
        match rung {
            Rung::Direct => self.direct += 1,
            Rung::Extracted => self.extracted += 1,
            Rung::Repaired => self.repaired += 1,
            Rung::Reasked => self.reasked += 1,
            Rung::Failed => self.failed += 1,
            Rung::Errored => self.errored += 1,
        }
    }

    /// All calls counted.
    pub fn total(&self) -> u64 {
        self.direct + self.extracted + self.repaired + self.reasked + self.failed + self.errored
    }
}

/// The instruction appended to the prompt when the server cannot take the schema itself.
pub(crate) fn schema_instruction(schema: &Value) -> String {
    format!(
        "\n\nReply with only a JSON object that matches this JSON Schema:\n{}",
        schema
    )
}

/// The follow-up message of the one re-ask.
pub(crate) fn reask_instruction(error: &str) -> String {
    format!(
        "Your previous reply could not be used: {error}. Reply again with only the JSON \
         object that matches the requested schema, and nothing else."
    )
}

/// Tolerant parse: the JSON value in `text` and the rung it took to get it.
pub fn parse_tolerant(text: &str) -> Result<(Value, Rung), String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("the reply is empty".into());
    }
    if let Ok(value) = serde_json::from_str::<Value>(trimmed) {
        // Some models double-encode: a JSON string whose content is the object.
        if let Value::String(inner) = &value {
            if let Ok(decoded @ (Value::Object(_) | Value::Array(_))) =
                serde_json::from_str::<Value>(inner.trim())
            {
                return Ok((decoded, Rung::Extracted));
            }
        }
        return Ok((value, Rung::Direct));
    }
    let fenced = fenced_block(trimmed);
    let candidates = [fenced, balanced_span(fenced.unwrap_or(trimmed))];
    for candidate in candidates.into_iter().flatten() {
        if let Ok(value) = serde_json::from_str::<Value>(candidate) {
            return Ok((value, Rung::Extracted));
        }
    }
    // Repair from the first bracket on: prose before it would otherwise become a string.
    let base = fenced.unwrap_or(trimmed);
    let start = base
        .find(['{', '['])
        .ok_or("the reply holds no JSON object")?;
    if let Scan::Unclosed = scan(&base[start..]) {
        return Err(
            "the reply is cut off: its JSON ends with a bracket or string still open".into(),
        );
    }
    let repaired = jsonrepair::repair_to_string(&base[start..], &jsonrepair::Options::default())
        .map_err(|e| format!("the reply is not JSON and could not be repaired ({e})"))?;
    serde_json::from_str::<Value>(&repaired)
        .map(|value| (value, Rung::Repaired))
        .map_err(|e| format!("the reply is not JSON ({e})"))
}

/// The body of the first ``` fenced block, if any (with or without a language tag).
fn fenced_block(text: &str) -> Option<&str> {
    let open = text.find("```")?;
    let after = &text[open + 3..];
    let body_start = after.find('\n').map_or(0, |i| i + 1);
    let body = &after[body_start..];
    let end = body.find("```").unwrap_or(body.len());
    Some(body[..end].trim())
}

/// The first balanced `{...}` or `[...]` run, skipping brackets inside strings.
fn balanced_span(text: &str) -> Option<&str> {
    match scan(text) {
        Scan::Balanced(span) => Some(span),
        Scan::Mismatched | Scan::Unclosed => None,
    }
}

/// How the bracket run from the first `{` or `[` of a text ends.
enum Scan<'a> {
    /// Closed: the run itself.
    Balanced(&'a str),
    /// A closing bracket of the wrong kind (or no bracket at all).
    Mismatched,
    /// The text ends with a bracket or a string still open: cut off.
    Unclosed,
}

/// Scans the first bracket run of `text`, skipping brackets inside strings.
fn scan(text: &str) -> Scan<'_> {
    let Some(start) = text.find(['{', '[']) else {
        return Scan::Mismatched;
    };
    let mut stack = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for (offset, c) in text[start..].char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                if stack.pop() != Some(c) {
                    return Scan::Mismatched;
                }
                if stack.is_empty() {
                    return Scan::Balanced(&text[start..start + offset + c.len_utf8()]);
                }
            }
            _ => {}
        }
    }
    Scan::Unclosed
}

/// Checks `value` against `schema`. Supported: `type` (one or a list), `properties`,
/// `required`, `additionalProperties` (bool or schema), `items`, `minItems`/`maxItems`,
/// `minLength`/`maxLength`, `minimum`/`maximum`, `enum`, `const`, `anyOf`/`oneOf` (both as
/// "at least one"), `allOf`, and local `$ref`s (`#/$defs/..`, `#/definitions/..`). Other
/// keywords are ignored. The error names the JSON path of the first mismatch.
pub fn validate(value: &Value, schema: &Value) -> Result<(), String> {
    check(value, schema, schema, "$", 0)
}

const MAX_SCHEMA_DEPTH: usize = 64;

fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..32 {
        let Some(reference) = current.get("$ref").and_then(Value::as_str) else {
            return current;
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            return current;
        };
        match root.pointer(pointer) {
            Some(target) => current = target,
            None => return current,
        }
    }
    current
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(value: &Value, wanted: &str) -> bool {
    match wanted {
        "integer" => match value {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "number" => value.is_number(),
        other => type_name(value) == other,
    }
}

fn check(
    value: &Value,
    schema: &Value,
    root: &Value,
    path: &str,
    depth: usize,
) -> Result<(), String> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(format!("at {path}: schema nests too deeply"));
    }
    let schema = resolve(schema, root);
    let Some(rules) = schema.as_object() else {
        // `true`, `{}` or something we do not understand: accept.
        return if schema == &Value::Bool(false) {
            Err(format!("at {path}: no value is allowed here"))
        } else {
            Ok(())
        };
    };
    if let Some(wanted) = rules.get("type") {
        let names: Vec<&str> = match wanted {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !names.is_empty() && !names.iter().any(|name| type_matches(value, name)) {
            return Err(format!(
                "at {path}: expected {}, got {}",
                names.join(" or "),
                type_name(value)
            ));
        }
    }
    if let Some(options) = rules.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            return Err(format!(
                "at {path}: {value} is not one of {}",
                Value::Array(options.clone())
            ));
        }
    }
    if let Some(constant) = rules.get("const") {
        if constant != value {
            return Err(format!("at {path}: expected {constant}, got {value}"));
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = rules.get(key).and_then(Value::as_array) {
            let mut first_error = None;
            let ok =
                branches
                    .iter()
                    .any(|branch| match check(value, branch, root, path, depth + 1) {
                        Ok(()) => true,
                        Err(e) => {
                            first_error.get_or_insert(e);
                            false
                        }
                    });
            if !ok && !branches.is_empty() {
                return Err(first_error.unwrap_or_else(|| format!("at {path}: matches no branch")));
            }
        }
    }
    if let Some(all) = rules.get("allOf").and_then(Value::as_array) {
        for branch in all {
            check(value, branch, root, path, depth + 1)?;
        }
    }
    match value {
        Value::Object(map) => {
            let properties = rules.get("properties").and_then(Value::as_object);
            if let Some(required) = rules.get("required").and_then(Value::as_array) {
                for name in required.iter().filter_map(Value::as_str) {
                    if !map.contains_key(name) {
                        return Err(format!("at {path}: missing required field `{name}`"));
                    }
                }
            }
            for (name, item) in map {
                let child = format!("{path}.{name}");
                match properties.and_then(|p| p.get(name)) {
                    Some(sub) => check(item, sub, root, &child, depth + 1)?,
                    None => match rules.get("additionalProperties") {
                        Some(Value::Bool(false)) => {
                            return Err(format!("at {path}: unexpected field `{name}`"));
                        }
                        Some(sub @ Value::Object(_)) => check(item, sub, root, &child, depth + 1)?,
                        _ => {}
                    },
                }
            }
        }
        Value::Array(items) => {
            let count = items.len() as u64;
            if let Some(min) = rules.get("minItems").and_then(Value::as_u64) {
                if count < min {
                    return Err(format!("at {path}: {count} items, at least {min} expected"));
                }
            }
            if let Some(max) = rules.get("maxItems").and_then(Value::as_u64) {
                if count > max {
                    return Err(format!("at {path}: {count} items, at most {max} expected"));
                }
            }
            if let Some(item_schema) = rules.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item, item_schema, root, &format!("{path}[{i}]"), depth + 1)?;
                }
            }
        }
        Value::String(text) => {
            let chars = text.chars().count() as u64;
            if let Some(min) = rules.get("minLength").and_then(Value::as_u64) {
                if chars < min {
                    return Err(format!("at {path}: string shorter than {min} characters"));
                }
            }
            if let Some(max) = rules.get("maxLength").and_then(Value::as_u64) {
                if chars > max {
                    return Err(format!("at {path}: string longer than {max} characters"));
                }
            }
        }
        Value::Number(number) => {
            let x = number.as_f64().unwrap_or(f64::NAN);
            if let Some(min) = rules.get("minimum").and_then(Value::as_f64) {
                if x < min {
                    return Err(format!("at {path}: {number} is below the minimum {min}"));
                }
            }
            if let Some(max) = rules.get("maximum").and_then(Value::as_f64) {
                if x > max {
                    return Err(format!("at {path}: {number} is above the maximum {max}"));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Parse, validate and deserialize one reply: the value and its rung, or why not.
pub(crate) fn interpret<T: serde::de::DeserializeOwned>(
    text: &str,
    schema: &Value,
) -> Result<(T, Rung), String> {
    let (value, rung) = parse_tolerant(text)?;
    validate(&value, schema)?;
    let typed =
        serde_json::from_value(value).map_err(|e| format!("the reply does not fit: {e}"))?;
    Ok((typed, rung))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn verdict_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "reason": {"type": "string", "minLength": 1},
                "verdict": {"type": "integer", "enum": [0, 1]},
                "ids": {"type": "array", "items": {"$ref": "#/$defs/id"}, "maxItems": 2}
            },
            "required": ["reason", "verdict"],
            "additionalProperties": false,
            "$defs": {"id": {"type": "string"}}
        })
    }

    #[test]
    fn ladder_rungs_for_each_kind_of_sloppiness() {
        let cases = [
            ("{\"verdict\": 1}", Rung::Direct),
            ("```json\n{\"verdict\": 1}\n```", Rung::Extracted),
            (
                "Sure! Here it is: {\"verdict\": 1, \"why\": \"a } in a string\"} Hope it helps.",
                Rung::Extracted,
            ),
            ("{\"verdict\": 1,}", Rung::Repaired),
            ("```\n{'verdict': 1}\n```", Rung::Repaired),
            ("\"{\\\"verdict\\\": 1}\"", Rung::Extracted),
        ];
        for (text, rung) in cases {
            let (value, got) = parse_tolerant(text).unwrap();
            assert_eq!(got, rung, "{text}");
            assert_eq!(value["verdict"], json!(1), "{text}");
        }
        assert!(parse_tolerant("I'm sorry, I can't do that.").is_err());
    }

    #[test]
    fn truncated_json_is_not_repaired_into_an_answer() {
        // Closing these would make a shorter list or a cut reason look like a full answer.
        for text in [
            "{\"verdict\": 1, \"reason\": \"cut",
            "{\"statements\": [\"one\", \"two\"",
            "```json\n{\"verdicts\": {\"s1\": {\"verdict\": 1}",
            "Here: [1, 2,",
        ] {
            let error = parse_tolerant(text).expect_err(text);
            assert!(error.contains("cut off"), "{text}: {error}");
        }
        assert!(parse_tolerant("   ").is_err());
    }

    #[test]
    fn validation_names_the_path() {
        let schema = verdict_schema();
        assert!(validate(&json!({"reason": "r", "verdict": 1, "ids": ["a"]}), &schema).is_ok());
        let cases = [
            (json!({"reason": "r"}), "missing required field `verdict`"),
            (
                json!({"reason": "r", "verdict": "1"}),
                "at $.verdict: expected integer, got string",
            ),
            (json!({"reason": "r", "verdict": 2}), "is not one of"),
            (json!({"reason": "", "verdict": 1}), "shorter than 1"),
            (
                json!({"reason": "r", "verdict": 1, "extra": 0}),
                "unexpected field `extra`",
            ),
            (
                json!({"reason": "r", "verdict": 1, "ids": [1]}),
                "at $.ids[0]: expected string",
            ),
            (
                json!({"reason": "r", "verdict": 1, "ids": ["a", "b", "c"]}),
                "at most 2",
            ),
            (json!([1]), "expected object, got array"),
        ];
        for (value, expected) in cases {
            let err = validate(&value, &schema).unwrap_err();
            assert!(err.contains(expected), "{value}: {err}");
        }
    }

    #[test]
    fn any_of_minimum_and_integer_floats() {
        let schema =
            json!({"anyOf": [{"type": "null"}, {"type": "number", "minimum": 0, "maximum": 1}]});
        assert!(validate(&json!(null), &schema).is_ok());
        assert!(validate(&json!(0.5), &schema).is_ok());
        assert!(validate(&json!(1.5), &schema).is_err());
        assert!(validate(&json!(1.0), &json!({"type": "integer"})).is_ok());
    }

    #[test]
    fn counts_add_up() {
        let mut counts = RungCounts::default();
        for rung in [
            Rung::Direct,
            Rung::Direct,
            Rung::Reasked,
            Rung::Failed,
            Rung::Errored,
        ] {
            counts.add(rung);
        }
        assert_eq!(counts.total(), 5);
        assert_eq!(counts.direct, 2);
    }
}
