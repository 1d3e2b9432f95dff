"""Ctrl-C during `rageval.evaluate`: KeyboardInterrupt, finished cells kept, and the same call
resumes the run to the end."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import rageval

SCRIPT = """
import json, sys, rageval
rows = json.load(open(sys.argv[1]))
judge = rageval.Judge(base_url=sys.argv[2], model="mock-chat", cache=sys.argv[4], concurrency=2)
print("started", flush=True)
try:
    rageval.evaluate(rows, metrics=["faithfulness"], judge=judge, out=sys.argv[3])
except KeyboardInterrupt as stop:
    print("interrupted:", stop, flush=True)
    sys.exit(130)
"""


def test_ctrl_c_stops_resumably(tmp_path: Path, slow_mock) -> None:
    rows = [
        {"question": f"question {i}?", "contexts": [f"context {i}."],
         "answer": f"Statement {i} one. Statement {i} two.", "reference": f"reference {i}"}
        for i in range(40)
    ]
    data = tmp_path / "rows.json"
    data.write_text(json.dumps(rows), encoding="utf-8")
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    child = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(data), slow_mock.base_url, str(out), str(cache)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "started"
    time.sleep(3)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, (stdout, stderr)
    assert "interrupted:" in stdout and "run the same command again to resume" in stdout
    journaled = (out / "results.jsonl").read_text(encoding="utf-8").count("\n")
    assert 0 < journaled < len(rows)

    judge = rageval.Judge(base_url=slow_mock.base_url, model="mock-chat", cache=str(cache),
                          concurrency=8)
    run = rageval.evaluate(rows, metrics=["faithfulness"], judge=judge, out=out)
    assert any("resuming" in note for note in run.notes)
    assert len(run.to_pandas()) == len(rows)
