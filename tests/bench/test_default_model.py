"""bench/default_model.py (issue 18, item 5): the committed page is what the committed runs
say, and its demo questions never overlap the items the quality runs report on."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from searchain.eval.datasets import load_dataset

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench_kit.py

from bench_kit import load_bench

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "results" / "default-model"


def _bench():
    return load_bench("default_model")


def test_demo_questions_are_the_readme_ones_then_unreported_items() -> None:
    bench = _bench()
    demo = [json.loads(ln) for ln in (RUNS / "demo-questions.jsonl").read_text().splitlines()]
    assert demo == bench.demo_questions()  # the committed file is what the rule picks
    assert [q["id"] for q in demo[:2]] == list(bench.README_QUESTIONS)
    reported = {e.id for e in load_dataset("hotpotqa", limit=bench.REPORTED, seed=0)}
    assert len(demo) == bench.DEMO_SIZE and not {q["id"] for q in demo[2:]} & reported


def test_default_model_page_is_what_the_committed_runs_say() -> None:
    bench = _bench()
    text = (RUNS / "README.md").read_text(encoding="utf-8")
    assert text == bench.page(bench.table(RUNS))
    for name in ("gemma-3-270m", "qwen2.5-coder-0.5b"):  # measured, not just listed
        assert f"| {name} |" in text
