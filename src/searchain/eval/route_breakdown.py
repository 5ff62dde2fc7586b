"""SearChain's routes in a recorded run: how often it answered in one read and how often it
chained, each route's cover-EM, and what the chain changed over the first read — the right
answers it added and those it lost (issue 62's "reported beside them").

Each trace's ``meta.route`` keeps the first read's short answer (``first_read.answer``); it is
scored against the item's gold as ``searchain eval`` scores a final answer, and the final
answer is scored again beside it (``scoring.score_trace``: both by today's scoring, so a run
recorded before a scoring change compares like with like; ``report --rescore`` agrees). A
record answered in one read has no other answer, so its first read must score as its final
one: a mismatch is listed, never hidden. ``searchain report`` prints the breakdown for every
method whose traces were routed; ``bench/route_breakdown.py`` for one run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from searchain.scoring import score_item, score_trace
from searchain.types import Trace


@dataclass(frozen=True, slots=True)
class Routed:
    id: str
    taken: str  # "read" or "chain"
    right: float  # the final answer's cover-EM
    first_right: float  # the first read's answer's cover-EM
    why: tuple[str, ...]  # why it chained (empty when it did not)


def routed_records(
    records: Iterable[dict[str, Any]], golds: dict[str, dict], method: str
) -> list[Routed]:
    """The finished records of ``method`` that went through the router (``meta.route``);
    ``golds`` by item id (``eval.rescore.run_golds``). An item without a gold is an error:
    the records were not made on that data set."""
    out = []
    for r in records:
        if r.get("method") != method or r.get("status") != "ok":
            continue
        route = ((r.get("trace") or {}).get("meta") or {}).get("route")
        if not route:
            continue
        if r["id"] not in golds:
            raise KeyError(f"item {r['id']} has no gold: were the records made on another set?")
        gold = golds[r["id"]]
        first = (route.get("first_read") or {}).get("answer") or ""
        # As score_trace scores a final answer: its task, "open" when the gold names none.
        first_right = score_item(first, gold, gold.get("task") or "open").get("cover_em", 0.0)
        # The final answer is scored again too: both by today's scoring, never a recorded
        # figure beside a new one (a record made before a scoring fix would mix the two).
        right = score_trace(Trace.from_dict(r["trace"]), gold).get("cover_em", 0.0)
        why = tuple(route.get("why") or ())
        out.append(Routed(r["id"], route["taken"], right, first_right, why))
    return out


def routed_methods(records: Iterable[dict[str, Any]]) -> list[str]:
    """The methods of a run whose traces carry a route, in their first record's order."""
    seen: dict[str, None] = {}
    for r in records:
        if ((r.get("trace") or {}).get("meta") or {}).get("route"):
            seen.setdefault(r["method"], None)
    return list(seen)


def breakdown_table(routed: list[Routed]) -> list[str]:
    """The routes as a Markdown table, what the chain added and lost, and why it chained."""
    chained = [r for r in routed if r.taken == "chain"]
    lines = ["| route | questions | right (cover-EM) |", "|---|---|---|"]
    for taken, words in (("read", "answered in one read"), ("chain", "chained")):
        of = [r.right for r in routed if r.taken == taken]
        lines.append(f"| {words} | {len(of)} | {_count(of)} |")
    firsts = [r.first_right for r in chained]
    lines.append(f"| chained: its first read's answer | {len(firsts)} | {_count(firsts)} |")
    lines.append(f"| all | {len(routed)} | {_count([r.right for r in routed])} |")
    added = sum(1 for r in chained if r.right > r.first_right)
    lost = sum(1 for r in chained if r.right < r.first_right)
    lines += ["", f"The chain added {added} right answers over the first read and lost {lost}."]
    mismatched = [r.id for r in routed if r.taken == "read" and r.right != r.first_right]
    if mismatched:
        ids = ", ".join(mismatched)
        lines.append(f"Answered in one read but scored unlike the first read: {ids}.")
    reasons = Counter(w for r in chained for w in r.why)
    if reasons:
        lines += ["", "Why it chained:", *(f"- {w} ({n})" for w, n in reasons.most_common())]
    return lines


def _count(values: list[float]) -> str:
    right = int(sum(values))
    return f"{right} ({100 * right / len(values):.1f} %)" if values else "0"
