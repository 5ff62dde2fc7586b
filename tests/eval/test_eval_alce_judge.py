"""ALCE datasets are scored on their citations by default (the LLM judge), as in the ALCE
paper; a run directory started before that default still resumes without a judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from searchain.cli import app
from searchain.eval.datasets import load_dataset
from searchain.eval.runner import read_results
from searchain.eval.setup import default_alce_judge


def test_alce_datasets_default_to_the_llm_judge(tmp_path: Path) -> None:
    eli5 = load_dataset("eli5", limit=1)
    assert default_alce_judge(eli5, None, tmp_path / "new") == "llm"
    assert default_alce_judge(eli5, "none", tmp_path / "new") == "none"  # asked: kept
    assert default_alce_judge(eli5, "/models/nli", tmp_path / "new") == "/models/nli"
    hotpot = load_dataset("hotpotqa", limit=1)
    assert default_alce_judge(hotpot, None, tmp_path / "new") is None  # not ALCE: no judge


def test_a_run_started_without_a_judge_keeps_resuming_without_one(tmp_path: Path) -> None:
    eli5 = load_dataset("eli5", limit=1)
    (tmp_path / "manifest.json").write_text(json.dumps({"config": {"dataset": "eli5"}}))
    assert default_alce_judge(eli5, None, tmp_path) is None
    (tmp_path / "manifest.json").write_text(json.dumps({"config": {"nli": "llm"}}))
    assert default_alce_judge(eli5, None, tmp_path) == "llm"


@pytest.mark.slow
def test_eval_on_eli5_records_citation_metrics_by_the_llm_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    args = ["eval", "--dataset", "eli5", "--methods", "direct-retrieval", "--limit", "1",
            "--concurrency", "1", "--no-cache", "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "by the LLM judge" in result.stderr
    (row,) = read_results(out)
    assert row["status"] == "ok", row.get("error")
    metrics = row["metrics"]
    for name in ("citation_recall", "citation_precision", "claim_recall"):
        assert 0.0 <= metrics[name] <= 1.0, name
    assert json.loads((out / "manifest.json").read_text())["config"]["nli"] == "llm"
