//! `rageval._native`: the Rust half of the `rageval` Python package (python/rageval).
//!
//! - `evaluate`: one `eval` run through `rageval-run` — the same options, run directory,
//!   resume and messages as `rageval eval`, with the GIL released while it works;
//! - `compare`: `rageval-report`'s comparison of run directories, as JSON;
//! - `pairwise`: one `pairwise` run (versions' answers judged head to head), as
//!   `rageval pairwise` runs it, with the GIL released while it works;
//! - `write_results_parquet`: a finished run's results as `results.parquet`;
//! - `log_mlflow`: a finished run logged to an MLflow tracking server, as `eval --mlflow`
//!   logs it (`rageval-export`);
//! - `cli`: the `rageval` command itself, for the package's console script.
//!
//! The Python side (python/rageval/__init__.py) turns data frames and lists into a dataset
//! file, builds `Run` objects and data frames; this module never touches pandas. Errors
//! arrive in Python as `rageval.RagevalError` (and its subclasses) carrying the message the
//! CLI prints. Nothing here prints.
//!
//! # Features
//!
//! Those of the `rageval` crate, forwarded (its doc says what each brings and costs):
//! `minilm` and `checker` by default, `gguf` (the in-process GGUF chat model, llama.cpp's
//! C++ build) on request — `pip install . --config-settings build-args="--features gguf"`.
//! `extension-module` is maturin's (pyproject.toml), never a user's choice.

mod errors;
mod head_to_head;
mod run;

use std::path::PathBuf;

use pyo3::prelude::*;

/// Scores a dataset file into a run directory; see `rageval.evaluate`.
#[pyfunction]
#[pyo3(signature = (data, out, metrics, judge, options, progress=None))]
fn evaluate(
    py: Python<'_>,
    data: PathBuf,
    out: PathBuf,
    metrics: Vec<String>,
    judge: run::JudgeSpec,
    options: run::RunSpec,
    progress: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    run::evaluate(py, data, out, metrics, judge, options, progress)
}

/// Judges versions' answers head to head into a run directory; see `rageval.pairwise`.
#[pyfunction]
fn pairwise(
    py: Python<'_>,
    versions: Vec<PathBuf>,
    options: head_to_head::PairwiseSpec,
    judge: run::JudgeSpec,
) -> PyResult<Py<PyAny>> {
    head_to_head::pairwise(py, versions, options, judge)
}

/// The comparison of two or more run directories as JSON (the shape of `rageval compare
/// --json`).
#[pyfunction]
#[pyo3(signature = (runs, names=Vec::new()))]
fn compare(runs: Vec<PathBuf>, names: Vec<String>) -> PyResult<String> {
    let runs = runs
        .iter()
        .map(|path| {
            // A pipeline folder is read as its `eval/` run, as `rageval compare` reads it.
            let folder = rageval_report::locate_run(path)?;
            rageval_report::RunData::load(folder.run_dir())
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| errors::rageval_error(&error))?;
    let mut comparison =
        rageval_report::Comparison::build(&runs, rageval_report::CompareSettings::default())
            .map_err(|error| errors::rageval_error(&error))?;
    comparison.name_versions(&names);
    serde_json::to_string(&comparison).map_err(|error| errors::rageval_error(&error))
}

/// Writes `results.parquet` into a run directory from its `results.jsonl`; returns its path.
#[pyfunction]
fn write_results_parquet(run_dir: PathBuf) -> PyResult<PathBuf> {
    rageval_report::write_results_parquet(&run_dir).map_err(|error| errors::rageval_error(&error))
}

/// Logs a finished run to an MLflow tracking server as `eval --mlflow` does (the token, if
/// the server asks for one, from `MLFLOW_TRACKING_TOKEN`), with the GIL released; returns
/// what was written as a dict. A server that cannot be reached raises `RagevalError`; the
/// run directory is left as it was.
#[pyfunction]
fn log_mlflow(
    py: Python<'_>,
    run_dir: PathBuf,
    tracking_uri: String,
    experiment: String,
) -> PyResult<Py<PyAny>> {
    use rageval_export::mlflow;
    let token = std::env::var(mlflow::ENV_MLFLOW_TRACKING_TOKEN)
        .ok()
        .filter(|token| !token.trim().is_empty())
        .map(rageval_judge::ApiKey::new);
    let target = mlflow::MlflowTarget {
        tracking_uri,
        experiment,
        token,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| errors::rageval_error(&error))?;
    // The error is turned into its message before the GIL comes back (it is large).
    let logged = py
        .detach(|| {
            runtime
                .block_on(mlflow::log_run(&run_dir, &target))
                .map_err(|error| errors::message(&error))
        })
        .map_err(|text| errors::exception("RagevalError", text, None, None))?;
    let result = pyo3::types::PyDict::new(py);
    result.set_item("tracking_uri", &logged.record.tracking_uri)?;
    result.set_item("experiment_id", &logged.record.experiment_id)?;
    result.set_item("run_id", &logged.record.run_id)?;
    result.set_item("existed", logged.existed)?;
    result.set_item("changed", logged.changed)?;
    result.set_item("params", logged.params)?;
    result.set_item("metrics", logged.metrics)?;
    result.set_item("artifacts_written", logged.artifacts.written)?;
    result.set_item("artifacts_failed", logged.artifacts.failed)?;
    Ok(result.into_any().unbind())
}

/// `summary.json`'s figures (per metric the mean, its 95% interval, the counts and the
/// reasons) of cells given back as journal records (a JSON list), computed as `eval`
/// computes them: what `rageval.summarize` returns for rows `score_batch` scored.
#[pyfunction]
#[pyo3(signature = (records, metrics, resamples=None, seed=None))]
fn summarize(
    records: &str,
    metrics: Vec<String>,
    resamples: Option<usize>,
    seed: Option<u64>,
) -> PyResult<String> {
    let resamples = resamples.unwrap_or(rageval_core::stats::DEFAULT_BOOTSTRAP_RESAMPLES);
    let seed = seed.unwrap_or(rageval_core::stats::DEFAULT_SEED);
    let records: Vec<rageval_report::ResultRecord> =
        serde_json::from_str(records).map_err(|error| errors::rageval_error(&error))?;
    let mut summary = rageval_run::engine::results::Summarising::new(&metrics);
    for record in &records {
        summary.add(record);
    }
    serde_json::to_string(&summary.finish(resamples, seed))
        .map_err(|error| errors::rageval_error(&error))
}

/// Runs the `rageval` command with `args` (the program name first); returns its exit code.
#[pyfunction]
fn cli(py: Python<'_>, args: Vec<std::ffi::OsString>) -> u8 {
    py.detach(|| rageval::run(args))
}

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(evaluate, module)?)?;
    module.add_function(wrap_pyfunction!(compare, module)?)?;
    module.add_function(wrap_pyfunction!(pairwise, module)?)?;
    module.add_function(wrap_pyfunction!(write_results_parquet, module)?)?;
    module.add_function(wrap_pyfunction!(log_mlflow, module)?)?;
    module.add_function(wrap_pyfunction!(summarize, module)?)?;
    module.add_function(wrap_pyfunction!(cli, module)?)?;
    Ok(())
}
