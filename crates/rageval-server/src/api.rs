//! The JSON API under `/api/`: the pages' data, for scripts.
//!
//! - `GET /api/runs`: every run with its kind, status, dataset, times and figures (a
//!   scored run's summary, a `judge-check` run's agreement figures, a `rank` run's and a
//!   pipeline's retriever-versus-judge figures, a `rank`, `reference` or `testset` run's
//!   counts).
//! - `GET /api/runs/{name}`: one run's manifest and summary (a scored run's with a
//!   `judge-check` run's agreement with its labels, `null` for other runs; a stage run's
//!   `summary.json` as written, with its figures).
//! - `GET /api/runs/{name}/samples`: per-sample outcomes (as in `results.jsonl`), filtered
//!   by `metric` with `min`/`max` (inclusive) or `status`, paged by `offset` and `limit`
//!   (`limits`: 100 unless asked, at most 1,000); `next_offset` is where the next page
//!   starts, `null` after the last.
//! - `GET /api/compare?run=A&run=B…`: the comparison as `rageval compare --json` writes it
//!   (`seed`, `resamples`, `permutations`, `top` as its flags), within the work budget.
//!
//! Every answer passes through `public_json`: no absolute path of the machine in it. An
//! error is `{"error": "…"}` with the status that fits it (400, 403, 404, 409, 500, 503).

use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use rageval_report::AnyRun;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::compare::CompareRequest;
use crate::limits::{MAX_SAMPLES_PER_PAGE, SAMPLES_PER_PAGE};
use crate::public::public_json;
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
        self.0.answer(public_response(body))
    }
}

/// `value` as a JSON answer.
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

/// `value` as an answer of the API: every string without the machine's paths.
fn public_response(mut value: Value) -> Response {
    public_json(&mut value);
    json_response(&value)
}

pub(crate) async fn runs(State(state): State<AppState>) -> Result<Response, ApiError> {
    let entries = state.read(|runs| runs.list()).await?;
    let listing: Vec<Value> = entries.iter().map(entry_json).collect();
    Ok(public_response(json!({ "runs": listing })))
}

fn entry_json(entry: &RunEntry) -> Value {
    let (status, summary, figures, error) = match &entry.state {
        RunState::Complete(summary) => ("complete", Some(summary), None, None),
        RunState::Finished(figures) => ("complete", None, Some(figures), None),
        RunState::Running => ("running", None, None, None),
        RunState::Unreadable(why) => ("unreadable", None, None, Some(why)),
    };
    let manifest = entry.manifest.as_ref();
    json!({
        "name": entry.name,
        "kind": entry.kind,
        "stages": (!entry.stages.is_empty()).then_some(&entry.stages),
        "status": status,
        "error": error,
        "dataset": manifest.map(|m| &m.dataset),
        "started_at": manifest.map(|m| &m.started_at),
        "finished_at": manifest.and_then(|m| m.finished_at.as_ref()),
        "summary": summary,
        "figures": figures,
        "agreement": entry.agreement,
        "rank_agreement": entry.rank_agreement,
    })
}

pub(crate) async fn run(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let run = state.read(move |runs| runs.open_run_info(&name)).await?;
    let body = match run {
        AnyRun::Scored(run) => json!({
            "name": run.name,
            "kind": run.manifest.command,
            "manifest": run.manifest,
            "summary": run.summary,
            "agreement": run.agreement,
        }),
        AnyRun::Stage(run) => json!({
            "name": run.name,
            "kind": run.manifest.command,
            "manifest": run.manifest,
            "summary": run.summary,
            "figures": run.figures,
            "agreement": null,
        }),
    };
    Ok(public_response(body))
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
    let limit = query.count("limit", SAMPLES_PER_PAGE, MAX_SAMPLES_PER_PAGE)?;
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
                .take(limit)
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
                "limit": limit,
                "next_offset": offset
                    .checked_add(limit)
                    .filter(|next| *next < shown.len()),
                "metrics": metrics,
                "samples": samples,
            }))
        })
        .await?;
    Ok(public_response(body))
}

pub(crate) async fn compare(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let request = CompareRequest::from_query(&QueryParams::parse(query.as_deref()))?;
    let comparison = state.read(move |runs| request.compare(runs)).await?;
    let value = serde_json::to_value(&comparison)
        .map_err(|error| ServerError::Internal(format!("cannot encode the comparison: {error}")))?;
    Ok(public_response(value))
}
