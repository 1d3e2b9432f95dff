//! Choosing a reader for a path and iterating its samples.
//!
//! [`open`] picks the format (from `--format` or the extension; a directory means seed S3
//! files), does every whole-file check up front, and returns a [`DatasetReader`] that yields
//! one `Result<Sample, _>` per record. JSONL is streamed line by line, Parquet and Arrow IPC
//! batch by batch; the other formats are small enough in practice to load, which also lets
//! them report file-level errors at once.

use std::path::Path;
use std::str::FromStr;

use super::error::{DatasetError, DatasetErrorKind};
use super::field::FieldMap;
use super::value::{Record, RecordBuilder};
use super::{columnar, conversation, csv, json, jsonl, langfuse, openinference, seed_files, xlsx};
use crate::sample::Sample;

/// A dataset file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// One JSON object per line (`.jsonl`, `.ndjson`), streamed.
    Jsonl,
    /// A JSON array of objects (`.json`); a `.json` file holding JSON Lines, as Hugging Face
    /// `to_json` writes it, is read as JSONL.
    Json,
    /// Comma- or tab-separated values with a header row (`.csv`, `.tsv`).
    Csv,
    /// An Excel workbook (`.xlsx`); the first sheet unless [`ReadOptions::sheet`] names one.
    Xlsx,
    /// OpenInference spans as Phoenix exports them (JSONL, or a JSON array); one sample per
    /// trace and per retrieval hop of a trace that retrieved more than once. Only by
    /// `--format openinference`.
    OpenInference,
    /// A Langfuse export of traces and observations (JSONL or JSON); one sample per trace
    /// and per retrieval hop. Only by `--format langfuse`.
    Langfuse,
    /// Apache Parquet (`.parquet`), streamed batch by batch.
    Parquet,
    /// Arrow IPC, file or stream layout (`.arrow`, `.arrows`, `.feather`, `.ipc`), streamed
    /// batch by batch.
    Arrow,
}

impl Format {
    /// Every format, in the order help texts list them.
    pub const ALL: [Format; 8] = [
        Format::Jsonl,
        Format::Json,
        Format::Csv,
        Format::Xlsx,
        Format::OpenInference,
        Format::Langfuse,
        Format::Parquet,
        Format::Arrow,
    ];

    /// The other names a format goes by, as extensions and as `--format` values.
    const ALIASES: [(&'static str, Format); 5] = [
        ("ndjson", Format::Jsonl),
        ("tsv", Format::Csv),
        ("arrows", Format::Arrow),
        ("feather", Format::Arrow),
        ("ipc", Format::Arrow),
    ];

    /// The format a file extension implies (case-insensitive), if any.
    pub fn from_path(path: &Path) -> Option<Format> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        Format::from_name(&extension)
    }

    /// The format for a name as `--format` takes it: a [`Format::name`] or one of the
    /// aliases `ndjson`, `tsv`, `arrows`, `feather`, `ipc`.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL
            .into_iter()
            .find(|format| format.name() == name)
            .or_else(|| {
                Format::ALIASES
                    .into_iter()
                    .find(|(alias, _)| *alias == name)
                    .map(|(_, format)| format)
            })
    }

    /// The canonical name (`jsonl`, `json`, `csv`, `xlsx`, `openinference`, `langfuse`,
    /// `parquet`, `arrow`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Xlsx => "xlsx",
            Format::OpenInference => "openinference",
            Format::Langfuse => "langfuse",
            Format::Parquet => "parquet",
            Format::Arrow => "arrow",
        }
    }

    /// Every canonical name, as a sentence lists them: `jsonl, json, …, parquet or arrow`.
    pub fn names() -> String {
        let names: Vec<&str> = Format::ALL.into_iter().map(Format::name).collect();
        match names.split_last() {
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

/// `--format` and the Python package's `format=`: a name [`Format::from_name`] knows, in
/// any case. The error lists every name taken.
impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(text: &str) -> Result<Format, UnknownFormat> {
        Format::from_name(&text.trim().to_ascii_lowercase())
            .ok_or_else(|| UnknownFormat(text.to_owned()))
    }
}

/// A format name no reader answers to (the name is kept; the message, which a flag's or an
/// argument's own message quotes, lists the names taken).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {names} (or {aliases})", names = Format::names(), aliases = aliases())]
pub struct UnknownFormat(pub String);

/// The aliases, as a list: `ndjson, tsv, arrows, feather, ipc`.
fn aliases() -> String {
    let aliases: Vec<&str> = Format::ALIASES.iter().map(|(alias, _)| *alias).collect();
    aliases.join(", ")
}

/// How to read a dataset.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Overrides the format the extension implies.
    pub format: Option<Format>,
    /// `--map` overrides of the alias table.
    pub field_map: FieldMap,
    /// The XLSX sheet to read; the first sheet when `None`. Ignored for other formats.
    pub sheet: Option<String>,
}

