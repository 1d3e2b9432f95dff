"""`rageval.evaluate(mlflow=URL)` against a real MLflow tracking server started by
`scripts/setup-trace-servers.sh start mlflow` (SQLite, `--serve-artifacts`): the run's
params and per-metric means are read back through MLflow's REST API, logging the same run
again writes nothing, and an unreachable server leaves the run complete with a warning.

The server runs when RAGEVAL_TRACE_SERVERS_VENV names the venv that
`scripts/setup-trace-servers.sh install` made (scripts/test.sh and CI set it); otherwise the
tests that need it skip, saying why."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

import rageval
from conftest import REPO

DATA = REPO / "examples" / "fiqa-30.jsonl"
METRICS = ["rouge_l", "exact_match"]
# Phoenix took 49 s to answer on two busy cores; MLflow starts faster, the bound is generous.
START_TIMEOUT_S = 240


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer) if answer.headers.get_content_type() == "application/json" \
            else answer.read()


@pytest.fixture
def mlflow_server(tmp_path: Path) -> Iterator[str]:
    venv = os.environ.get("RAGEVAL_TRACE_SERVERS_VENV")
    if not venv:
        pytest.skip("RAGEVAL_TRACE_SERVERS_VENV is not set (scripts/test.sh sets it after "
                    "`scripts/setup-trace-servers.sh install`; CI runs this test)")
    storage = tmp_path / "mlflow"
    process = subprocess.Popen(
        ["bash", str(REPO / "scripts" / "setup-trace-servers.sh"), "start", "mlflow",
         str(storage)],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        # Its own process group: MLflow's uvicorn worker outlives a killed
        # parent, so the whole group is stopped.
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                _get(f"{url}/health")
                break
            except (urllib.error.URLError, ConnectionError):
                log = storage / "server.log"
                assert process.poll() is None, log.read_text() if log.exists() else ""
                assert time.monotonic() < deadline, f"{url}/health did not answer"
                time.sleep(0.25)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def _run(url: str, run_id: str) -> Dict[str, Any]:
    query = urllib.parse.urlencode({"run_id": run_id})
    return _get(f"{url}/api/2.0/mlflow/runs/get?{query}")["run"]


def test_a_run_is_logged_with_its_means_and_logging_again_writes_nothing(
    tmp_path: Path, mlflow_server: str
) -> None:
    def evaluate() -> rageval.Run:
        return rageval.evaluate(DATA, metrics=METRICS, out=tmp_path / "run", samples=6,
                                progress=False, name="V1", mlflow=mlflow_server,
                                mlflow_experiment="from-python")

    run = evaluate()
    assert run.mlflow is not None
    assert run.mlflow["changed"] and not run.mlflow["existed"]
    assert run.mlflow["artifacts_failed"] == 0
    logged = _run(mlflow_server, run.mlflow["run_id"])
    assert logged["info"]["status"] == "FINISHED"
    assert logged["info"]["run_name"] == "V1"
    assert logged["info"]["experiment_id"] == run.mlflow["experiment_id"]
    params = {p["key"]: p["value"] for p in logged["data"]["params"]}
    assert params["metrics"] == ",".join(METRICS)
    figures = {m["key"]: m["value"] for m in logged["data"]["metrics"]}
    for metric in METRICS:
        summary = run.summary["metrics"][metric]
        assert figures[metric] == pytest.approx(summary["mean"], abs=1e-12)
        assert figures[f"{metric}.ci95_lower"] == pytest.approx(summary["ci95"][0], abs=1e-12)

    again = evaluate()
    assert again.mlflow is not None
    assert again.mlflow["run_id"] == run.mlflow["run_id"]
    assert again.mlflow["existed"] and not again.mlflow["changed"]


def test_an_unreachable_mlflow_warns_and_the_run_is_complete(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.warns(RuntimeWarning, match="not logged to MLflow"):
        run = rageval.evaluate(DATA, metrics=METRICS, out=tmp_path / "run", samples=4,
                               progress=False, mlflow=f"http://127.0.0.1:{port}")
    assert run.mlflow is None
    assert run.summary["samples"] == 4
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "complete"
