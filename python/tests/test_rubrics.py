"""Rubric metrics of one's own from Python (issue 24): `evaluate` reads the `[[metric]]`
tables of `./rageval.toml`, of the judge's `config` or of `metric_files` as `rageval eval`
does, and each call reads its own: a rubric of one call is unknown to the next."""

from __future__ import annotations

from pathlib import Path

import pytest

import rageval
from conftest import ragas_rows

CITES = """
[[metric]]
name = "cites_source"
summary = "the answer says where its fact comes from"
criterion = "The answer names the source of the fact it states."
reads = ["question", "answer"]
scale = "pass_fail"
"""

TONE = """
[[metric]]
name = "calm_tone"
criterion = "The answer keeps to the passages, in a calm tone."
reads = ["contexts", "answer"]
scale = "1-5"
"""


def judge(mock, tmp_path: Path, **fields) -> rageval.Judge:
    return rageval.Judge(base_url=mock.base_url, model="mock-chat",
                         cache=str(tmp_path / "cache.sqlite"), **fields)


def scored(run: rageval.Run, metric: str) -> int:
    return run.summary["metrics"][metric]["n_scored"]


def test_a_rageval_toml_rubric_is_scored_and_unknown_to_a_later_run_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGEVAL_CONFIG", raising=False)
    (tmp_path / "rageval.toml").write_text(CITES, encoding="utf-8")
    first = rageval.evaluate(ragas_rows(), metrics=["cites_source"],
                             judge=judge(mock, tmp_path), out=tmp_path / "first")
    assert scored(first, "cites_source") == len(ragas_rows())

    # The same process, another configuration file: its rubric only.
    other = tmp_path / "other.toml"
    other.write_text(TONE, encoding="utf-8")
    second = rageval.evaluate(ragas_rows(), metrics=["calm_tone"],
                              judge=judge(mock, tmp_path, config=str(other)),
                              out=tmp_path / "second")
    assert scored(second, "calm_tone") == len(ragas_rows())
    with pytest.raises(rageval.RagevalError, match="unknown metric `cites_source`"):
        rageval.evaluate(ragas_rows(), metrics=["cites_source"],
                         judge=judge(mock, tmp_path, config=str(other)),
                         out=tmp_path / "third")


def test_metric_files_come_before_the_config_and_errors_name_file_line_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rageval.toml").write_text(CITES, encoding="utf-8")
    rubrics = tmp_path / "rubrics.toml"
    rubrics.write_text(TONE, encoding="utf-8")
    run = rageval.evaluate(ragas_rows(), metrics=["calm_tone"], judge=judge(mock, tmp_path),
                           out=tmp_path / "run", metric_files=[rubrics])
    assert scored(run, "calm_tone") == len(ragas_rows())
    with pytest.raises(rageval.RagevalError, match="unknown metric `cites_source`"):
        rageval.evaluate(ragas_rows(), metrics=["cites_source"], judge=judge(mock, tmp_path),
                         out=tmp_path / "other", metric_files=[rubrics])

    rubrics.write_text(TONE.replace('"1-5"', '"1-10"'), encoding="utf-8")
    with pytest.raises(rageval.RagevalError) as refused:
        rageval.evaluate(ragas_rows(), metrics=["calm_tone"], judge=judge(mock, tmp_path),
                         out=tmp_path / "bad", metric_files=[rubrics])
    assert "rubrics.toml:6: field `metric[1].scale`: unknown scale `1-10`" in str(refused.value)
