"""`rageval.evaluate` against `rageval eval` on the same data: the same per-sample scores,
inside a running event loop too; judge errors as exceptions with the CLI's message."""

from __future__ import annotations

import asyncio
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pandas
import pytest

import rageval
from conftest import cli_scores, ragas_rows, write_jsonl

MODEL_FREE = ["rouge_l", "exact_match", "levenshtein", "bleu"]


def run_cli(rageval_bin: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(rageval_bin), *args, "-q"], capture_output=True, text=True)


def python_scores(run: rageval.Run) -> dict:
    frame = run.to_pandas()
    scores = {}
    for _, row in frame.iterrows():
        for metric in run.metrics:
            value = row[metric]
            scores[(row["sample_id"], metric)] = (
                None if value is None or (isinstance(value, float) and math.isnan(value))
                else value
            )
    return scores


def assert_same_scores(cli: dict, run: rageval.Run) -> None:
    ours = python_scores(run)
    assert set(ours) == set(cli)
    for key, value in cli.items():
        expected = value if isinstance(value, float) else None
        assert ours[key] == expected, key


def test_dataframe_gives_the_cli_scores_model_free(tmp_path: Path, rageval_bin: Path) -> None:
    # ragas 0.1 column names in a DataFrame; the same rows as JSONL for the CLI.
    rows = [
        {"question": r["user_input"], "contexts": r["retrieved_contexts"],
         "answer": r["response"], "ground_truth": r["reference"]}
        for r in ragas_rows()
    ]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    cli = run_cli(rageval_bin, "eval", str(data), "--metrics", ",".join(MODEL_FREE),
                  "--out", str(tmp_path / "cli"))
    assert cli.returncode == 0, cli.stderr
    run = rageval.evaluate(pandas.DataFrame(rows), metrics=MODEL_FREE, out=tmp_path / "py")
    assert_same_scores(cli_scores(tmp_path / "cli"), run)
    assert run.summary["samples"] == len(rows)
    assert run.report_html is not None and run.report_html.exists()


def test_ragas_list_gives_the_cli_scores_with_a_judge(
    tmp_path: Path, rageval_bin: Path, mock
) -> None:
    rows = ragas_rows()
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    metrics = ["faithfulness", "rouge_l"]
    cli = run_cli(rageval_bin, "eval", str(data), "--metrics", ",".join(metrics),
                  "--out", str(tmp_path / "cli"), "--judge-base-url", mock.base_url,
                  "--judge-model", "mock-chat", "--cache", str(tmp_path / "cli-cache.sqlite"))
    assert cli.returncode == 0, cli.stderr
    judge = rageval.Judge(base_url=mock.base_url, model="mock-chat",
                          cache=str(tmp_path / "py-cache.sqlite"))
    run = rageval.evaluate(rows, metrics=metrics, judge=judge, out=tmp_path / "py")
    scores = cli_scores(tmp_path / "cli")
    assert any(key[1] == "faithfulness" and isinstance(v, float) for key, v in scores.items())
    assert_same_scores(scores, run)


def test_runs_inside_a_running_event_loop(tmp_path: Path) -> None:
    async def notebook_cell() -> rageval.Run:
        # As in Jupyter: a loop is running in this thread while evaluate is called.
        asyncio.get_running_loop()
        return rageval.evaluate(ragas_rows(), metrics=["rouge_l"], out=tmp_path / "run")

    run = asyncio.run(notebook_cell())
    assert run.summary["metrics"]["rouge_l"]["n_scored"] == 3


def test_judge_error_is_an_exception_with_the_cli_message(
    tmp_path: Path, rageval_bin: Path, locked_mock
) -> None:
    rows = ragas_rows()
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    out = tmp_path / "run"
    cli = run_cli(rageval_bin, "eval", str(data), "--metrics", "faithfulness", "--out", str(out),
                  "--judge-base-url", locked_mock.base_url, "--judge-model", "mock-chat",
                  "--no-cache")
    assert cli.returncode == 4, cli.stderr
    shutil.rmtree(out)
    judge = rageval.Judge(base_url=locked_mock.base_url, model="mock-chat", no_cache=True)
    with pytest.raises(rageval.JudgeError) as raised:
        rageval.evaluate(data, metrics=["faithfulness"], judge=judge, out=out)
    message = str(raised.value)
    last_cli_line = [line for line in cli.stderr.splitlines() if line.strip()][-1]
    assert last_cli_line.strip() in message, (cli.stderr, message)
    assert raised.value.reason == "judge"
    assert raised.value.run_dir == out


def test_bad_data_is_a_rageval_error(tmp_path: Path) -> None:
    with pytest.raises(rageval.RagevalError, match="no column is the question"):
        rageval.evaluate([{"answer": "no question here"}], metrics=["rouge_l"],
                         out=tmp_path / "run")


def test_to_pandas_has_a_row_per_sample(tmp_path: Path) -> None:
    rows = ragas_rows()
    run = rageval.evaluate(rows, metrics=["rouge_l", "exact_match"], out=tmp_path / "run")
    frame = run.to_pandas()
    assert len(frame) == len(rows)
    assert list(frame.columns) == [
        "sample_id", "rouge_l", "rouge_l_reason", "exact_match", "exact_match_reason",
    ]
    assert frame["rouge_l"].between(0, 1).all()


def test_same_rows_resume_the_same_default_run(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    first = rageval.evaluate(ragas_rows(), metrics=["rouge_l"])
    second = rageval.evaluate(ragas_rows(), metrics=["rouge_l"])
    assert first.run_dir == second.run_dir
    assert any("resuming" in note for note in second.notes)


def test_compare_gives_the_version_table(tmp_path: Path) -> None:
    rows = ragas_rows()
    first = rageval.evaluate(rows, metrics=["rouge_l"], out=tmp_path / "v1")
    second = rageval.evaluate(rows, metrics=["rouge_l", "bleu"], out=tmp_path / "v2")
    table = rageval.compare([first, second.run_dir])
    assert list(table["run"]) == ["v1", "v2"]
    assert table.loc[0, "rouge_l"] == pytest.approx(first.summary["metrics"]["rouge_l"]["mean"])
    assert math.isnan(table.loc[0, "bleu"]) or table.loc[0, "bleu"] is None


def test_compare_names_versions_and_reads_a_pipeline_folder_as_its_eval(tmp_path: Path) -> None:
    # Issue 25: Python's compare had no version names, and a pipeline folder was refused.
    rows = ragas_rows()
    rageval.evaluate(rows, metrics=["rouge_l"], out=tmp_path / "pipeA" / "eval", name="V1.0")
    second = rageval.evaluate(rows, metrics=["rouge_l"], out=tmp_path / "v11")
    table = rageval.compare([tmp_path / "pipeA", second])
    assert list(table["run"]) == ["V1.0", "v11"]
    named = rageval.compare([tmp_path / "pipeA", second], names=["base", "V1.1 (rerank)"])
    assert list(named["run"]) == ["base", "V1.1 (rerank)"]
    with pytest.raises(rageval.RagevalError, match="at most one per run"):
        rageval.compare([second, second], names=["a", "b", "c"])


def test_results_parquet(tmp_path: Path) -> None:
    run = rageval.evaluate(ragas_rows(), metrics=["rouge_l"], out=tmp_path / "run",
                           results_format="parquet")
    assert run.results_parquet is not None
    assert run.results_parquet.read_bytes()[:4] == b"PAR1"


def test_the_package_installs_the_rageval_command() -> None:
    command = Path(sys.executable).parent / "rageval"
    listed = subprocess.run([str(command), "metrics"], capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert "faithfulness" in listed.stdout
