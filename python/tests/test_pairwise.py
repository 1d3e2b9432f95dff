"""``rageval.pairwise`` against the mock judge: the same figures as ``rageval pairwise``,
one row per pair of versions, and every question's two verdicts. The mock fills the
verdict's enum with its first value ("A") whatever it is shown, so every question flips
and ties."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import rageval
from conftest import ragas_rows, write_jsonl


def versions(tmp_path: Path) -> list:
    rows = ragas_rows()
    better = [dict(row, response=row["reference"]) for row in rows]
    return [write_jsonl(tmp_path / "v1.jsonl", rows), write_jsonl(tmp_path / "v2.jsonl", better)]


def test_pairwise_gives_the_cli_figures_as_a_dataframe(
    tmp_path: Path, rageval_bin: Path, mock
) -> None:
    v1, v2 = versions(tmp_path)
    cli = subprocess.run(
        [str(rageval_bin), "pairwise", str(v1), str(v2), "--name", "V1", "--name", "V2",
         "--out", str(tmp_path / "cli"), "--judge-base-url", mock.base_url,
         "--judge-model", "mock-chat", "--cache", str(tmp_path / "cli-cache.sqlite"), "-q"],
        capture_output=True, text=True,
    )
    assert cli.returncode == 0, cli.stderr
    judge = rageval.Judge(base_url=mock.base_url, model="mock-chat",
                          cache=str(tmp_path / "py-cache.sqlite"))
    frame = rageval.pairwise([v1, v2], names=["V1", "V2"], judge=judge, out=tmp_path / "py")

    assert list(frame["a"]) == ["V1"] and list(frame["b"]) == ["V2"]
    row = frame.iloc[0]
    assert (row["n"], row["wins"], row["ties"], row["losses"], row["failed"]) == (3, 0, 3, 0, 0)
    assert row["flip_rate"] == 1.0 and row["reading"] == "no_clear_difference"
    assert frame.attrs["run_dir"] == str(tmp_path / "py")
    summary = json.loads((tmp_path / "cli" / "summary.json").read_text(encoding="utf-8"))
    pair = summary["pairs"][0]
    for column in ("n", "wins", "ties", "losses", "win_rate", "p_value"):
        assert row[column] == pair[column] or (row[column] != row[column] and pair[column] is None), column
    assert (tmp_path / "py" / "report.html").is_file()
    assert (tmp_path / "py" / "results.xlsx").is_file()

    verdicts = rageval.pairwise_verdicts(tmp_path / "py")
    assert len(verdicts) == 3
    assert list(verdicts["question"]) == [r["user_input"] for r in ragas_rows()]
    # With V1 seated first the judge named V1, with V2 first it named V2: a flip, a tie.
    assert set(verdicts["a_first"]) == {"V1"} and set(verdicts["b_first"]) == {"V2"}
    assert set(verdicts["result"]) == {"tie"} and verdicts["flipped"].all()
    assert verdicts["a_first_reason"].map(bool).all()


def test_pairwise_without_a_chat_judge_is_a_rageval_error(tmp_path: Path) -> None:
    v1, v2 = versions(tmp_path)
    with pytest.raises(rageval.RagevalError, match="pairwise judging"):
        rageval.pairwise([v1, v2], judge=rageval.Judge(local="heuristic"), out=tmp_path / "h")
