"""Live progress from `rageval.evaluate` (issue 26, item 4): a callback hears where a run of
more than a second stands while it works, on the calling thread; a callback that raises
stops the run resumably; `progress=False` is quiet."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import rageval
from conftest import ragas_rows


def test_a_callback_hears_the_run_while_it_works(tmp_path: Path, slow_mock) -> None:
    judge = rageval.Judge(base_url=slow_mock.base_url, model="mock-chat", no_cache=True,
                          concurrency=1)
    heard = []
    caller = threading.current_thread()

    def progress(state: dict) -> None:
        assert threading.current_thread() is caller
        heard.append(state)

    rows = ragas_rows() * 2
    rageval.evaluate(rows, metrics=["faithfulness"], judge=judge, out=tmp_path / "run",
                     progress=progress)
    assert len(heard) >= 2, heard
    assert {state["stage"] for state in heard} == {"scoring"}, heard
    done = [state["done"] for state in heard]
    assert done == sorted(done), done
    # The data is read as it is scored: its size is known only with `samples`.
    assert heard[-1]["done"] == len(rows) and heard[-1]["total"] is None, heard[-1]
    assert heard[-1]["calls"] > 0 and heard[-1]["failed"] == 0, heard[-1]
    assert set(heard[0]) == {"stage", "done", "total", "failed", "calls", "cache_hits",
                             "failed_calls"}


def test_a_callback_that_raises_stops_the_run_resumably(tmp_path: Path, slow_mock) -> None:
    judge = rageval.Judge(base_url=slow_mock.base_url, model="mock-chat", no_cache=True,
                          concurrency=1)

    class Enough(Exception):
        pass

    def progress(state: dict) -> None:
        if state["done"] >= 1:
            raise Enough("seen enough")

    rows = ragas_rows() * 2
    with pytest.raises(Enough):
        rageval.evaluate(rows, metrics=["faithfulness"], judge=judge, out=tmp_path / "run",
                         progress=progress)
    run = rageval.evaluate(rows, metrics=["faithfulness"], judge=judge, out=tmp_path / "run",
                           progress=False)
    assert run.summary["samples"] == len(rows)
