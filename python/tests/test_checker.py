"""A checker judge (``Judge(local="checker:DIR")``) and a cascade (``escalate=``) from Python,
on the tiny random-weight ModernBERT fixture (its scores mean nothing: the tests assert who
answered, never a value) and the mock judge server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rageval

from conftest import REPO, ragas_rows

CHECKER = REPO / "crates" / "rageval-judge" / "tests" / "fixtures" / "checkers" / "modernbert-tokens"


def _verdict_reasons(run: rageval.Run) -> list:
    reasons = []
    for line in (run.run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for verdict in (record.get("evidence") or {}).get("verdicts") or []:
            reasons.append(verdict["reason"])
    return reasons


def test_a_checker_answers_the_support_verdicts(tmp_path: Path) -> None:
    judge = rageval.Judge(local=f"checker:{CHECKER}", cache=str(tmp_path / "cache.sqlite"))
    run = rageval.evaluate(ragas_rows(), ["faithfulness"], judge, tmp_path / "run", progress=False)
    assert run.summary["metrics"]["faithfulness"]["n_failed"] == 0
    tasks = run.summary["judge"]["tasks"]
    assert tasks["support_verdicts"]["checker"] > 0, tasks
    reasons = _verdict_reasons(run)
    assert reasons and all(reason.startswith("checker P(supported)") for reason in reasons)
    manifest = json.loads((run.run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["judge"]["checker"]["family"] == "modernbert"


@pytest.mark.parametrize("band", [(0.0, 0.5), "0.0,0.5"])
def test_a_cascade_counts_each_tier(tmp_path: Path, mock, band) -> None:
    judge = rageval.Judge(local=f"checker:{CHECKER}", escalate=band, base_url=mock.base_url,
                          model="mock-chat", no_cache=True)
    run = rageval.evaluate(ragas_rows(), ["faithfulness"], judge, tmp_path / "run", progress=False)
    tally = run.summary["judge"]["tasks"]["support_verdicts"]
    claims = tally.get("claims_by_checker", 0) + tally.get("claims_by_chat", 0)
    assert claims > 0, tally
    reasons = _verdict_reasons(run)
    assert len(reasons) == claims
    assert all(reason.startswith(("settled by the checker", "escalated to the chat judge"))
               for reason in reasons), reasons
    assert "cascade: of" in run.footer, run.footer
    manifest = json.loads((run.run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["judge"]["escalation"]["low"] == 0.0


def test_escalate_without_an_endpoint_is_refused(tmp_path: Path) -> None:
    judge = rageval.Judge(local=f"checker:{CHECKER}", escalate=True)
    with pytest.raises(rageval.RagevalError, match="--escalate needs a chat endpoint"):
        rageval.evaluate(ragas_rows(), ["faithfulness"], judge, tmp_path / "run", progress=False)
