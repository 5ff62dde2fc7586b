"""bench/arms_table.py: arms from separate runs, paired on the items both answered."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench_kit.py

from bench_kit import load_bench  # noqa: E402


def _bench():
    return load_bench("arms_table")


def _run(path: Path, method: str, right: list[int]) -> Path:
    path.mkdir(parents=True)
    records = [
        {"method": method, "id": f"q{i}", "status": "ok", "metrics": {"cover_em": float(r)}}
        for i, r in enumerate(right)
    ]
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_arms_of_two_runs_are_paired_on_their_shared_items(tmp_path: Path) -> None:
    b = _bench()
    base = _run(tmp_path / "a", "retrieve-read", [1, 0, 0, 1])
    other = _run(tmp_path / "b", "searchain", [1, 1, 0])  # q3 not answered yet
    arms = dict(
        b.arm_scores(s, "cover_em") for s in (f"rr={base}:retrieve-read", f"sc={other}:searchain")
    )
    lines = b.table(arms, "rr", "cover_em")
    rows = {line.split(" | ")[0].strip("| "): line for line in lines if line.startswith("| ")}
    assert "| 4 | 50.0 [" in rows["rr"]
    assert "+33.3 [" in rows["sc"] and " on 3" in rows["sc"] and rows["sc"].endswith("| 1 / 0 |")
    with pytest.raises(SystemExit, match="no record of nope"):
        b.arm_scores(f"x={base}:nope", "cover_em")
    with pytest.raises(SystemExit, match="LABEL=RUN_DIR:METHOD"):
        b.arm_scores(str(base), "cover_em")
