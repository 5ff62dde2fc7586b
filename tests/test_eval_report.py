"""``searchain report``: tables with bootstrap CIs, CSV, and a PNG chart, from real run dirs."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from searchain.cli import app
from searchain.eval import report as rep
from searchain.eval.runner import Item, prepare_run_dir, run
from searchain.types import Trace


def _answer_first_word(question: str) -> Trace:
    return Trace(question=question, method="m", final_content=question.split()[0])


def make_run(path: Path, golds: list[str]) -> Path:
    items = [Item(str(i), f"{g} is the answer", {"answers": [g]}) for i, g in enumerate(golds)]
    prepare_run_dir(path, {"golds": golds})

    def score(item: Item, trace: Trace) -> dict[str, float]:
        return {"em": float(trace.final_content == item.gold["answers"][0])}

    def crash(question: str) -> Trace:
        raise RuntimeError("model unavailable")

    run(items, {"first-word": _answer_first_word, "crash": crash}, path, score=score)
    return path


def test_summary_means_cis_and_failures(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "r1", ["Paris", "Rome", "Oslo", "Bern"])
    rows = {r.method: r for r in rep.summarize([run_dir])}
    ok = rows["first-word"]
    assert (ok.items, ok.failed) == (4, 0)
    assert ok.metrics["em"].mean == 1.0 and ok.metrics["em"].lo == ok.metrics["em"].hi == 1.0
    crashed = rows["crash"]
    assert (crashed.items, crashed.failed) == (4, 4)
    assert crashed.metrics == {}  # failures carry no metrics: the table shows the failure count
    md = rep.markdown(list(rows.values()))
    assert "| r1 | first-word | 4 | 0 | 100.0 [100.0, 100.0] |" in md
    csv = rep.to_csv(list(rows.values())).splitlines()
    assert csv[0] == "run,method,items,failed,em,em_lo,em_hi"


def test_report_cli_writes_markdown_csv_and_png(tmp_path: Path) -> None:
    a = make_run(tmp_path / "a", ["Paris", "Rome"])
    result = CliRunner().invoke(app, ["report", str(a), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    assert "first-word" in result.stdout
    png = (tmp_path / "rep" / "report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000
    assert (tmp_path / "rep" / "report.csv").read_text().startswith("run,method")
