//! One `eval` run from Python: the options as `rageval-run`'s [`EvalOptions`], the run on a
//! worker thread with the GIL released, Ctrl-C and SIGTERM turned into the run's cancel
//! token, and the way it ended as a dict or a `rageval.errors` exception.
//!
//! Signals reach Rust as the exceptions Python's handlers raise: `KeyboardInterrupt` from
//! Ctrl-C (when the process has Python's default SIGINT handler: a process started with
//! SIGINT ignored, such as a background job of a script, never gets one), `RunTerminated`
//! from SIGTERM (the handler `rageval.evaluate` installs), or whatever a handler of the
//! program's own raises. Each stops the run resumably, then is raised with the stop's text.

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rageval_core::stats::{DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_SEED};
use rageval_judge::CancelToken;
use rageval_judge::batch::PollPolicy;
use rageval_judge::config::JudgeFlags;
use rageval_judge::settings::positive_seconds;
use rageval_report::Gate;
use rageval_run::commands::calibrate::CalibrateOptions;
use rageval_run::commands::eval::{self, EvalOptions, Evaluated};
use rageval_run::engine::batch::BatchMode;
use rageval_run::engine::judges::{DEFAULT_CONTEXT_WINDOW, Env, JudgeOptions};
use rageval_run::engine::shard::ShardRequest;
use rageval_run::{Ended, Event, Observer, Progress, Stop, Stopped};

use crate::errors::{exception, message};

/// How often the waiting thread runs Python's signal handlers (Ctrl-C, SIGTERM).
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// `rageval.Judge`, as a dict of its fields.
#[derive(Debug, FromPyObject)]
#[pyo3(from_item_all)]
pub struct JudgeSpec {
    base_url: Option<String>,
    model: Option<String>,
    pub api_key: Option<String>,
    embedding_model: Option<String>,
    /// `heuristic`, `gguf:PATH` or `checker:DIR`.
    local: Option<String>,
    /// `LOW,HIGH`: with a checker and an endpoint, a cascade (`--escalate`); empty for the
    /// default band.
    escalate: Option<String>,
    concurrency: Option<usize>,
    rpm: Option<u32>,
    tpm: Option<u32>,
    timeout: Option<f64>,
    cache: Option<PathBuf>,
    no_cache: bool,
    offline: bool,
    max_calls: Option<u64>,
    max_cost: Option<f64>,
    /// `auto`, `en` or `zh`.
    lang: String,
    context_window: Option<u64>,
    config: Option<PathBuf>,
    models_dir: Option<PathBuf>,
    /// A number, or `"omit"`.
    temperature: Option<String>,
    max_tokens: Option<u32>,
    /// `max_tokens` or `max_completion_tokens`.
    max_tokens_param: Option<String>,
    reasoning_effort: Option<String>,
    thinking: Option<bool>,
}

/// The other options of `rageval.evaluate`, as a dict.
#[derive(Debug, FromPyObject)]
#[pyo3(from_item_all)]
pub struct RunSpec {
    format: Option<String>,
    field_map: Vec<String>,
    sheet: Option<String>,
    overwrite: bool,
    samples: Option<usize>,
    seed: Option<u64>,
    bootstrap_resamples: Option<usize>,
    top_k: Option<usize>,
    retry_failed: bool,
    fail_under: Vec<String>,
    junit: Option<PathBuf>,
    reports: bool,
    /// A percentage, as `--max-failed` takes it (`rageval.evaluate` turns its share into
    /// one).
    max_failed: Option<String>,
    /// Rubric files (`--metric-file`); empty: the judge's configuration file.
    metric_files: Vec<PathBuf>,
    /// The version's name in reports and version tables (`--name`).
    name: Option<String>,
    /// `i/n`, `auto` or `auto/n` (`--shard`).
    shard: Option<String>,
    /// Human labels to calibrate the means with (`--labels`), their scale (`--label-scale`)
    /// and the metric of labels that name none (`--label-metric`).
    labels: Option<PathBuf>,
    label_scale: Option<String>,
    label_metric: Option<String>,
    /// Batch mode (docs/scale.md): `--batch`, `--batch-fallback` (`resubmit` or `sync`),
    /// `--batch-poll` in seconds, `--export-requests DIR`, `--import-responses FILE…`.
    batch: bool,
    batch_fallback: Option<String>,
    batch_poll: Option<f64>,
    export_requests: Option<PathBuf>,
    import_responses: Vec<PathBuf>,
}

