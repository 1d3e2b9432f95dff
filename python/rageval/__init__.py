"""rageval from Python: evaluate a RAG system's samples and compare runs.

``evaluate`` runs the same engine as ``rageval eval`` (the Rust library, not a subprocess):
the same metrics, judge settings, run directory, resume and messages. It releases the GIL
while it works, needs no event loop (so it works inside Jupyter's), and Ctrl-C or SIGTERM
stops it resumably. ``compare`` gives the version table of several runs as a DataFrame;
``pairwise`` judges versions' answers head to head (as ``rageval pairwise``) and gives one
row per pair of versions, ``pairwise_verdicts`` every question's two verdicts.

    import rageval
    run = rageval.evaluate(rows, metrics=["faithfulness"],
                           judge=rageval.Judge(base_url="http://localhost:8000/v1", model="qwen"))
    run.summary["metrics"]["faithfulness"]["mean"]
    run.to_pandas()
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import signal
import threading
import warnings
from dataclasses import asdict, dataclass, fields, is_dataclass
from pathlib import Path
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from . import _native
from .errors import JudgeError, RagevalError, RunStopped, RunTerminated

__all__ = [
    "Judge",
    "Run",
    "evaluate",
    "compare",
    "pairwise",
    "pairwise_verdicts",
    "score_batch",
    "result_columns",
    "summarize",
    "RagevalError",
    "RunStopped",
    "JudgeError",
    "RunTerminated",
]

from .batch import result_columns, score_batch, summarize  # noqa: E402  (it calls back into this module)
from ._pairwise import pairwise, pairwise_verdicts  # noqa: E402  (it calls back into this module)

#: Where data given as rows is written, beside the run directories (the run's manifest
#: names the file, and reports read it back).
DATA_FOLDER = ".rageval-data"


@dataclass
class Judge:
    """Who judges, as ``rageval eval``'s judge flags say it. Unset fields fall back to the
    ``RAGEVAL_JUDGE_*`` environment variables, then ``rageval.toml``, then the defaults
    (docs/configuration.md)."""

    base_url: Optional[str] = None
    model: Optional[str] = None
    #: Sent as the bearer token; never written to the run directory.
    api_key: Optional[str] = None
    embedding_model: Optional[str] = None
    #: ``"heuristic"`` (no model), ``"gguf:PATH"`` (a local GGUF model; only in a package
    #: built with the ``gguf`` feature, else ``RagevalError`` says how to build it) or
    #: ``"checker:DIR"`` (a checker model folder for the support verdicts; docs/judges.md).
    local: Optional[str] = None
    #: With ``local="checker:DIR"`` and an endpoint (``base_url``, ``model``): a cascade
    #: (``--escalate``). Claims the checker scores within ``(low, high)`` (both included; a
    #: tuple or ``"LOW,HIGH"``) go to the chat model, the checker settles the rest; ``True``
    #: takes the default band 0.2,0.8. Reports count the claims each tier settled
    #: (docs/judges.md, "The cascade").
    escalate: Union[bool, str, Tuple[float, float], None] = None
    concurrency: Optional[int] = None
    rpm: Optional[int] = None
    tpm: Optional[int] = None
    #: Seconds per request.
    timeout: Optional[float] = None
    cache: Optional[str] = None
    no_cache: bool = False
    offline: bool = False
    max_calls: Optional[int] = None
    max_cost: Optional[float] = None
    #: ``"auto"``, ``"en"`` or ``"zh"``: the prompt pack.
    lang: str = "auto"
    context_window: Optional[int] = None
    config: Optional[str] = None
    models_dir: Optional[str] = None
    #: A number from 0 to 2, or ``"omit"`` to send none (OpenAI's reasoning models take
    #: only their default); 0 when unset.
    temperature: Union[float, str, None] = None
    #: A cap on generated tokens, thinking included.
    max_tokens: Optional[int] = None
    #: ``"max_tokens"`` or ``"max_completion_tokens"``: the cap's name at first (a server's
    #: refusal switches it).
    max_tokens_param: Optional[str] = None
    #: Sent as ``reasoning_effort`` (``"none"`` turns Ollama's thinking off).
    reasoning_effort: Optional[str] = None
    #: Thinking on or off where the server takes a switch (Qwen3 on vLLM, SGLang).
    thinking: Optional[bool] = None

    def __repr__(self) -> str:
        shown = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}
        if "api_key" in shown:
            shown["api_key"] = "****"
        return "Judge(" + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + ")"


class Run:
    """A finished run directory: its summary, its results and its reports."""

    def __init__(self, run_dir: Union[str, "os.PathLike[str]"], *, notes: Sequence[str] = (),
                 gate_passed: Optional[bool] = None, footer: str = "") -> None:
        self.run_dir = Path(run_dir)
        #: What the run said while it worked (resuming, routing, what it left out).
        self.notes: List[str] = list(notes)
        #: The judge line the CLI prints under its summary table.
        self.footer = footer
        with open(self.run_dir / "summary.json", encoding="utf-8") as summary:
            #: ``summary.json``: per metric mean, counts and 95% interval; the judge's accounts.
            self.summary: Dict[str, Any] = json.load(summary)
        #: Whether every ``fail_under`` threshold passed (``True`` without thresholds).
        self.gate_passed = True if gate_passed is None else gate_passed
        #: The MLflow run ``evaluate(mlflow=...)`` logged (``tracking_uri``,
        #: ``experiment_id``, ``run_id``, what was written); ``None`` otherwise.
        self.mlflow: Optional[Dict[str, Any]] = None

    @classmethod
    def open(cls, run_dir: Union[str, "os.PathLike[str]"]) -> "Run":
        """A run directory written earlier (by ``evaluate`` or ``rageval eval``)."""
        return cls(run_dir)

    def _existing(self, name: str) -> Optional[Path]:
        path = self.run_dir / name
        return path if path.exists() else None

    @property
    def report_html(self) -> Optional[Path]:
        return self._existing("report.html")

    @property
    def report_md(self) -> Optional[Path]:
        return self._existing("report.md")

    @property
    def results_xlsx(self) -> Optional[Path]:
        return self._existing("results.xlsx")

    @property
    def results_jsonl(self) -> Path:
        return self.run_dir / "results.jsonl"

    @property
    def results_parquet(self) -> Optional[Path]:
        return self._existing("results.parquet")

    @property
    def metrics(self) -> List[str]:
        """The run's metrics, in the order the summary shows them."""
        return list(self.summary.get("metric_order", []))

    def results(self) -> List[Dict[str, Any]]:
        """The journal: one dict per sample × metric (``sample_id``, ``metric``, ``status``
        and ``value``, ``reason`` or ``error``)."""
        with open(self.results_jsonl, encoding="utf-8") as journal:
            return [json.loads(line) for line in journal if line.strip()]

    def rows(self) -> List[Dict[str, Any]]:
        """One dict per sample: ``sample_id``, then per metric its score (``None`` unless
        scored) and ``<metric>_reason`` (why undefined, the failure, or the judge's reasons)."""
        metrics = self.metrics
        by_sample: Dict[str, Dict[str, Any]] = {}
        for record in self.results():
            row = by_sample.get(record["sample_id"])
            if row is None:
                row = {"sample_id": record["sample_id"]}
                for metric in metrics:
                    row[metric] = None
                    row[f"{metric}_reason"] = None
                by_sample[record["sample_id"]] = row
            metric = record["metric"]
            row[metric] = record.get("value") if record["status"] == "score" else None
            row[f"{metric}_reason"] = _reason(record)
        return list(by_sample.values())

    def to_pandas(self) -> Any:
        """The results as a DataFrame, one row per sample (see ``rows``)."""
        import pandas

        metrics = self.metrics
        columns = ["sample_id"] + [c for m in metrics for c in (m, f"{m}_reason")]
        frame = pandas.DataFrame(self.rows(), columns=columns)
        for metric in metrics:
            frame[metric] = frame[metric].astype("float64")
        return frame

    def __repr__(self) -> str:
        means = {
            name: self.summary["metrics"][name].get("mean") for name in self.metrics
        }
        return f"Run({str(self.run_dir)!r}, samples={self.summary.get('samples')}, means={means})"


