"""Is any SearChain node labelled "verified" that IR did not confirm? (issue 41)

For each SearChain record of a run: the nodes labelled verified, and among them those whose
reader disagreed with the node's answer (the reader's answer is not in it) or whose reader's
confidence was at or below θ — each of them a label that claims more than was checked. With
``--against OLD_RUN`` it also counts the items whose answer differs from the older run's.

    .venv/bin/python bench/node_labels.py results/confidence/hotpotqa-100-new \\
        --against results/quality/qwen2.5-coder-1.5b/hotpotqa-100
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from searchain.eval.runner import read_results  # noqa: E402
from searchain.text import contains_answer  # noqa: E402


def overclaimed(node: dict, theta: float | None) -> str | None:
    """Why a node labelled verified was not confirmed by IR, or None when it was."""
    reader = node["meta"].get("reader") or {}
    nli = node["meta"].get("nli")
    if nli is not None:  # a yes/no node checked by the judge
        return None if nli.get("verdict") == "entailed" else "the judge did not find it supported"
    confidence = reader.get("confidence")
    if confidence is None or (theta is not None and confidence <= theta):
        return "the reader was not confident"
    if not contains_answer(node.get("answer") or "", reader.get("answer") or ""):
        return "the reader disagreed"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--against", type=Path, help="an older run of the same items")
    args = parser.parse_args()
    statuses: collections.Counter[str] = collections.Counter()
    why: collections.Counter[str] = collections.Counter()
    answers = {}
    for r in read_results(args.run):
        if r.get("method") != "searchain" or r.get("status") != "ok":
            continue
        trace = r["trace"]
        answers[r["id"]] = trace["answer"]
        theta = trace["meta"].get("theta")
        for node in trace["nodes"]:
            status = node["meta"].get("status")
            if node["source"] == "question" or status is None:
                continue
            statuses[status] += 1
            if status == "verified" and (reason := overclaimed(node, theta)):
                why[reason] += 1
    print(f"{args.run.name}: {len(answers)} SearChain items; node labels: {dict(statuses)}")
    print(f"labelled verified without IR's confirmation: {sum(why.values())} {dict(why)}")
    if args.against:
        old = {r["id"]: r["trace"]["answer"] for r in read_results(args.against)
               if r.get("method") == "searchain" and r.get("status") == "ok"}  # fmt: skip
        shared = [i for i in answers if i in old]
        changed = [i for i in shared if answers[i].strip() != old[i].strip()]
        name = args.against.name
        print(f"against {name}: {len(shared)} shared items, {len(changed)} answers differ")
        for i in changed:
            print(f"  {i}: {old[i]!r} -> {answers[i]!r}")


if __name__ == "__main__":
    main()
