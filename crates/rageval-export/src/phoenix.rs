//! A run's scores written back to Phoenix as span annotations on the evaluated spans (the
//! traces' root spans): the metric as the annotation's name, the score, a label, the
//! explanation (the verdicts' reasons), `LLM` or `CODE` as the annotator kind, and the judge
//! in its metadata.
//!
//! Idempotent: every annotation carries the identifier `rageval:<run>`, and Phoenix upserts
//! on (name, span, identifier), so a rerun, a resumed run or a second export updates the
//! annotations it wrote before instead of adding others. Requests are synchronous
//! (`?sync=true`), so what Phoenix refused is known and counted; a batch refused because one
//! of its spans is not in Phoenix is sent again one annotation at a time, so only the
//! missing spans' annotations fail.
//!
//! Failed cells are not scores and are left out; undefined cells are written with the label
//! `undefined` and their reason, without a score.

use rageval_core::Outcome;
use rageval_sources::PhoenixClient;
use rageval_sources::SourceError;
use rageval_sources::rest::Body;
use reqwest::Method;
use serde_json::{Value, json};

use crate::otlp::writer_retry;
use crate::writes::{Sent, Writes, send_batches};
use crate::{ExportCell, ExportRun};

/// Annotations per request.
const PER_REQUEST: usize = 100;

/// Why a cell is left out.
pub const SKIP_FAILED: &str = "failed cells (not scores)";
/// Why a cell is left out.
pub const SKIP_NO_SPAN: &str = "samples without a span id (not read from traces)";

/// The annotation of every cell that has one, and what was left out and why.
pub fn annotations(run: &ExportRun) -> (Vec<Value>, Writes) {
    let mut skipped = Writes::default();
    let mut out = Vec::new();
    let identifier = identifier(run);
    for cell in &run.cells {
        if matches!(cell.outcome, Outcome::Failed { .. }) {
            skipped.skip(SKIP_FAILED, 1);
            continue;
        }
        let Some(span) = &cell.span_id else {
            skipped.skip(SKIP_NO_SPAN, 1);
            continue;
        };
        out.push(annotation(run, cell, span, &identifier));
    }
    (out, skipped)
}

/// The identifier that makes a run's annotations one per (metric, span).
pub fn identifier(run: &ExportRun) -> String {
    format!("rageval:{}", run.name)
}

fn annotation(run: &ExportRun, cell: &ExportCell, span: &str, identifier: &str) -> Value {
    json!({
        "span_id": span,
        "name": cell.metric,
        "annotator_kind": run.annotator_kind(&cell.metric).as_str(),
        "result": {
            "score": cell.value(),
            "label": cell.label(),
            "explanation": cell.explanation(),
        },
        "metadata": run.judge_metadata(&cell.metric),
        "identifier": identifier,
    })
}

/// What an export would write, without sending anything (`--dry-run`).
pub fn plan(run: &ExportRun) -> Writes {
    let (annotations, mut planned) = annotations(run);
    planned.written = annotations.len();
    planned
}

/// Writes every annotation of `run` to the Phoenix `client` talks to.
pub async fn write(run: &ExportRun, client: &PhoenixClient) -> Writes {
    let (annotations, skipped) = annotations(run);
    let client = client.clone().with_retry(writer_retry());
    let batches: Vec<(usize, Vec<Value>)> = annotations
        .chunks(PER_REQUEST)
        .map(|chunk| (chunk.len(), chunk.to_vec()))
        .collect();
    let mut writes = send_batches(batches, |batch| {
        let client = &client;
        async move { send(client, batch).await }
    })
    .await;
    writes.skipped = skipped.skipped;
    writes
}

async fn send(client: &PhoenixClient, batch: Vec<Value>) -> Sent {
    match post(client, &batch).await {
        Ok(()) => Sent::All,
        // Some span of the batch is not in Phoenix: the others still belong there.
        Err(SourceError::Status { status: 404, .. }) if batch.len() > 1 => {
            let mut written = 0;
            let mut last_error = None;
            for one in batch {
                match post(client, std::slice::from_ref(&one)).await {
                    Ok(()) => written += 1,
                    Err(error) => last_error = Some(error),
                }
            }
            match last_error {
                None => Sent::All,
                Some(error) => Sent::Partly { written, error },
            }
        }
        Err(error) => Sent::Failed(error),
    }
}

async fn post(client: &PhoenixClient, batch: &[Value]) -> Result<(), SourceError> {
    let body = json!({ "data": batch });
    client
        .rest()
        .send(
            Method::POST,
            "v1/span_annotations",
            &[("sync", "true".into())],
            Body::Json(&body),
        )
        .await
        .map(|_| ())
}