impl RunSpec {
    /// `eval`'s options, each parsed as `rageval eval` parses its flag.
    fn into_options(
        self,
        data: PathBuf,
        out: PathBuf,
        metrics: Vec<String>,
        judge: JudgeOptions,
    ) -> Result<EvalOptions, String> {
        let batch = self.batch_mode()?;
        let shard = match parsed("shard", self.shard.as_deref(), str::parse::<ShardRequest>)? {
            Some(request) => Some(
                request
                    .resolve(|name| std::env::var(name).ok())
                    .map_err(|error| error.to_string())?,
            ),
            None => None,
        };
        let labels = match self.labels {
            Some(labels) => Some(CalibrateOptions {
                labels,
                scale: parsed("label_scale", self.label_scale.as_deref(), str::parse)?,
                metric: self.label_metric,
            }),
            None => None,
        };
        let top_k = self.top_k.map(|k| k.to_string());
        Ok(EvalOptions {
            data,
            format: parsed("format", self.format.as_deref(), str::parse)?,
            field_map: self.field_map,
            sheet: self.sheet,
            metrics,
            rubric_files: self.metric_files,
            out: Some(out),
            version_name: self.name,
            overwrite: self.overwrite,
            samples: self.samples,
            seed: self.seed.unwrap_or(DEFAULT_SEED),
            bootstrap_resamples: self
                .bootstrap_resamples
                .unwrap_or(DEFAULT_BOOTSTRAP_RESAMPLES),
            top_k: parsed("top_k", top_k.as_deref(), str::parse)?,
            retry_failed: self.retry_failed,
            gate: Gate::parse(&self.fail_under).map_err(|error| message(&error))?,
            junit: self.junit,
            labels,
            judge,
            shard,
            batch,
            reports: self.reports,
            max_failed: parsed("max_failed", self.max_failed.as_deref(), str::parse)?
                .unwrap_or_default(),
            rolling: false,
        })
    }

    /// Batch mode from its options, when any is given (as the CLI's `BatchArgs`).
    fn batch_mode(&self) -> Result<Option<BatchMode>, String> {
        let any = self.batch || self.export_requests.is_some() || !self.import_responses.is_empty();
        if !any {
            return Ok(None);
        }
        let poll = self.batch_poll.map(|seconds| seconds.to_string());
        let defaults = PollPolicy::default();
        Ok(Some(BatchMode {
            submit: self.batch,
            failed_items: parsed("batch_fallback", self.batch_fallback.as_deref(), str::parse)?
                .unwrap_or_default(),
            export: self.export_requests.clone(),
            import: self.import_responses.clone(),
            poll: PollPolicy {
                first: parsed("batch_poll", poll.as_deref(), positive_seconds)?
                    .unwrap_or(defaults.first),
                ..defaults
            },
            ..BatchMode::default()
        }))
    }
}

/// An option given as text, parsed by `parse`: the rule the CLI's flag of the same option
/// parses by (its type's `FromStr`, mostly), so the two accept the same values and say the
/// same of the others. The message names the Python argument and the value.
pub fn parsed<T, E: Display>(
    name: &str,
    text: Option<&str>,
    parse: impl Fn(&str) -> Result<T, E>,
) -> Result<Option<T>, String> {
    text.map(|text| parse(text).map_err(|error| format!("invalid {name} `{text}`: {error}")))
        .transpose()
}

