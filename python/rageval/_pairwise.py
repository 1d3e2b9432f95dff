"""``rageval.pairwise``: versions' answers judged head to head, as ``rageval pairwise`` judges
them (the same engine, not a subprocess), and the run's figures as DataFrames — one row per
pair of versions (``pairwise``), one per question and pair (``pairwise_verdicts``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _native

if TYPE_CHECKING:
    from . import Judge, Run

#: The figures of each pair, in the DataFrame's column order after ``a`` and ``b``.
_COUNTS = ("n", "wins", "ties", "losses", "failed")


def pairwise(
    versions: Sequence[Union["Run", str, "os.PathLike[str]"]],
    names: Optional[Sequence[str]] = None,
    judge: Optional["Judge"] = None,
    out: Union[str, "os.PathLike[str]", None] = None,
    *,
    criterion: Optional[str] = None,
    metric_files: Optional[Sequence[Union[str, "os.PathLike[str]"]]] = None,
    samples: Optional[int] = None,
    seed: Optional[int] = None,
    bootstrap_resamples: Optional[int] = None,
    format: Optional[str] = None,
    field_map: Union[Mapping[str, str], Sequence[str], None] = None,
    sheet: Optional[str] = None,
    overwrite: bool = False,
    retry_failed: bool = False,
    max_failed: Union[float, str] = 0.10,
) -> Any:
    """Judges two or more versions' answers to the same questions head to head and returns
    one row per pair of versions (each earlier one ``a`` against each later one ``b``):
    ``n``, ``wins``, ``ties``, ``losses`` (from ``a``'s side), ``failed``, ``win_rate``
    with ``win_rate_ci_low``/``win_rate_ci_high``, ``p_value``, ``reading``, ``flip_rate``,
    ``first_seat_share``, ``longer_win_rate`` and ``held_equal_win_rate`` — the figures
    of ``summary.json`` (docs/pairwise.md). ``frame.attrs["run_dir"]`` is the run directory;
    ``pairwise_verdicts(run_dir)`` gives every question's two verdicts.

    ``versions`` are ``Run`` objects, run directories, datasets with answers or pipeline
    folders; ``names`` names them in order (``--name``); ``judge`` is a chat ``Judge``. Every
    pair is asked in both seat orders. The run directory ``out`` (default
    ``runs/<first>-vs-<second>-pairwise``) is resumed by the same call; ``criterion`` names a
    rubric metric of ``metric_files`` (``--criterion``). Raises as ``evaluate`` does:
    ``RagevalError``, ``RunStopped`` (a cap), ``JudgeError`` (a judge that never answered,
    or more than ``max_failed`` of the pairs failed)."""
    from . import Run, _judge_spec, _pairs, _percentage, _sigterm_stops_the_run

    paths = [os.fspath(v.run_dir if isinstance(v, Run) else v) for v in versions]
    names = list(names or [])
    if out is None:
        shown = names + [Path(p).stem or Path(p).name for p in paths[len(names):]]
        out = Path("runs") / f"{shown[0]}-vs-{shown[1]}-pairwise"
    options = {
        "names": names,
        "out": os.fspath(out),
        "format": format,
        "field_map": _pairs(field_map),
        "sheet": sheet,
        "samples": samples,
        "overwrite": overwrite,
        "retry_failed": retry_failed,
        "seed": seed,
        "bootstrap_resamples": bootstrap_resamples,
        "criterion": criterion,
        "metric_files": [os.fspath(file) for file in metric_files or []],
        "max_failed": _percentage(max_failed),
    }
    with _sigterm_stops_the_run():
        done = _native.pairwise(paths, options, _judge_spec(judge))
    return pairwise_table(done["run_dir"])


def pairwise_table(run_dir: Union[str, "os.PathLike[str]"]) -> Any:
    """A finished ``pairwise`` run's ``summary.json`` as one row per pair of versions."""
    import pandas

    summary = json.loads((Path(run_dir) / "summary.json").read_text(encoding="utf-8"))
    rows = []
    for pair in summary["pairs"]:
        row: Dict[str, Any] = {"a": pair["a"], "b": pair["b"]}
        row.update({key: pair.get(key) for key in _COUNTS})
        interval = pair.get("win_rate_ci95") or [None, None]
        position = pair.get("position") or {}
        length = pair.get("length") or {}
        row.update(
            win_rate=pair.get("win_rate"),
            win_rate_ci_low=interval[0],
            win_rate_ci_high=interval[1],
            p_value=pair.get("p_value"),
            reading=pair.get("reading"),
            flip_rate=position.get("flip_rate"),
            first_seat_share=position.get("first_seat_share"),
            longer_win_rate=length.get("longer_win_rate"),
            held_equal_win_rate=(length.get("held_equal") or {}).get("win_rate"),
        )
        rows.append(row)
    frame = pandas.DataFrame(rows)
    frame.attrs["run_dir"] = os.fspath(run_dir)
    return frame


def pairwise_verdicts(run_dir: Union[str, "os.PathLike[str]"]) -> Any:
    """A ``pairwise`` run's journal as one row per question and pair of versions:
    ``question_id``, ``question``, ``a``, ``b``, ``a_first`` and ``b_first`` (the version
    each verdict named, ``tie`` or ``failed``) with ``a_first_reason`` and
    ``b_first_reason`` (or the error), ``result`` (the winning version, ``tie`` or
    ``failed``) and ``flipped``. The answers themselves are in the run's ``results.xlsx``."""
    import pandas

    run_dir = Path(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    names = [version["name"] for version in summary["versions"]]
    rows: List[Dict[str, Any]] = []
    with open(run_dir / "pairwise.jsonl", encoding="utf-8") as journal:
        for line in journal:
            if not line.strip():
                continue
            question = json.loads(line)
            for pair in question["pairs"]:
                a, b = names[pair["a"]], names[pair["b"]]
                result = {"a": a, "b": b, "tie": "tie"}.get(pair.get("result") or "", "failed")
                rows.append({
                    "question_id": question["question_id"],
                    "question": question["question"],
                    "a": a,
                    "b": b,
                    "a_first": _named(pair["a_first"], a, b),
                    "a_first_reason": _words(pair["a_first"]),
                    "b_first": _named(pair["b_first"], b, a),
                    "b_first_reason": _words(pair["b_first"]),
                    "result": result,
                    "flipped": bool(pair.get("flipped")),
                })
    return pandas.DataFrame(rows)


def _named(verdict: Mapping[str, Any], first: str, second: str) -> str:
    if verdict.get("status") != "answered":
        return "failed"
    return {"first": first, "second": second}.get(verdict.get("preferred"), "tie")


def _words(verdict: Mapping[str, Any]) -> str:
    return str(verdict.get("reason") if verdict.get("status") == "answered" else verdict.get("error"))
