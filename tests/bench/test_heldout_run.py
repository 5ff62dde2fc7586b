"""Issue 51: the frozen held-out items are written exactly, and answered only after the refit."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench_kit.py

from bench_kit import load_bench  # noqa: E402


def _heldout():
    return load_bench("heldout_run")


def test_the_split_is_the_frozen_items_in_their_order() -> None:
    bench = _heldout()
    frozen = (ROOT.parent / "shared/splits/hotpotqa-fresh-heldout-160.txt").read_text().split()
    ids = [json.loads(line)["question_id"] for line in bench.split_lines()]
    assert ids == frozen and len(ids) == 160


def test_a_calibrator_of_another_configuration_refuses_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = _heldout()
    data = tmp_path / "src" / "searchain" / "data"
    data.mkdir(parents=True)
    monkeypatch.setattr(bench, "ROOT", tmp_path)
    assert bench.unfit() == ["calibrator-searchain--qwen2.5-coder-1.5b.json is missing"]
    fit = {"question_position": "instruction", "final_step": "tracing"}
    path = data / "calibrator-searchain--qwen2.5-coder-1.5b.json"
    path.write_text(json.dumps({"certification": {"configuration": fit}}))
    assert bench.unfit() == [
        "question_position is instruction, not last",
        "final_step is tracing, not evidence:path+question",
    ]
    fit.update(question_position="last", final_step="evidence:path+question")
    path.write_text(json.dumps({"certification": {"configuration": fit}}))
    assert bench.unfit() == []


def test_the_guard_names_the_defaults_configuration() -> None:
    from searchain.methods.searchain.config import SearChainConfig

    cfg = SearChainConfig()
    final = f"{cfg.final_step}:{cfg.evidence_sources}"
    assert {"question_position": cfg.question_position, "final_step": final} == _heldout().DEFAULTS
