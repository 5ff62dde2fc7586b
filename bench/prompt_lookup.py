"""Prompt-lookup (n-gram) speculative decoding in llama-cpp-python, against plain decoding, on a
copy-heavy prompt (the reader's and tracing's kind of output: spans of the prompt).

    SEARCHAIN_THREADS=1 .venv/bin/python -m bench.prompt_lookup --model qwen2.5-coder-0.5b

Prints both timings, their ratio and whether the greedy outputs are identical token for token.
llama-cpp-python's ``LlamaPromptLookupDecoding`` needs ``logits_all=True`` (without it the
first draft crashes on a logits shape mismatch, 0.3.36), which computes logits for every
prompt token: the prefill cost that this machine pays ~10x for (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from bench.kit import ROOT
from searchain.llm.models import model_path


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", default="qwen2.5-coder-0.5b")
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--draft", type=int, default=10, help="tokens proposed per lookup")
    args = p.parse_args()
    from llama_cpp import Llama
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    threads = int(os.environ.get("SEARCHAIN_THREADS", "1"))
    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")[:1500]
    prompt = f"Copy the following text exactly.\n\nText: {text}\n\nCopy: {text[:200]}"
    runs = {}
    for name in ("plain", "prompt-lookup"):
        draft = LlamaPromptLookupDecoding(num_pred_tokens=args.draft) if name != "plain" else None
        llm = Llama(model_path=str(model_path(args.model)), n_ctx=4096, n_threads=threads,
                    n_threads_batch=threads, verbose=False, logits_all=draft is not None,
                    draft_model=draft)  # fmt: skip
        t0 = time.perf_counter()
        out = llm.create_completion(prompt, max_tokens=args.tokens, temperature=0.0)
        runs[name] = {"seconds": round(time.perf_counter() - t0, 2),
                      "text": out["choices"][0]["text"], "usage": out["usage"]}  # fmt: skip
        del llm
    plain, lookup = runs["plain"], runs["prompt-lookup"]
    print(json.dumps({
        "model": args.model, "threads": threads,
        "plain_s": plain["seconds"], "prompt_lookup_s": lookup["seconds"],
        "prompt_lookup_over_plain": round(lookup["seconds"] / plain["seconds"], 2),
        "identical": plain["text"] == lookup["text"], "usage": plain["usage"],
    }, indent=2))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