/// Where records come from.
#[derive(Debug)]
enum Source {
    /// Read lazily, one line at a time.
    Lines(jsonl::JsonlRecords),
    /// Read lazily, one record batch at a time (Parquet, Arrow IPC).
    Batches(columnar::ColumnarRecords),
    /// Loaded up front; per-record errors (a non-object element, a short row) kept in place.
    Loaded(std::vec::IntoIter<Result<Record, DatasetError>>),
}

/// The samples of one dataset, in file order.
///
/// Each item is one record: an error for one record does not end the iteration, so a caller
/// may collect every error of a file; errors that make the rest unreadable (an I/O failure)
/// end it. A file without records yields a single "no records" error.
#[derive(Debug)]
pub struct DatasetReader {
    source: Source,
    builder: RecordBuilder,
    /// Records and record errors yielded so far, to tell an empty file at the end.
    items: usize,
    finished: bool,
    /// Trace formats: the ids of traces left out for lack of a retriever step.
    skipped_traces: Vec<String>,
    /// JSON formats: records may hold whole conversations, spread into one per turn.
    conversations: bool,
    /// The turns of a spread conversation not yet yielded.
    pending: std::collections::VecDeque<Record>,
}

impl DatasetReader {
    /// The path being read.
    pub fn path(&self) -> &Path {
        self.builder.file()
    }

    /// For [`Format::OpenInference`] and [`Format::Langfuse`]: the ids of the traces that
    /// were skipped because they have no retriever span, in file order (empty otherwise).
    /// Known as soon as the reader is open; the caller reports them.
    pub fn skipped_traces(&self) -> &[String] {
        &self.skipped_traces
    }
}

impl Iterator for DatasetReader {
    type Item = Result<Sample, DatasetError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(record) = self.pending.pop_front() {
            return Some(self.builder.build_record(record));
        }
        if self.finished {
            return None;
        }
        let item = match &mut self.source {
            Source::Lines(lines) => lines.next(),
            Source::Batches(rows) => rows.next(),
            Source::Loaded(records) => records.next(),
        };
        let Some(item) = item else {
            self.finished = true;
            return (self.items == 0).then(|| {
                Err(DatasetError::file(
                    self.builder.file(),
                    DatasetErrorKind::Empty,
                ))
            });
        };
        self.items += 1;
        let record = match item {
            Ok(record) if self.conversations => {
                match conversation::spread(record, self.builder.file()) {
                    Ok(records) => {
                        self.pending.extend(records);
                        return self.next();
                    }
                    Err(error) => return Some(Err(error)),
                }
            }
            other => other,
        };
        Some(record.and_then(|record| self.builder.build_record(record)))
    }
}

/// Opens a dataset: a file in any [`Format`], or a directory of seed S3 `GT_*.json` /
/// `FULL_*.json` files.
pub fn open(path: &Path, options: &ReadOptions) -> Result<DatasetReader, DatasetError> {
    let metadata = std::fs::metadata(path)
        .map_err(|error| DatasetError::file(path, DatasetErrorKind::Io(error)))?;
    let field_map = options.field_map.clone();
    let mut skipped_traces = Vec::new();
    let mut conversations = false;
    let (source, builder) = if metadata.is_dir() {
        let builder = RecordBuilder::new(path, field_map, false);
        (Source::Loaded(seed_files::load(path)?.into_iter()), builder)
    } else {
        let format = match options.format {
            Some(format) => format,
            None => Format::from_path(path).ok_or_else(|| unknown_format(path))?,
        };
        let tabular = matches!(format, Format::Csv | Format::Xlsx);
        conversations = matches!(format, Format::Jsonl | Format::Json);
        let mut builder = RecordBuilder::new(path, field_map, tabular);
        let source = match format {
            Format::Jsonl => Source::Lines(jsonl::JsonlRecords::open(path)?),
            Format::Json => match json::load(path)? {
                Some(records) => Source::Loaded(records.into_iter()),
                None => Source::Lines(jsonl::JsonlRecords::open(path)?),
            },
            Format::Csv => Source::Loaded(csv::load(path, &mut builder)?.into_iter()),
            Format::Xlsx => {
                let records = xlsx::load(path, options.sheet.as_deref(), &mut builder)?;
                Source::Loaded(records.into_iter())
            }
            Format::OpenInference | Format::Langfuse => {
                let records = json_records(path)?;
                let traces = if format == Format::OpenInference {
                    openinference::traces(path, records)
                } else {
                    langfuse::traces(path, records)
                };
                if traces.records.is_empty() && !traces.skipped.is_empty() {
                    let kind = DatasetErrorKind::NoRetrieverTraces {
                        skipped: traces.skipped.len(),
                    };
                    return Err(DatasetError::file(path, kind));
                }
                skipped_traces = traces.skipped;
                Source::Loaded(traces.records.into_iter())
            }
            Format::Parquet => Source::Batches(columnar::ColumnarRecords::parquet(path)?),
            Format::Arrow => Source::Batches(columnar::ColumnarRecords::arrow(path)?),
        };
        (source, builder)
    };
    Ok(DatasetReader {
        source,
        builder,
        items: 0,
        finished: false,
        skipped_traces,
        conversations,
        pending: std::collections::VecDeque::new(),
    })
}

