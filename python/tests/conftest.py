"""Fixtures of the Python package's suite: the `rageval` binary to compare with, the mock
judge server (crates/rageval-testkit's `rageval-mock`), and sample rows."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

REPO = Path(__file__).resolve().parents[2]


def _binary(variable: str, name: str) -> Path:
    path = Path(os.environ.get(variable) or REPO / "target" / "debug" / name)
    if not path.exists():
        pytest.fail(f"{path} is missing: build it with `cargo build -p ...` or set {variable}")
    return path


@pytest.fixture(scope="session")
def rageval_bin() -> Path:
    return _binary("RAGEVAL_BIN", "rageval")


class Mock:
    def __init__(self, process: subprocess.Popen, base_url: str) -> None:
        self.process = process
        self.base_url = base_url


def _start_mock(*flags: str) -> Iterator[Mock]:
    binary = _binary("RAGEVAL_MOCK_BIN", "rageval-mock")
    process = subprocess.Popen([str(binary), *flags], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:"), base_url
        yield Mock(process, base_url)
    finally:
        # SIGKILL, not SIGTERM: the mock keeps nothing, and a suite started with SIGTERM
        # ignored (a background job's inheritance) passes that on to the mock.
        process.kill()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def mock() -> Iterator[Mock]:
    yield from _start_mock()


@pytest.fixture(scope="session")
def locked_mock() -> Iterator[Mock]:
    """A mock that answers only requests carrying `Authorization: Bearer secret`."""
    yield from _start_mock("--api-key", "secret")


@pytest.fixture(scope="session")
def slow_mock() -> Iterator[Mock]:
    """A mock that takes 300 ms per answer, so a run can be interrupted halfway."""
    yield from _start_mock("--latency-ms", "300")


@pytest.fixture(autouse=True)
def clean_judge_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process environment must not choose the judge for a test."""
    for name in list(os.environ):
        if name.startswith("RAGEVAL_JUDGE_") or name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
            monkeypatch.delenv(name)


def ragas_rows() -> List[Dict[str, object]]:
    """Rows in ragas ≥ 0.2 field names."""
    return [
        {
            "user_input": "What is the capital of France?",
            "retrieved_contexts": ["Paris is the capital of France.", "France is in Europe."],
            "response": "The capital of France is Paris.",
            "reference": "Paris is the capital of France.",
        },
        {
            "user_input": "Who wrote Hamlet?",
            "retrieved_contexts": ["Hamlet is a tragedy by William Shakespeare."],
            "response": "Hamlet was written by Shakespeare.",
            "reference": "William Shakespeare wrote Hamlet.",
        },
        {
            "user_input": "How many legs does a spider have?",
            "retrieved_contexts": ["Spiders are arachnids with eight legs."],
            "response": "A spider has six legs.",
            "reference": "Spiders have eight legs.",
        },
    ]


def write_jsonl(path: Path, rows: List[Dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def cli_scores(run_dir: Path) -> Dict[tuple, object]:
    """(sample id, metric) → score (or the outcome's status) from a run's results.jsonl."""
    scores: Dict[tuple, object] = {}
    for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            key = (record["sample_id"], record["metric"])
            scores[key] = record["value"] if record["status"] == "score" else record["status"]
    return scores
