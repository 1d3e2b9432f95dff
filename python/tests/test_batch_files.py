"""`rageval.evaluate` with requests out and answers in (issue 26, item 4): the run writes
each stage's judge requests as OpenAI batch input files and stops (`RunStopped`, reason
`exported`); another engine — here this test, posting each line to the mock judge —
answers them; the same call with `import_responses` goes on; the scores equal those of a
synchronous run."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

import rageval
from conftest import ragas_rows


def answer(requests: Path, answers: Path, base_url: str) -> list:
    """Every request file not answered yet, answered through the mock as `vllm run-batch`
    would: one output line per request, the completion as the response's body."""
    written = []
    for file in sorted(requests.glob("*.jsonl")):
        out = answers / file.name
        if out.exists():
            continue
        lines = []
        for line in file.read_text(encoding="utf-8").splitlines():
            request = json.loads(line)
            post = urllib.request.Request(
                base_url.rstrip("/") + "/chat/completions",
                data=json.dumps(request["body"]).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(post, timeout=60) as reply:
                body = json.loads(reply.read())
            lines.append(json.dumps({"custom_id": request["custom_id"],
                                     "response": {"status_code": 200, "body": body}}))
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(out)
    return written


def test_requests_out_answers_in_end_as_the_synchronous_run(tmp_path: Path, mock) -> None:
    # Batch mode keeps its answers in the judge's cache: one of the test's own for each run,
    # so the files run cannot read the synchronous run's answers.
    sync_judge = rageval.Judge(base_url=mock.base_url, model="mock-chat", no_cache=True)
    judge = rageval.Judge(base_url=mock.base_url, model="mock-chat",
                          cache=str(tmp_path / "cache.sqlite"))
    rows = ragas_rows()
    metrics = ["faithfulness", "context_recall"]
    sync = rageval.evaluate(rows, metrics=metrics, judge=sync_judge, out=tmp_path / "sync")
    requests, answers = tmp_path / "requests", tmp_path / "answers"
    requests.mkdir()
    answers.mkdir()
    imported: list = []
    for _ in range(6):
        try:
            run = rageval.evaluate(rows, metrics=metrics, judge=judge, out=tmp_path / "files",
                                   export_requests=requests, import_responses=imported,
                                   progress=False)
            break
        except rageval.RunStopped as stopped:
            assert stopped.reason == "exported", stopped
            imported += answer(requests, answers, mock.base_url)
    else:
        pytest.fail("the run never completed")
    assert imported, "the run wrote requests out"
    ours = {(r["sample_id"], r["metric"]): r.get("value") for r in run.results()}
    theirs = {(r["sample_id"], r["metric"]): r.get("value") for r in sync.results()}
    assert ours == theirs


def test_bad_batch_options_are_named() -> None:
    with pytest.raises(rageval.RagevalError, match="batch_fallback"):
        rageval.evaluate(ragas_rows(), metrics=["faithfulness"], batch=True,
                         batch_fallback="later")
