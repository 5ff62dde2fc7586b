"""``searchain report``: tables with bootstrap CIs, CSV, and a PNG chart, from real run dirs."""

from __future__ import annotations

from pathlib import Path

import pytest
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
    assert "| first-word | 2 | 0.0 | 0 % | 0 | 0 | 0.00 |" in result.stdout  # efficiency (Table 5)
    assert "efficiency per question" in (tmp_path / "rep" / "report.md").read_text()
    png = (tmp_path / "rep" / "report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000
    assert (tmp_path / "rep" / "report.csv").read_text().startswith("run,method")


def test_searchain_analyses_of_a_run(tmp_path: Path) -> None:
    """Table 2/3/5 of a run holding searchain and searchain-no-ir, checked by hand."""
    from searchain.types import Node, Usage

    # Per question: (IR corrects a node?, with IR right?, without IR right?)
    plan = {"q1": (True, True, False), "q2": (False, False, True), "q3": (True, True, True)}

    def with_ir(question: str) -> Trace:
        fixed, right, _ = plan[question]
        t = Trace(question=question, method="searchain", final_content="yes" if right else "no")
        t.nodes = [Node("0", question, source="question"),
                   Node("1", "a", "x", "ir-corrected" if fixed else "llm", "0"),
                   Node("2", "b", "y", "llm", "1", meta={"status": "verified"})]  # fmt: skip
        t.usage, t.rounds, t.wall_seconds = Usage(3, 1, 300, 30, 1.0), 2, 2.0
        t.meta["hops"] = 1 if question == "q2" else 2  # q2 answered as one hop
        return t

    def without_ir(question: str) -> Trace:
        t = Trace(question=question, method="searchain-no-ir")
        t.final_content = "yes" if plan[question][2] else "no"
        t.usage, t.rounds, t.wall_seconds = Usage(1, 0, 100, 10, 0.5), 1, 0.5
        return t

    items = [Item(q, q, {"answers": ["yes"]}) for q in plan]
    prepare_run_dir(tmp_path, {"analyses": 1})

    def score(item: Item, trace: Trace) -> dict[str, float]:
        return {"cover_em": float(trace.final_content == "yes")}

    run(items, {"searchain": with_ir, "searchain-no-ir": without_ir}, tmp_path, score=score)
    md = rep.analyses([tmp_path])
    assert "| searchain | 3 | 4.0 | 25 % | 300 | 30 | 2.00 | 2.00 |" in md  # 3 real + 1 cached
    assert "| searchain-no-ir | 3 | 1.0 | 0 % | 100 | 10 | 1.00 | 0.50 |" in md
    # 6 checked nodes: 2 corrected by IR, 4 from the LLM.
    assert "SearChain's 6 checked nodes" in md and "llm 66.7 %, ir-corrected 33.3 %" in md
    assert "answered as one hop** (at most one answered node on the path): 1 of 3" in md
    # Without IR q2, q3 right (66.7 %); with IR q1, q3 (66.7 %); IR helped q1, q3 (without
    # IR 50 % there, with IR 100 %); of q2, q3 right without IR, q2 went wrong: 1 of 2.
    assert ("correct without IR 66.7 %, with IR 66.7 %; IR corrected or completed a node in 2 "
            "questions (correct there: without IR 50.0 %, with IR 100.0 %); IR misled 1 of the 2 "
            "questions answered correctly without it (misleading rate 50.0 %)") in md  # fmt: skip


def test_paired_report_scores_only_items_every_method_finished(tmp_path: Path) -> None:
    """A partial run (one method stopped early) is compared on the common items."""
    run_dir = make_run(tmp_path / "p", ["Paris", "Rome", "Oslo"])
    loaded = rep.load([run_dir])
    # Drop the crashing method's record of item 2, as if the run had been stopped there.
    records = [r for r in loaded[0].records if not (r["method"] == "crash" and r["id"] == "2")]
    partial = rep.RunRecords("p", records)
    assert rep.unpaired(partial) == {"first-word": 3, "crash": 2}
    common = rep.paired(partial)
    assert rep.unpaired(common) == {}
    assert {r["id"] for r in common.records} == {"0", "1"}
    rows = {r.method: r for r in rep.summarize([common])}
    assert rows["first-word"].items == rows["crash"].items == 2
    # Same number of items but not the same items: still unpaired.
    swapped = [r for r in loaded[0].records if not (r["method"] == "first-word" and r["id"] == "0")]
    swapped = [r for r in swapped if not (r["method"] == "crash" and r["id"] == "1")]
    assert rep.unpaired(rep.RunRecords("s", swapped)) == {"first-word": 2, "crash": 2}


def test_report_cli_warns_on_unpaired_methods_and_pairs_on_request(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "u", ["Paris", "Rome", "Oslo"])
    path = run_dir / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))  # item-major order: the last record is item 2's
    result = CliRunner().invoke(app, ["report", str(run_dir)])
    assert result.exit_code == 0, result.output
    assert "did not all answer the same items" in result.stderr
    assert "| u | first-word | 3 |" in result.stdout
    result = CliRunner().invoke(app, ["report", str(run_dir), "--paired"])
    assert result.exit_code == 0, result.output
    assert "same items" not in result.stderr
    assert "| u | first-word | 2 |" in result.stdout and "| u | crash | 2 |" in result.stdout


def test_the_report_breaks_a_routed_run_down_by_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorded HotpotQA-100 run of SearChain's default (read first): its routes, each
    scored, and the chain's gains over the first read, golds from the run's manifest."""
    import shutil

    root = Path(__file__).resolve().parents[2]
    recorded = root / "results/quality/qwen2.5-coder-1.5b/hotpotqa-100-route"
    text = rep.analyses([recorded])
    assert "### hotpotqa-100-route: searchain's routes" in text
    assert "| answered in one read | 76 | 36 (47.4 %) |" in text
    assert "| chained: its first read's answer | 24 | 8 (33.3 %) |" in text
    assert "added 6 right answers over the first read and lost 3" in text
    assert "retrieve-read's routes" not in text  # it has no router
    # Without a manifest naming the golds the first reads cannot be scored: said, not skipped.
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(recorded / "results.jsonl", bare / "results.jsonl")
    said = rep.analyses([bare])
    assert "**bare: routes** of searchain not scored:" in said
    assert "no readable run manifest" in said
    # A manifest whose data set is not on this machine: said too, the report still written.
    shutil.copy(recorded / "manifest.json", bare / "manifest.json")
    monkeypatch.setenv("SEARCHAIN_DATA", str(tmp_path / "no-data"))
    missing = rep.analyses([bare])
    assert "**bare: routes** of searchain not scored:" in missing and "no-data" in missing
