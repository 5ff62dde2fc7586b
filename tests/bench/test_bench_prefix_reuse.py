"""``python -m bench.prefix_reuse`` runs end to end on the embedded Gemma (one question), and
each arm's ideal seconds come from the rates measured right before and after it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_prefix_reuse_bench_measures_each_arm_against_its_own_rates(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench.prefix_reuse", "--n", "1", "--threads", "1",
         "--methods", "retrieve-read", "--settings", "off,on", "--json"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    figures = json.loads(out.stdout)
    off, on = figures["retrieve-read:off"], figures["retrieve-read:on"]
    for arm in (off, on):
        assert arm["prefill_tokens_per_s"] > 0 and arm["decode_tokens_per_s"] > 0
        prefill = arm["prefilled_tokens_per_question"] / arm["prefill_tokens_per_s"]
        expected = prefill + arm["generated_tokens_per_question"] / arm["decode_tokens_per_s"]
        assert abs(arm["ideal_seconds_per_question"] - expected) < 1e-9
        assert arm["wall_over_ideal"] > 0
    assert off["prefilled_tokens_per_question"] == off["prompt_tokens_per_question"]
    assert on["prefilled_tokens_per_question"] <= on["prompt_tokens_per_question"]
    assert figures["retrieve-read:differ"] == []  # reuse changed no answer
    saved = tmp_path / "run.json"
    saved.write_text(out.stdout)
    table = subprocess.run(
        [sys.executable, "-m", "bench.prefix_reuse", "--render", str(saved)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "right before and after it" in table and "| retrieve-read | on |" in table
