"""Ctrl-C and SIGTERM during `rageval.evaluate`: the run stops after the samples in flight
(KeyboardInterrupt, or RunTerminated and exit 143), finished cells kept, and the same call
resumes the run to the end.

The child sets its own signal dispositions, so the tests pass wherever the suite runs: a
background job of a non-interactive shell (`nohup ./scripts/test.sh &`) starts with SIGINT
ignored, and a child inheriting that never gets `KeyboardInterrupt` (issue 26, item 5). The
signal is sent once the first cells are journaled, not after a fixed wait."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import rageval

SCRIPT = """
import json, signal, sys
# Python's own handlers whatever this process inherited: an ignored SIGINT would never
# become KeyboardInterrupt, and evaluate takes SIGTERM only from the default disposition.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
import rageval
rows = json.load(open(sys.argv[1]))
judge = rageval.Judge(base_url=sys.argv[2], model="mock-chat", cache=sys.argv[4], concurrency=2)
print("started", flush=True)
try:
    rageval.evaluate(rows, metrics=["faithfulness"], judge=judge, out=sys.argv[3])
except KeyboardInterrupt as stop:
    print("interrupted:", stop, flush=True)
    sys.exit(130)
except rageval.RunTerminated as stop:
    print("terminated:", stop, flush=True)
    raise
"""

#: How long the child may take to journal its first cells.
FIRST_CELLS_DEADLINE_S = 60.0


def _rows() -> List[Dict[str, object]]:
    return [
        {"question": f"question {i}?", "contexts": [f"context {i}."],
         "answer": f"Statement {i} one. Statement {i} two.", "reference": f"reference {i}"}
        for i in range(40)
    ]


def _journaled(out: Path) -> int:
    try:
        return (out / "results.jsonl").read_text(encoding="utf-8").count("\n")
    except FileNotFoundError:
        return 0


def _stop_halfway(tmp_path: Path, base_url: str, stop: signal.Signals) -> subprocess.CompletedProcess:
    """Starts an evaluation in a child, sends it `stop` once a cell is journaled, and returns
    how the child ended."""
    data = tmp_path / "rows.json"
    data.write_text(json.dumps(_rows()), encoding="utf-8")
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    child = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(data), base_url, str(out), str(cache)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "started"
        deadline = time.monotonic() + FIRST_CELLS_DEADLINE_S
        while _journaled(out) < 1:
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "no cell journaled in time"
            time.sleep(0.02)
        child.send_signal(stop)
        stdout, stderr = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)


def _resumes_to_the_end(tmp_path: Path, base_url: str) -> None:
    """The run left in `tmp_path` holds some cells, whole, and the same call finishes it."""
    out, rows = tmp_path / "run", _rows()
    journal = (out / "results.jsonl").read_text(encoding="utf-8")
    assert journal.endswith("\n")
    kept = [json.loads(line) for line in journal.splitlines()]
    assert 0 < len(kept) < len(rows)

    judge = rageval.Judge(base_url=base_url, model="mock-chat",
                          cache=str(tmp_path / "cache.sqlite"), concurrency=8)
    run = rageval.evaluate(rows, metrics=["faithfulness"], judge=judge, out=out)
    assert any("resuming" in note for note in run.notes)
    assert len(run.to_pandas()) == len(rows)
    final = [json.loads(line) for line in
             (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    for cell in kept:
        assert cell in final


def test_ctrl_c_stops_resumably(tmp_path: Path, slow_mock) -> None:
    ended = _stop_halfway(tmp_path, slow_mock.base_url, signal.SIGINT)
    assert ended.returncode == 130, (ended.stdout, ended.stderr)
    assert "interrupted:" in ended.stdout
    assert "run the same command again to resume" in ended.stdout
    _resumes_to_the_end(tmp_path, slow_mock.base_url)


def test_sigterm_stops_resumably_with_exit_143(tmp_path: Path, slow_mock) -> None:
    ended = _stop_halfway(tmp_path, slow_mock.base_url, signal.SIGTERM)
    assert ended.returncode == 143, (ended.stdout, ended.stderr)
    assert "terminated:" in ended.stdout
    assert "run the same command again to resume" in ended.stdout
    assert "Traceback" not in ended.stderr
    _resumes_to_the_end(tmp_path, slow_mock.base_url)
