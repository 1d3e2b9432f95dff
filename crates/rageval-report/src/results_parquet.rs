//! `results.parquet`: a run's journal as a Parquet table for Spark or pandas
//! (`eval --results-format parquet`), one row per cell, written from `results.jsonl` a batch at
//! a time so memory stays flat.
//!
//! Columns: `sample_id`, `metric`, `status` (`score`, `undefined`, `failed`), `score`
//! (null unless scored), `reason` (the undefined reason or the failure), `evidence` (the
//! score's evidence as JSON text, null when there is none). `results.jsonl` stays the
//! journal a run resumes from; this file is derived from it.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use rageval_core::Outcome;

use crate::{RESULTS_FILE, ReportError, ResultRecord};

/// The file written beside `results.jsonl`.
pub const RESULTS_PARQUET_FILE: &str = "results.parquet";

/// Cells per record batch (and per row group's page run).
const BATCH_CELLS: usize = 8192;

/// Writes `results.parquet` in `run_dir` from its `results.jsonl`; returns its path.
pub fn write_results_parquet(run_dir: &Path) -> Result<PathBuf, ReportError> {
    let journal = run_dir.join(RESULTS_FILE);
    let target = run_dir.join(RESULTS_PARQUET_FILE);
    let input = File::open(&journal).map_err(|source| ReportError::Read {
        path: journal.clone(),
        source,
    })?;
    let output = File::create(&target).map_err(|source| ReportError::Write {
        path: target.clone(),
        source,
    })?;
    let parquet_error = |error: parquet::errors::ParquetError| ReportError::Parquet {
        path: target.clone(),
        message: error.to_string(),
    };
    let schema = schema();
    let properties = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut writer =
        ArrowWriter::try_new(output, schema.clone(), Some(properties)).map_err(parquet_error)?;
    let mut batch = Columns::default();
    for (index, line) in BufReader::new(input).lines().enumerate() {
        let line = line.map_err(|source| ReportError::Read {
            path: journal.clone(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let record = crate::reader::parse_record(&journal, index + 1, &line)?;
        batch.push(&record);
        if batch.len == BATCH_CELLS {
            writer
                .write(
                    &batch
                        .finish(&schema)
                        .map_err(|error| ReportError::Parquet {
                            path: target.clone(),
                            message: error.to_string(),
                        })?,
                )
                .map_err(parquet_error)?;
        }
    }
    if batch.len > 0 {
        let last = batch
            .finish(&schema)
            .map_err(|error| ReportError::Parquet {
                path: target.clone(),
                message: error.to_string(),
            })?;
        writer.write(&last).map_err(parquet_error)?;
    }
    writer.close().map_err(parquet_error)?;
    Ok(target)
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("sample_id", DataType::Utf8, false),
        Field::new("metric", DataType::Utf8, false),
        Field::new("status", DataType::Utf8, false),
        Field::new("score", DataType::Float64, true),
        Field::new("reason", DataType::Utf8, true),
        Field::new("evidence", DataType::Utf8, true),
    ]))
}

/// The columns of the batch being filled.
#[derive(Default)]
struct Columns {
    sample_id: StringBuilder,
    metric: StringBuilder,
    status: StringBuilder,
    score: Float64Builder,
    reason: StringBuilder,
    evidence: StringBuilder,
    len: usize,
}

impl Columns {
    fn push(&mut self, record: &ResultRecord) {
        self.sample_id.append_value(&record.sample_id);
        self.metric.append_value(&record.metric);
        match &record.outcome {
            Outcome::Score { value, evidence } => {
                self.status.append_value("score");
                self.score.append_value(*value);
                self.reason.append_null();
                match evidence.is_empty() {
                    true => self.evidence.append_null(),
                    false => self
                        .evidence
                        .append_option(serde_json::to_string(evidence).ok()),
                }
            }
            Outcome::Undefined { reason } => {
                self.status.append_value("undefined");
                self.score.append_null();
                self.reason.append_value(reason);
                self.evidence.append_null();
            }
            Outcome::Failed { error } => {
                self.status.append_value("failed");
                self.score.append_null();
                self.reason.append_value(error);
                self.evidence.append_null();
            }
        }
        self.len += 1;
    }

    /// The filled rows as a batch; the builders start empty again.
    fn finish(&mut self, schema: &SchemaRef) -> Result<RecordBatch, arrow_schema::ArrowError> {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.sample_id.finish()),
            Arc::new(self.metric.finish()),
            Arc::new(self.status.finish()),
            Arc::new(self.score.finish()),
            Arc::new(self.reason.finish()),
            Arc::new(self.evidence.finish()),
        ];
        self.len = 0;
        RecordBatch::try_new(schema.clone(), columns)
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::Array;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    use super::*;

    #[test]
    fn every_cell_becomes_a_row_with_its_status() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [
            r#"{"sample_id":"a","metric":"m","status":"score","value":0.5}"#,
            r#"{"sample_id":"b","metric":"m","status":"undefined","reason":"no contexts"}"#,
            "",
            r#"{"sample_id":"c","metric":"m","status":"failed","error":"judge timed out"}"#,
        ];
        std::fs::write(dir.path().join(RESULTS_FILE), lines.join("\n")).unwrap();
        let path = write_results_parquet(dir.path()).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
        assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), 3);
        let batch = &batches[0];
        let score = batch
            .column_by_name("score")
            .unwrap()
            .as_any()
            .downcast_ref::<arrow_array::Float64Array>()
            .unwrap();
        assert_eq!(score.value(0), 0.5);
        assert!(score.is_null(1) && score.is_null(2));
        let reason = batch
            .column_by_name("reason")
            .unwrap()
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        assert_eq!(reason.value(2), "judge timed out");
    }
}
