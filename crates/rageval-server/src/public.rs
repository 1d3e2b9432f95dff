//! What a page or an answer may show of a path: run names and relative paths, never where
//! the machine's files lie. A run records absolute paths in many places — its dataset, the
//! answer cache, the embedded models' folders, a GGUF judge's file (`llm gguf:/…`), errors
//! that name a file — and the server shows each by its last name instead.
//!
//! [`without_paths`] finds absolute paths inside any text: a `/` (or a drive letter and
//! `:\`, or `\\`) at the start or after a space, a quote, a bracket, `=`, `,`, `;` or `:`,
//! followed by a name, up to the next space, quote, bracket, `,`, `;` or `:`. A URL's
//! `//host/…` is not one (it follows `:`, then two slashes); `a/b`, `1/2` and `and/or`
//! are not either (no boundary before the slash). Every JSON answer passes through
//! [`public_json`] whole; pages are rendered from a run whose manifest, summary, agreement
//! and cell errors passed through it ([`public_run`]), and a stored `report.html` (which
//! holds no link to a path of this server) through [`without_paths`] whole. Errors name
//! files relative to the runs directory (`ReportError::relative_to`).

use std::borrow::Cow;
use std::ops::Range;

use rageval_core::Outcome;
use rageval_report::{RunData, SeatVerdict, StageData};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A recorded path as shown: relative paths as they are, absolute ones by their last name.
pub(crate) fn shown_path(path: &str) -> String {
    without_paths(path).into_owned()
}

/// `text` with each absolute path in it shown by its last name.
pub(crate) fn without_paths(text: &str) -> Cow<'_, str> {
    let spans = absolute_paths(text);
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        shown.push_str(&text[at..span.start]);
        shown.push_str(last_name(&text[span.clone()]));
        at = span.end;
    }
    shown.push_str(&text[at..]);
    Cow::Owned(shown)
}

