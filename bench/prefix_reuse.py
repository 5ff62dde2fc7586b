"""What reusing cached prompt prefixes saves the local backend: prefill tokens and seconds
per question, with reuse off (every prompt decoded from its first token) and on (the live KV
cache plus snapshots of long prompts, ``searchain.llm.kv_states``), for SearChain and
retrieve-read on the same HotpotQA questions, in one run.

    .venv/bin/python bench/prefix_reuse.py --n 5 [--model qwen2.5-coder-1.5b] [--json]

The LLM call cache is off, so every call runs. Reuse must not change what the model writes:
the bench counts the questions whose answers differ between the two settings (target 0).
The issue's goal is printed last: SearChain's seconds per question ≤ 2× retrieve-read's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # runnable from a checkout without installing

from searchain.llm.local import LocalLLM  # noqa: E402
from searchain.llm.models import DEFAULT_MODEL, model_path  # noqa: E402
from searchain.methods.registry import build_method  # noqa: E402
from searchain.retrieval import default_index  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "hotpotqa" / "dev_subsampled.jsonl"
METHODS = ("retrieve-read", "searchain")


def measure(llm: LocalLLM, method_name: str, questions: list[str], reuse: bool) -> dict[str, Any]:
    llm.prefix_reuse = reuse
    method = build_method(method_name, llm, default_index())
    stats = llm.prefix_states.stats
    p0, d0 = stats.prompt_tokens, stats.prefilled_tokens
    answers, t0 = [], time.perf_counter()
    for i, q in enumerate(questions, 1):
        answers.append(method.run(q).answer)
        print(f"\r{method_name} reuse={'on' if reuse else 'off'}: {i}/{len(questions)}",
              end="", file=sys.stderr, flush=True)  # fmt: skip
    print(file=sys.stderr)
    n = len(questions)
    return {
        "seconds_per_question": (time.perf_counter() - t0) / n,
        "prompt_tokens_per_question": (stats.prompt_tokens - p0) / n,
        "prefilled_tokens_per_question": (stats.prefilled_tokens - d0) / n,
        "answers": answers,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=5, help="questions (the first n of HotpotQA)")
    ap.add_argument("--model", default=DEFAULT_MODEL, help="an offline model name")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)

    with DATA.open(encoding="utf-8") as f:
        questions = [
            json.loads(ln)["question_text"] for _, ln in zip(range(args.n), f, strict=False)
        ]
    llm = LocalLLM(model_path(args.model), api="auto")
    build_method("retrieve-read", llm, default_index()).run("Who wrote Hamlet?")  # warm-up
    figures: dict[str, Any] = {"model": args.model, "form": llm.form, "questions": args.n}
    for name in METHODS:
        off = measure(llm, name, questions, reuse=False)
        on = measure(llm, name, questions, reuse=True)
        differ = sum(a != b for a, b in zip(off.pop("answers"), on.pop("answers"), strict=True))
        figures[name] = {"off": off, "on": on, "answers_differ": differ}
    rr, sc = figures["retrieve-read"], figures["searchain"]
    figures["searchain_over_retrieve_read"] = (
        sc["on"]["seconds_per_question"] / rr["on"]["seconds_per_question"]
    )
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"Prefix reuse, {args.model} ({llm.form} form), {args.n} HotpotQA questions")
    print("| method | reuse | prompt tokens/q | prefilled tokens/q | s/question | answers differ |")
    print("|---|---|---|---|---|---|")
    for name in METHODS:
        for mode in ("off", "on"):
            f = figures[name][mode]
            print(f"| {name} | {mode} | {f['prompt_tokens_per_question']:.0f} | "
                  f"{f['prefilled_tokens_per_question']:.0f} | {f['seconds_per_question']:.2f} | "
                  f"{figures[name]['answers_differ'] if mode == 'on' else ''} |")  # fmt: skip
        off, on = figures[name]["off"], figures[name]["on"]
        saved = 1 - on["prefilled_tokens_per_question"] / max(
            1, off["prefilled_tokens_per_question"]
        )
        speed = off["seconds_per_question"] / on["seconds_per_question"]
        print(f"|  {name}: prefill saved {saved:.0%}, speed-up {speed:.2f}× | | | | | |")
    ratio = figures["searchain_over_retrieve_read"]
    print(f"SearChain s/question ÷ retrieve-read s/question (reuse on): {ratio:.2f} (goal ≤ 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
