"""SearChain's routes in one run of a benchmark data set: how often it answered in one read
and how often it chained, each route's cover-EM, and what the chain changed over the first
read (right answers it added and lost) — issue 62's "reported beside them".

Each record's ``meta.route`` keeps the first read's short answer (``first_read.answer``); it is
scored here against the data set's golds as the run scored the final answer (cover-EM of the
short answer, ``scoring.score_item``). A record answered in one read has no other answer, so
its first read must score as its final one: a mismatch is counted and shown, never hidden.

    .venv/bin/python -m bench.route_breakdown \\
        results/quality/qwen2.5-coder-1.5b/hotpotqa-100-route --dataset hotpotqa
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from searchain.eval.datasets import load_dataset
from searchain.eval.runner import read_results
from searchain.scoring import score_item


@dataclass(frozen=True, slots=True)
class Routed:
    id: str
    taken: str  # "read" or "chain"
    right: float  # the final answer's cover-EM (as recorded)
    first_right: float  # the first read's answer's cover-EM
    why: tuple[str, ...]


def routed_records(records: list[dict], golds: dict[str, list[str]], method: str) -> list[Routed]:
    """The finished records of ``method`` that went through the router (``meta.route``)."""
    out = []
    for r in records:
        if r.get("method") != method or r.get("status") != "ok":
            continue
        route = ((r.get("trace") or {}).get("meta") or {}).get("route")
        if not route:
            continue
        if r["id"] not in golds:
            raise SystemExit(f"item {r['id']} is not in the data set: was it run on another?")
        first = (route.get("first_read") or {}).get("answer") or ""
        first_right = score_item(first, {"answers": golds[r["id"]]}, "multihop")["cover_em"]
        right = float((r.get("metrics") or {}).get("cover_em", 0.0))
        why = tuple(route.get("why") or ())
        out.append(Routed(r["id"], route["taken"], right, first_right, why))
    return out


def table(routed: list[Routed]) -> list[str]:
    lines = ["| route | questions | right (cover-EM) |", "|---|---|---|"]
    for taken, words in (("read", "answered in one read"), ("chain", "chained")):
        of = [r for r in routed if r.taken == taken]
        lines.append(f"| {words} | {len(of)} | {_count(r.right for r in of)} |")
    chained = [r for r in routed if r.taken == "chain"]
    lines.append(f"| chained: its first read's answer | {len(chained)} | "
                 f"{_count(r.first_right for r in chained)} |")  # fmt: skip
    lines.append(f"| all | {len(routed)} | {_count(r.right for r in routed)} |")
    added = sum(1 for r in chained if r.right > r.first_right)
    lost = sum(1 for r in chained if r.right < r.first_right)
    lines += ["", f"The chain added {added} right answers over the first read and lost {lost}."]
    mismatched = [r.id for r in routed if r.taken == "read" and r.right != r.first_right]
    if mismatched:
        lines.append(
            f"Answered in one read but scored unlike the first read: {', '.join(mismatched)}."
        )
    reasons = Counter(w for r in chained for w in r.why)
    if reasons:
        lines += ["", "Why it chained:"] + [f"- {w} ({n})" for w, n in reasons.most_common()]
    return lines


def _count(values) -> str:  # type: ignore[no-untyped-def]
    values = list(values)
    right = int(sum(values))
    return f"{right} ({100 * right / len(values):.1f} %)" if values else "0"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", type=Path, help="a run directory (results.jsonl)")
    p.add_argument("--dataset", required=True, help="the data set the run answered (its golds)")
    p.add_argument("--method", default="searchain")
    args = p.parse_args()
    golds = {ex.id: list(ex.answers) for ex in load_dataset(args.dataset, limit=None)}
    routed = routed_records(read_results(args.run), golds, args.method)
    if not routed:
        raise SystemExit(f"{args.run} holds no routed record of {args.method}")
    print("\n".join(table(routed)))


if __name__ == "__main__":
    main()
