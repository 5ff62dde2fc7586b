"""``python -m bench.default_model`` (issue 18, item 5): the committed page is what the
committed runs say, and its demo questions never overlap the items the quality runs report on."""

from __future__ import annotations

import json
from pathlib import Path

from bench_kit import as_now, copy_of, run_bench
from searchain.eval.datasets import load_dataset

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "results" / "default-model"
README_QUESTIONS = ["5a8c7595554299585d9e36b6", "5a85b2d95542997b5ce40028"]  # Corliss, Aladin
REPORTED = 100  # the quality bench reports on the seed-0 subsample of (at most) 100 items
DEMO_SIZE = 10


def test_demo_questions_are_the_readme_ones_then_unreported_items() -> None:
    done = run_bench("default_model", "questions")
    assert done.returncode == 0, done.stderr[-2000:]
    demo = [json.loads(ln) for ln in (RUNS / "demo-questions.jsonl").read_text().splitlines()]
    assert demo == [json.loads(ln) for ln in done.stdout.splitlines()]  # what the rule picks
    assert [q["id"] for q in demo[:2]] == README_QUESTIONS
    reported = {e.id for e in load_dataset("hotpotqa", limit=REPORTED, seed=0)}
    assert len(demo) == DEMO_SIZE and not {q["id"] for q in demo[2:]} & reported


def test_default_model_page_is_what_the_committed_runs_say(tmp_path: Path) -> None:
    """``table --write`` on a copy of the runs writes the committed page again."""
    copy = copy_of(RUNS, tmp_path)
    (copy / "README.md").unlink()
    done = run_bench("default_model", "table", "--root", str(copy), "--write")
    assert done.returncode == 0, done.stderr[-2000:]
    text = (RUNS / "README.md").read_text(encoding="utf-8")
    assert as_now(text) == (copy / "README.md").read_text(encoding="utf-8")
    for name in ("gemma-3-270m", "qwen2.5-coder-0.5b"):  # measured, not just listed
        assert f"| {name} |" in text
