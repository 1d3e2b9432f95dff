//! Parquet and Arrow IPC files, streamed one record batch at a time.
//!
//! Each row becomes a record whose keys are the column names, so the alias table and
//! `--map` apply exactly as for JSONL. Cells keep their types: strings, numbers and booleans
//! as such, lists (`retrieved_contexts` as `list<string>`) as arrays, structs
//! (`{text, id, score}` contexts) as objects, dictionary-encoded strings (pandas
//! categoricals) as strings, nulls (and NaN floats) as absent. Only one batch of rows is
//! held at a time, so memory stays flat whatever the file's length. Errors name the 1-based
//! row as their line.
//!
//! Arrow IPC comes in two layouts: the file format (`ARROW1` magic; Feather v2) and the
//! stream format (Hugging Face `datasets` cache files); both are read.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType};
use serde_json::{Map, Number, Value};

use super::error::{DatasetError, DatasetErrorKind};
use super::value::Record;

/// Rows decoded per batch: large enough to amortise decoding, small enough to keep memory
/// flat.
const BATCH_ROWS: usize = 1024;

type Batches = Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>> + Send>;

/// The records of a Parquet or Arrow IPC file, read batch by batch.
pub(crate) struct ColumnarRecords {
    file: PathBuf,
    format: &'static str,
    batches: Batches,
    batch: Option<RecordBatch>,
    /// Next row within `batch`.
    row_in_batch: usize,
    /// Rows yielded so far over the whole file.
    rows: usize,
    done: bool,
}

impl std::fmt::Debug for ColumnarRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ColumnarRecords")
            .field("file", &self.file)
            .field("format", &self.format)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl ColumnarRecords {
    /// Opens a Parquet file; its footer is read now, its rows lazily.
    pub(crate) fn parquet(path: &Path) -> Result<Self, DatasetError> {
        let format = "parquet";
        let file = open_file(path)?;
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|builder| builder.with_batch_size(BATCH_ROWS).build())
            .map_err(|error| invalid(path, format, error.to_string()))?;
        Ok(Self::new(path, format, Box::new(reader)))
    }

    /// Opens an Arrow IPC file in the file layout (`ARROW1` magic) or the stream layout.
    pub(crate) fn arrow(path: &Path) -> Result<Self, DatasetError> {
        let format = "arrow";
        let mut file = open_file(path)?;
        let mut magic = [0u8; 6];
        let is_file_layout = file.read_exact(&mut magic).is_ok() && &magic == b"ARROW1";
        file.seek(SeekFrom::Start(0))
            .map_err(|error| DatasetError::file(path, DatasetErrorKind::Io(error)))?;
        let batches: Batches = if is_file_layout {
            Box::new(
                arrow_ipc::reader::FileReader::try_new(file, None)
                    .map_err(|error| invalid(path, format, error.to_string()))?,
            )
        } else {
            Box::new(
                arrow_ipc::reader::StreamReader::try_new(BufReader::new(file), None)
                    .map_err(|error| invalid(path, format, error.to_string()))?,
            )
        };
        Ok(Self::new(path, format, batches))
    }

    fn new(path: &Path, format: &'static str, batches: Batches) -> Self {
        Self {
            file: path.to_path_buf(),
            format,
            batches,
            batch: None,
            row_in_batch: 0,
            rows: 0,
            done: false,
        }
    }

    fn record(&self, batch: &RecordBatch, row: usize, line: usize) -> Result<Record, DatasetError> {
        let schema = batch.schema();
        let mut fields = Map::new();
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            let value = cell(column.as_ref(), row).map_err(|kind| {
                DatasetError::at(&self.file, line, kind).with_field(field.name().clone())
            })?;
            if !value.is_null() {
                fields.insert(field.name().clone(), value);
            }
        }
        Ok(Record {
            file: None,
            line,
            fields,
        })
    }
}