/// The records of a JSON array file or a JSONL file, for the trace formats. A Parquet row
/// source can take this place: the trace readers only ask for a stream of records.
fn json_records(
    path: &Path,
) -> Result<Box<dyn Iterator<Item = Result<Record, DatasetError>>>, DatasetError> {
    // Span exports also come as tables (Phoenix's spans dataframe saved as Parquet).
    match Format::from_path(path) {
        Some(Format::Parquet) => return Ok(Box::new(columnar::ColumnarRecords::parquet(path)?)),
        Some(Format::Arrow) => return Ok(Box::new(columnar::ColumnarRecords::arrow(path)?)),
        _ => {}
    }
    let array = Format::from_path(path) == Some(Format::Json);
    Ok(
        match array.then(|| json::load(path)).transpose()?.flatten() {
            Some(records) => Box::new(records.into_iter()),
            None => Box::new(jsonl::JsonlRecords::open(path)?),
        },
    )
}

/// Reads every sample of a dataset, stopping at the first error.
pub fn read_all(path: &Path, options: &ReadOptions) -> Result<Vec<Sample>, DatasetError> {
    open(path, options)?.collect()
}

fn unknown_format(path: &Path) -> DatasetError {
    let extension = path
        .extension()
        .map(|ext| ext.to_string_lossy().into_owned());
    DatasetError::file(path, DatasetErrorKind::UnknownFormat { extension })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_come_from_extensions() {
        assert_eq!(Format::from_path(Path::new("a.JSONL")), Some(Format::Jsonl));
        assert_eq!(
            Format::from_path(Path::new("a.ndjson")),
            Some(Format::Jsonl)
        );
        assert_eq!(Format::from_path(Path::new("a.json")), Some(Format::Json));
        assert_eq!(Format::from_path(Path::new("a.tsv")), Some(Format::Csv));
        assert_eq!(Format::from_path(Path::new("a.xlsx")), Some(Format::Xlsx));
        assert_eq!(
            Format::from_path(Path::new("a.parquet")),
            Some(Format::Parquet)
        );
        assert_eq!(Format::from_path(Path::new("a.arrow")), Some(Format::Arrow));
        assert_eq!(Format::from_path(Path::new("a.avro")), None);
        assert_eq!(Format::from_path(Path::new("noext")), None);
        assert_eq!(Format::from_name(Format::Csv.name()), Some(Format::Csv));
    }

    #[test]
    fn every_name_parses_back_and_an_unknown_one_lists_them_all() {
        for format in Format::ALL {
            assert_eq!(format.name().parse::<Format>(), Ok(format));
            assert_eq!(format.name().to_uppercase().parse::<Format>(), Ok(format));
        }
        assert_eq!("feather".parse::<Format>(), Ok(Format::Arrow));
        let error = "avro".parse::<Format>().unwrap_err();
        assert_eq!(error, UnknownFormat("avro".into()));
        assert_eq!(
            error.to_string(),
            "expected jsonl, json, csv, xlsx, openinference, langfuse, parquet or arrow (or \
             ndjson, tsv, arrows, feather, ipc)"
        );
    }

    #[test]
    fn unknown_extension_suggests_format_flag() {
        let error = unknown_format(Path::new("data.avro"));
        assert!(
            error.to_string().contains("`.avro`; pass --format"),
            "{error}"
        );
    }
}
