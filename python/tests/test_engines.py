"""The evaluator mapped over Ray Data and Spark (issue 26, item 2): docs/scale.md's two
recipes — the code blocks themselves, read from the page and run — score 2,000 rows with
two local workers against the testkit's mock judge, and every cell equals a `rageval eval`
of the same file in one process; `rageval.summarize` of the scored rows equals the run's
`summary.json`.

Ray (`ray[data]`) and Spark (`pyspark`, with a Java 17 runtime) are test tools, installed
into the repo's `.venv` by scripts/setup.sh --deps-only, never dependencies of rageval: in
another environment without them these tests skip and say which is missing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest

import rageval
from conftest import REPO

# The engines' own deprecation notices (Ray Data's settings, PySpark on pandas 3) say
# nothing about rageval.
pytestmark = [
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
    pytest.mark.filterwarnings("ignore:`use_:DeprecationWarning"),
]

#: Two metrics the mock judges, two that need no model.
METRICS = ["faithfulness", "context_recall", "rouge_l", "id_mrr"]
ROWS = 2000
DOC = REPO / "docs" / "scale.md"

COUNTRIES = ["France", "Italy", "Spain", "Japan", "Kenya", "Peru", "Chile", "Egypt", "Norway"]
CAPITALS = ["Paris", "Rome", "Madrid", "Tokyo", "Nairobi", "Lima", "Santiago", "Cairo", "Oslo"]


def synthetic_rows(count: int) -> List[Dict[str, Any]]:
    """`count` distinct rows, the same on every call: a third answer wrongly, answers of
    varied length, and a few leave a field empty so some cells are undefined."""
    rows = []
    for index in range(count):
        country = index % len(COUNTRIES)
        right = CAPITALS[country]
        said = right if index % 3 else CAPITALS[(country + 1) % len(CAPITALS)]
        tail = " and its largest city" * (index % 4)
        rows.append({
            "id": f"q{index:05d}",
            "question": f"What is the capital of {COUNTRIES[country]} (round {index})?",
            "contexts": [] if index % 97 == 5 else [
                f"{right} is the capital of {COUNTRIES[country]}.",
                f"{COUNTRIES[country]} has {index % 7 + 2} regions.",
            ],
            "answer": "" if index % 89 == 3 else f"The capital is {said}{tail}.",
            "reference": f"{right} is the capital of {COUNTRIES[country]}.",
            "retrieved_context_ids": [f"d{index % 13}", f"d{(index + 1) % 13}"],
            "reference_context_ids": [] if index % 83 == 1 else [f"d{(index + index % 4) % 13}"],
        })
    return rows


def recipe(engine: str) -> Dict[str, Any]:
    """The namespace of docs/scale.md's code block after `<!-- tested by
    python/tests/test_engines.py: ENGINE -->`, run as the page shows it."""
    marker = f"<!-- tested by python/tests/test_engines.py: {engine} -->"
    text = DOC.read_text(encoding="utf-8")
    found = re.search(re.escape(marker) + r"\n```python\n(.*?)\n```\n", text, re.DOTALL)
    assert found, f"docs/scale.md has no python block after {marker!r}"
    namespace: Dict[str, Any] = {"__name__": f"scale_md_{engine}"}
    exec(compile(found.group(1), f"{DOC}:{engine}", "exec"), namespace)
    return namespace


class Reference:
    """One `rageval eval` of the rows in one process: its cells and its summary."""

    def __init__(self, data: Path, rows: List[Dict[str, Any]], run_dir: Path) -> None:
        self.data = data
        self.rows = {row["id"]: row for row in rows}
        self.cells: Dict[Tuple[str, str], Dict[str, Any]] = {}
        for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                self.cells[(record["sample_id"], record["metric"])] = record
        self.summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, rageval_bin: Path, mock) -> Reference:
    folder = tmp_path_factory.mktemp("engines")
    rows = synthetic_rows(ROWS)
    data = folder / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    run = subprocess.run(
        [str(rageval_bin), "eval", str(data), "--metrics", ",".join(METRICS),
         "--judge-base-url", mock.base_url, "--judge-model", "mock-chat", "--no-cache",
         "--out", str(folder / "cli"), "-q"],
        capture_output=True, text=True, env={**os.environ, "RAGEVAL_CACHE_DIR": str(folder)},
    )
    assert run.returncode == 0, run.stderr
    return Reference(data, rows, folder / "cli")


def expected_cells(record: Dict[str, Any]) -> Dict[str, Any]:
    """The four cells `score_batch` gives for one journaled outcome of `rageval eval`."""
    status = record["status"]
    metric = record["metric"]
    return {
        metric: record["value"] if status == "score" else None,
        f"{metric}_status": status,
        f"{metric}_reason": rageval._reason(record) if status != "failed" else None,
        f"{metric}_error": record.get("error") if status == "failed" else None,
    }


def assert_equal_to_the_cli(table: Any, summary: Dict[str, Any], reference: Reference) -> None:
    scored = table.to_pylist()
    assert len(scored) == ROWS
    assert {row["id"] for row in scored} == set(reference.rows)
    statuses = set()
    for row in scored:
        own = reference.rows[row["id"]]
        for column, value in own.items():
            assert row[column] == value, (row["id"], column)
        for metric in METRICS:
            want = expected_cells(reference.cells[(row["id"], metric)])
            got = {column: row[column] for column in want}
            assert got == want, (row["id"], metric)
            statuses.add(row[f"{metric}_status"])
    # The data gives both kinds of outcome, so the status and reason columns are exercised.
    assert statuses == {"score", "undefined"}
    theirs = reference.summary
    assert summary["samples"] == theirs["samples"] == ROWS
    assert summary["metric_order"] == theirs["metric_order"]
    assert summary["metrics"] == theirs["metrics"]
    assert summary["bootstrap"] == theirs["bootstrap"]


def judge_for(mock: Any, cache: Path) -> rageval.Judge:
    # One cache file for every worker of the job: two processes write it at once.
    return rageval.Judge(base_url=mock.base_url, model="mock-chat", cache=str(cache))


def assert_the_shared_cache_is_whole(cache: Path, reference: Reference) -> None:
    """Two workers wrote one SQLite cache at once: the file is intact and holds one answer
    for each request the single-process run sent (the rows are distinct, so no two
    workers asked the same)."""
    import sqlite3

    with sqlite3.connect(cache) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        (answers,) = connection.execute("SELECT count(*) FROM answers").fetchone()
    assert answers == reference.summary["judge"]["total"]["calls"]


def needs(module: str, reason: str) -> None:
    pytest.importorskip(module, reason=f"{module} is not installed ({reason}); "
                        "scripts/setup.sh --deps-only installs it into .venv")


# The engines start once for the module, and before `reference`: without them the tests
# skip at once rather than after a 2,000-row run they cannot use.
@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    needs("ray", "Ray Data")
    import ray

    # Ray gives its node 30 s to register, a limit no setting changes; on two cores shared
    # with the Rust tests (scripts/test.sh runs them side by side) it can miss it. That is
    # Ray's start-up, not what these tests check, so the start is tried again, three times
    # in all, after a clean shutdown.
    for attempt in range(3):
        try:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                     configure_logging=False,
                     runtime_env={"env_vars": {"RAY_DATA_LOG_LEVEL": "ERROR"}})
            break
        except Exception as err:  # Ray raises a bare Exception for this timeout
            ray.shutdown()
            if attempt == 2 or "timed out during startup" not in str(err):
                raise
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def spark_session() -> Iterator[Any]:
    needs("pyspark", "Spark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs a Java runtime (17 or later) on PATH")
    from pyspark.sql import SparkSession

    # The Python workers must be this interpreter, the one with rageval installed.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYSPARK_PYTHON", sys.executable)
        spark = (
            SparkSession.builder.master("local[2]")
            .appName("rageval-test-engines")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.driver.host", "127.0.0.1")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        try:
            yield spark
        finally:
            spark.stop()


def test_ray_data_scores_every_cell_as_rageval_eval(
    ray_cluster: None, reference: Reference, mock, tmp_path: Path
) -> None:
    score_with_ray: Callable = recipe("ray")["score_with_ray"]
    table, summary = score_with_ray(
        str(reference.data), METRICS, judge_for(mock, tmp_path / "judge.sqlite"))
    assert_equal_to_the_cli(table, summary, reference)
    assert_the_shared_cache_is_whole(tmp_path / "judge.sqlite", reference)


def test_spark_scores_every_cell_as_rageval_eval(
    spark_session: Any, reference: Reference, mock, tmp_path: Path
) -> None:
    score_with_spark: Callable = recipe("spark")["score_with_spark"]
    table, summary = score_with_spark(
        spark_session, str(reference.data), METRICS, judge_for(mock, tmp_path / "judge.sqlite"))
    assert_equal_to_the_cli(table, summary, reference)
    assert_the_shared_cache_is_whole(tmp_path / "judge.sqlite", reference)
