"""`rageval.score_batch` (issue 26, item 1): a batch's rows back with a fixed set of result
columns, cell for cell what `rageval eval` scores on the same rows, the same on every call;
a row the data cannot hold carries its error and the others their scores; no run directory
is left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pandas
import pytest

import rageval
from conftest import cli_scores, ragas_rows, write_jsonl

METRICS = ["faithfulness", "rouge_l"]
HEURISTIC = rageval.Judge(local="heuristic", no_cache=True)


def test_the_result_columns_are_fixed_and_typed() -> None:
    assert rageval.result_columns(["faithfulness"]) == [
        "faithfulness", "faithfulness_status", "faithfulness_reason", "faithfulness_error",
    ]
    frame = rageval.score_batch(pandas.DataFrame(ragas_rows()), METRICS, HEURISTIC)
    own = list(ragas_rows()[0])
    assert list(frame.columns) == own + rageval.result_columns(METRICS)
    assert str(frame["faithfulness"].dtype) == "Float64"
    assert str(frame["rouge_l_status"].dtype) == "string"


def test_scores_equal_the_cli_on_the_same_rows(
    tmp_path: Path, rageval_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    monkeypatch.chdir(tmp_path)
    rows = ragas_rows()
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    cli = subprocess.run(
        [str(rageval_bin), "eval", str(data), "--metrics", ",".join(METRICS), "--judge",
         "heuristic", "--out", str(tmp_path / "cli"), "-q"],
        capture_output=True, text=True,
    )
    assert cli.returncode == 0, cli.stderr
    expected = cli_scores(tmp_path / "cli")
    before = set(os.listdir(tmp_path))
    scored = rageval.score_batch(rows, METRICS, HEURISTIC)
    assert set(os.listdir(tmp_path)) == before, "no run directory is left behind"
    for position, row in enumerate(scored):
        for metric in METRICS:
            want = expected[(str(position + 1), metric)]
            assert row[f"{metric}_status"] == "score", row
            assert row[metric] == want, (position, metric)
            assert row[f"{metric}_error"] is None
    # The same rows give the same result on every call.
    assert rageval.score_batch(rows, METRICS, HEURISTIC) == scored


def test_a_row_the_data_cannot_hold_carries_its_error_and_the_others_score() -> None:
    rows = ragas_rows()
    rows[1] = {key: value for key, value in rows[1].items() if key != "user_input"}
    # The rows' own ids need not be unique within a batch.
    frame = pandas.DataFrame([{**row, "id": "same"} for row in rows])
    scored = rageval.score_batch(frame, METRICS, HEURISTIC)
    assert list(scored["faithfulness_status"]) == ["score", "failed", "score"]
    error = scored["rouge_l_error"][1]
    assert error.startswith("row 1: "), error
    assert "question" in error, error
    assert scored["faithfulness"].isna().tolist() == [False, True, False]
    assert pandas.isna(scored["rouge_l_error"][0])


def test_metrics_must_be_named() -> None:
    with pytest.raises(rageval.RagevalError, match="metrics named"):
        rageval.score_batch(ragas_rows(), [], HEURISTIC)


def test_several_batches_at_once_in_one_process_give_each_its_own_scores() -> None:
    from concurrent.futures import ThreadPoolExecutor

    rows = ragas_rows()
    batches = [rows, rows[:2], rows[1:]]
    alone = [rageval.score_batch(batch, METRICS, HEURISTIC) for batch in batches]
    with ThreadPoolExecutor(max_workers=3) as pool:
        together = list(pool.map(lambda b: rageval.score_batch(b, METRICS, HEURISTIC), batches))
    assert together == alone


def test_summarize_of_the_gathered_batches_is_the_run_s_summary(tmp_path: Path) -> None:
    # Three rows scored in two batches (as two workers would), gathered back, summarise to
    # what `evaluate` writes in summary.json for the same rows scored in one run.
    rows = ragas_rows()
    gathered = pandas.concat(
        [rageval.score_batch(pandas.DataFrame(rows[:2]), METRICS, HEURISTIC),
         rageval.score_batch(pandas.DataFrame(rows[2:]), METRICS, HEURISTIC)],
        ignore_index=True,
    )
    ours = rageval.summarize(gathered, METRICS)
    run = rageval.evaluate(rows, metrics=METRICS, judge=HEURISTIC, out=tmp_path / "run")
    theirs = run.summary
    assert ours["samples"] == theirs["samples"] == 3
    assert ours["metric_order"] == theirs["metric_order"]
    for metric in METRICS:
        for key in ("mean", "ci95", "n", "n_scored", "n_undefined", "n_failed", "min", "max"):
            assert ours["metrics"][metric][key] == theirs["metrics"][metric][key], (metric, key)
    assert ours["bootstrap"] == theirs["bootstrap"]
    with pytest.raises(rageval.RagevalError, match="_status"):
        rageval.summarize(gathered.drop(columns=["rouge_l_status"]), METRICS)


@pytest.fixture(scope="module")
def garbage_mock():
    from conftest import _start_mock

    yield from _start_mock("--garbage-rate", "1.0")


@pytest.fixture(scope="module")
def thinking_mock():
    from conftest import _start_mock

    yield from _start_mock("--reasoning", "think")


def test_a_judge_whose_every_answer_is_unusable_raises_not_a_batch_of_failures(
    garbage_mock,
) -> None:
    judge = rageval.Judge(base_url=garbage_mock.base_url, model="mock-chat", no_cache=True)
    rows = ragas_rows() * 6
    with pytest.raises(rageval.JudgeError):
        rageval.score_batch(rows, ["faithfulness"], judge)


def test_a_reasoning_judge_scores_as_the_plain_one(mock, thinking_mock) -> None:
    rows = ragas_rows()
    plain = rageval.score_batch(
        rows, ["faithfulness"],
        rageval.Judge(base_url=mock.base_url, model="mock-chat", no_cache=True))
    thinking = rageval.score_batch(
        rows, ["faithfulness"],
        rageval.Judge(base_url=thinking_mock.base_url, model="mock-chat", no_cache=True))
    assert [r["faithfulness"] for r in thinking] == [r["faithfulness"] for r in plain]
    assert all(r["faithfulness_status"] == "score" for r in thinking), thinking
