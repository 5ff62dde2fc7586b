"""``python -m bench.docs_confidence``, the frozen git-doc run's confidence scoring, on the
committed fresh tune records (their naive scores recorded beside them, so no model runs): every
target is judged from the figures it prints, and a damaged naive-score line is named."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from bench_kit import ROOT, run_bench

TUNE_FRESH = ROOT / "results" / "real-docs" / "tune-fresh"


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(TUNE_FRESH, tmp_path / "tune-fresh")
    return tmp_path


def test_the_report_judges_each_target_from_its_own_figures(tmp_path: Path) -> None:
    records = _copy(tmp_path)
    out = tmp_path / "confidence.md"
    done = run_bench(
        "docs_confidence", "--set", "tune-fresh", "--arms", "searchain-route-always",
        "--records", str(records), "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert "searchain-route-always: 32 answers, 21 right" in text
    lift = re.search(r"all answers' \| ([\d.]+) \[[\d.]+, [\d.]+\] \| ≥ 1.3 \| \*\*(\w+)\*\*", text)
    assert lift and (lift[2] == "met") == (float(lift[1]) >= 1.3)
    ours = re.search(r"AURC, the confidence \| ([\d.]+) ", text)
    naive = re.search(r"AURC, the naive confidence \| ([\d.]+) ", text)
    verdict = re.search(r"below the naive's \| \*\*(\w+)\*\*", text)
    assert ours and naive and verdict
    assert (verdict[1] == "met") == (float(ours[1]) < float(naive[1]))
    assert "not a probability here" in text  # the uncalibrated score's ECE is not judged


def test_a_damaged_naive_score_line_is_named(tmp_path: Path) -> None:
    records = _copy(tmp_path)
    naive = records / "tune-fresh" / "qwen2.5-coder-1.5b" / "searchain-route-always.naive.jsonl"
    naive.write_text(naive.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    done = run_bench(
        "docs_confidence", "--set", "tune-fresh", "--arms", "searchain-route-always",
        "--records", str(records),
    )  # fmt: skip
    assert done.returncode != 0
    assert "searchain-route-always.naive.jsonl:33: not a naive-score line" in done.stderr


def test_the_docs_calibrator_reads_at_most_three_signals_each_in_its_direction(
    tmp_path: Path,
) -> None:
    """On the committed documentation calibration answers (the first route rule's 49, with
    traces): at most three signals, each weighted with its declared sign, named a family
    calibrator (``…--docs``); answers of another configuration are not pooled with them."""
    import json

    from searchain.scoring.confidence.feature_choice import DIRECTIONS

    out = tmp_path / "calibrator-searchain--qwen2.5-coder-1.5b--docs.json"
    done = run_bench(
        "docs_calibrator", "--sets", "calibration", "--arm", "searchain-plan-uncited",
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    fitted = json.loads(out.read_text(encoding="utf-8"))
    assert 1 <= len(fitted["features"]) <= 3 and fitted["name"].endswith("--docs")
    for name, weight in zip(fitted["features"], fitted["weights"], strict=True):
        assert weight * DIRECTIONS[name] >= 0, (name, weight)
    assert fitted["features_chosen_by"]["chosen"] == fitted["features"]
    # the fresh tune answers, always chained, filed under the same arm: another configuration
    records = tmp_path / "records"
    shutil.copytree(ROOT / "results" / "real-docs" / "calibration", records / "calibration")
    fresh = records / "tune-fresh" / "qwen2.5-coder-1.5b"
    fresh.mkdir(parents=True)
    for suffix in (".jsonl", ".traces.jsonl"):
        shutil.copy(TUNE_FRESH / "qwen2.5-coder-1.5b" / f"searchain-route-always{suffix}",
                    fresh / f"searchain-plan-uncited{suffix}")  # fmt: skip
    mixed = run_bench(
        "docs_calibrator", "--sets", "calibration,tune-fresh", "--arm", "searchain-plan-uncited",
        "--records", str(records),
    )  # fmt: skip
    assert mixed.returncode != 0
    assert "the runs mix configurations (final step read-first:always" in mixed.stderr, mixed.stderr
