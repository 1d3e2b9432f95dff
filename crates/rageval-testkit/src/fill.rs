//! Schema-driven answers: a deterministic JSON instance of the schema a request asks for,
//! with strings drawn from the request's own material.
//!
//! Mirrors the neutral bench mock (`shared/bench/mock_llm.py`): `response_format` schema
//! first, else a JSON Schema written in a message; every property filled; `enum` → first
//! value; arrays → 3 items within `minItems`/`maxItems` (an array of exactly as many items
//! as its items' enum has values — an ordering — gets every value once); booleans `true`;
//! numbers `1` for verdict-like names, else `0`, clamped. One deliberate difference: strings come from the
//! *first* user message, so a re-ask (whose last message is an instruction) still answers
//! about the same material. [`opposite_instance`] fills the same schema with the verdicts
//! turned around, for the draft a reasoning model thinks through before its answer.
//! Nothing here touches the network.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

const ARRAY_ITEMS: u64 = 3;
const MAX_STRING_CHARS: usize = 160;
const MAX_DEPTH: usize = 8;
const VERDICT_WORDS: [&str; 6] = [
    "verdict",
    "score",
    "attributed",
    "result",
    "label",
    "rating",
];

/// First 8 bytes (big-endian) of SHA-256 over the parts, each followed by 0x1f.
pub(crate) fn hash_u64(parts: &[&str]) -> u64 {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0x1f]);
    }
    let digest = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// A deterministic draw in [0, 1) from the parts.
pub(crate) fn unit_draw(parts: &[&str]) -> f64 {
    hash_u64(parts) as f64 / 2f64.powi(64)
}

/// Splitmix64: a tiny deterministic generator for choosing sentences.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Message texts of a chat body (string contents, or the text parts of a content list).
pub(crate) fn message_texts(body: &Value) -> Vec<(String, String)> {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Vec::new();
    };
    messages
        .iter()
        .map(|m| {
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let text = match m.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(parts)) => parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            (role, text)
        })
        .collect()
}

/// Where a request's schema is: its value and, when it was found in a message, the message
/// index and the byte offset where it starts.
pub(crate) fn find_schema(body: &Value) -> Option<(Value, Option<(usize, usize)>)> {
    let format = body.get("response_format");
    if format.and_then(|f| f.get("type")).and_then(Value::as_str) == Some("json_schema") {
        if let Some(schema) = format.and_then(|f| f.pointer("/json_schema/schema")) {
            return Some((schema.clone(), None));
        }
    }
    for (index, (_, text)) in message_texts(body).iter().enumerate() {
        let after_word = text.to_lowercase().find("schema").unwrap_or(0);
        for start in [after_word, 0] {
            if let Some((schema, offset)) = first_schema_object(text, start) {
                return Some((schema, Some((index, offset))));
            }
        }
    }
    None
}

fn first_schema_object(text: &str, from: usize) -> Option<(Value, usize)> {
    for (offset, _) in text.char_indices().filter(|(i, c)| *i >= from && *c == '{') {
        let mut stream = serde_json::Deserializer::from_str(&text[offset..]).into_iter::<Value>();
        if let Some(Ok(value @ Value::Object(_))) = stream.next() {
            if value.get("properties").is_some() || value.get("type").is_some() {
                return Some((value, offset));
            }
        }
    }
    None
}

/// Sentences of the first user message, without a schema written into it.
pub(crate) fn sentence_pool(body: &Value, schema_at: Option<(usize, usize)>) -> Vec<String> {
    let texts = message_texts(body);
    let Some((index, (_, text))) = texts
        .iter()
        .enumerate()
        .find(|(_, (role, _))| role == "user")
    else {
        return vec!["The answer is given.".into()];
    };
    let material = match schema_at {
        Some((at, offset)) if at == index => &text[..offset],
        _ => text.as_str(),
    };
    let sentences: Vec<String> = material
        .split_inclusive(['.', '!', '?', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty() && !s.to_lowercase().contains("schema"))
        .map(|s| s.chars().take(MAX_STRING_CHARS).collect())
        .collect();
    if sentences.is_empty() {
        vec!["The answer is given.".into()]
    } else {
        sentences
    }
}

/// Fills `schema` (whose `$ref`s resolve against itself).
pub(crate) fn instance(schema: &Value, rng: &mut Rng, sentences: &[String]) -> Value {
    Filler {
        root: schema,
        rng,
        sentences,
        opposite: false,
    }
    .fill(schema, "", 0)
}

/// Fills `schema` as [`instance`] does but with every verdict turned the other way: the
/// draft a reasoning model's thinking holds. Verdict-like numbers take the other end of
/// their range (0 where the answer has 1; the maximum where 0 clamps back to the answer's
/// value), booleans are `false`, enums take their last value and orderings run backwards,
/// so a client that reads the draft for the answer gets other verdicts, not a parse error.
pub(crate) fn opposite_instance(schema: &Value, rng: &mut Rng, sentences: &[String]) -> Value {
    Filler {
        root: schema,
        rng,
        sentences,
        opposite: true,
    }
    .fill(schema, "", 0)
}

struct Filler<'a> {
    root: &'a Value,
    rng: &'a mut Rng,
    sentences: &'a [String],
    /// Fill the draft with the opposite verdicts instead of the answer.
    opposite: bool,
}