def _reason(record: Mapping[str, Any]) -> Optional[str]:
    status = record.get("status")
    if status == "undefined":
        return record.get("reason")
    if status == "failed":
        return f"failed: {record.get('error')}"
    verdicts = (record.get("evidence") or {}).get("verdicts") or []
    reasons = [v["reason"] for v in verdicts if v.get("reason")]
    return "; ".join(reasons) if reasons else None


def _band(escalate: Union[bool, str, Tuple[float, float], None]) -> Optional[str]:
    """``Judge.escalate`` as the CLI's ``--escalate`` takes it: ``LOW,HIGH``, empty for the
    default band, ``None`` for no cascade."""
    if escalate is None or escalate is False:
        return None
    if escalate is True:
        return ""
    if isinstance(escalate, str):
        return escalate
    low, high = escalate
    return f"{low},{high}"


def evaluate(
    data: Any,
    metrics: Optional[Sequence[str]] = None,
    judge: Optional[Judge] = None,
    out: Union[str, "os.PathLike[str]", None] = None,
    *,
    format: Optional[str] = None,
    field_map: Union[Mapping[str, str], Sequence[str], None] = None,
    sheet: Optional[str] = None,
    overwrite: bool = False,
    samples: Optional[int] = None,
    seed: Optional[int] = None,
    bootstrap_resamples: Optional[int] = None,
    top_k: Optional[int] = None,
    retry_failed: bool = False,
    fail_under: Union[Mapping[str, float], Sequence[str], None] = None,
    junit: Union[str, "os.PathLike[str]", None] = None,
    reports: bool = True,
    results_format: str = "jsonl",
    max_failed: Union[float, str] = 0.10,
    metric_files: Optional[Sequence[Union[str, "os.PathLike[str]"]]] = None,
    name: Optional[str] = None,
    shard: Optional[str] = None,
    labels: Union[str, "os.PathLike[str]", None] = None,
    label_scale: Optional[str] = None,
    label_metric: Optional[str] = None,
    progress: Union[bool, Callable[[Dict[str, Any]], Any], None] = None,
    batch: bool = False,
    batch_fallback: Optional[str] = None,
    batch_poll: Optional[float] = None,
    export_requests: Union[str, "os.PathLike[str]", None] = None,
    import_responses: Optional[Sequence[Union[str, "os.PathLike[str]"]]] = None,
    mlflow: Optional[str] = None,
    mlflow_experiment: str = "rageval",
) -> Run:
    """Scores ``data`` with ``metrics`` (all that apply when empty) into the run directory
    ``out``, resuming a run already there over the same data, and returns the ``Run``.

    ``data`` is a dataset path (any format ``rageval eval`` reads), or rows: a list of
    dicts, a pandas DataFrame, a Hugging Face ``datasets.Dataset``, a ragas
    ``EvaluationDataset`` or anything with ``to_list()``/``to_pandas()``. Field names follow
    the CLI's aliases (``question``/``user_input``, ``contexts``/``retrieved_contexts``,
    ``answer``/``response``, ``reference``/``ground_truth``, ...); ``field_map`` maps others
    (``{"question": "prompt"}``). Rows are written once to ``<out>/../.rageval-data/`` as
    JSONL; the default ``out`` is ``runs/python-<hash of the rows>``, so the same rows resume
    the same run.

    ``name`` names the version in reports and version tables (``--name``: ``"V1.1
    (rerank)"``); ``shard`` scores one part of the data (``"2/8"``, or ``"auto"`` to read
    the index from a Kubernetes Indexed Job, a Slurm array or ``RANK``/``WORLD_SIZE``;
    ``rageval merge`` joins the parts); ``labels`` calibrates the means with human labels
    (``--labels``, with ``label_scale`` such as ``"1..5"`` and ``label_metric`` for labels
    that name no metric).

    ``batch=True`` sends the judge's requests as batch jobs to its endpoint;
    ``export_requests=DIR`` writes the next stage's requests there and raises ``RunStopped``
    (reason ``exported``) for another engine to answer; ``import_responses=[files]`` reads
    the answers back; ``batch_fallback`` (``"resubmit"`` or ``"sync"``) and ``batch_poll``
    (seconds) as the CLI's flags (docs/scale.md).

    ``mlflow="http://HOST:PORT"`` logs the finished run to that MLflow tracking server as
    ``rageval eval --mlflow`` does, through its REST API (``MLFLOW_TRACKING_TOKEN`` when it
    asks for a token): params, per-metric means with interval bounds, the summary and
    reports as artifacts, in the experiment ``mlflow_experiment`` (created when missing);
    logging again unchanged figures writes nothing. ``Run.mlflow`` says what was written. A
    server that cannot be reached leaves the run complete and warns (``RuntimeWarning``);
    ``rageval export mlflow RUN --mlflow URL`` logs it later.

    ``progress`` shows where the run stands while it works: a callable gets a dict
    (``stage``, ``done``, ``total``, ``failed``, ``calls``, ``cache_hits``,
    ``failed_calls``) about ten times a second while it changes, on the calling thread (an
    exception it raises stops the run resumably and is raised); ``True`` or ``None`` (the
    default) draws a ``tqdm`` bar when ``tqdm`` is installed and shows nothing otherwise;
    ``False`` shows nothing.

    Rubric metrics of one's own (docs/rubrics.md) are read as ``rageval eval`` reads them:
    the ``[[metric]]`` tables of every file in ``metric_files`` (``--metric-file``), else
    those of the judge's configuration file (``Judge(config=...)``, else ``RAGEVAL_CONFIG``,
    else ``./rageval.toml``). Each call reads them afresh: a rubric of one call is unknown to
    the next unless that call's files define it too.

    ``max_failed`` is the largest share of judged cells that may fail: a number from 0 to 1
    (``0.10``), or a percentage as ``--max-failed`` takes it (``"10%"``); a number is handed
    on as its percentage, so both are read by the CLI's one rule.

    Raises ``RagevalError`` (bad data, options or rubric file), ``RunStopped`` (a cap), ``JudgeError``
    (the judge refused, or more than ``max_failed`` of the judged cells failed: 10% by
    default, as the CLI's ``--max-failed``), ``KeyboardInterrupt`` on Ctrl-C and
    ``RunTerminated`` (a ``SystemExit`` with code 143) on SIGTERM: the run stops after the
    samples in flight, the run directory keeps its finished cells and the same call resumes
    it. SIGTERM is taken only on the main thread and only while nothing else handles it (a
    handler of the program's own, or an ignored SIGTERM, is left alone).
    """
    if results_format not in ("jsonl", "parquet"):
        raise RagevalError(f"invalid results_format `{results_format}`: expected jsonl or parquet")
    path, digest = _dataset_file(data, out)
    if out is None:
        out = Path("runs") / (f"python-{digest[:12]}" if digest else _stem(path))
    spec = _judge_spec(judge)
    options = {
        "format": format,
        "field_map": _pairs(field_map),
        "sheet": sheet,
        "overwrite": overwrite,
        "samples": samples,
        "seed": seed,
        "bootstrap_resamples": bootstrap_resamples,
        "top_k": top_k,
        "retry_failed": retry_failed,
        "fail_under": _pairs(fail_under),
        "junit": os.fspath(junit) if junit is not None else None,
        "reports": reports,
        "max_failed": _percentage(max_failed),
        "metric_files": [os.fspath(file) for file in metric_files or []],
        "name": name,
        "shard": shard,
        "labels": os.fspath(labels) if labels is not None else None,
        "label_scale": label_scale,
        "label_metric": label_metric,
        "batch": batch,
        "batch_fallback": batch_fallback,
        "batch_poll": batch_poll,
        "export_requests": os.fspath(export_requests) if export_requests is not None else None,
        "import_responses": [os.fspath(file) for file in import_responses or []],
    }
    callback, close = _progress(progress)
    try:
        with _sigterm_stops_the_run():
            done = _native.evaluate(
                os.fspath(path), os.fspath(out), list(metrics or []), spec, options, callback
            )
    finally:
        close()
    if results_format == "parquet":
        _native.write_results_parquet(done["run_dir"])
    run = Run(done["run_dir"], notes=done["notes"], gate_passed=done["gate_passed"],
              footer=done["footer"])
    if mlflow is not None:
        run.mlflow = _log_mlflow(done["run_dir"], mlflow, mlflow_experiment)
    return run


