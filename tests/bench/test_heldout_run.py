"""Issue 51: the frozen held-out items are written exactly, and answered only after the refit
(``python -m bench.heldout_run split|check``)."""

from __future__ import annotations

import json
from pathlib import Path

from bench_kit import run_bench

ROOT = Path(__file__).resolve().parents[2]
CALIBRATOR = "calibrator-searchain--qwen2.5-coder-1.5b.json"


def test_the_split_is_the_frozen_items_in_their_order(tmp_path: Path) -> None:
    out = tmp_path / "heldout.jsonl"
    done = run_bench("heldout_run", "split", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    frozen = (ROOT.parent / "shared/splits/hotpotqa-fresh-heldout-160.txt").read_text().split()
    ids = [json.loads(line)["question_id"] for line in out.read_text().splitlines()]
    assert ids == frozen and len(ids) == 160


def _check(calibrators: Path, fit: dict | None) -> tuple[int, str]:
    """``check`` against a folder holding the shipped SearChain calibrator fit on ``fit``
    (None: none); its exit status and what it said."""
    path = calibrators / CALIBRATOR
    if fit is not None:
        path.write_text(json.dumps({"certification": {"configuration": fit}}))
    done = run_bench("heldout_run", "check", "--calibrators", str(calibrators))
    return done.returncode, done.stdout + done.stderr


def test_a_calibrator_of_another_configuration_refuses_the_run(tmp_path: Path) -> None:
    rc, said = _check(tmp_path, None)
    assert rc == 1 and f"({CALIBRATOR} is missing)" in said
    fit = {"question_position": "instruction", "final_step": "tracing"}
    rc, said = _check(tmp_path, fit)
    why = "question_position is instruction, not last; final_step is tracing, not evidence:"
    assert rc == 1 and f"({why}path+question)" in said
    fit.update(question_position="last", final_step="evidence:path+question")
    assert _check(tmp_path, fit) == (0, "the shipped SearChain calibrator holds for the defaults\n")


def test_the_guard_names_the_defaults_configuration(tmp_path: Path) -> None:
    """A calibrator fit on what the defaults answer with lets the run go."""
    from searchain.methods.searchain.config import SearChainConfig

    cfg = SearChainConfig()
    fit = {"question_position": cfg.question_position,
           "final_step": f"{cfg.final_step}:{cfg.evidence_sources}"}  # fmt: skip
    assert _check(tmp_path, fit)[0] == 0
