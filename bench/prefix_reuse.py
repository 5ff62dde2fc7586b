"""How close the local backend runs to the hardware's limit, and what prefix reuse saves:
per question, for each method, the prompt tokens, the tokens really prefilled, the *new*
tokens (those no earlier prompt, output or disk snapshot holds as a prefix: what an ideal
cache would still prefill), the generated tokens, the *ideal* seconds (prefilled ÷ prefill
rate + generated ÷ decode rate, both rates measured in the same run at the thread count
used, right before and right after each method and setting: the arm's rate is the mean of
the two, in seconds per token, since this machine's speed drifts by ~20 % between minutes),
the wall seconds, wall ÷ ideal and seconds ÷ retrieve-read's.

    .venv/bin/python -m bench.prefix_reuse --n 10 [--model qwen2.5-coder-1.5b] [--json]
        [--methods retrieve-read,searchain,searchain-last] [--settings off,prompts,on]
        [--threads N]
    .venv/bin/python -m bench.prefix_reuse --render results/prefix-reuse/MODEL.json

Settings: ``off`` decodes every prompt from its first token; ``prompts`` reuses the live KV
cache and snapshots of prompts (dialogue prefixes, and static prefixes kept on disk); ``on``
also the cells of what the model wrote, when a later prompt restates it (the default; those
cells were decoded one token at a time, off the prompt grid). Each method and
setting starts cold — no snapshot in memory or on disk, nothing counted as seen — so its
first question pays for its static prefixes. The
LLM call cache is off, so every call runs. Reuse must not change what the model writes:
the bench counts the questions whose answers differ from ``off``'s (target 0; each
difference is printed).
``searchain`` is SearChain with the paper's prompt (``question_position=instruction``),
``searchain-last`` with the default ``question_position=last`` (the CoQ instruction and
demos as one static prefix, the question after them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.kit import DATA
from searchain import prompts
from searchain.llm.local import LocalLLM
from searchain.llm.models import DEFAULT_MODEL, model_path
from searchain.methods.catalog import build_method
from searchain.retrieval import default_index

HOTPOTQA = DATA / "hotpotqa" / "dev_subsampled.jsonl"
METHODS = {
    "retrieve-read": ("retrieve-read", {}),
    "searchain": ("searchain", {"question_position": "instruction"}),  # the paper's prompt
    "searchain-last": ("searchain", {"question_position": "last"}),
}


def rates(llm: LocalLLM) -> dict[str, float]:
    """Prefill and decode tokens/s of the bare decode calls (no sampling, no Python around
    them), on the backend's own batch grid: the limit the methods are held against."""
    reuse, llm.prefix_reuse = llm.prefix_reuse, False
    text = prompts.fill("searchain/coq_multihop", question="Who directed Jaws?")
    tokens = llm.tokenize(text)[:512]
    with llm._lock:
        llm._prefill(tokens[:32])  # warm-up
        t0 = time.perf_counter()
        logits = llm._prefill(tokens)
        prefill = len(tokens) / (time.perf_counter() - t0)
        steps = 48
        t0 = time.perf_counter()
        for _ in range(steps):
            logits = llm._decode([int(logits.argmax())])
        decode = steps / (time.perf_counter() - t0)
    llm.prefix_reuse = reuse
    return {"prefill_tokens_per_s": prefill, "decode_tokens_per_s": decode}


MODES = {"off": (False, False), "prompts": (True, False), "on": (True, True)}


