"""Every committed run still resumes: what a run's manifest records of each method
(``eval.methods.describe``) is the same, byte for byte, for every method name and task kind as
when the golden file was written from the code before the method records (issue 38).

Regenerate only for a deliberate change of what a manifest records (and say so in the commit):
``python tests/eval/test_describe_stable.py --write``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "describe_golden.json"
TASKS = (None, "multihop", "yesno", "factcheck", "longform", "open", "list")


class _Model:
    """A reward-pair stand-in: describe() records only its name (no model is loaded)."""

    def __init__(self, model: str) -> None:
        self.model = model


def describe_all() -> dict[str, Any]:
    from searchain.eval.methods import describe
    from searchain.llm import make_llm
    from searchain.methods.catalog import (
        build_method,
        given_to,
        method_names,
        resolve,
        task_options,
    )
    from searchain.retrieval import default_index

    llm = make_llm("local", model="gemma-3-270m", cache=False)
    index = default_index()
    pair = {
        "reward_model": _Model("qwen2.5-coder-1.5b"),
        "reward_reference": _Model("qwen2.5-coder-0.5b"),
    }
    out: dict[str, Any] = {}
    exact = {"dedup": "exact"}  # one setting given to every method that takes it
    for name in method_names():
        fixed = resolve(name)[1]
        for task in TASKS:
            options: dict[str, Any] = dict(task_options(name, task))
            if name == "thinkcite":
                options.update(pair)
            method = build_method(name, llm, index, **given_to(name, exact), **options)
            out[f"{name} task={task}"] = describe(method)
        # (a preset that fixes k refuses another: searchain-paper's top-1 is the paper's)
        if name not in ("direct-prompting", "cot", "self-ask-no-search") and "k" not in fixed:
            out[f"{name} k=7"] = describe(
                build_method(
                    name,
                    llm,
                    index,
                    **given_to(name, {"k": 7, **exact}),
                    **(pair if name == "thinkcite" else {}),
                )
            )
    return out


def _hashed(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@pytest.mark.slow
def test_describe_of_every_method_and_task_is_unchanged() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    now = describe_all()
    missing = sorted(set(golden) - set(now))
    assert not missing, f"method names no longer built: {missing}"
    # Byte for byte, as a run's configuration hash reads them (eval/runner.config_hash:
    # JSON with sorted keys).
    changed = {k: (golden[k], now[k]) for k in golden if _hashed(golden[k]) != _hashed(now[k])}
    assert not changed, json.dumps(changed, indent=1)[:4000]


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    GOLDEN.write_text(json.dumps(describe_all(), indent=1) + "\n")
