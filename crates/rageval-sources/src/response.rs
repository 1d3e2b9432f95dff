//! How a RAG service's response body turns into an answer (and, for JSON, the contexts it
//! used): plain text, a JSON document, streamed lines, or server-sent events.
//!
//! Streams are read to their end (the request timeout bounds how long that may take) and
//! then combined by a [`StreamMode`]: seed S3's service streams lines and its client keeps
//! the last non-empty one ([`StreamMode::Last`]); token-by-token streams are concatenated
//! ([`StreamMode::Concat`]). Each piece may be JSON, with a [`JsonPath`] to the text in it
//! (`choices.0.delta.content` for OpenAI-style events); a piece whose JSON lacks the path adds
//! nothing (role-only and final events). SSE follows the WHATWG event-stream rules: `data:`
//! lines of one event are joined by newlines, comments and other fields are ignored, and a
//! `[DONE]` event ends the stream.

use serde_json::{Map, Value};

use crate::json_path::{JsonPath, scalar_text};
use crate::system::Retrieved;

/// How to combine the pieces of a streamed answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamMode {
    /// The last non-empty piece (each piece is the whole answer so far, or the final line).
    Last,
    /// The pieces joined by newlines.
    Join,
    /// The pieces joined with nothing in between (token deltas).
    Concat,
}

/// Where the contexts are in a JSON answer, and how to read each one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFields {
    /// Path to the list of contexts.
    pub path: JsonPath,
    /// Path to the text inside an object context; default: `text`, `content` or
    /// `page_content`. A context that is a string is its own text.
    pub text: Option<JsonPath>,
    /// Path to the id inside an object context; default: `id`, `_id` or `uuid`; the 1-based
    /// position when none.
    pub id: Option<JsonPath>,
    /// Path to the score inside an object context; default: `score` or `_score`.
    pub score: Option<JsonPath>,
}

/// The shape of the service's response body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResponseShape {
    /// The body is the answer.
    Text,
    /// A JSON document with the answer (and optionally the contexts) at paths.
    Json {
        /// Path to the answer string.
        answer: JsonPath,
        /// Where the contexts are, if the service reports them.
        contexts: Option<ContextFields>,
    },
    /// Newline-separated pieces.
    Lines {
        /// How to combine them.
        mode: StreamMode,
        /// Path to the text in each piece, when pieces are JSON.
        path: Option<JsonPath>,
    },
    /// Server-sent events.
    Sse {
        /// How to combine the events' data.
        mode: StreamMode,
        /// Path to the text in each event's data, when data are JSON.
        path: Option<JsonPath>,
    },
}

impl ResponseShape {
    /// The shape in a few words: `text`, `json, answer at data.answer, contexts at
    /// data.docs`, `lines (last)`, `sse (concat) at choices.0.delta.content`.
    pub fn describe(&self) -> String {
        let mode = |mode: &StreamMode| match mode {
            StreamMode::Last => "last",
            StreamMode::Join => "join",
            StreamMode::Concat => "concat",
        };
        let at = |path: &Option<JsonPath>| {
            path.as_ref()
                .map_or_else(String::new, |path| format!(" at {path}"))
        };
        match self {
            ResponseShape::Text => "text".into(),
            ResponseShape::Json { answer, contexts } => {
                let mut text = format!("json, answer at {answer}");
                if let Some(fields) = contexts {
                    text.push_str(&format!(", contexts at {}", fields.path));
                }
                text
            }
            ResponseShape::Lines { mode: m, path } => format!("lines ({}){}", mode(m), at(path)),
            ResponseShape::Sse { mode: m, path } => format!("sse ({}){}", mode(m), at(path)),
        }
    }
}