/// What the run tells: its notes, kept for `Run.notes`, and where its stage stands, taken
/// by the thread that waits (the only one holding the GIL) for the progress callback.
#[derive(Default)]
pub struct Notes {
    notes: Mutex<Vec<String>>,
    /// The latest progress not yet handed to the callback.
    progress: Mutex<Option<Progress>>,
    /// The units the current stage set out to do, as its start said (a stage's progress
    /// need not repeat it).
    stage_total: Mutex<Option<u64>>,
}

impl Observer for Notes {
    fn event(&self, event: &Event) {
        match event {
            Event::Note(text) => {
                if let Ok(mut notes) = self.notes.lock() {
                    notes.push(text.clone());
                }
            }
            Event::Progress(progress) => {
                if let Ok(mut latest) = self.progress.lock() {
                    *latest = Some(*progress);
                }
            }
            Event::Stage { total, .. } => {
                if let Ok(mut stage_total) = self.stage_total.lock() {
                    *stage_total = *total;
                }
            }
            Event::StageEnd => {}
        }
    }
}

impl Notes {
    /// The notes the run told.
    pub fn taken(&self) -> Vec<String> {
        self.notes
            .lock()
            .map(|notes| notes.clone())
            .unwrap_or_default()
    }

    /// Hands the latest progress, if any came since the last call, to `callback` as a dict
    /// (`stage`, `done`, `total`, `failed`, `calls`, `cache_hits`, `failed_calls`).
    pub fn report(&self, py: Python<'_>, callback: Option<&Py<PyAny>>) -> PyResult<()> {
        let Some(callback) = callback else {
            return Ok(());
        };
        let Some(progress) = self
            .progress
            .lock()
            .ok()
            .and_then(|mut latest| latest.take())
        else {
            return Ok(());
        };
        let state = PyDict::new(py);
        state.set_item("stage", progress.stage)?;
        state.set_item("done", progress.done)?;
        let stage_total = self.stage_total.lock().ok().and_then(|total| *total);
        state.set_item("total", progress.total.or(stage_total))?;
        state.set_item("failed", progress.failed)?;
        state.set_item("calls", progress.calls)?;
        state.set_item("cache_hits", progress.cache_hits)?;
        state.set_item("failed_calls", progress.failed_calls)?;
        callback.call1(py, (state,))?;
        Ok(())
    }
}

pub fn evaluate(
    py: Python<'_>,
    data: PathBuf,
    out: PathBuf,
    metrics: Vec<String>,
    judge: JudgeSpec,
    spec: RunSpec,
    progress: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let invalid = |text: String| exception("RagevalError", text, None, None);
    let api_key = judge.api_key.clone();
    let judge = judge_options(judge).map_err(invalid)?;
    let options = spec
        .into_options(data, out.clone(), metrics, judge)
        .map_err(invalid)?;
    let notes = Arc::new(Notes::default());
    let (ended, mut signalled) = run_answering_signals(
        py,
        api_key,
        &notes,
        &progress,
        move |env, observer, cancel| eval::run(&options, env, observer, cancel).map_err(Box::new),
    )?;
    // Where the run ended, for a callback that shows it.
    if let Err(raised) = notes.report(py, progress.as_ref()) {
        signalled.get_or_insert(raised);
    }
    let notes = notes.taken();
    match (ended, signalled) {
        (Err(error), _) => Err(exception("RagevalError", message(&error), None, None)),
        (Ok(Ended::Stopped(stopped)), signalled) => Err(stop_error(py, &stopped, &out, signalled)),
        // The signal came as the last samples finished: the run is complete, and the
        // signal still the caller's to answer.
        (Ok(Ended::Complete(_)), Some(raised)) => Err(raised),
        (Ok(Ended::Complete(done)), None) => completed(py, &done, notes),
    }
}

