"""Choose SearChain's route rule (``chain_when``) offline, on tune items only.

The tune runs (``bench/model_runs/searchain_route_tune.sh``) answer every tune question with
``route=read-first, chain_when=always``: each record holds the first read's answer, every
trigger's signal (``meta.route.signals``) and the chained answer. A rule (a set of triggers)
picks, per question, the chain's answer when one of its triggers fired and the first read's
otherwise — what that rule would have answered, without running it again (the chain's calls
do not depend on the rule: the first read is made the same way whatever the triggers).

**The choice, registered before the tune records were read** (when 6 of the real-documentation
records existed, this script's smoke test printed its table of them): the rule with the most right
answers pooled over both tune sets (the real-documentation tune questions scored by their
short-answer golds, ``right_short``; HotpotQA's tune items by cover-EM of the short answer);
ties go to the rule that chains least often (cost), then to the one with fewer triggers. Rules:
every subset of ``two-parts, no-answer, unstated, uncited, reader-disagrees`` (the empty one is
"never chain": the first read alone), and ``always``.

**The second round, registered before its records were read** (2026-12-02, when none of the
fresh documentation answers and 5 of the fresh HotpotQA answers existed; none was looked at):
the same rule, the same rules and the same ties, on every tune item of both rounds pooled —
the 24 + 32 documentation tune questions and HotpotQA tune items 1–40
(``bench/model_runs/searchain_route_tune_fresh.sh``). The first round's 44 items gave a
choice whose every difference was inside the noise, and on the reported 53 the chosen rule
answered fewer questions than the first read alone (results/searchain-route/README.md);
that is why a second round was run, not a reason to pick another rule: the rule is chosen
by the criterion above, on tune items only. Each file is a column of the table, so a rule
that wins one round and loses the other shows it.

    D=results/real-docs; Q=results/quality/qwen2.5-coder-1.5b/tune
    .venv/bin/python -m bench.searchain_route \\
        --docs $D/tune/qwen2.5-coder-1.5b/searchain-route-always.jsonl \\
               $D/tune-fresh/qwen2.5-coder-1.5b/searchain-route-always.jsonl \\
        --hotpotqa $Q/hotpotqa-route-always/results.jsonl \\
                   $Q/hotpotqa-route-always-fresh/results.jsonl \\
        [--out results/searchain-route/tune-round2.md]
"""

from __future__ import annotations

import argparse
import itertools
import json
from dataclasses import dataclass
from pathlib import Path

from bench.kit import print_and_keep
from searchain.eval.bootstrap import bootstrap_ci
from searchain.eval.datasets.named import load_dataset
from searchain.scoring.item import score_item

CANDIDATES = ("two-parts", "no-answer", "unstated", "uncited", "reader-disagrees")


@dataclass(frozen=True)
class Item:
    """One tune question: the set it is from, whether the first read and the chain were
    right, and which triggers fired."""

    set: str
    id: str
    read_right: float
    chain_right: float
    fired: frozenset[str]


def docs_items(path: Path) -> list[Item]:
    name = f"docs {path.parent.parent.name}"  # the question set: tune, tune-fresh
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        route = r.get("route") if r.get("status") == "ok" else None
        if not route:
            continue
        signals = route["signals"]
        out.append(Item(name, r["id"], float(route["first_read"]["right_short"]),
                        float(r["right_short"]), fired(signals)))  # fmt: skip
    return out


def hotpotqa_items(path: Path) -> list[Item]:
    golds = {e.id: e for e in load_dataset("hotpotqa", seed=None)}
    name = (
        f"hotpotqa {path.parent.name.removeprefix('hotpotqa-route-always').strip('-') or 'first'}"
    )
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        route = ((r.get("trace") or {}).get("meta") or {}).get("route")
        if r.get("status") != "ok" or not route:
            continue
        gold = {"answers": golds[r["id"]].answers}
        first = score_item(route["first_read"]["answer"] or "", gold, "multihop")
        out.append(Item(name, r["id"], first.get("cover_em", 0.0),
                        float(r["metrics"]["cover_em"]), fired(route["signals"])))  # fmt: skip
    return out


def fired(signals: dict) -> frozenset[str]:
    return frozenset(t for t in CANDIDATES if signals.get(t) is True)


