"""The shapes `evaluate` accepts, duck-typed: Hugging Face and ragas datasets are stood in
for by classes with their methods (neither library is a dependency)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

import pandas

import rageval
from conftest import ragas_rows


class HuggingFaceLike:
    """`datasets.Dataset`: `to_list()` gives the rows."""

    def __init__(self, rows: list) -> None:
        self._rows = rows

    def to_list(self) -> list:
        return list(self._rows)


@dataclass
class SingleTurnSample:
    """A ragas 0.2 sample (a pydantic model there; `model_dump` is what is used)."""

    user_input: str
    retrieved_contexts: List[str]
    response: str
    reference: Optional[str] = None

    def model_dump(self, exclude_none: bool = False) -> dict:
        data = dict(self.__dict__)
        return {k: v for k, v in data.items() if v is not None} if exclude_none else data


class EvaluationDatasetLike:
    """ragas `EvaluationDataset`: `.samples`, iterable."""

    def __init__(self, samples: list) -> None:
        self.samples = samples

    def __iter__(self):
        return iter(self.samples)


def means(run: rageval.Run) -> dict:
    return {m: run.summary["metrics"][m]["mean"] for m in run.metrics}


def test_every_shape_scores_like_the_list_of_dicts(tmp_path: Path) -> None:
    rows = ragas_rows()
    metrics = ["rouge_l", "levenshtein"]
    expected = means(rageval.evaluate(rows, metrics=metrics, out=tmp_path / "list"))
    shapes = {
        "hf": HuggingFaceLike(rows),
        "ragas": EvaluationDatasetLike([SingleTurnSample(**row) for row in rows]),
        "columns": {key: [row[key] for row in rows] for key in rows[0]},
        "frame": pandas.DataFrame(rows),
    }
    for name, data in shapes.items():
        assert means(rageval.evaluate(data, metrics=metrics, out=tmp_path / name)) == expected, name


def test_missing_values_and_numpy_cells_become_json(tmp_path: Path) -> None:
    frame = pandas.DataFrame(ragas_rows())
    frame.loc[1, "reference"] = float("nan")
    run = rageval.evaluate(frame, metrics=["rouge_l"], out=tmp_path / "run")
    outcomes = {row["sample_id"]: row for row in run.rows()}
    assert outcomes["2"]["rouge_l"] is None and outcomes["2"]["rouge_l_reason"]