def _judge_spec(judge: Optional[Judge]) -> Dict[str, Any]:
    """A ``Judge`` as the dict the native module reads."""
    judge = judge or Judge()
    spec = {f.name: getattr(judge, f.name) for f in fields(judge)}
    for key in ("cache", "config", "models_dir"):
        if spec[key] is not None:
            spec[key] = os.fspath(spec[key])
    if spec["temperature"] is not None:
        spec["temperature"] = str(spec["temperature"])
    spec["escalate"] = _band(spec["escalate"])
    return spec


def _log_mlflow(run_dir: str, tracking_uri: str, experiment: str) -> Optional[Dict[str, Any]]:
    """What logging the finished run to MLflow wrote; ``None``, with a warning, when the
    server could not take it (the run itself is complete either way, as with the CLI)."""
    try:
        return _native.log_mlflow(run_dir, tracking_uri, experiment)
    except RagevalError as error:
        warnings.warn(
            f"the run is complete, but it was not logged to MLflow: {error} "
            f"(`rageval export mlflow {run_dir} --mlflow URL` logs it later)",
            RuntimeWarning,
            stacklevel=3,
        )
        return None


def _percentage(max_failed: Union[float, str]) -> str:
    """``max_failed`` as ``--max-failed`` takes it: text as given, a share as its
    percentage (``0.1`` is ``"10%"``)."""
    if isinstance(max_failed, str):
        return max_failed
    return f"{max_failed * 100:g}%"