/// The answer text and contexts of one response body, or what is wrong with it.
pub fn parse_answer(
    shape: &ResponseShape,
    body: &str,
) -> Result<(String, Option<Vec<Retrieved>>), String> {
    match shape {
        ResponseShape::Text => Ok((body.trim().to_owned(), None)),
        ResponseShape::Json { answer, contexts } => {
            let value: Value = serde_json::from_str(body)
                .map_err(|e| format!("body is not json ({e}): {}", preview(body)))?;
            let text = match answer.get(&value) {
                // A null answer is an empty one: asked again, like an empty string.
                Some(Value::Null) => String::new(),
                Some(v) => scalar_text(v).ok_or_else(|| {
                    format!(
                        "the value at `{answer}` is not text: {}",
                        preview(&v.to_string())
                    )
                })?,
                None => return Err(format!("no `{answer}` in the answer: {}", preview(body))),
            };
            let contexts = contexts
                .as_ref()
                .map(|fields| read_contexts(&value, fields))
                .transpose()?;
            Ok((text, contexts))
        }
        ResponseShape::Lines { mode, path } => {
            let pieces = body
                .split('\n')
                .map(|line| line.strip_suffix('\r').unwrap_or(line))
                .filter(|line| !line.trim().is_empty())
                .enumerate()
                .map(|(i, line)| piece(line, path.as_ref(), &format!("line {}", i + 1)))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((combine(*mode, pieces.into_iter().flatten()), None))
        }
        ResponseShape::Sse { mode, path } => {
            let mut pieces = Vec::new();
            for (i, data) in sse_data(body).into_iter().enumerate() {
                if data.trim() == "[DONE]" {
                    break;
                }
                pieces.extend(piece(&data, path.as_ref(), &format!("event {}", i + 1))?);
            }
            Ok((combine(*mode, pieces.into_iter()), None))
        }
    }
}

/// The text of one streamed piece: itself, or the value at `path` in its JSON.
fn piece(data: &str, path: Option<&JsonPath>, name: &str) -> Result<Option<String>, String> {
    let Some(path) = path else {
        return Ok(Some(data.to_owned()));
    };
    let value: Value = serde_json::from_str(data)
        .map_err(|e| format!("{name} is not json ({e}): {}", preview(data)))?;
    Ok(path.get(&value).and_then(scalar_text))
}

fn combine(mode: StreamMode, pieces: impl Iterator<Item = String>) -> String {
    match mode {
        StreamMode::Last => pieces
            .filter(|p| !p.trim().is_empty())
            .last()
            .unwrap_or_default(),
        StreamMode::Join => pieces.collect::<Vec<_>>().join("\n"),
        StreamMode::Concat => pieces.collect(),
    }
}

/// The data of each event of an event stream, in order.
fn sse_data(body: &str) -> Vec<String> {
    let mut events = Vec::new();
    let mut data: Option<String> = None;
    for line in body.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            events.extend(data.take());
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        if field == "data" {
            match &mut data {
                Some(existing) => {
                    existing.push('\n');
                    existing.push_str(value);
                }
                None => data = Some(value.to_owned()),
            }
        }
    }
    events.extend(data);
    events
}

fn read_contexts(value: &Value, fields: &ContextFields) -> Result<Vec<Retrieved>, String> {
    let Some(list) = fields.path.get(value) else {
        return Err(format!("no `{}` (the contexts) in the answer", fields.path));
    };
    let Value::Array(items) = list else {
        return Err(format!("the contexts at `{}` are not a list", fields.path));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| read_context(item, i + 1, fields))
        .collect()
}

