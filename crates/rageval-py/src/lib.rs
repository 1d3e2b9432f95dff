//! `rageval._native`: the Rust half of the `rageval` Python package (python/rageval).
//!
//! - `evaluate`: one `eval` run through `rageval-run` — the same options, run directory,
//!   resume and messages as `rageval eval`, with the GIL released while it works;
//! - `compare`: `rageval-report`'s comparison of run directories, as JSON;
//! - `write_results_parquet`: a finished run's results as `results.parquet`;
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
    module.add_function(wrap_pyfunction!(write_results_parquet, module)?)?;
    module.add_function(wrap_pyfunction!(summarize, module)?)?;
    module.add_function(wrap_pyfunction!(cli, module)?)?;
    Ok(())
}
