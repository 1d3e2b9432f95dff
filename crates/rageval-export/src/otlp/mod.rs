//! Every cell of a run as an OpenTelemetry `gen_ai.evaluation.result` event, with the
//! attribute names of the GenAI semantic conventions (v1.39 and later; [`ATTR_NAME`] and
//! the constants beside it, pinned by a test): the metric's name, the score's value, a label,
//! the explanation (the verdicts' reasons), the response id where the data names one.
//! An event is parented to the evaluated span (the trace's root span, from the sample's
//! metadata) when its ids are known, as the conventions ask.
//!
//! Two shapes of the same events:
//! - **logs** ([`Signal::Logs`]): one log record per cell with the event name — the
//!   conventions' own form, which an OpenTelemetry Collector takes on `/v1/logs`;
//! - **traces** ([`Signal::Traces`]): for backends that take only traces (Phoenix), one
//!   zero-length `EVALUATOR` span per sample, a child of the evaluated span, holding one span
//!   event per cell. Its span id is derived from the run and the sample, so pushing again
//!   sends the same span, not another.
//!
//! [`write_file`] writes the logs as OTLP/JSON lines beside `results.jsonl`
//! ([`OTLP_FILE`], one `ExportLogsServiceRequest` per sample: the Collector's
//! `otlpjsonfile` receiver reads it); [`push`] sends them to an OTLP/HTTP endpoint as
//! protobuf or JSON.

mod model;
mod protobuf;
mod push;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rageval_core::Outcome;
use sha2::{Digest, Sha256};

pub use model::{AnyValue, KeyValue, LogRecord, Origin, Request, Span, SpanEvent, from_hex, hex};
pub(crate) use push::writer_retry;
pub use push::{OtlpEndpoint, Protocol, Signal, push};

use crate::{ExportCell, ExportError, ExportRun};

/// The event's name.
pub const EVENT_NAME: &str = "gen_ai.evaluation.result";
/// The metric's name (required).
pub const ATTR_NAME: &str = "gen_ai.evaluation.name";
/// The score (when the cell has one).
pub const ATTR_SCORE_VALUE: &str = "gen_ai.evaluation.score.value";
/// A human-readable label of the score.
pub const ATTR_SCORE_LABEL: &str = "gen_ai.evaluation.score.label";
/// Why the score is what it is.
pub const ATTR_EXPLANATION: &str = "gen_ai.evaluation.explanation";
/// The evaluated completion, where span ids are unknown.
pub const ATTR_RESPONSE_ID: &str = "gen_ai.response.id";
/// The conventions' error attribute, for a cell whose evaluation failed.
pub const ATTR_ERROR_TYPE: &str = "error.type";
/// Ours: the sample the event is about (its id in the dataset), and the run.
pub const ATTR_SAMPLE_ID: &str = "rageval.sample.id";
/// Ours: the run directory's name or version name.
pub const ATTR_RUN: &str = "rageval.run";

/// The OTLP/JSON file written beside `results.jsonl`.
pub const OTLP_FILE: &str = "evaluations.otlp.jsonl";

/// OpenTelemetry's severity number INFO.
const SEVERITY_INFO: i32 = 9;
/// OpenTelemetry's SPAN_KIND_INTERNAL.
const SPAN_KIND_INTERNAL: i32 = 1;

/// The event's attributes for one cell.
pub fn event_attributes(cell: &ExportCell) -> Vec<KeyValue> {
    let mut out = vec![KeyValue::str(ATTR_NAME, &cell.metric)];
    if let Some(value) = cell.value() {
        out.push(KeyValue::double(ATTR_SCORE_VALUE, value));
    }
    if let Some(label) = cell.label() {
        out.push(KeyValue::str(ATTR_SCORE_LABEL, label));
    }
    if let Some(explanation) = cell.explanation() {
        out.push(KeyValue::str(ATTR_EXPLANATION, explanation));
    }
    if let Some(response) = &cell.response_id {
        out.push(KeyValue::str(ATTR_RESPONSE_ID, response));
    }
    if matches!(cell.outcome, Outcome::Failed { .. }) {
        out.push(KeyValue::str(ATTR_ERROR_TYPE, "rageval.evaluation_failed"));
    }
    out.push(KeyValue::str(ATTR_SAMPLE_ID, &cell.sample_id));
    out
}

/// Who wrote the events.
fn origin(run: &ExportRun) -> Origin {
    Origin {
        resource: vec![
            KeyValue::str("service.name", "rageval"),
            KeyValue::str(ATTR_RUN, &run.name),
        ],
        scope_name: run.manifest.tool.name.clone(),
        scope_version: run.manifest.tool.version.clone(),
    }
}

