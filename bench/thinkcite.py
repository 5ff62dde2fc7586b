"""Think&Cite cost against the MCTS budget, and what reuse saves.

    .venv/bin/python -m bench.thinkcite --n 2 --iterations 5,10,30      # table; --json for scripts

Questions: ALCE demo questions (ASQA, ELI5) not shown in the prompt, over a BM25 index of all
ALCE demo documents (60 passages from ../shared/data/alce/prompts). The embedded model is the
policy and the LLM NLI judge (R_a); R_g off (--reward-reference none) unless --reward-reference
names its reference model (a GGUF, an embedded name), against --reward-model (default: policy).

Per budget and question: real LLM calls, prompt/completion tokens, seconds, tree size, and the
calls reuse saved within the run — repeated identical calls served by the in-run call cache,
NLI judgements and R_g sentence ratios served from their memos (each would cost two scoring
calls), retrievals served from the per-query cache. "naive" = real + saved: what the same
search costs when every step re-asks (the research code re-encodes and re-queries).
Finally, the largest budget is re-run on a persistent call store filled by the smaller ones:
child sampling is seeded by the node's place in the tree, so a longer search repeats a shorter
one's calls and only pays for the new part.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from bench.kit import DATA
from searchain.llm import CachedLLM, SqliteStore
from searchain.llm.local import LocalLLM
from searchain.methods.catalog import build_method
from searchain.retrieval import BM25Index
from searchain.types import Passage

ALCE_DEMOS = DATA / "alce" / "prompts"
FAMILIES = ("asqa", "qampari", "eli5")


def load(family: str) -> dict[str, Any]:
    return json.loads((ALCE_DEMOS / f"{family}_default.json").read_text())


def questions(n: int) -> list[tuple[str, str]]:
    # Demos 0-1 are in the prompt (n_demos=2); 2-3 of ASQA and ELI5 are the questions.
    pool = [(fam, load(fam)["demos"][i]["question"]) for i in (2, 3) for fam in ("asqa", "eli5")]
    return pool[:n]


def build_index(tmp: Path) -> BM25Index:
    passages = [
        Passage(f"{fam}-{i}-{j}", d["text"], d["title"])
        for fam in FAMILIES
        for i, demo in enumerate(load(fam)["demos"])
        for j, d in enumerate(demo["docs"])
    ]
    return BM25Index.build(passages, tmp / "alce-idx", show_progress=False)


def run_one(
    llm: Any, index: BM25Index, family: str, q: str, opts: dict[str, Any], traces: Path | None
) -> dict:
    method = build_method("thinkcite", llm, index, family=family, **opts)
    t0 = time.perf_counter()
    trace = method.run(q)
    seconds = time.perf_counter() - t0
    if traces is not None:  # the whole tree, for `searchain serve` or a look at why it stopped
        traces.mkdir(parents=True, exist_ok=True)
        name = f"{opts['max_iterations']}-{family}-{zlib.crc32(q.encode()):08x}.json"
        (traces / name).write_text(json.dumps(trace.to_dict(), indent=1))
    reuse = trace.meta["reuse"]
    saved = trace.usage.cached_calls + 2 * reuse["nli_memo_hits"] + 2 * reuse["rg_memo_hits"]
    return {
        "question": q,
        "iterations": trace.meta["iterations"],
        "stopped": trace.meta["stopped"],  # budget | exhausted | failures
        "failed_expansions": trace.meta["failed_expansions"],
        "nodes": trace.meta["tree_size"],
        "llm_calls": trace.usage.llm_calls,
        "saved_calls": saved,
        "naive_calls": trace.usage.llm_calls + saved,
        "retrievals": reuse["retrieval_calls"],
        "retrieval_hits": reuse["retrieval_cache_hits"],
        "prompt_tokens": trace.usage.prompt_tokens,
        "completion_tokens": trace.usage.completion_tokens,
        "seconds": round(seconds, 2),
        "partial": trace.meta["partial"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=2, help="questions (up to 4)")
    ap.add_argument("--iterations", default="5,10,30", help="MCTS budgets to compare")
    ap.add_argument("--children", type=int, default=3)
    ap.add_argument("--reflections", type=int, default=2, help="reflection limit per child")
    ap.add_argument("--reward-reference", default="none", help="R_g's reference model (none: off)")
    ap.add_argument("--reward-model", default="policy", help="R_g's reward model")
    ap.add_argument(
        "--no-cross",
        dest="cross",
        action="store_false",
        help="skip the cross-run figure (it re-runs every budget on one call store)",
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--traces",
        type=Path,
        default=None,
        help="write every run's full trace (JSON) into this directory",
    )
    args = ap.parse_args()
    budgets = [int(x) for x in args.iterations.split(",")]
    base = LocalLLM()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        index = build_index(Path(tmp))
        store = SqliteStore(Path(tmp) / "calls.sqlite")  # for the cross-run reuse figure
        for budget in budgets:
            opts = dict(max_iterations=budget, n_children=args.children,
                        max_reflections=args.reflections, reward_model=args.reward_model,
                        reward_reference=args.reward_reference)  # fmt: skip
            for family, q in questions(args.n):
                # A fresh client per run: in-run reuse only, nothing from earlier runs.
                row = run_one(base, index, family, q, opts, args.traces)
                rows.append({"budget": budget, **row})
                print(json.dumps(rows[-1]), file=sys.stderr)
        # Cross-run: fill the store with the smaller budgets, then run the largest on it.
        cross = []
        for family, q in questions(args.n) if args.cross else []:
            for budget in budgets:
                opts = dict(max_iterations=budget, n_children=args.children,
                            max_reflections=args.reflections, reward_model=args.reward_model,
                        reward_reference=args.reward_reference)  # fmt: skip
                row = run_one(CachedLLM(base, store), index, family, q, opts, None)
            cross.append(row)  # the largest budget, after the smaller ones
    out = {"per_run": rows, "largest_budget_after_smaller": cross}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print("| iterations | done | stopped | nodes | LLM calls | tokens in / out | seconds | "
          "saved calls (naive) | retrieval hits |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for budget in budgets:
        rs = [r for r in rows if r["budget"] == budget]
        m = len(rs)

        def avg(k: str, rs: list[dict] = rs, m: int = m) -> float:
            return sum(r[k] for r in rs) / m

        why = ", ".join(sorted({f"{r['stopped']} ({r['failed_expansions']} failed)" for r in rs}))
        print(f"| {budget} | {avg('iterations'):.1f} | {why} | {avg('nodes'):.1f} | "
              f"{avg('llm_calls'):.1f} | {avg('prompt_tokens'):.0f} / "
              f"{avg('completion_tokens'):.0f} | {avg('seconds'):.1f} | {avg('saved_calls'):.1f} "
              f"({avg('naive_calls'):.1f}) | {avg('retrieval_hits'):.1f}/"
              f"{avg('retrievals'):.1f} |")  # fmt: skip
    print()
    largest = [r for r in rows if r["budget"] == budgets[-1]]
    for fresh, again in zip(largest, cross, strict=False):
        print(f"budget {budgets[-1]} after smaller budgets: {again['llm_calls']} real calls "
              f"instead of {fresh['llm_calls']} ({again['seconds']} s instead of "
              f"{fresh['seconds']} s) - {fresh['question'][:50]}")  # fmt: skip


if __name__ == "__main__":
    main()
