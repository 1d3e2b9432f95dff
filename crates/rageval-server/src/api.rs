//! The JSON API under `/api/`: the pages' data, for scripts.
//!
//! - `GET /api/runs`: every run with its kind, status, dataset, times and summary (a
//!   `rank` run's and a pipeline's retriever-versus-judge figures, a `reference` run's
//!   counts).
//! - `GET /api/runs/{name}`: one run's manifest and summary (and a `judge-check` run's
//!   agreement with its labels, `null` for other runs).
//! - `GET /api/runs/{name}/samples`: per-sample outcomes (as in `results.jsonl`), filtered
//!   by `metric` with `min`/`max` (inclusive) or `status`, paged by `offset` and `limit`.
//! - `GET /api/compare?run=A&run=B…`: the comparison as `rageval compare --json` writes it
//!   (`seed`, `resamples`, `permutations`, `top` as its flags).
//!
//! An error is `{"error": "…"}` with the status that fits it (400, 404, 409 or 500).

use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::compare::CompareRequest;
use crate::public::public_manifest;
use crate::query::QueryParams;
use crate::runs::{RunEntry, RunState, error_chain};
use crate::{AppState, SampleFilter, ServerError};

/// A [`ServerError`] answered as JSON.
#[derive(Debug)]
pub(crate) struct ApiError(ServerError);

impl From<ServerError> for ApiError {
    fn from(error: ServerError) -> Self {
        Self(error)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": error_chain(&self.0) });
        let mut response = json_response(&body);
        *response.status_mut() = self.0.status();
        response
    }
}

pub(crate) fn json_response(value: &impl Serialize) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => ([(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(error) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot encode the answer as JSON: {error}"),
        )
            .into_response(),
    }
}

pub(crate) async fn runs(State(state): State<AppState>) -> Result<Response, ApiError> {
    let entries = state.read(|runs| runs.list()).await?;
    let listing: Vec<Value> = entries.iter().map(entry_json).collect();
    Ok(json_response(&json!({ "runs": listing })))
}

fn entry_json(entry: &RunEntry) -> Value {
    let (status, summary, error) = match &entry.state {
        RunState::Complete(summary) => ("complete", Some(summary), None),
        RunState::Finished => ("complete", None, None),
        RunState::Running => ("running", None, None),
        RunState::Unreadable(why) => ("unreadable", None, Some(why)),
    };
    let manifest = entry.manifest.as_ref();
    json!({
        "name": entry.name,
        "kind": entry.kind,
        "status": status,
        "error": error,
        "dataset": manifest.map(|m| public_manifest(m).dataset),
        "started_at": manifest.map(|m| &m.started_at),
        "finished_at": manifest.and_then(|m| m.finished_at.as_ref()),
        "summary": summary,
        "rank_agreement": entry.rank_agreement,
        "references": entry.references,
    })
}

pub(crate) async fn run(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let run = state.read(move |runs| runs.load(&name)).await?;
    Ok(json_response(&json!({
        "name": run.name(),
        "manifest": public_manifest(&run.manifest),
        "summary": run.summary,
        "agreement": run.agreement,
    })))
}

pub(crate) async fn samples(
    State(state): State<AppState>,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let query = QueryParams::parse(query.as_deref());
    let filter = SampleFilter::from_query(&query)?;
    let offset = query
        .parsed::<usize>("offset", "a whole number")?
        .unwrap_or(0);
    let limit = query.parsed::<usize>("limit", "a whole number")?;
    let body = state
        .read(move |runs| {
            let run = runs.load(&name)?;
            let shown = filter.select(&run)?;
            let ids = run.sample_ids();
            let outcomes = run.outcomes();
            let metrics = run.metric_names();
            let samples: Vec<Value> = shown
                .iter()
                .skip(offset)
                .take(limit.unwrap_or(usize::MAX))
                .filter_map(|&index| {
                    let id = *ids.get(index)?;
                    let results: Map<String, Value> = metrics
                        .iter()
                        .filter_map(|metric| {
                            let outcome = outcomes.get(&(id, metric.as_str()))?;
                            Some((metric.clone(), serde_json::to_value(outcome).ok()?))
                        })
                        .collect();
                    Some(json!({ "index": index, "sample_id": id, "results": results }))
                })
                .collect();
            Ok(json!({
                "name": run.name(),
                "filter": filter,
                "total": ids.len(),
                "matched": shown.len(),
                "offset": offset,
                "metrics": metrics,
                "samples": samples,
            }))
        })
        .await?;
    Ok(json_response(&body))
}

pub(crate) async fn compare(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let request = CompareRequest::from_query(&QueryParams::parse(query.as_deref()))?;
    let comparison = state.read(move |runs| request.compare(runs)).await?;
    Ok(json_response(&comparison))
}
