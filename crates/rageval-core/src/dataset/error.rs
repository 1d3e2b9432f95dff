//! The one error type of the dataset readers.
//!
//! Every failure, from a missing file to a number where a context list belongs, is a
//! [`DatasetError`] that names the file, the line (or row) and the field when there is one,
//! so a user can jump straight to the offending spot. The [`DatasetErrorKind`] says what went
//! wrong; the location lives beside it so each kind's message stays short.

use std::fmt;
use std::path::{Path, PathBuf};

/// A dataset could not be read, or one of its records is not a valid sample.
///
/// Displays as `{file}:{line}: field `{field}`: {message}`, leaving out the parts that are
/// unknown (a `--map` error has no file; a missing file has no line).
#[derive(Debug)]
pub struct DatasetError {
    /// The file being read; empty for errors that concern no file (a bad `--map`).
    pub file: PathBuf,
    /// 1-based line (JSONL/JSON/CSV) or sheet row (XLSX) where the record starts.
    pub line: Option<usize>,
    /// The column or key at fault, as spelled in the data (or the canonical name when the
    /// data has no such column).
    pub field: Option<String>,
    /// What went wrong.
    pub kind: DatasetErrorKind,
}

impl DatasetError {
    /// An error about a whole file.
    pub(crate) fn file(file: &Path, kind: DatasetErrorKind) -> Self {
        Self {
            file: file.to_path_buf(),
            line: None,
            field: None,
            kind,
        }
    }

    /// An error at one line of a file.
    pub(crate) fn at(file: &Path, line: usize, kind: DatasetErrorKind) -> Self {
        Self {
            line: Some(line),
            ..Self::file(file, kind)
        }
    }

    /// The same error, naming the field at fault.
    pub(crate) fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

impl fmt::Display for DatasetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display().to_string();
        if !file.is_empty() {
            f.write_str(&file)?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            f.write_str(": ")?;
        } else if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "field `{field}`: ")?;
        }
        write!(f, "{}", self.kind)
    }
}

// Written by hand rather than derived: the kind's message is already part of `Display`, so
// reporting the kind itself as the source would print it twice in a cause chain. The kind's
// own cause (an I/O error) is the real source.
impl std::error::Error for DatasetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.kind)
    }
}

