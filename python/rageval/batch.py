"""``score_batch``: scores for a batch of rows, as a function an engine maps over its batches
(Ray Data's ``map_batches``, Spark's ``mapInPandas``, a plain loop), with no run directory to
keep.

It runs ``evaluate`` — the same engine, judge settings and shared answer cache — in a
temporary directory it removes, and returns the batch's rows unchanged with four columns per
metric (see ``result_columns``). It never raises for one row the data cannot hold (a row
without a question): that row carries the error, every other row its scores. A judge that
stops answering, a cap reached or a bad option still raise, as in ``evaluate``: a batch full
of failures must not pass for scores.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import RagevalError, RunStopped

#: The column that numbers the batch's rows for the engine (the rows' own ids need not be
#: unique across a batch); it never reaches the returned rows.
ROW_COLUMN = "_rageval_row"

#: The suffixes of the columns each metric adds, in order, and what they hold.
METRIC_COLUMNS = (
    ("", "float64: the score; null unless the status is `score`"),
    ("_status", "string: `score`, `undefined` or `failed`"),
    ("_reason", "string: the judge's reasons for a score, why it is undefined; else null"),
    ("_error", "string: why the cell failed (the judge's error, or the row the data cannot "
               "hold); else null"),
)


def result_columns(metrics: Sequence[str]) -> List[str]:
    """The columns ``score_batch`` adds, in order: for each metric ``<metric>``,
    ``<metric>_status``, ``<metric>_reason`` and ``<metric>_error``."""
    return [f"{metric}{suffix}" for metric in metrics for suffix, _ in METRIC_COLUMNS]


def score_batch(
    batch: Any,
    metrics: Sequence[str],
    judge: Any = None,
    *,
    field_map: Union[Mapping[str, str], Sequence[str], None] = None,
    top_k: Optional[int] = None,
) -> Any:
    """Scores every row of ``batch`` with ``metrics`` and returns the rows with the result
    columns (``result_columns(metrics)``) after their own.

    ``batch`` is a pandas DataFrame (returned as one, the scores as nullable ``Float64``), an
    Arrow ``Table`` or ``RecordBatch`` (returned as the same kind; needs ``pyarrow``), or a
    list of dicts (returned as a list of dicts). Rows follow ``evaluate``'s field names and
    ``field_map``; they are told apart by their position, so their own ids need not be
    unique. ``metrics`` must be named: every row gets the same columns. The same rows and
    judge give the same result on every call; answers come from the judge's cache when an
    earlier call asked the same, in any process on the machine.
    """
    from . import evaluate

    metrics = list(metrics)
    if not metrics:
        raise RagevalError("score_batch needs its metrics named: every row gets their columns")
    rows, rebuild = _rows_of(batch)
    results: List[Dict[str, Any]] = [_empty(metrics) for _ in rows]
    pending = list(range(len(rows)))
    mapped = _with_row_ids(field_map)
    with tempfile.TemporaryDirectory(prefix="rageval-batch-") as folder:
        while pending:
            data = Path(folder) / "batch.jsonl"
            _write(data, rows, pending)
            out = Path(folder) / "run"
            try:
                run = evaluate(os.fspath(data), metrics=metrics, judge=judge, out=out,
                               field_map=mapped, top_k=top_k, overwrite=True, reports=False,
                               max_failed=1.0, progress=False)
            except RunStopped:
                raise
            except RagevalError as error:
                line = _bad_line(error, data)
                if line is None:
                    raise
                bad = pending.pop(line - 1)
                # The message names the batch's row, not a line of a file the caller never saw.
                message = str(error).replace(f"{os.fspath(data)}:{line}", f"row {bad}")
                results[bad] = _row_error(metrics, message)
                continue
            for record in run.results():
                index = int(record["sample_id"])
                _fill(results[index], record)
            break
    return rebuild([{**row, **result} for row, result in zip(rows, results)], metrics)


def _with_row_ids(field_map: Union[Mapping[str, str], Sequence[str], None]) -> List[str]:
    if field_map is None:
        pairs: List[str] = []
    elif isinstance(field_map, Mapping):
        pairs = [f"{key}={value}" for key, value in field_map.items() if key != "id"]
    else:
        pairs = [str(pair) for pair in field_map if not str(pair).startswith("id=")]
    return pairs + [f"id={ROW_COLUMN}"]


def _write(path: Path, rows: List[Dict[str, Any]], indexes: List[int]) -> None:
    from . import _plain

    with open(path, "w", encoding="utf-8") as file:
        for index in indexes:
            row = {**_plain(rows[index]), ROW_COLUMN: str(index)}
            file.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")


def _bad_line(error: RagevalError, data: Path) -> Optional[int]:
    """The 1-based line of ``data`` a data error names, when it names one."""
    found = re.search(re.escape(os.fspath(data)) + r":(\d+)", str(error))
    return int(found.group(1)) if found else None


def _empty(metrics: Sequence[str]) -> Dict[str, Any]:
    return {column: None for column in result_columns(metrics)}


def _row_error(metrics: Sequence[str], message: str) -> Dict[str, Any]:
    result = _empty(metrics)
    for metric in metrics:
        result[f"{metric}_status"] = "failed"
        result[f"{metric}_error"] = message
    return result


def _fill(result: Dict[str, Any], record: Mapping[str, Any]) -> None:
    from . import _reason

    metric = record["metric"]
    status = record["status"]
    result[f"{metric}_status"] = status
    if status == "score":
        result[metric] = float(record["value"])
        result[f"{metric}_reason"] = _reason(record)
    elif status == "undefined":
        result[f"{metric}_reason"] = record.get("reason")
    else:
        result[f"{metric}_error"] = record.get("error")


def _rows_of(batch: Any) -> Tuple[List[Dict[str, Any]], Any]:
    """The rows of ``batch`` as dicts, and how to give rows back in ``batch``'s kind."""
    if hasattr(batch, "schema") and callable(getattr(batch, "to_pylist", None)):
        import pyarrow

        kind = type(batch)

        def arrow(rows: List[Dict[str, Any]], metrics: Sequence[str]) -> Any:
            fields = [field for field in batch.schema]
            for metric in metrics:
                fields += [pyarrow.field(metric, pyarrow.float64())]
                fields += [pyarrow.field(f"{metric}{suffix}", pyarrow.string())
                           for suffix, _ in METRIC_COLUMNS[1:]]
            schema = pyarrow.schema(fields)
            if kind is pyarrow.RecordBatch:
                return pyarrow.RecordBatch.from_pylist(rows, schema=schema)
            return pyarrow.Table.from_pylist(rows, schema=schema)

        return batch.to_pylist(), arrow
    if hasattr(batch, "columns") and hasattr(batch, "to_dict"):
        import pandas

        own = list(batch.columns)

        def frame(rows: List[Dict[str, Any]], metrics: Sequence[str]) -> Any:
            result = pandas.DataFrame(rows, columns=own + result_columns(metrics),
                                      index=batch.index)
            for metric in metrics:
                result[metric] = result[metric].astype("Float64")
                for suffix, _ in METRIC_COLUMNS[1:]:
                    result[f"{metric}{suffix}"] = result[f"{metric}{suffix}"].astype("string")
            return result

        return batch.to_dict(orient="records"), frame
    rows = [dict(row) for row in batch]
    return rows, lambda rows, metrics: rows