def _progress(
    progress: Union[bool, Callable[[Dict[str, Any]], Any], None],
) -> "tuple[Optional[Callable[[Dict[str, Any]], Any]], Callable[[], None]]":
    """The callback ``evaluate`` hands the run, and what closes its display."""
    if callable(progress):
        return progress, lambda: None
    if progress is False:
        return None, lambda: None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None, lambda: None
    bars: Dict[str, Any] = {}

    def update(state: Dict[str, Any]) -> None:
        bar = bars.get(state["stage"])
        if bar is None:
            bar = bars[state["stage"]] = tqdm(total=state["total"], desc=state["stage"])
        bar.total = state["total"]
        bar.n = state["done"]
        bar.set_postfix(failed=state["failed"], calls=state["calls"], refresh=False)
        bar.refresh()

    def close() -> None:
        for bar in bars.values():
            bar.close()

    return update, close


@contextlib.contextmanager
def _sigterm_stops_the_run() -> Iterator[None]:
    """While a run works, SIGTERM raises ``RunTerminated``, which the native loop takes as the
    run's stop, as it takes Ctrl-C's ``KeyboardInterrupt``. Python runs signal handlers only
    on the main thread, and a SIGTERM the program handles or ignores is its own business:
    then nothing changes."""
    on_main_thread = threading.current_thread() is threading.main_thread()
    if not on_main_thread or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise RunTerminated("terminated by SIGTERM")

    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def compare(
    runs: Sequence[Union[Run, str, "os.PathLike[str]"]],
    names: Optional[Sequence[str]] = None,
) -> Any:
    """The version table of two or more runs over the same data, as a DataFrame: one row per
    run (``run``, ``path``), per metric its mean and 95% interval (``<metric>``,
    ``<metric>_ci_low``, ``<metric>_ci_high``) and the judge's calls and cost, as
    ``rageval compare`` computes them. A pipeline folder is read as its ``eval/`` run.
    ``run`` is the version's name: from ``names`` (one per run, in order, as ``compare
    --name``), else the name given at ``evaluate(name=...)``, else the folder's."""
    import pandas

    paths = [os.fspath(r.run_dir if isinstance(r, Run) else r) for r in runs]
    names = list(names or [])
    if len(names) > len(paths):
        raise RagevalError(
            f"{len(names)} names for {len(paths)} runs: give at most one per run, in order"
        )
    comparison = json.loads(_native.compare(paths, names))
    rows = []
    for run in comparison["runs"]:
        row: Dict[str, Any] = {"run": run.get("version") or run["name"], "path": run["path"]}
        for metric in comparison["metrics"]:
            summary = run["metrics"].get(metric) or {}
            interval = summary.get("ci95") or [None, None]
            row[metric] = summary.get("mean")
            row[f"{metric}_ci_low"] = interval[0]
            row[f"{metric}_ci_high"] = interval[1]
            row[f"{metric}_n"] = summary.get("n_scored")
        judge = run.get("judge") or {}
        row["judge_calls"] = judge.get("calls")
        row["judge_cost_usd"] = judge.get("cost_usd")
        rows.append(row)
    return pandas.DataFrame(rows)