impl Filler<'_> {
    fn fill(&mut self, schema: &Value, name: &str, depth: usize) -> Value {
        let mut schema = schema;
        for _ in 0..32 {
            match schema
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix('#'))
                .and_then(|p| self.root.pointer(p))
            {
                Some(target) => schema = target,
                None => break,
            }
        }
        let Some(rules) = schema.as_object() else {
            return Value::Null;
        };
        if depth > MAX_DEPTH {
            return Value::Null;
        }
        if let Some(constant) = rules.get("const") {
            return constant.clone();
        }
        let options = rules.get("enum").and_then(Value::as_array);
        let chosen = if self.opposite {
            options.and_then(|e| e.last())
        } else {
            options.and_then(|e| e.first())
        };
        if let Some(value) = chosen {
            return value.clone();
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = rules.get(key).and_then(Value::as_array) {
                let chosen = branches
                    .iter()
                    .find(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                    .or(branches.first());
                if let Some(branch) = chosen {
                    return self.fill(branch, name, depth + 1);
                }
            }
        }
        if let Some(all) = rules.get("allOf").and_then(Value::as_array) {
            let mut merged = Map::new();
            for part in all {
                if let Value::Object(filled) = self.fill(part, name, depth + 1) {
                    merged.extend(filled);
                }
            }
            return Value::Object(merged);
        }
        let kind = match rules.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .find(|t| *t != "null")
                .unwrap_or("null")
                .to_owned(),
            _ if rules.contains_key("properties") => "object".into(),
            _ if rules.contains_key("items") => "array".into(),
            _ => "string".into(),
        };
        match kind.as_str() {
            "object" => {
                let mut out = Map::new();
                if let Some(props) = rules.get("properties").and_then(Value::as_object) {
                    for (key, sub) in props {
                        out.insert(key.clone(), self.fill(sub, key, depth + 1));
                    }
                }
                Value::Object(out)
            }
            "array" => {
                let min = rules.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                let max = rules
                    .get("maxItems")
                    .and_then(Value::as_u64)
                    .unwrap_or(u64::MAX);
                let count = ARRAY_ITEMS.max(min).min(max);
                let items = rules
                    .get("items")
                    .cloned()
                    .unwrap_or(json!({"type": "string"}));
                // An ordering (exactly as many items as the enum has values): each value once.
                if let Some(values) = items.get("enum").and_then(Value::as_array)
                    && min == values.len() as u64
                    && max == min
                {
                    let mut order = values.clone();
                    if self.opposite {
                        order.reverse();
                    }
                    return Value::Array(order);
                }
                Value::Array(
                    (0..count)
                        .map(|_| self.fill(&items, name, depth + 1))
                        .collect(),
                )
            }
            "boolean" => Value::Bool(!self.opposite),
            "integer" | "number" => {
                let lower = name.to_lowercase();
                let verdict_like = VERDICT_WORDS.iter().any(|w| lower.contains(w));
                let minimum = rules.get("minimum").and_then(Value::as_f64);
                let maximum = rules.get("maximum").and_then(Value::as_f64);
                let clamp = |mut x: f64| {
                    if let Some(min) = minimum {
                        x = x.max(min);
                    }
                    if let Some(max) = maximum {
                        x = x.min(max);
                    }
                    x
                };
                let answer = clamp(if verdict_like { 1.0 } else { 0.0 });
                let mut x = answer;
                if self.opposite && verdict_like {
                    x = clamp(0.0);
                    // A scale starting at 1 clamps 0 back to the answer: take its other end.
                    if x == answer {
                        x = maximum.unwrap_or(x);
                    }
                }
                if kind == "integer" {
                    json!(x as i64)
                } else {
                    json!(x)
                }
            }
            "null" => Value::Null,
            _ => self.string(rules),
        }
    }

    fn string(&mut self, rules: &Map<String, Value>) -> Value {
        let fixed = match rules.get("format").and_then(Value::as_str) {
            Some("date") => Some("2024-01-01"),
            Some("date-time") => Some("2024-01-01T00:00:00Z"),
            Some("uri") => Some("https://example.com/"),
            Some("email") => Some("user@example.com"),
            Some("uuid") => Some("00000000-0000-4000-8000-000000000000"),
            _ => None,
        };
        if let Some(fixed) = fixed {
            return json!(fixed);
        }
        let pick = (self.rng.next_u64() % self.sentences.len().max(1) as u64) as usize;
        let sentence = self.sentences.get(pick).cloned().unwrap_or_default();
        json!(sentence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_every_kind_deterministically() {
        let schema = json!({
            "type": "object",
            "properties": {
                "reason": {"type": "string"},
                "verdict": {"type": "integer", "minimum": 0, "maximum": 1},
                "noncommittal": {"type": "integer"},
                "kind": {"enum": ["a", "b"]},
                "ok": {"type": "boolean"},
                "items": {"type": "array", "items": {"$ref": "#/$defs/s"}, "maxItems": 2},
                "maybe": {"anyOf": [{"type": "null"}, {"type": "number"}]}
            },
            "$defs": {"s": {"type": "string"}}
        });
        let sentences = vec!["Alpha one.".to_string(), "Beta two.".to_string()];
        let a = instance(&schema, &mut Rng::new(7), &sentences);
        let b = instance(&schema, &mut Rng::new(7), &sentences);
        assert_eq!(a, b);
        assert_eq!(a["verdict"], json!(1));
        assert_eq!(a["noncommittal"], json!(0));
        assert_eq!(a["kind"], json!("a"));
        assert_eq!(a["ok"], json!(true));
        assert_eq!(a["items"].as_array().map(Vec::len), Some(2));
        assert_eq!(a["maybe"], json!(0.0));
        assert!(sentences.contains(&a["reason"].as_str().unwrap().to_string()));
    }

    #[test]
    fn the_opposite_instance_turns_every_verdict_around() {
        let schema = json!({
            "type": "object",
            "properties": {
                "reason": {"type": "string"},
                "verdict": {"type": "integer", "minimum": 0, "maximum": 1},
                "score": {"type": "integer", "minimum": 1, "maximum": 5},
                "rating": {"type": "number"},
                "noncommittal": {"type": "integer"},
                "kind": {"enum": ["pass", "fail"]},
                "one": {"enum": ["only"]},
                "ok": {"type": "boolean"},
                "order": {"type": "array", "items": {"enum": ["a", "b", "c"]},
                    "minItems": 3, "maxItems": 3}
            }
        });
        let sentences = vec!["Alpha one.".to_string()];
        let answer = instance(&schema, &mut Rng::new(7), &sentences);
        let draft = opposite_instance(&schema, &mut Rng::new(7), &sentences);
        assert_eq!(answer["verdict"], json!(1));
        assert_eq!(draft["verdict"], json!(0));
        assert_eq!(
            (answer["score"].clone(), draft["score"].clone()),
            (json!(1), json!(5))
        );
        assert_eq!(
            (answer["rating"].clone(), draft["rating"].clone()),
            (json!(1.0), json!(0.0))
        );
        assert_eq!(draft["noncommittal"], answer["noncommittal"]);
        assert_eq!(
            (answer["kind"].clone(), draft["kind"].clone()),
            (json!("pass"), json!("fail"))
        );
        assert_eq!(draft["one"], json!("only"));
        assert_eq!(
            (answer["ok"].clone(), draft["ok"].clone()),
            (json!(true), json!(false))
        );
        assert_eq!(draft["order"], json!(["c", "b", "a"]));
        assert_eq!(draft["reason"], answer["reason"]);
    }

    #[test]
    fn finds_a_schema_in_the_prompt_and_keeps_it_out_of_the_strings() {
        let body = json!({"messages": [{"role": "user", "content":
            "Item 5 is red. Reply with JSON matching this JSON Schema:\n{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}}"}]});
        let (schema, at) = find_schema(&body).unwrap();
        assert_eq!(schema["properties"]["a"]["type"], json!("string"));
        assert_eq!(sentence_pool(&body, at), vec!["Item 5 is red.".to_string()]);
    }
}
