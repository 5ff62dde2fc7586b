"""The README's results table is what the committed run directories (``results/``) say:
recomputed here with ``searchain report``'s code from every recorded item."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from searchain.eval import report as rep

ROOT = Path(__file__).resolve().parents[1]
ROWS = {"SearChain": "searchain", "− w/o IR": "searchain-no-ir",
        "− w/o verification": "searchain-no-verification",
        "− w/o completion": "searchain-no-completion", "Self-Ask": "self-ask",
        "Direct retrieval": "direct-retrieval", "Direct prompting": "direct-prompting"}  # fmt: skip


def readme_table() -> dict[str, list[float]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("| method | HotpotQA cover-EM | EM | F1 | MuSiQue cover-EM | EM | F1 |")
    table = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        table[ROWS[cells[0]]] = [float(c) for c in cells[1:]]
    return table


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for name in ("hotpotqa", "musique"):
        src = ROOT / "results" / f"table-{name}"
        dst = tmp_path_factory.mktemp(name)
        shutil.copy(src / "manifest.json", dst / "manifest.json")
        with gzip.open(src / "results.jsonl.gz", "rb") as f:
            (dst / "results.jsonl").write_bytes(f.read())
        out[name] = dst
    return out


def test_readme_results_table_matches_the_recorded_runs(runs: dict[str, Path]) -> None:
    table = readme_table()
    assert sorted(table) == sorted(ROWS.values())
    for col, name in ((0, "hotpotqa"), (3, "musique")):
        rows = {r.method: r for r in rep.summarize([runs[name]])}
        for method, values in table.items():
            row = rows[method]
            assert row.items == 100 and row.failed == 0, (name, method)
            for off, metric in enumerate(("cover_em", "em", "f1")):
                got = round(100 * row.metrics[metric].mean, 1)
                assert got == values[col + off], (name, method, metric, got)


def test_every_method_answered_the_same_100_questions(runs: dict[str, Path]) -> None:
    for path in runs.values():
        loaded = rep.load([path])[0]
        assert rep.unpaired(loaded) == {}
        assert len({r["id"] for r in loaded.records}) == 100