def _pairs(values: Union[Mapping[str, Any], Sequence[str], None]) -> List[str]:
    if values is None:
        return []
    if isinstance(values, Mapping):
        return [f"{key}={value}" for key, value in values.items()]
    return [str(value) for value in values]


def _stem(path: Path) -> str:
    return path.stem or path.name


def _dataset_file(data: Any, out: Union[str, "os.PathLike[str]", None]) -> "tuple[Path, Optional[str]]":
    """A dataset path as given, or rows written as JSONL (with the SHA-256 of the file)."""
    if isinstance(data, (str, os.PathLike)):
        return Path(data), None
    lines = [json.dumps(_plain(row), ensure_ascii=False, allow_nan=False) for row in _rows(data)]
    if not lines:
        raise RagevalError("the data has no rows")
    text = ("\n".join(lines) + "\n").encode("utf-8")
    digest = hashlib.sha256(text).hexdigest()
    parent = Path(out).parent if out is not None else Path("runs")
    folder = parent / DATA_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{digest[:16]}.jsonl"
    if not path.exists():
        partial = path.with_suffix(".jsonl.part")
        partial.write_bytes(text)
        partial.replace(path)
    return path, digest


def _rows(data: Any) -> Iterable[Any]:
    """The records of a DataFrame, a Hugging Face or ragas dataset, a dict of columns, or an
    iterable of rows (duck-typed: no import of pandas, datasets or ragas)."""
    if hasattr(data, "columns") and hasattr(data, "to_dict"):
        return data.to_dict(orient="records")
    if callable(getattr(data, "to_list", None)):
        return data.to_list()
    if callable(getattr(data, "to_pandas", None)):
        return data.to_pandas().to_dict(orient="records")
    if isinstance(data, Mapping):
        columns = {key: list(values) for key, values in data.items()}
        count = len(next(iter(columns.values()), []))
        return [{key: values[i] for key, values in columns.items()} for i in range(count)]
    samples = getattr(data, "samples", None)
    if samples is not None and not isinstance(data, (list, tuple)):
        return list(samples)
    return list(data)


def _plain(value: Any) -> Any:
    """``value`` as plain JSON: numpy arrays and scalars, pydantic models and dataclasses
    converted; NaN (pandas' missing value) as null."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if callable(getattr(value, "model_dump", None)):
        return _plain(value.model_dump(exclude_none=True))
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    if callable(getattr(value, "tolist", None)):
        return _plain(value.tolist())
    if callable(getattr(value, "item", None)):
        return _plain(value.item())
    if callable(getattr(value, "isoformat", None)):
        return value.isoformat()
    if callable(getattr(value, "to_dict", None)):
        return _plain(value.to_dict())
    return str(value)