impl Iterator for ColumnarRecords {
    type Item = Result<Record, DatasetError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done {
                return None;
            }
            let row = self.row_in_batch;
            if let Some(batch) = self.batch.as_ref().filter(|batch| row < batch.num_rows()) {
                let record = self.record(batch, row, self.rows + 1);
                self.row_in_batch += 1;
                self.rows += 1;
                return Some(record);
            }
            match self.batches.next() {
                Some(Ok(batch)) => {
                    self.batch = Some(batch);
                    self.row_in_batch = 0;
                }
                Some(Err(error)) => {
                    // A batch that does not decode leaves the rest unreadable.
                    self.done = true;
                    let line = self.rows + 1;
                    let kind = DatasetErrorKind::InvalidColumnar {
                        format: self.format,
                        message: error.to_string(),
                    };
                    return Some(Err(DatasetError::at(&self.file, line, kind)));
                }
                None => {
                    self.done = true;
                    return None;
                }
            }
        }
    }
}

fn open_file(path: &Path) -> Result<File, DatasetError> {
    File::open(path).map_err(|error| DatasetError::file(path, DatasetErrorKind::Io(error)))
}

fn invalid(path: &Path, format: &'static str, message: String) -> DatasetError {
    DatasetError::file(path, DatasetErrorKind::InvalidColumnar { format, message })
}

/// One cell as JSON: `null` for a null (or NaN) cell.
fn cell(array: &dyn Array, row: usize) -> Result<Value, DatasetErrorKind> {
    if array.is_null(row) {
        return Ok(Value::Null);
    }
    macro_rules! integer {
        ($type:ty) => {
            Value::from(array.as_primitive::<$type>().value(row))
        };
    }
    let float = |value: f64| Number::from_f64(value).map_or(Value::Null, Value::Number);
    Ok(match array.data_type() {
        DataType::Null => Value::Null,
        DataType::Boolean => Value::Bool(array.as_boolean().value(row)),
        DataType::Int8 => integer!(Int8Type),
        DataType::Int16 => integer!(Int16Type),
        DataType::Int32 => integer!(Int32Type),
        DataType::Int64 => integer!(Int64Type),
        DataType::UInt8 => integer!(UInt8Type),
        DataType::UInt16 => integer!(UInt16Type),
        DataType::UInt32 => integer!(UInt32Type),
        DataType::UInt64 => integer!(UInt64Type),
        DataType::Float32 => float(f64::from(array.as_primitive::<Float32Type>().value(row))),
        DataType::Float64 => float(array.as_primitive::<Float64Type>().value(row)),
        DataType::Utf8 => Value::String(array.as_string::<i32>().value(row).to_string()),
        DataType::LargeUtf8 => Value::String(array.as_string::<i64>().value(row).to_string()),
        DataType::Utf8View => Value::String(array.as_string_view().value(row).to_string()),
        DataType::List(_) => list(&array.as_list::<i32>().value(row))?,
        DataType::LargeList(_) => list(&array.as_list::<i64>().value(row))?,
        DataType::FixedSizeList(_, _) => list(&array.as_fixed_size_list().value(row))?,
        DataType::Struct(fields) => {
            let columns = array.as_struct();
            let mut object = Map::new();
            for (field, column) in fields.iter().zip(columns.columns()) {
                let value = cell(column.as_ref(), row)?;
                if !value.is_null() {
                    object.insert(field.name().clone(), value);
                }
            }
            Value::Object(object)
        }
        DataType::Dictionary(_, _) => {
            let dictionary = array.as_any_dictionary();
            let key = dictionary.normalized_keys()[row];
            cell(dictionary.values().as_ref(), key)?
        }
        other => {
            return Err(DatasetErrorKind::UnsupportedColumn {
                data_type: other.to_string(),
            });
        }
    })
}

fn list(values: &ArrayRef) -> Result<Value, DatasetErrorKind> {
    (0..values.len())
        .map(|row| cell(values.as_ref(), row))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}
