"""The issue-17 table from the chat/completions runs of Qwen2.5-Coder-1.5B-Instruct on the
first 20 shared HotpotQA questions: cover-EM per method and form on the items both runs
finished, empty answers, and how often IR corrected SearChain's nodes.

    .venv/bin/python scripts/chat_table.py results/chat-hotpotqa
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def records(run: Path) -> dict[tuple[str, str], dict]:
    out = {}
    for line in (run / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        out[(r["method"], r["id"])] = r  # the last attempt wins
    return out


def main(root: Path) -> None:
    runs = {form: records(root / form) for form in ("chat", "completions")}
    methods = ["direct-prompting", "retrieve-read", "self-ask", "searchain"]
    ids = set.intersection(*({i for _, i in recs} for recs in runs.values()))
    ids = {i for i in ids if all((m, i) in recs for m in methods for recs in runs.values())}
    print(f"items both forms finished with every method: {len(ids)}\n")
    print(
        "| form | "
        + " | ".join(methods)
        + " | SearChain empty answers | SearChain questions IR-corrected |"
    )
    print("|---" * (len(methods) + 3) + "|")
    for form, recs in runs.items():
        cells, empty, corrected = [], 0, 0
        for m in methods:
            scores = [recs[(m, i)]["metrics"].get("cover_em", 0.0) for i in sorted(ids)]
            cells.append(f"{100 * sum(scores) / max(len(scores), 1):.0f}")
        for i in ids:
            t = recs[("searchain", i)].get("trace") or {}
            empty += not (t.get("answer") or "").strip()
            corrected += any(n.get("source") == "ir-corrected" for n in t.get("nodes", []))
        print(
            f"| {form} | " + " | ".join(cells) + f" | {empty}/{len(ids)} | {corrected}/{len(ids)} |"
        )
    fmt = defaultdict(int)
    for i in ids:
        t = runs["completions"][("self-ask", i)].get("trace") or {}
        fmt["self-ask completions: no follow-up"] += not any(
            n.get("passages") for n in t.get("nodes", [])
        )
    print("\n" + ", ".join(f"{k}: {v}/{len(ids)}" for k, v in fmt.items()))


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "results/chat-hotpotqa"))
