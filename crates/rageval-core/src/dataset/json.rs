//! JSON files: an array of record objects, loaded whole.
//!
//! Errors about one element name the line where that element starts, found by a small scan
//! of the (already validated) text, since serde_json does not report positions of values. A
//! `.json` file whose first character is `{` is JSON Lines in disguise (Hugging Face
//! `Dataset.to_json` writes that) and is handed to the JSONL reader.

use std::path::Path;

use serde_json::Value;

use super::error::{DatasetError, DatasetErrorKind};
use super::jsonl::message_without_line;
use super::value::{Record, type_name};

/// The records of a JSON array file, or `None` when the file is JSON Lines.
pub(crate) fn load(path: &Path) -> Result<Option<Vec<Result<Record, DatasetError>>>, DatasetError> {
    let text = read_text(path)?;
    let start = text.len() - text.trim_start().len();
    let first_line = crate::position::line_of(&text, start);
    match text[start..].chars().next() {
        None => return Err(DatasetError::file(path, DatasetErrorKind::Empty)),
        Some('{') => return single_object(path, &text, first_line),
        Some(_) => {}
    }
    let value: Value = serde_json::from_str(&text).map_err(|error| {
        let line = error.line().max(1);
        DatasetError::at(
            path,
            line,
            DatasetErrorKind::InvalidJson {
                message: message_without_line(&error),
            },
        )
    })?;
    let Value::Array(items) = value else {
        let kind = DatasetErrorKind::NotArray {
            found: type_name(&value),
        };
        return Err(DatasetError::at(path, first_line, kind));
    };
    if items.is_empty() {
        return Err(DatasetError::file(path, DatasetErrorKind::Empty));
    }
    let lines = element_lines(&text[start..]);
    let records = items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            // The scan and the parser see the same valid text, so the counts agree; the
            // fallback only guards against a scan bug.
            let line = lines.get(index).map_or(first_line, |l| l + first_line - 1);
            match item {
                Value::Object(fields) => Ok(Record {
                    file: None,
                    line,
                    fields,
                }),
                other => Err(DatasetError::at(
                    path,
                    line,
                    DatasetErrorKind::NotObject {
                        found: type_name(&other),
                    },
                )),
            }
        })
        .collect();
    Ok(Some(records))
}

/// A `.json` file starting with `{`: JSON Lines, unless it is one object spread over several
/// lines, which is a record list someone forgot to wrap in `[…]`.
fn single_object(
    path: &Path,
    text: &str,
    first_line: usize,
) -> Result<Option<Vec<Result<Record, DatasetError>>>, DatasetError> {
    let lines = text.lines().filter(|line| !line.trim().is_empty()).count();
    if lines > 1 && matches!(serde_json::from_str::<Value>(text), Ok(Value::Object(_))) {
        let kind = DatasetErrorKind::NotArray {
            found: "one object (wrap the records in [...], or write one object per line)",
        };
        return Err(DatasetError::at(path, first_line, kind));
    }
    Ok(None)
}

/// A whole file as text: BOM dropped, UTF-8 checked (naming the first bad line).
pub(crate) fn read_text(path: &Path) -> Result<String, DatasetError> {
    let bytes = std::fs::read(path)
        .map_err(|error| DatasetError::file(path, DatasetErrorKind::Io(error)))?;
    let bytes = bytes
        .strip_prefix(b"\xEF\xBB\xBF")
        .map(<[u8]>::to_vec)
        .unwrap_or(bytes);
    String::from_utf8(bytes).map_err(|error| {
        let valid = error.utf8_error().valid_up_to();
        let line = error.as_bytes()[..valid]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        DatasetError::at(path, line, DatasetErrorKind::NotUtf8)
    })
}

/// The line (1-based, relative to `text`) where each element of the top-level array in
/// `text` starts. `text` must be valid JSON beginning with `[`.
fn element_lines(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut line = 1;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    // True right after the top-level `[` or a top-level `,`: the next value starts an element.
    let mut expecting = false;
    for byte in text.bytes() {
        if byte == b'\n' {
            line += 1;
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        if byte.is_ascii_whitespace() {
            continue;
        }
        if expecting && byte != b']' {
            lines.push(line);
            expecting = false;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth == 1 {
                    expecting = true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => expecting = true,
            _ => {}
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_lines_follow_the_text() {
        let text = "[\n  {\"a\": \"x,[y\\\"\"},\n  {\"b\": [1,\n 2]}, 3,\n\n  \"s\"\n]";
        assert_eq!(element_lines(text), vec![2, 3, 4, 6]);
        assert_eq!(element_lines("[]"), Vec::<usize>::new());
        assert_eq!(element_lines("[{}]"), vec![1]);
    }

    #[test]
    fn read_text_names_the_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        std::fs::write(&path, b"[\n{\"q\": \"\xC3\x28\"}]").unwrap();
        let error = read_text(&path).unwrap_err();
        assert_eq!(error.line, Some(2));
    }
}