def summarize(
    scored: Any,
    metrics: Sequence[str],
    *,
    bootstrap_resamples: Optional[int] = None,
    seed: Optional[int] = None,
) -> Dict[str, Any]:
    """``summary.json``'s figures of rows ``score_batch`` scored — all of a job's batches
    gathered back (a DataFrame, an Arrow table or a list of dicts): per metric the mean with
    its 95% bootstrap interval, the counts of scored, undefined and failed cells and their
    reasons, computed as ``rageval eval`` computes them (the same defaults for
    ``bootstrap_resamples`` and ``seed``), so they equal the run's over the same rows."""
    from . import _native

    rows, _ = _rows_of(scored)
    records = []
    for position, row in enumerate(rows):
        for metric in metrics:
            status = row.get(f"{metric}_status")
            record: Dict[str, Any] = {"sample_id": str(position), "metric": metric}
            if status == "score":
                record.update(status="score", value=float(row[metric]))
            elif status == "undefined":
                record.update(status="undefined", reason=str(row.get(f"{metric}_reason")))
            elif status == "failed":
                record.update(status="failed", error=str(row.get(f"{metric}_error")))
            else:
                raise RagevalError(
                    f"row {position}: `{metric}_status` is {status!r}, not one of score, "
                    "undefined, failed: pass rows as score_batch returned them"
                )
            records.append(record)
    summary = json.loads(_native.summarize(
        json.dumps(records, allow_nan=False),
        list(metrics),
        bootstrap_resamples,
        seed,
    ))
    return summary
