"""The sections of bench/quality.py's tables beyond scores and paired differences: what
each method costs per item, where SearChain's checked nodes got their answers, and the chart."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from bench.kit import part_of
from searchain.eval import report as rep
from searchain.eval.analyses import KNOWLEDGE_SOURCES, knowledge_source_split
from searchain.types import Trace


def costs(records: list[dict], methods: list[str], focus: str) -> list[str]:
    """What each method costs per item: LLM calls and prompt tokens (all items), and wall
    seconds over the items it answered without any cached call (a resumed run answers
    from the call cache in ~0 s), as a median and as a multiple of the focus method's."""
    med: dict[str, tuple[float, float, float | None, int]] = {}
    for m in methods:
        usage = [(r["trace"].get("usage") or {}, r.get("seconds")) for r in records
                 if r["method"] == m and r.get("trace")]  # fmt: skip
        fresh = [
            float(sec)
            for u, sec in usage  # answered with no cached call
            if sec is not None and u.get("llm_calls") and not u.get("cached_calls")
        ]
        calls = [u.get("llm_calls", 0) + u.get("cached_calls", 0) for u, _ in usage]
        tokens = [u.get("prompt_tokens", 0) for u, _ in usage]
        if usage:
            med[m] = (statistics.mean(calls), statistics.mean(tokens),
                      statistics.median(fresh) if fresh else None, len(fresh))  # fmt: skip
    if not med:
        return []
    base = med.get(focus, (0, 0, None, 0))[2]
    lines = ["", "Cost per item (seconds: median over the items answered with no cached "
             "call, on one llama.cpp thread):", "",
             f"| method | LLM calls | prompt tokens | s / item (items) | × {focus} |",
             "|---|---|---|---|---|"]  # fmt: skip
    for m, (calls, tokens, sec, n) in med.items():
        ratio = f"{sec / base:.2f}" if sec is not None and base else "–"
        secs = f"{sec:.0f} ({n})" if sec is not None else "–"
        lines.append(f"| {m} | {calls:.1f} | {tokens:.0f} | {secs} | {ratio} |")
    return lines


def knowledge_sources(records: list[dict], methods: list[str]) -> list[str]:
    """SearChain's checked nodes by where their knowledge came from (paper Table 2): why an
    ablation ties the full method (e.g. completion never fires when no node is unsolved)."""
    rows = []
    for m in methods:
        traces = [Trace.from_dict(r["trace"]) for r in records
                  if r["method"] == m and r.get("trace")]  # fmt: skip
        split = knowledge_source_split(traces)
        if m.startswith("searchain") and split["nodes"]:
            shares = " | ".join(f"{100 * split[s]:.0f} %" for s in KNOWLEDGE_SOURCES)
            rows.append(f"| {m} | {split['nodes']:.0f} | {shares} |")
    if not rows:
        return []
    return ["", "SearChain's checked nodes by the source of their answer (paper Table 2):", "",
            "| method | nodes | LLM | IR-corrected | IR-completed |", "|---|---|---|---|---|",
            *rows]  # fmt: skip


def chart(panels: list[tuple[rep.RunRecords, Any]], path: str | Path) -> Path:
    """One panel per set: each method's score on the items every method answered, with its
    95 % interval, and the paper's number (a diamond) where it has one."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4), squeeze=False)
    for ax, (run, recipe) in zip(axes[0], panels, strict=True):
        paired = rep.paired(run)
        rows = {r.method: r for r in rep.summarize([paired])}
        methods = [m for m in recipe.methods if m in rows and recipe.metric in rows[m].metrics]
        cells = [rows[m].metrics[recipe.metric] for m in methods]
        y = range(len(methods))
        err = [[100 * (c.mean - c.lo) for c in cells], [100 * (c.hi - c.mean) for c in cells]]
        ax.barh(y, [100 * c.mean for c in cells], xerr=err, capsize=3, color="#4c72b0")
        for i, m in enumerate(methods):
            paper = str(recipe.paper.get(m, "")).split(" ")[0]
            if paper.replace(".", "", 1).isdigit():  # "74.4 (59–94)" → 74.4
                ax.plot(float(paper), i, "D", color="#dd8452")
        ax.set_yticks(list(y), methods)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        n = len({r["id"] for r in paired.records})
        ax.set_title(f"{run.name}: {recipe.metric}, {n} items", fontsize=10)
    fig.text(0.01, 0.01, "bars: ours with 95 % CI; diamonds: the paper", fontsize=8)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


if __name__ == "__main__":
    part_of(__doc__, "python -m bench.quality table")