/// Nanoseconds since the Unix epoch, now.
pub fn now_unix_nano() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The run's cells grouped by sample, in journal order.
fn by_sample(run: &ExportRun) -> Vec<Vec<&ExportCell>> {
    let mut order: Vec<&str> = Vec::new();
    let mut groups: BTreeMap<&str, Vec<&ExportCell>> = BTreeMap::new();
    for cell in &run.cells {
        let group = groups.entry(cell.sample_id.as_str()).or_default();
        if group.is_empty() {
            order.push(&cell.sample_id);
        }
        group.push(cell);
    }
    order
        .into_iter()
        .filter_map(|sample| groups.remove(sample))
        .collect()
}

/// The log records of some cells, at `time`.
fn log_records(cells: &[&ExportCell], time: u64) -> Vec<LogRecord> {
    cells
        .iter()
        .map(|cell| LogRecord {
            time_unix_nano: time,
            event_name: EVENT_NAME.to_owned(),
            severity_number: SEVERITY_INFO,
            trace_id: cell.trace_id.as_deref().and_then(from_hex::<16>),
            span_id: cell.span_id.as_deref().and_then(from_hex::<8>),
            attributes: event_attributes(cell),
        })
        .collect()
}

/// One logs request per sample (what the file holds, a line each).
pub fn logs_per_sample(run: &ExportRun, time: u64) -> Vec<Request> {
    by_sample(run)
        .into_iter()
        .map(|cells| Request::Logs {
            origin: origin(run),
            records: log_records(&cells, time),
        })
        .collect()
}

/// Every cell's log record in requests of at most `per_request` records.
pub fn logs_requests(run: &ExportRun, time: u64, per_request: usize) -> Vec<Request> {
    let cells: Vec<&ExportCell> = run.cells.iter().collect();
    cells
        .chunks(per_request.max(1))
        .map(|chunk| Request::Logs {
            origin: origin(run),
            records: log_records(chunk, time),
        })
        .collect()
}

/// One evaluation span per sample, in requests of at most `per_request` spans.
pub fn traces_requests(run: &ExportRun, time: u64, per_request: usize) -> Vec<Request> {
    let spans: Vec<Span> = by_sample(run)
        .into_iter()
        .map(|cells| evaluation_span(run, &cells, time))
        .collect();
    spans
        .chunks(per_request.max(1))
        .map(|chunk| Request::Traces {
            origin: origin(run),
            spans: chunk.to_vec(),
        })
        .collect()
}

/// A sample's evaluation span: in the sample's trace (or, without a usable trace id, in one
/// derived from the sample's id), under its evaluated span.
fn evaluation_span(run: &ExportRun, cells: &[&ExportCell], time: u64) -> Span {
    let first = cells[0];
    let digest = |parts: &[&str]| {
        let mut hasher = Sha256::new();
        for part in parts {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
        hasher.finalize()
    };
    let trace_id = first
        .trace_id
        .as_deref()
        .and_then(from_hex::<16>)
        .unwrap_or_else(|| {
            let hash = digest(&["trace", &first.sample_id]);
            let mut id = [0u8; 16];
            id.copy_from_slice(&hash[..16]);
            id
        });
    let hash = digest(&["evaluation", &run.name, &first.sample_id]);
    let mut span_id = [0u8; 8];
    span_id.copy_from_slice(&hash[..8]);
    Span {
        trace_id,
        span_id,
        parent_span_id: first.span_id.as_deref().and_then(from_hex::<8>),
        name: "rageval evaluation".into(),
        kind: SPAN_KIND_INTERNAL,
        start_time_unix_nano: time,
        end_time_unix_nano: time,
        attributes: vec![
            KeyValue::str("openinference.span.kind", "EVALUATOR"),
            KeyValue::str(ATTR_RUN, &run.name),
            KeyValue::str(ATTR_SAMPLE_ID, &first.sample_id),
        ],
        events: cells
            .iter()
            .map(|cell| SpanEvent {
                time_unix_nano: time,
                name: EVENT_NAME.into(),
                attributes: event_attributes(cell),
            })
            .collect(),
    }
}

/// Writes the run's events as OTLP/JSON lines to [`OTLP_FILE`] in its directory (whole or
/// not at all); returns the file's path and the number of events.
pub fn write_file(run: &ExportRun) -> Result<(PathBuf, usize), ExportError> {
    let path = run.path.join(OTLP_FILE);
    let count = write_file_to(run, &path)?;
    Ok((path, count))
}

/// [`write_file`] to another path.
pub fn write_file_to(run: &ExportRun, path: &Path) -> Result<usize, ExportError> {
    let mut out = String::new();
    for request in logs_per_sample(run, now_unix_nano()) {
        out.push_str(&request.to_json().to_string());
        out.push('\n');
    }
    rageval_core::files::write_atomically(path, out.as_bytes())
        .map_err(|e| ExportError::io(path, e))?;
    Ok(run.cells.len())
}