/// How a run ended, and the exception a signal's handler (or the progress callback) raised
/// while it ran.
/// The run's error is boxed: it is large, and only passed along.
pub type Answered<T> = (Result<Ended<T>, Box<rageval_run::RunError>>, Option<PyErr>);

/// A run's work: given the environment, the observer and the cancel token, how it ended.
pub trait Work<T>:
    FnOnce(Env<'_>, &dyn Observer, &CancelToken) -> Result<Ended<T>, Box<rageval_run::RunError>>
    + Send
    + 'static
{
}

impl<T, F> Work<T> for F where
    F: FnOnce(Env<'_>, &dyn Observer, &CancelToken) -> Result<Ended<T>, Box<rageval_run::RunError>>
        + Send
        + 'static
{
}

/// Runs `work` (an `eval` or a `pairwise` run) on a worker thread while this one, without the GIL, wakes every
/// [`SIGNAL_POLL`] to run Python's signal handlers and hand `notes`' progress to the
/// callback. The first exception either raises cancels the run (it stops after the samples
/// in flight, resumable) and is returned beside the way the run ended.
pub fn run_answering_signals<T: Send + 'static>(
    py: Python<'_>,
    api_key: Option<String>,
    notes: &Arc<Notes>,
    progress: &Option<Py<PyAny>>,
    work: impl Work<T>,
) -> PyResult<Answered<T>> {
    let cancel = CancelToken::new();
    let (send, receive) = channel();
    let worker = {
        let (notes, cancel) = (notes.clone(), cancel.clone());
        std::thread::Builder::new()
            .name("rageval-eval".into())
            .spawn(move || {
                // The process environment as the CLI reads it, with the key given in Python
                // over `RAGEVAL_JUDGE_API_KEY`.
                let env = move |name: &str| match (name, &api_key) {
                    (rageval_judge::settings::ENV_JUDGE_API_KEY, Some(key)) => Some(key.clone()),
                    _ => std::env::var(name).ok(),
                };
                let _ = send.send(work(&env, notes.as_ref(), &cancel));
            })
            .map_err(|error| {
                exception(
                    "RagevalError",
                    format!("cannot start the run's thread: {error}"),
                    None,
                    None,
                )
            })?
    };
    // Behind a lock only so the closure that waits without the GIL may borrow it.
    let receive = Mutex::new(receive);
    let wait = || match receive.lock() {
        Ok(receive) => receive.recv_timeout(SIGNAL_POLL),
        Err(_) => Err(RecvTimeoutError::Disconnected),
    };
    // The exception the first signal's handler raised, raised again once the run stopped.
    let mut signalled: Option<PyErr> = None;
    let ended = loop {
        match py.detach(wait) {
            Ok(ended) => break ended,
            Err(RecvTimeoutError::Timeout) => {
                // A signal, or a progress callback that raised: the run stops after the
                // samples in flight and stays resumable.
                let raised = py
                    .check_signals()
                    .and_then(|()| notes.report(py, progress.as_ref()));
                if let Err(raised) = raised {
                    signalled.get_or_insert(raised);
                    cancel.cancel();
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                let _ = worker.join();
                let text = "the run's thread ended without an answer".to_owned();
                return Err(exception("RagevalError", text, None, None));
            }
        }
    };
    let _ = worker.join();
    Ok((ended, signalled))
}

/// A stopped run as the exception its stop earns, with the CLI's two lines; a stop by a
/// signal as the exception the signal's handler raised.
pub fn stop_error(
    py: Python<'_>,
    stopped: &Stopped,
    run_dir: &Path,
    signalled: Option<PyErr>,
) -> PyErr {
    let text = format!("{}\n{}", stopped.footer, stopped.message);
    let run_dir = Some(run_dir);
    match &stopped.stop {
        Stop::Cancelled => match signalled {
            Some(raised) if raised.is_instance_of::<PyKeyboardInterrupt>(py) => {
                PyKeyboardInterrupt::new_err(text)
            }
            Some(raised) if is_rageval_error(py, &raised, "RunTerminated") => {
                exception("RunTerminated", text, Some("terminated"), run_dir)
            }
            // A handler of the program's own: its exception, as it raised it.
            Some(raised) => raised,
            None => exception("RunStopped", text, Some("cancelled"), run_dir),
        },
        Stop::CapReached(_) => exception("RunStopped", text, Some("cap"), run_dir),
        Stop::JudgeUnavailable(_) => exception("JudgeError", text, Some("judge"), run_dir),
        Stop::RequestsExported { .. } => exception("RunStopped", text, Some("exported"), run_dir),
    }
}

/// Whether `error` is an instance of `rageval.errors.<class>`.
fn is_rageval_error(py: Python<'_>, error: &PyErr, class: &str) -> bool {
    py.import("rageval.errors")
        .and_then(|module| module.getattr(class))
        .is_ok_and(|class| error.value(py).is_instance(&class).unwrap_or(false))
}

/// A run that finished with more failed judge calls than `--max-failed` allows, as
/// `JudgeError` (the CLI exits 4 for it): `text` says how many.
pub fn too_many_failed(text: String, run_dir: &Path) -> PyErr {
    exception("JudgeError", text, Some("judge"), Some(run_dir))
}

/// A complete run as a dict; a run whose judged cells all failed as `JudgeError`, as the CLI
/// exits 4 for it.
fn completed(py: Python<'_>, done: &Evaluated, notes: Vec<String>) -> PyResult<Py<PyAny>> {
    if let Some(too_many) = &done.too_many_failed {
        return Err(too_many_failed(too_many.message(), &done.path));
    }
    let result = PyDict::new(py);
    result.set_item("run_dir", done.path.as_path())?;
    let written: Vec<&Path> = done.finished.written.iter().map(PathBuf::as_path).collect();
    result.set_item("written", written)?;
    result.set_item("gate_passed", done.finished.passed())?;
    result.set_item("footer", &done.footer)?;
    result.set_item("notes", notes)?;
    result.set_item("cells_scored", done.scored.cells)?;
    result.set_item("cells_failed", done.scored.failed)?;
    Ok(result.into_any().unbind())
}

/// The judge's options, each parsed as `rageval eval` parses its judge flag.
pub fn judge_options(judge: JudgeSpec) -> Result<JudgeOptions, String> {
    let timeout = judge.timeout.map(|seconds| seconds.to_string());
    let escalate = match judge.escalate.as_deref() {
        // `escalate=True`: the band `--escalate` takes without a value.
        Some("") => Some(rageval_tasks::DEFAULT_BAND),
        text => parsed("escalate", text, str::parse)?,
    };
    Ok(JudgeOptions {
        flags: JudgeFlags {
            config: judge.config,
            base_url: judge.base_url,
            model: judge.model,
            embedding_model: judge.embedding_model,
            concurrency: judge.concurrency,
            rpm: judge.rpm,
            tpm: judge.tpm,
            timeout: parsed("timeout", timeout.as_deref(), positive_seconds)?,
            no_cache: judge.no_cache,
            offline: judge.offline,
            cache: judge.cache,
            max_calls: judge.max_calls,
            max_cost_usd: judge.max_cost,
            temperature: parsed("temperature", judge.temperature.as_deref(), str::parse)?,
            max_tokens: judge.max_tokens,
            max_tokens_param: parsed(
                "max_tokens_param",
                judge.max_tokens_param.as_deref(),
                str::parse,
            )?,
            reasoning_effort: judge.reasoning_effort,
            thinking: judge.thinking,
        },
        local: parsed("local", judge.local.as_deref(), str::parse)?,
        models_dir: judge.models_dir,
        lang: parsed("lang", Some(&judge.lang), str::parse)?.unwrap_or_default(),
        context_window: judge.context_window.unwrap_or(DEFAULT_CONTEXT_WINDOW),
        batch: false,
        escalate,
    })
}