/// What went wrong while reading a dataset.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DatasetErrorKind {
    /// The file or directory could not be opened or read.
    #[error("cannot read the file")]
    Io(#[source] std::io::Error),
    /// The bytes are not UTF-8.
    #[error("not valid utf-8 text")]
    NotUtf8,
    /// A JSON document or JSONL line does not parse.
    #[error("invalid json: {message}")]
    InvalidJson {
        /// The parser's message.
        message: String,
    },
    /// A record is a JSON value other than an object.
    #[error("a record must be a json object, found {found}")]
    NotObject {
        /// The JSON type found instead.
        found: &'static str,
    },
    /// A `.json` file holds neither an array of records nor JSON Lines.
    #[error("expected a json array of records, found {found}")]
    NotArray {
        /// The JSON type found instead.
        found: &'static str,
    },
    /// The file holds no records (empty, blank lines only, `[]`).
    #[error("the file has no records")]
    Empty,
    /// A CSV/XLSX file has a header row but no data rows.
    #[error("the file has a header but no data rows")]
    HeaderOnly,
    /// A required field (the question) is absent, null or empty.
    #[error("missing required field")]
    MissingField,
    /// No column or key of the record is the question, by its name or an alias: the data
    /// names its fields otherwise (another language, another tool's names).
    #[error(
        "no column is the question; the columns are {}: name the question's with --map \
         question=COLUMN (and the others the same way, e.g. --map answer=COLUMN)",
        quoted(columns)
    )]
    NoQuestionColumn {
        /// The record's columns or keys, as spelled in the data.
        columns: Vec<String>,
    },
    /// A field holds a value of the wrong type.
    #[error("expected {expected}, found {found}")]
    WrongType {
        /// What the field must hold.
        expected: &'static str,
        /// What it holds, briefly.
        found: String,
    },
    /// A conversation's messages are out of shape, or leave no assistant turn to judge.
    #[error("{message}")]
    Conversation {
        /// What is wrong, naming the message's position.
        message: String,
    },
    /// Per-context values (scores, ids) whose count differs from the number of contexts.
    #[error("length {found} differs from the number of contexts ({expected})")]
    LengthMismatch {
        /// The number of contexts.
        expected: usize,
        /// The number of values given.
        found: usize,
    },
    /// Two columns of one record are aliases of the same canonical field.
    #[error(
        "columns {} each match this field; choose one with --map {field}=COLUMN",
        quoted(columns)
    )]
    AmbiguousField {
        /// The canonical field.
        field: &'static str,
        /// The competing columns.
        columns: Vec<String>,
    },
    /// A CSV row has a different number of cells than the header.
    #[error("row has {found} columns, the header has {expected}")]
    ColumnCount {
        /// Columns in the header.
        expected: usize,
        /// Cells in the row.
        found: usize,
    },
    /// Two header cells carry the same name.
    #[error("duplicate column `{column}` in the header")]
    DuplicateColumn {
        /// The repeated name.
        column: String,
    },
    /// A CSV file the CSV parser rejects.
    #[error("invalid csv: {message}")]
    InvalidCsv {
        /// The parser's message.
        message: String,
    },
    /// An XLSX workbook calamine cannot read.
    #[error("cannot read the workbook: {message}")]
    InvalidXlsx {
        /// calamine's message.
        message: String,
    },
    /// The requested sheet is not in the workbook.
    #[error("no sheet `{sheet}` in the workbook; it has {}", quoted(available))]
    MissingSheet {
        /// The sheet asked for.
        sheet: String,
        /// The sheets the workbook has.
        available: Vec<String>,
    },
    /// A `--map` spec is not `field=column`.
    #[error("invalid --map `{spec}`: expected field=column")]
    InvalidMapSpec {
        /// The spec as given.
        spec: String,
    },
    /// A `--map` spec names a field rageval does not know.
    #[error("unknown field `{name}` in --map; valid fields: {valid}")]
    UnknownField {
        /// The name given.
        name: String,
        /// The canonical field names, comma-separated.
        valid: String,
    },
    /// Two `--map` specs set the same field.
    #[error("--map sets field `{field}` twice")]
    FieldMappedTwice {
        /// The canonical field.
        field: &'static str,
    },
    /// A `--map` spec names a column the file does not have.
    #[error("--map column `{column}` is not in the file")]
    MissingColumn {
        /// The column asked for.
        column: String,
    },
    /// An id used by an earlier record.
    #[error(
        "duplicate id `{id}`, first used on line {first_line}; if this column is not a unique id, pass --map id= to number the records"
    )]
    DuplicateId {
        /// The repeated id.
        id: String,
        /// Where it was first used.
        first_line: usize,
    },
    /// The file's extension names no known format.
    #[error(
        "cannot tell the format from the extension {}; pass --format {}",
        extension_text(extension),
        super::Format::names()
    )]
    UnknownFormat {
        /// The extension, when the file has one.
        extension: Option<String>,
    },
    /// A file of traces in which no trace has a retriever step.
    #[error(
        "no trace has a retriever span ({skipped} traces skipped); a trace becomes a sample only when its contexts were retrieved in it"
    )]
    NoRetrieverTraces {
        /// The traces read and skipped.
        skipped: usize,
    },
    /// A Parquet or Arrow IPC file arrow-rs cannot read (a bad footer, a codec not built in).
    #[error("cannot read the {format} file: {message}{}", codec_hint(message))]
    InvalidColumnar {
        /// `parquet` or `arrow`.
        format: &'static str,
        /// arrow-rs's message.
        message: String,
    },
    /// A Parquet or Arrow column whose type has no JSON counterpart here.
    #[error("column type {data_type} is not supported; hint: cast it to a string or number column")]
    UnsupportedColumn {
        /// The Arrow type, as arrow-rs names it.
        data_type: String,
    },
    /// A directory without seed S3 files.
    #[error("the directory holds no GT_*.json or FULL_*.json files")]
    NoSeedFiles,
}

/// A hint for a compression codec rageval is built without (brotli, a large build; see the
/// workspace Cargo.toml).
fn codec_hint(message: &str) -> &'static str {
    if message.contains("Disabled feature at compile time") {
        "; hint: rewrite the file with snappy, gzip, lz4 or zstd compression, e.g. pandas \
         `to_parquet(path, compression=\"snappy\")`"
    } else {
        ""
    }
}

/// `a`, `b` and `c` — for lists of names in messages.
fn quoted(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        None => "none".to_string(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

fn extension_text(extension: &Option<String>) -> String {
    match extension {
        Some(ext) => format!("`.{ext}`"),
        None => "(the file has none)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_line_and_field() {
        let error = DatasetError::at(Path::new("data.jsonl"), 3, DatasetErrorKind::MissingField)
            .with_field("question");
        assert_eq!(
            error.to_string(),
            "data.jsonl:3: field `question`: missing required field"
        );
    }

    #[test]
    fn display_leaves_out_unknown_parts() {
        let error = DatasetError::file(Path::new("data.csv"), DatasetErrorKind::HeaderOnly);
        assert_eq!(
            error.to_string(),
            "data.csv: the file has a header but no data rows"
        );
        let error = DatasetError::file(
            Path::new(""),
            DatasetErrorKind::InvalidMapSpec {
                spec: "question".into(),
            },
        );
        assert_eq!(
            error.to_string(),
            "invalid --map `question`: expected field=column"
        );
    }

    #[test]
    fn io_cause_is_the_source() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let error = DatasetError::file(Path::new("x.json"), DatasetErrorKind::Io(io));
        let source = std::error::Error::source(&error).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("gone"));
    }

    #[test]
    fn quoted_lists_read_naturally() {
        assert_eq!(quoted(&["a".into()]), "`a`");
        assert_eq!(
            quoted(&["a".into(), "b".into(), "c".into()]),
            "`a`, `b` and `c`"
        );
    }
}
