//! One `pairwise` run from Python (`rageval.pairwise`): the options as `rageval-run`'s
//! [`PairwiseOptions`], the run on a worker thread with the GIL released and signals
//! answered as `evaluate` answers them ([`crate::run::run_answering_signals`]), and the
//! way it ended as a dict or a `rageval.errors` exception. The figures are read back by the
//! Python side from the run directory's `summary.json` and `pairwise.jsonl`.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rageval_core::stats::DEFAULT_SEED;
use rageval_run::Ended;
use rageval_run::commands::pairwise::versions::DatasetReading;
use rageval_run::commands::pairwise::{self, DEFAULT_RESAMPLES, PairwiseOptions};
use rageval_run::engine::questions::Restart;

use crate::errors::{exception, message};
use crate::run::{
    JudgeSpec, Notes, judge_options, parsed, run_answering_signals, stop_error, too_many_failed,
};

/// Questions judged at once unless told (as `rageval pairwise --questions-at-once`).
const QUESTIONS_AT_ONCE: usize = 4;

/// The other options of `rageval.pairwise`, as a dict.
#[derive(Debug, FromPyObject)]
#[pyo3(from_item_all)]
pub struct PairwiseSpec {
    names: Vec<String>,
    /// The run directory (the Python side always names one).
    out: PathBuf,
    format: Option<String>,
    field_map: Vec<String>,
    sheet: Option<String>,
    samples: Option<usize>,
    overwrite: bool,
    retry_failed: bool,
    seed: Option<u64>,
    bootstrap_resamples: Option<usize>,
    /// A rubric metric whose criterion replaces the built-in one (`--criterion`).
    criterion: Option<String>,
    metric_files: Vec<PathBuf>,
    /// A percentage, as `--max-failed` takes it.
    max_failed: Option<String>,
}

/// Judges `versions` head to head into a run directory; a dict of where it is, its footer
/// and its notes.
pub fn pairwise(
    py: Python<'_>,
    versions: Vec<PathBuf>,
    spec: PairwiseSpec,
    judge: JudgeSpec,
) -> PyResult<Py<PyAny>> {
    let invalid = |text: String| exception("RagevalError", text, None, None);
    let api_key = judge.api_key.clone();
    let options = PairwiseOptions {
        versions,
        names: spec.names,
        reading: DatasetReading {
            format: parsed("format", spec.format.as_deref(), str::parse).map_err(invalid)?,
            field_map: spec.field_map,
            sheet: spec.sheet,
        },
        samples: spec.samples,
        out: Some(spec.out.clone()),
        restart: Restart {
            overwrite: spec.overwrite,
            retry_failed: spec.retry_failed,
        },
        seed: spec.seed.unwrap_or(DEFAULT_SEED),
        criterion: spec.criterion,
        metric_files: spec.metric_files,
        questions_at_once: QUESTIONS_AT_ONCE,
        resamples: spec.bootstrap_resamples.unwrap_or(DEFAULT_RESAMPLES),
        max_failed: parsed("max_failed", spec.max_failed.as_deref(), str::parse)
            .map_err(invalid)?
            .unwrap_or_default(),
        judge: judge_options(judge).map_err(invalid)?,
    };
    let notes = Arc::new(Notes::default());
    let (ended, signalled) =
        run_answering_signals(py, api_key, &notes, &None, move |env, observer, cancel| {
            pairwise::run(&options, env, observer, cancel).map_err(Box::new)
        })?;
    match (ended, signalled) {
        (Err(error), _) => Err(exception("RagevalError", message(&error), None, None)),
        (Ok(Ended::Stopped(stopped)), signalled) => {
            Err(stop_error(py, &stopped, &spec.out, signalled))
        }
        (Ok(Ended::Complete(_)), Some(raised)) => Err(raised),
        (Ok(Ended::Complete(done)), None) => {
            if let Some(too_many) = done.too_many_failed {
                return Err(too_many_failed(too_many, &done.path));
            }
            let result = PyDict::new(py);
            result.set_item("run_dir", done.path.as_path())?;
            result.set_item("footer", &done.footer)?;
            result.set_item("notes", notes.taken())?;
            Ok(result.into_any().unbind())
        }
    }
}
