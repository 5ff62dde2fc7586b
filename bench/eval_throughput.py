"""Evaluation throughput against a real ``llama_cpp.server``: items/minute of ``searchain
eval``'s runner at --concurrency 1, 2, 4, 8, the speed-up over concurrency 1, and the
harness's overhead per item versus calling the method directly (same server, same items).

    .venv/bin/python -m bench.eval_throughput                       # 8 items, retrieve-read
    .venv/bin/python -m bench.eval_throughput --items 16 --method direct-prompting --json

llama_cpp.server (0.3.x) has no parallel slots: a global lock in its app serves one request
at a time. "Matching parallel slots" therefore means --servers match (the default): one
server process per concurrent item, each with --threads-per-server threads (on a 2-core
machine more servers only share the same cores). --servers 1 measures one shared server.
The LLM cache is off, so every call really runs; HotpotQA questions, the demo BM25 index.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import tempfile
import threading
import time

from searchain.eval.datasets import load_dataset
from searchain.eval.runner import Item, run
from searchain.llm.llama_server import llama_server
from searchain.llm.openai_backend import OpenAILLM
from searchain.methods.catalog import build_method
from searchain.retrieval import default_index


class RoundRobin:
    """One method per server; each call goes to the next one (thread-safe)."""

    def __init__(self, methods: list) -> None:
        self.methods, self._next, self._lock = methods, itertools.count(), threading.Lock()

    def __call__(self, question: str):
        with self._lock:
            i = next(self._next) % len(self.methods)
        return self.methods[i].run(question)


def methods_for(urls: list[str], name: str, index) -> list:
    return [build_method(name, OpenAILLM("gemma-3-270m", base_url=u), index) for u in urls]


def harness(items: list[Item], fn, concurrency: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        summary = run(items, {"m": fn}, tmp, concurrency=concurrency)
        return time.perf_counter() - t0, summary.failed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--items", type=int, default=8, help="HotpotQA questions per setting")
    ap.add_argument("--method", default="retrieve-read")
    ap.add_argument("--concurrency", default="1,2,4,8", help="comma-separated levels")
    ap.add_argument("--servers", default="match", help="'match' (one per slot) or a number")
    ap.add_argument("--threads-per-server", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    questions = load_dataset("hotpotqa", limit=args.items, seed=0)
    items = [Item(e.id, e.question) for e in questions]
    index = default_index()
    n_servers = max(levels) if args.servers == "match" else int(args.servers)
    rows, t_start = [], time.perf_counter()
    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(llama_server(n_threads=args.threads_per_server))
                for _ in range(n_servers)]  # fmt: skip
        started = time.perf_counter() - t_start
        # Warm-up: every server answers once (first requests pay for allocations).
        for m in methods_for(urls, args.method, index):
            m.run(items[0].question)
        # The baseline: the method called directly, one item after another, one server.
        direct = methods_for(urls[:1], args.method, index)[0]
        t0 = time.perf_counter()
        traces = {it.question: direct.run(it.question) for it in items}
        t_direct = time.perf_counter() - t0
        # The harness alone: the same items through the runner with the answers replayed
        # (threads, JSON of the full trace, fsync per item), free of the LLM's noise.
        t_pure, _ = harness(items, traces.__getitem__, 1)
        for c in levels:
            used = urls[: min(c, n_servers)]
            secs, failed = harness(items, RoundRobin(methods_for(used, args.method, index)), c)
            rows.append({"concurrency": c, "servers": len(used), "seconds": secs,
                         "failed": failed, "items_per_min": 60 * len(items) / secs})  # fmt: skip
    base = next((r for r in rows if r["concurrency"] == 1), rows[0])
    for r in rows:
        r["speedup"] = r["items_per_min"] / base["items_per_min"]
    overhead = (base["seconds"] - t_direct) / len(items) if base["concurrency"] == 1 else None
    result = {"method": args.method, "items": len(items), "servers_started_s": started,
              "direct_seconds": t_direct, "direct_items_per_min": 60 * len(items) / t_direct,
              "harness_overhead_s_per_item": overhead,
              "harness_alone_s_per_item": t_pure / len(items), "rows": rows}  # fmt: skip
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.method}, {len(items)} HotpotQA items, llama_cpp.server x{n_servers} "
          f"({args.threads_per_server} thread(s) each), LLM cache off")  # fmt: skip
    print(f"{'setting':<44}{'seconds':>9}{'items/min':>11}{'speed-up':>10}{'failed':>8}")
    print(f"{'method.run() directly, 1 server':<44}{t_direct:>9.2f}"
          f"{result['direct_items_per_min']:>11.1f}{'':>10}{'':>8}")  # fmt: skip
    for r in rows:
        label = f"eval runner, concurrency {r['concurrency']}, {r['servers']} server(s)"
        print(f"{label:<44}{r['seconds']:>9.2f}{r['items_per_min']:>11.1f}"
              f"{r['speedup']:>9.2f}x{r['failed']:>8}")  # fmt: skip
    per_item = t_direct / len(items)
    if overhead is not None:
        print(
            f"harness overhead per item, concurrency 1 minus direct: {overhead * 1000:+.1f} ms "
            f"({overhead / per_item * 100:+.1f} % of an item; includes LLM timing noise)"
        )
    print(f"harness alone per item (answers replayed): {t_pure / len(items) * 1000:.2f} ms "
          f"({t_pure / len(items) / per_item * 100:.2f} % of an item)")  # fmt: skip


if __name__ == "__main__":
    main()
