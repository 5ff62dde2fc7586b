"""``python -m bench.route_breakdown``: SearChain's routes in a run, each route's cover-EM,
and what the chain added and lost over its first read."""

from __future__ import annotations

import json
from pathlib import Path

from bench_kit import ROOT, run_bench

HOTPOTQA_ROUTE = ROOT / "results/quality/qwen2.5-coder-1.5b/hotpotqa-100-route"


def _record(id_: str, taken: str, final: str, first: str) -> dict:
    route = {"taken": taken, "why": ["the reader disagrees"] if taken == "chain" else [],
             "first_read": {"answer": first}}  # fmt: skip
    trace = {"question": "?", "method": "searchain", "answer": final, "meta": {"route": route}}
    # The recorded metric is stale on purpose: the breakdown scores both answers itself.
    return {"method": "searchain", "id": id_, "status": "ok", "trace": trace,
            "metrics": {"cover_em": 0.0}}  # fmt: skip


def test_routes_are_counted_and_the_chain_is_scored_against_its_first_read(
    tmp_path: Path,
) -> None:
    data = tmp_path / "golds.jsonl"
    golds = {"q1": "Ada Lovelace", "q2": "Paris", "q3": "1844", "q4": "Bern"}
    data.write_text("".join(json.dumps({"id": k, "question": "?", "answers": [v]}) + "\n"
                            for k, v in golds.items()))  # fmt: skip
    run = tmp_path / "run"
    run.mkdir()
    records = [
        _record("q1", "read", "Ada Lovelace", "Ada Lovelace"),
        _record("q2", "chain", "Paris", "Lyon"),  # added by the chain
        _record("q3", "chain", "1845", "in 1844"),  # lost by the chain
        _record("q4", "read", "Bern", "Zurich"),  # scored unlike its first read: said
        {"method": "searchain", "id": "q5", "status": "failed", "error": "boom"},
    ]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    done = run_bench("route_breakdown", str(run), "--dataset", str(data))
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "| answered in one read | 2 | 2 (100.0 %) |" in out
    assert "| chained | 2 | 1 (50.0 %) |" in out
    assert "| chained: its first read's answer | 2 | 1 (50.0 %) |" in out
    assert "added 1 right answers over the first read and lost 1" in out
    assert "scored unlike the first read: q4." in out
    assert "- the reader disagrees (2)" in out
    other = run_bench("route_breakdown", str(run), "--method", "retrieve-read", "--dataset",
                      str(data))  # fmt: skip
    assert other.returncode == 1 and "no routed record of retrieve-read" in other.stderr
    elsewhere = run_bench("route_breakdown", str(run), "--dataset", str(tmp_path / "none.jsonl"))
    assert elsewhere.returncode == 1 and "Traceback" not in elsewhere.stderr
    assert "none.jsonl" in elsewhere.stderr  # the missing data set is named


def test_the_recorded_hotpotqa_run_breaks_down_to_its_reported_score() -> None:
    done = run_bench("route_breakdown", str(HOTPOTQA_ROUTE), "--dataset", "hotpotqa")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| all | 100 | 47 (47.0 %) |" in done.stdout  # arms.md: 47.0
    assert "scored unlike the first read" not in done.stdout