def rules() -> list[tuple[str, ...]]:
    subsets = [c for n in range(len(CANDIDATES) + 1) for c in itertools.combinations(CANDIDATES, n)]
    return [*subsets, ("always",)]


def answers(rule: tuple[str, ...], items: list[Item]) -> tuple[list[float], int]:
    """Each item's score under ``rule``, and how many items it chains."""
    scores, chained = [], 0
    for it in items:
        chains = rule == ("always",) or bool(it.fired & set(rule))
        chained += chains
        scores.append(it.chain_right if chains else it.read_right)
    return scores, chained


def table(items: list[Item]) -> tuple[str, tuple[str, ...]]:
    sets = sorted({it.set for it in items})
    rows = []
    for rule in rules():
        pooled, chained = answers(rule, items)
        per_set = [sum(answers(rule, [i for i in items if i.set == s])[0]) for s in sets]
        rows.append((rule, sum(pooled), chained, per_set))
    # the registered choice: most right, then fewest chained, then fewest triggers
    best = max(rows, key=lambda r: (r[1], -r[2], -len(r[0])))[0]
    head = f"| rule (chain when) | right of {len(items)} | chained | " + " | ".join(
        f"right, {s} ({sum(1 for i in items if i.set == s)})" for s in sets
    )
    lines = [head + " |", "|---" * (3 + len(sets)) + "|"]
    for rule, right, chained, per_set in sorted(rows, key=lambda r: (-r[1], r[2], len(r[0]))):
        name = ",".join(rule) or "never (the first read alone)"
        mark = " **(chosen)**" if rule == best else ""
        cells = " | ".join(f"{x:g}" for x in per_set)
        lines.append(f"| `{name}`{mark} | {right:g} | {chained} | {cells} |")
    return "\n".join(lines), best


def triggers(items: list[Item]) -> str:
    """How often each trigger fired, and what chaining did where it fired."""
    lines = ["| trigger | fired | chain right where fired | first read right where fired |",
             "|---|---|---|---|"]  # fmt: skip
    for t in CANDIDATES:
        where = [i for i in items if t in i.fired]
        chain = sum(i.chain_right for i in where)
        read = sum(i.read_right for i in where)
        lines.append(f"| `{t}` | {len(where)} | {chain:g} | {read:g} |")
    return "\n".join(lines)


def paired(rule: tuple[str, ...], items: list[Item]) -> str:
    """The chosen rule against the first read alone and against always chaining."""
    chosen, _ = answers(rule, items)
    out = []
    for name, other in (("the first read alone", ()), ("always chaining", ("always",))):
        base, _ = answers(other, items)
        diffs = [a - b for a, b in zip(chosen, base, strict=True)]
        mean, lo, hi = bootstrap_ci(diffs, seed=0)
        won, lost = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
        out.append(f"* chosen − {name}: {100 * mean:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}] "
                   f"points ({won} won, {lost} lost)")  # fmt: skip
    added = sum(1 for i in items if i.chain_right > i.read_right)
    lost = sum(1 for i in items if i.chain_right < i.read_right)
    out.append(f"* always chaining, against the first read: the chain added {added} right "
               f"answers and lost {lost}")  # fmt: skip
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--docs",
        type=Path,
        nargs="+",
        default=[],
        help="real-documentation tune records (one file a round)",
    )
    p.add_argument(
        "--hotpotqa",
        type=Path,
        nargs="+",
        default=[],
        help="HotpotQA tune runs' results.jsonl (one file a round)",
    )
    p.add_argument("--out", type=Path, help="also write the Markdown here")
    args = p.parse_args()
    items = [it for path in args.docs for it in docs_items(path)]
    items += [it for path in args.hotpotqa for it in hotpotqa_items(path)]
    if not items:
        raise SystemExit("no tune records with a route: give --docs and/or --hotpotqa")
    rule_table, best = table(items)
    chosen = f"## The chosen rule: `{','.join(best) or 'never'}`"
    parts = ["## Route rules on the tune items", rule_table, "## Each trigger", triggers(items)]
    text = "\n\n".join([*parts, chosen, paired(best, items)])
    print_and_keep(text, args.out)


if __name__ == "__main__":
    main()