def mean_rates(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    """The rates of the time between two measurements: seconds per token averaged."""
    return {k: 2 / (1 / a[k] + 1 / b[k]) for k in a}


def measure(
    llm: LocalLLM, name: str, questions: list[str], mode: str, rates_before: dict[str, float]
) -> dict[str, Any]:
    llm.prefix_reuse, llm.reuse_outputs = MODES[mode]
    # Each method and setting starts cold: no snapshot in memory or on disk, nothing in the
    # live cache, nothing seen (so its first question pays for its static prefixes).
    os.environ["SEARCHAIN_CACHE_DIR"] = tempfile.mkdtemp(prefix="searchain-bench-kv-")
    if hasattr(llm._llama, "_searchain_states"):
        del llm._llama._searchain_states
    llm._llama._searchain_prompt_len = llm._llama._searchain_exact_len = 0
    method_name, options = METHODS[name]
    method = build_method(method_name, llm, default_index(), **options)
    s = llm.prefix_states.stats
    before = (s.prompt_tokens, s.prefilled_tokens, s.new_tokens, s.generated_tokens)
    answers, t0 = [], time.perf_counter()
    for i, q in enumerate(questions, 1):
        answers.append(method.run(q).answer)
        print(f"\r{name} reuse={mode}: {i}/{len(questions)}",
              end="", file=sys.stderr, flush=True)  # fmt: skip
    print(file=sys.stderr)
    n = len(questions)
    wall = (time.perf_counter() - t0) / n
    prompt, prefilled, new, generated = (
        (after - b) / n
        for after, b in zip(
            (s.prompt_tokens, s.prefilled_tokens, s.new_tokens, s.generated_tokens),
            before,
            strict=True,
        )
    )
    after = rates(llm)
    speed = mean_rates(rates_before, after)
    ideal = prefilled / speed["prefill_tokens_per_s"] + generated / speed["decode_tokens_per_s"]
    return {
        **speed,
        "rates_after": after,
        "prompt_tokens_per_question": prompt,
        "prefilled_tokens_per_question": prefilled,
        "new_tokens_per_question": new,
        "generated_tokens_per_question": generated,
        "ideal_seconds_per_question": ideal,
        "seconds_per_question": wall,
        "wall_over_ideal": wall / ideal if ideal else float("nan"),
        "prefilled_over_new": prefilled / new if new else float("nan"),
        "answers": answers,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    with HOTPOTQA.open(encoding="utf-8") as f:
        questions = [
            json.loads(ln)["question_text"] for _, ln in zip(range(args.n), f, strict=False)
        ]
    threads = args.threads or None
    llm = LocalLLM(model_path(args.model), api="auto", n_threads=threads)
    build_method("retrieve-read", llm, default_index()).run("Who wrote Hamlet?")  # warm-up
    rates(llm)  # thrown away: a process's first long prefill ran at 197 of ~350 tokens/s once
    speed = rates(llm)
    figures: dict[str, Any] = {
        "model": args.model, "form": llm.form, "questions": args.n,
        "threads": llm.n_threads,
        **speed,
    }  # fmt: skip
    for name in args.methods:
        runs = {}
        for m in args.settings:
            runs[m] = measure(llm, name, questions, m, speed)
            speed = runs[m].pop("rates_after")  # the next arm's "before"
        for mode in [m for m in runs if m != "off" and "off" in runs]:
            off, other = runs["off"]["answers"], runs[mode]["answers"]
            runs[mode]["differ"] = [
                {"question": q, "off": a, mode: b}
                for q, a, b in zip(questions, off, other, strict=True)
                if a != b
            ]
            if mode == "on":  # the key earlier runs were saved under
                figures[f"{name}:differ"] = runs[mode]["differ"]
        for mode, r in runs.items():
            r.pop("answers")
            figures[f"{name}:{mode}"] = r
    for mode in args.settings:
        rr = figures.get(f"retrieve-read:{mode}")
        for name in args.methods:
            f = figures[f"{name}:{mode}"]
            f["over_retrieve_read"] = (
                f["seconds_per_question"] / rr["seconds_per_question"] if rr else None
            )
    return figures


def table(figures: dict[str, Any], methods: list[str], settings: list[str]) -> str:
    arms = [figures[f"{n}:{m}"] for n in methods for m in settings]
    per_arm = all("prefill_tokens_per_s" in f for f in arms)  # runs before per-arm rates
    if per_arm:
        pre = [f["prefill_tokens_per_s"] for f in arms]
        dec = [f["decode_tokens_per_s"] for f in arms]
        measured = (f"prefill {min(pre):.1f}-{max(pre):.1f}, decode {min(dec):.1f}-"
                    f"{max(dec):.1f} tokens/s (each arm's ideal from the rates measured "
                    "right before and after it)")  # fmt: skip
    else:
        measured = (f"prefill {figures['prefill_tokens_per_s']:.1f} tokens/s, decode "
                    f"{figures['decode_tokens_per_s']:.1f} tokens/s")  # fmt: skip
    out = [
        f"Speed against the limit, {figures['model']} ({figures['form']} form), "
        f"{figures['questions']} HotpotQA questions in one process; measured {measured}",
        "",
        "| method | reuse | prompt tok/q | prefilled tok/q | new tok/q | prefilled ÷ new | "
        "generated tok/q | ideal s/q | wall s/q | wall ÷ ideal | ÷ retrieve-read | "
        "answers differ |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in methods:
        for mode in settings:
            f = figures[f"{name}:{mode}"]
            differ = f.get("differ", figures.get(f"{name}:differ") if mode == "on" else None)
            ratio = f["over_retrieve_read"]
            out.append(
                f"| {name} | {mode} | {f['prompt_tokens_per_question']:.0f} | "
                f"{f['prefilled_tokens_per_question']:.0f} | {f['new_tokens_per_question']:.0f} | "
                f"{f['prefilled_over_new']:.2f} | {f['generated_tokens_per_question']:.0f} | "
                f"{f['ideal_seconds_per_question']:.1f} | {f['seconds_per_question']:.1f} | "
                f"{f['wall_over_ideal']:.2f} | {'' if ratio is None else f'{ratio:.2f}'} | "
                f"{len(differ) if differ is not None else ''} |"
            )
    for name in methods:
        for mode in [m for m in settings if m != "off"]:
            f = figures[f"{name}:{mode}"]
            for d in f.get("differ", figures.get(f"{name}:differ") if mode == "on" else None) or []:
                out.append(f"\n{name} ({mode}): {d['question']!r}: off {d['off']!r} / "
                           f"{mode} {d[mode]!r}")  # fmt: skip
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=5, help="questions (the first n of HotpotQA)")
    ap.add_argument("--model", default=DEFAULT_MODEL, help="an offline model name")
    ap.add_argument("--threads", type=int, default=0, help="llama.cpp threads (0: default)")
    ap.add_argument("--methods", default="retrieve-read,searchain,searchain-last")
    ap.add_argument("--settings", default="off,prompts,on",
                    help="reuse settings to run: off, prompts, on")  # fmt: skip
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--render", type=Path, help="print the table of a run saved with --json")
    args = ap.parse_args(argv)
    if args.render:
        figures = json.loads(args.render.read_text(encoding="utf-8"))
        runs = [k.split(":") for k in figures if k.endswith(tuple(f":{m}" for m in MODES))]
        names, modes = [r[0] for r in runs], [r[1] for r in runs]
        print(table(figures, list(dict.fromkeys(names)), list(dict.fromkeys(modes))))
        return 0
    args.methods = [m for m in args.methods.split(",") if m]
    args.settings = [s for s in args.settings.split(",") if s]
    unknown = set(args.methods) - set(METHODS) | set(args.settings) - set(MODES)
    if unknown:
        ap.error(f"unknown method or setting: {', '.join(sorted(unknown))}")
    figures = run(args)
    print(
        json.dumps(figures, indent=2) if args.json else table(figures, args.methods, args.settings)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