fn read_context(
    item: &Value,
    position: usize,
    fields: &ContextFields,
) -> Result<Retrieved, String> {
    let first = |path: &Option<JsonPath>, defaults: &[&str]| -> Option<Value> {
        match path {
            Some(path) => path.get(item).cloned(),
            None => defaults.iter().find_map(|key| item.get(*key).cloned()),
        }
    };
    let text = match item {
        Value::String(text) => Some(text.clone()),
        _ => first(&fields.text, &["text", "content", "page_content"])
            .as_ref()
            .and_then(scalar_text),
    }
    .ok_or_else(|| {
        format!(
            "context {position} at `{}` has no text: {}",
            fields.path,
            preview(&item.to_string())
        )
    })?;
    let id = first(&fields.id, &["id", "_id", "uuid"])
        .as_ref()
        .and_then(scalar_text)
        .unwrap_or_else(|| position.to_string());
    let score = first(&fields.score, &["score", "_score"]).and_then(|v| v.as_f64());
    let extra = match item {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    Ok(Retrieved {
        id,
        text,
        score,
        fields: extra,
    })
}

/// The start of a body, for error messages.
fn preview(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let short: String = line.trim().chars().take(120).collect();
    if short.is_empty() {
        "(empty)".into()
    } else {
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> Option<JsonPath> {
        Some(JsonPath::parse(p))
    }

    #[test]
    fn lines_last_join_and_json_pieces() {
        let body = "first\r\n\npartial answer\nfinal answer\n";
        let last = ResponseShape::Lines {
            mode: StreamMode::Last,
            path: None,
        };
        assert_eq!(parse_answer(&last, body).unwrap().0, "final answer");
        let join = ResponseShape::Lines {
            mode: StreamMode::Join,
            path: None,
        };
        assert_eq!(
            parse_answer(&join, body).unwrap().0,
            "first\npartial answer\nfinal answer"
        );
        let json = ResponseShape::Lines {
            mode: StreamMode::Concat,
            path: path("delta"),
        };
        assert_eq!(
            parse_answer(
                &json,
                "{\"delta\":\"少儿\"}\n{\"delta\":\"编程\"}\n{\"done\":true}\n"
            )
            .unwrap()
            .0,
            "少儿编程"
        );
        let err = parse_answer(&json, "{\"delta\":\"a\"}\nnot json\n").unwrap_err();
        assert!(err.starts_with("line 2 is not json"), "{err}");
    }

    #[test]
    fn sse_events_join_data_lines_skip_comments_and_stop_at_done() {
        let body = ": keep-alive\n\ndata: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n\
                    data: {\"choices\":[{\"delta\":{\"content\":\"你好\"}}]}\n\n\
                    event: message\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"，世界\"}}]}\r\n\r\n\
                    data: [DONE]\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"late\"}}]}\n\n";
        let shape = ResponseShape::Sse {
            mode: StreamMode::Concat,
            path: path("choices.0.delta.content"),
        };
        assert_eq!(parse_answer(&shape, body).unwrap().0, "你好，世界");
        let plain = ResponseShape::Sse {
            mode: StreamMode::Join,
            path: None,
        };
        assert_eq!(
            parse_answer(&plain, "data: a\ndata: b\n\ndata: c")
                .unwrap()
                .0,
            "a\nb\nc"
        );
    }

    #[test]
    fn json_answer_and_contexts() {
        let shape = ResponseShape::Json {
            answer: JsonPath::parse("data.answer"),
            contexts: Some(ContextFields {
                path: JsonPath::parse("data.docs"),
                text: None,
                id: None,
                score: None,
            }),
        };
        let body = r#"{"data": {"answer": "488亿", "docs": [
            {"content": "规模约488亿", "uuid": "c-7", "score": 0.9}, "纯文本"]}}"#;
        let (answer, contexts) = parse_answer(&shape, body).unwrap();
        assert_eq!(answer, "488亿");
        let contexts = contexts.unwrap();
        assert_eq!(
            (contexts[0].id.as_str(), contexts[0].score),
            ("c-7", Some(0.9))
        );
        assert_eq!(
            (contexts[1].id.as_str(), contexts[1].text.as_str()),
            ("2", "纯文本")
        );
        let err = parse_answer(&shape, r#"{"data": {"text": "x"}}"#).unwrap_err();
        assert!(err.starts_with("no `data.answer` in the answer"), "{err}");
        let err = parse_answer(&shape, "<html>oops").unwrap_err();
        assert!(
            err.contains("body is not json") && err.contains("<html>oops"),
            "{err}"
        );
    }
}
