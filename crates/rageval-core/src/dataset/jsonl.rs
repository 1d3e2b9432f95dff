//! JSON Lines: one object per line, streamed so memory does not grow with the file.
//!
//! Blank lines (including trailing ones) are skipped, CRLF endings and a leading UTF-8 BOM
//! are accepted, and every error names the 1-based line.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::error::{DatasetError, DatasetErrorKind};
use super::value::{Record, type_name};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The records of a JSONL file, read lazily.
#[derive(Debug)]
pub(crate) struct JsonlRecords {
    file: PathBuf,
    reader: BufReader<File>,
    /// Reused for every line, so it only grows to the longest line.
    buffer: Vec<u8>,
    line: usize,
    done: bool,
}

impl JsonlRecords {
    /// Opens the file; nothing is read yet.
    pub(crate) fn open(path: &Path) -> Result<Self, DatasetError> {
        let file = File::open(path)
            .map_err(|error| DatasetError::file(path, DatasetErrorKind::Io(error)))?;
        Ok(Self {
            file: path.to_path_buf(),
            reader: BufReader::new(file),
            buffer: Vec::new(),
            line: 0,
            done: false,
        })
    }

    fn parse_line(&self) -> Option<Result<Record, DatasetError>> {
        let mut bytes = self.buffer.as_slice();
        if self.line == 1 {
            bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
        }
        let error = |kind| DatasetError::at(&self.file, self.line, kind);
        let Ok(text) = std::str::from_utf8(bytes) else {
            return Some(Err(error(DatasetErrorKind::NotUtf8)));
        };
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        Some(match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(fields)) => Ok(Record {
                file: None,
                line: self.line,
                fields,
            }),
            Ok(other) => Err(error(DatasetErrorKind::NotObject {
                found: type_name(&other),
            })),
            Err(json_error) => Err(error(DatasetErrorKind::InvalidJson {
                message: message_without_line(&json_error),
            })),
        })
    }
}

impl Iterator for JsonlRecords {
    type Item = Result<Record, DatasetError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.buffer.clear();
            match self.reader.read_until(b'\n', &mut self.buffer) {
                Ok(0) => self.done = true,
                Ok(_) => {
                    self.line += 1;
                    if let Some(item) = self.parse_line() {
                        return Some(item);
                    }
                }
                Err(io) => {
                    self.done = true;
                    let line = self.line + 1;
                    return Some(Err(DatasetError::at(
                        &self.file,
                        line,
                        DatasetErrorKind::Io(io),
                    )));
                }
            }
        }
        None
    }
}

/// serde_json's message without its "at line 1 column N" (always line 1 for one line),
/// keeping the column.
pub(crate) fn message_without_line(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    match message.strip_suffix(&suffix) {
        Some(bare) => format!("{bare} at column {}", error.column()),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn records(content: &[u8]) -> Vec<Result<Record, DatasetError>> {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(content).unwrap();
        JsonlRecords::open(file.path()).unwrap().collect()
    }

    #[test]
    fn skips_blank_lines_and_accepts_bom_and_crlf() {
        let items = records(b"\xEF\xBB\xBF{\"a\": 1}\r\n\r\n{\"a\": 2}\r\n\n\n");
        let lines: Vec<usize> = items.iter().map(|r| r.as_ref().unwrap().line).collect();
        assert_eq!(lines, vec![1, 3]);
    }

    #[test]
    fn errors_name_the_line() {
        let items = records(b"{\"a\": 1}\n[1]\n{\"a\": \n\xFF\n");
        let errors: Vec<String> = items
            .into_iter()
            .filter_map(Result::err)
            .map(|e| format!("{:?} {}", e.line, e.kind))
            .collect();
        assert_eq!(errors.len(), 3);
        assert!(errors[0].starts_with("Some(2) a record must be a json object, found an array"));
        assert!(
            errors[1].starts_with("Some(3) invalid json: EOF while parsing"),
            "{}",
            errors[1]
        );
        assert!(errors[2].starts_with("Some(4) not valid utf-8"));
    }
}