/// Every string in `value` (object keys too) as [`without_paths`] shows it.
pub(crate) fn public_json(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let Cow::Owned(shown) = without_paths(text) {
                *text = shown;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(public_json),
        Value::Object(fields) => {
            let entries = std::mem::take(fields);
            for (key, mut item) in entries {
                public_json(&mut item);
                fields.insert(without_paths(&key).into_owned(), item);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// `value` with its strings as [`public_json`] shows them; `value` itself if the shown form
/// no longer reads as a `T` (a path-shaped field that must parse: none today).
fn public_copy<T: Serialize + DeserializeOwned + Clone>(value: &T) -> T {
    serde_json::to_value(value)
        .ok()
        .and_then(|mut json| {
            public_json(&mut json);
            serde_json::from_value(json).ok()
        })
        .unwrap_or_else(|| value.clone())
}

/// The run as a page shows it: manifest, summary, agreement and each cell's reason or
/// error. (A verdict's evidence is the judge's words about the data and is kept as it is.)
pub(crate) fn public_run(run: &mut RunData) {
    run.manifest = public_copy(&run.manifest);
    run.summary = public_copy(&run.summary);
    run.agreement = run.agreement.as_ref().map(public_copy);
    for record in &mut run.records {
        let text = match &mut record.outcome {
            Outcome::Undefined { reason } => reason,
            Outcome::Failed { error } => error,
            Outcome::Score { .. } => continue,
        };
        if let Cow::Owned(shown) = without_paths(text) {
            *text = shown;
        }
    }
}

/// The stage run as a page shows it.
pub(crate) fn public_stage(run: &mut StageData) {
    run.manifest = public_copy(&run.manifest);
    public_json(&mut run.summary);
    // A pairwise run's questions, reasons and errors (an error may name a file).
    for question in run.pairwise_questions.iter_mut().flatten() {
        question.question = shown_path(&question.question);
        for pair in &mut question.pairs {
            for verdict in [&mut pair.a_first, &mut pair.b_first] {
                let text: &mut String = match verdict {
                    SeatVerdict::Answered { reason, .. } => reason,
                    SeatVerdict::Failed { error } => error,
                };
                *text = shown_path(text);
            }
        }
    }
}

/// Byte ranges of the absolute paths in `text`.
fn absolute_paths(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let after_boundary = at == 0 || is_boundary(bytes[at - 1]);
        let start = after_boundary.then(|| path_start(&bytes[at..])).flatten();
        let Some(prefix) = start else {
            at += 1;
            continue;
        };
        let mut end = at + prefix;
        while end < bytes.len() && !ends_path(bytes[end]) {
            end += 1;
        }
        // A sentence's full stop is not the file's.
        while end > at + prefix && bytes[end - 1] == b'.' {
            end -= 1;
        }
        spans.push(at..end);
        at = end.max(at + 1);
    }
    spans
}

/// The length of an absolute path's root at the start of `rest` (`/`, `C:\`, `C:/`, `\\`)
/// when a name follows it.
fn path_start(rest: &[u8]) -> Option<usize> {
    let root = match rest {
        [b'/', ..] => 1,
        [b'\\', b'\\', ..] => 2,
        [drive, b':', b'\\' | b'/', ..] if drive.is_ascii_alphabetic() => 3,
        _ => return None,
    };
    rest.get(root)
        .is_some_and(|&b| starts_name(b))
        .then_some(root)
}

/// A byte a file or folder name may open with: a letter or digit (any non-ASCII one), `.`,
/// `_`, `-` or `~` (not `/`, `*` or punctuation: `//host`, `/*` and `/>` are no paths).
fn starts_name(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-' | b'~') || byte >= 0x80
}

fn is_boundary(byte: u8) -> bool {
    byte.is_ascii_whitespace()
        || matches!(
            byte,
            b'"' | b'\'' | b'`' | b'(' | b'[' | b'{' | b'=' | b',' | b';' | b':' | b'>'
        )
}

fn ends_path(byte: u8) -> bool {
    byte.is_ascii_whitespace()
        || matches!(
            byte,
            b'"' | b'\''
                | b'`'
                | b'('
                | b')'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b','
                | b';'
                | b':'
                | b'<'
                | b'>'
                | b'|'
        )
}

/// The last name of a path (`` when it has none).
fn last_name(path: &str) -> &str {
    path.trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn absolute_paths_show_their_last_name_only() {
        for (text, shown) in [
            ("/home/me/data/kids.jsonl", "kids.jsonl"),
            ("data/kids.jsonl", "data/kids.jsonl"),
            ("/", "/"),
            ("/home/me/models/", "models"),
            ("llm gguf:/srv/m/qwen.gguf", "llm gguf:qwen.gguf"),
            (
                "cannot read /srv/runs/a/summary.json: no such file",
                "cannot read summary.json: no such file",
            ),
            ("(see /etc/hosts).", "(see hosts)."),
            ("cache=\"/var/c.sqlite\"", "cache=\"c.sqlite\""),
            (r"C:\Users\me\data.xlsx", "data.xlsx"),
            (r"\\share\runs\data.csv", "data.csv"),
            ("D:/data/x.jsonl and /tmp/y", "x.jsonl and y"),
            ("/home/李/数据.jsonl", "数据.jsonl"),
        ] {
            assert_eq!(without_paths(text), shown, "{text}");
        }
        for kept in [
            "http://127.0.0.1:8000/v1/chat/completions",
            "https://api.example.com/v1",
            "and/or 1/2 A/B testing 24/7",
            "14px/1.5 system-ui",
            "</td><br/><path d=\"M 0 0\"/>",
            "/* a comment */",
            "a ratio: 3 / 4",
        ] {
            assert_eq!(without_paths(kept), kept);
        }
    }

    #[test]
    fn every_string_of_an_answer_is_shown_without_paths() {
        let mut value = json!({
            "cache": "/home/me/.cache/rageval/answers.sqlite",
            "models": ["/opt/models/all-MiniLM-L6-v2", "relative/dir"],
            "/abs/key": {"n": 1, "ok": true, "base_url": "http://localhost:8000/v1"},
        });
        public_json(&mut value);
        assert_eq!(
            value,
            json!({
                "cache": "answers.sqlite",
                "models": ["all-MiniLM-L6-v2", "relative/dir"],
                "key": {"n": 1, "ok": true, "base_url": "http://localhost:8000/v1"},
            })
        );
    }
}
