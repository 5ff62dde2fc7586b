"""SearChain on HotpotQA with the embedded model: the paper's Table 5 (efficiency) and Table 2
(knowledge sources), plus how much wall time is spent outside the LLM.

    .venv/bin/python -m bench.searchain_efficiency --n 50   # a table; --json for scripts

Input/output words are counted on every LLM call a question makes (chain generation, the
reader, tracing), as the paper counts the words sent to and received from the LLM.
The LLM call cache is off so that every call really runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from bench.kit import DATA
from searchain.llm import LLM, GenerationParams, make_llm
from searchain.methods.catalog import build_method
from searchain.retrieval import default_index
from searchain.text import contains_answer
from searchain.types import CompletionResult

HOTPOTQA = DATA / "hotpotqa" / "dev_subsampled.jsonl"


class WordCounter(LLM):
    """Counts the words of every prompt and completion passing through to ``inner``."""

    def __init__(self, inner: LLM) -> None:
        super().__init__(inner.model, inner.defaults)
        self.inner, self.backend = inner, inner.backend
        self.words_in = self.words_out = 0

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        result = self.inner.complete(prompt, params)
        self.words_in += len(prompt.split())
        self.words_out += sum(len(c.text.split()) for c in result.completions)
        return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=50, help="questions (the first n of the file)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()

    with HOTPOTQA.open() as f:
        items = [json.loads(line) for _, line in zip(range(args.n), f, strict=False)]
    index = default_index()
    llm = WordCounter(make_llm("local", model="gemma-3-270m", cache=False))  # as measured before
    method = build_method("searchain", llm, index)
    method.run("warm-up: who wrote Hamlet?")  # load the model and the embedder once

    rows: list[dict[str, Any]] = []
    sources = {"llm": 0, "ir-corrected": 0, "ir-completed": 0}
    for i, item in enumerate(items, 1):
        llm.words_in = llm.words_out = 0
        t0 = time.perf_counter()
        trace = method.run(item["question_text"])
        wall = time.perf_counter() - t0
        golds = [s for a in item["answers_objects"] for s in a["spans"]]
        for node in trace.nodes:
            if node.meta.get("status") in ("verified", "corrected", "completed"):
                sources[node.source] += 1
        rows.append(
            {
                "words_in": llm.words_in,
                "words_out": llm.words_out,
                "rounds": trace.rounds,
                "seconds": wall,
                "llm_seconds": trace.usage.llm_seconds,
                "cover_em": any(contains_answer(trace.final_content, g) for g in golds),
            }
        )
        print(f"\r{i}/{len(items)} questions", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)

    total_nodes = sum(sources.values()) or 1
    wall = sum(r["seconds"] for r in rows)
    outside = (wall - sum(r["llm_seconds"] for r in rows)) / wall
    figures = {
        "questions": len(rows),
        "input_words": statistics.mean(r["words_in"] for r in rows),
        "output_words": statistics.mean(r["words_out"] for r in rows),
        "rounds": statistics.mean(r["rounds"] for r in rows),
        "seconds_per_question": wall / len(rows),
        "share_outside_llm": outside,
        "knowledge_sources": {k: v / total_nodes for k, v in sources.items()},
        "cover_em": statistics.mean(r["cover_em"] for r in rows),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    ks = figures["knowledge_sources"]
    print(f"SearChain, embedded Gemma 3 270M, {len(rows)} HotpotQA questions")
    print("| input words | output words | rounds | s/question | outside LLM |")
    print("|---|---|---|---|---|")
    print(
        f"| {figures['input_words']:.0f} | {figures['output_words']:.0f} | "
        f"{figures['rounds']:.2f} | {figures['seconds_per_question']:.2f} | {outside:.1%} |"
    )
    print("Paper (gpt-3.5-turbo): 390 | 189 | 2.21 | 8.52 s")
    print(
        f"Knowledge sources of ToR nodes: LLM {ks['llm']:.1%}, corrected by IR "
        f"{ks['ir-corrected']:.1%}, completed by IR {ks['ir-completed']:.1%} "
        f"(paper: 74.56 / 20.94 / 4.50 %); cover-EM {figures['cover_em']:.1%}"
    )


if __name__ == "__main__":
    main()
