"""``python -m bench.arms_table``: arms from separate runs, paired on the items both answered."""

from __future__ import annotations

import json
from pathlib import Path

from bench_kit import run_bench


def _run(path: Path, method: str, right: list[int]) -> Path:
    path.mkdir(parents=True)
    records = [
        {"method": method, "id": f"q{i}", "status": "ok", "metrics": {"cover_em": float(r)}}
        for i, r in enumerate(right)
    ]
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_arms_of_two_runs_are_paired_on_their_shared_items(tmp_path: Path) -> None:
    base = _run(tmp_path / "a", "retrieve-read", [1, 0, 0, 1])
    other = _run(tmp_path / "b", "searchain", [1, 1, 0])  # q3 not answered yet
    arms = (f"rr={base}:retrieve-read", f"sc={other}:searchain")
    done = run_bench("arms_table", *arms, "--against", "rr")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    rows = {line.split(" | ")[0].strip("| "): line for line in lines if line.startswith("| ")}
    assert "| 4 | 50.0 [" in rows["rr"]
    assert "+33.3 [" in rows["sc"] and " on 3" in rows["sc"] and rows["sc"].endswith("| 1 / 0 |")
    assert "excludes 0" not in done.stdout  # no row is starred: the mark is not explained
    agreeing = _run(tmp_path / "c", "searchain", [1] * 40)
    worse = _run(tmp_path / "d", "retrieve-read", [0] * 40)
    starred = run_bench("arms_table", f"rr={worse}:retrieve-read", f"sc={agreeing}:searchain",
                        "--against", "rr")  # fmt: skip
    assert " on 40 * |" in starred.stdout and "* the paired interval excludes 0." in starred.stdout
    missing = run_bench("arms_table", f"x={base}:nope", "--against", "x")
    assert missing.returncode == 1 and "holds no record of nope" in missing.stderr
    unlabelled = run_bench("arms_table", str(base), "--against", "x")
    assert unlabelled.returncode == 1 and "LABEL=RUN_DIR:METHOD" in unlabelled.stderr
