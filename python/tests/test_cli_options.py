"""`rageval.evaluate` with the CLI's version name, shard and labels options (issue 26, item
4): each does what its flag does on `rageval eval`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rageval
from conftest import ragas_rows

HEURISTIC = rageval.Judge(local="heuristic", no_cache=True)


def manifest(run: rageval.Run) -> dict:
    return json.loads((Path(run.run_dir) / "manifest.json").read_text(encoding="utf-8"))


def test_a_version_name_is_kept_in_the_manifest(tmp_path: Path) -> None:
    run = rageval.evaluate(ragas_rows(), metrics=["rouge_l"], out=tmp_path / "v11",
                           name="V1.1 (rerank)")
    assert manifest(run)["version_name"] == "V1.1 (rerank)"


def test_shards_split_the_rows_and_auto_names_the_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = ragas_rows() * 4
    rows = [{**row, "id": f"q{i}"} for i, row in enumerate(rows)]
    counts = [
        rageval.evaluate(rows, metrics=["rouge_l"], out=tmp_path / f"s{i}", shard=f"{i}/2")
        .summary["samples"]
        for i in (1, 2)
    ]
    assert sum(counts) == len(rows) and all(counts), counts
    for name in ("JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(rageval.RagevalError, match="SLURM_ARRAY_TASK_ID"):
        rageval.evaluate(rows, metrics=["rouge_l"], out=tmp_path / "auto", shard="auto")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    auto = rageval.evaluate(rows, metrics=["rouge_l"], out=tmp_path / "auto", shard="auto")
    assert auto.summary["samples"] == counts[0]


def test_labels_calibrate_the_means(tmp_path: Path) -> None:
    rows = ragas_rows()
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(json.dumps({"id": str(i), "label": i != 3}) + "\n" for i in (1, 2, 3)),
        encoding="utf-8",
    )
    run = rageval.evaluate(rows, metrics=["faithfulness"], judge=HEURISTIC,
                           out=tmp_path / "run", labels=labels, label_metric="faithfulness")
    assert "faithfulness" in run.summary["calibrated"], run.summary.get("calibrated")
    with pytest.raises(rageval.RagevalError, match="label_scale"):
        rageval.evaluate(rows, metrics=["faithfulness"], judge=HEURISTIC,
                         out=tmp_path / "run2", labels=labels, label_scale="five")


def test_format_and_max_failed_are_parsed_by_the_clis_rules(tmp_path: Path) -> None:
    rows = ragas_rows()
    with pytest.raises(rageval.RagevalError, match="invalid format `avro`") as refused:
        rageval.evaluate(rows, metrics=["rouge_l"], out=tmp_path / "f", format="avro")
    for name in ("jsonl", "parquet", "openinference", "langfuse"):
        assert name in str(refused.value), refused.value
    for given in (0.5, "50%", "50"):
        run = rageval.evaluate(rows, metrics=["rouge_l"], out=tmp_path / "m", max_failed=given)
        assert run.summary["samples"] == len(rows)
    with pytest.raises(rageval.RagevalError, match="invalid max_failed `150%`: expected a percentage"):
        rageval.evaluate(rows, metrics=["rouge_l"], out=tmp_path / "m", max_failed=1.5)
