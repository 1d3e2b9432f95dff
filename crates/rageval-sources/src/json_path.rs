//! Dotted paths into JSON: `data.answer`, `choices.0.message.content`, `metadata.content`.
//!
//! A segment indexes an array when it is a number and the value is an array, and names an
//! object key otherwise. Elasticsearch documents may also hold a literal dotted key
//! (`{"metadata.content": …}`); [`JsonPath::get`] tries the longest literal key first, so
//! both spellings of a field are found.

use std::fmt;

use serde_json::Value;

/// A parsed dotted path. The empty path (or `$`) is the value itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    raw: String,
    segments: Vec<String>,
}

impl JsonPath {
    /// Parses `a.b.0.c`; a leading `$.` is accepted and ignored.
    pub fn parse(raw: &str) -> JsonPath {
        let trimmed = raw.trim();
        let body = trimmed
            .strip_prefix("$.")
            .or_else(|| trimmed.strip_prefix('$'))
            .unwrap_or(trimmed);
        let segments = if body.is_empty() {
            Vec::new()
        } else {
            body.split('.').map(str::to_owned).collect()
        };
        JsonPath {
            raw: trimmed.to_owned(),
            segments,
        }
    }

    /// The value at this path, if there is one.
    pub fn get<'a>(&self, value: &'a Value) -> Option<&'a Value> {
        lookup(value, &self.segments)
    }

    /// Whether this is the empty path.
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }
}

fn lookup<'a>(value: &'a Value, segments: &[String]) -> Option<&'a Value> {
    let Some(first) = segments.first() else {
        return Some(value);
    };
    match value {
        Value::Array(items) => {
            let index: usize = first.parse().ok()?;
            lookup(items.get(index)?, &segments[1..])
        }
        Value::Object(map) => {
            // Longest literal key first: `a.b` as one key beats `a` then `b`.
            (1..=segments.len()).rev().find_map(|take| {
                let key = segments[..take].join(".");
                map.get(&key)
                    .and_then(|inner| lookup(inner, &segments[take..]))
            })
        }
        _ => None,
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.raw.is_empty() {
            f.write_str("$")
        } else {
            f.write_str(&self.raw)
        }
    }
}

/// Text of a scalar: strings as they are, numbers and booleans as JSON; `None` otherwise.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_keys_indexes_and_literal_dotted_keys() {
        let v = json!({
            "choices": [{"message": {"content": "hi"}}],
            "metadata": {"content": "nested"},
            "collection_info.collect_id": "flat"
        });
        assert_eq!(
            JsonPath::parse("choices.0.message.content").get(&v),
            Some(&json!("hi"))
        );
        assert_eq!(
            JsonPath::parse("$.metadata.content").get(&v),
            Some(&json!("nested"))
        );
        assert_eq!(
            JsonPath::parse("collection_info.collect_id").get(&v),
            Some(&json!("flat"))
        );
        assert_eq!(JsonPath::parse("choices.1").get(&v), None);
        assert_eq!(JsonPath::parse("").get(&v), Some(&v));
        assert!(JsonPath::parse("$").is_root());
    }
}
