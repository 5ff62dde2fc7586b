"""``searchain report``: methods × metrics with 95 % bootstrap confidence intervals, as
Markdown, CSV and a PNG bar chart."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchain.eval.bootstrap import bootstrap_ci
from searchain.eval.run_records import RunLike, RunRecords, load
from searchain.trace_extras import ChainExtras


@dataclass(slots=True)
class Cell:
    mean: float
    lo: float
    hi: float

    def __str__(self) -> str:
        return f"{100 * self.mean:.1f} [{100 * self.lo:.1f}, {100 * self.hi:.1f}]"


def _items_by_method(run: RunRecords) -> dict[str, set[str]]:
    ids: dict[str, set[str]] = {}
    for r in run.records:
        ids.setdefault(r["method"], set()).add(r["id"])
    return ids


def paired(run: RunRecords) -> RunRecords:
    """Only the items every method of the run has a record for, so a partial run compares
    its methods on the same questions."""
    ids = _items_by_method(run)
    common = set.intersection(*ids.values()) if ids else set()
    return RunRecords(run.name, [r for r in run.records if r["id"] in common], run.path)


def unpaired(run: RunRecords) -> dict[str, int]:
    """Per method, how many items it has, when the methods of a run did not all answer the
    same items (empty when they did)."""
    ids = _items_by_method(run)
    if len({frozenset(v) for v in ids.values()}) <= 1:
        return {}
    return {method: len(v) for method, v in ids.items()}


@dataclass(slots=True)
class Row:
    run: str
    method: str
    items: int
    failed: int
    metrics: dict[str, Cell]


def summarize(runs: Sequence[RunLike], seed: int = 0) -> list[Row]:
    """One row per (run, method). Failed items count as 0 in every metric: a method that
    crashes must not look better than one that answers wrongly."""
    rows = []
    for run in load(runs):
        by_method: dict[str, list[dict]] = {}
        for r in run.records:
            by_method.setdefault(r["method"], []).append(r)
        for method, records in by_method.items():
            names = sorted({k for r in records for k in r.get("metrics", {})})
            cells = {}
            for name in names:
                values = [float(r.get("metrics", {}).get(name, 0.0)) for r in records]
                cells[name] = Cell(*bootstrap_ci(values, seed=seed))
            failed = sum(r["status"] != "ok" for r in records)
            rows.append(Row(run.name, method, len(records), failed, cells))
    return rows


def _metric_names(rows: list[Row]) -> list[str]:
    return sorted({m for r in rows for m in r.metrics})


def markdown(rows: list[Row]) -> str:
    names = _metric_names(rows)
    lines = [
        "| run | method | items | failed | " + " | ".join(names) + " |",
        "|---|---|---|---|" + "---|" * len(names),
    ]
    for r in rows:
        cells = [str(r.metrics[n]) if n in r.metrics else "–" for n in names]
        lines.append(
            f"| {r.run} | {r.method} | {r.items} | {r.failed} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines) + "\n\nValues in %, with 95 % bootstrap confidence intervals.\n"


def selective_csv(rows: list[dict[str, object]]) -> str:
    """The selective-answering statistics as CSV: one row per run, method, score
    (confidence, a baseline, or a paired difference ``a - b``), metric; value and 95 % CI."""
    from searchain.eval.selective.cells import CSV_FIELDS

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS)
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def to_csv(rows: list[Row]) -> str:
    names = _metric_names(rows)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(
        ["run", "method", "items", "failed"]
        + [f"{n}{s}" for n in names for s in ("", "_lo", "_hi")]
    )
    for r in rows:
        vals = []
        for n in names:
            c = r.metrics.get(n)
            vals += [f"{c.mean:.4f}", f"{c.lo:.4f}", f"{c.hi:.4f}"] if c else ["", "", ""]
        w.writerow([r.run, r.method, r.items, r.failed, *vals])
    return buf.getvalue()


def analyses(
    runs: Sequence[RunLike],
    naive_platt_runs: Sequence[Path] = (),
    maxprob_platt_runs: Sequence[Path] = (),
    selective_rows: list[dict[str, object]] | None = None,
) -> str:
    """The SearChain paper's analyses of each run, as Markdown: efficiency of every method
    (Table 5: per question LLM calls, input/output tokens, rounds, seconds), the knowledge
    sources of SearChain's checked nodes (Table 2), and, when a run holds both ``searchain``
    and ``searchain-no-ir``, the effects of IR on the questions both answered (Table 3:
    correct with/without IR, IR-helped questions, misleading rate); then, for each method
    whose traces carry a confidence, selective answering against the naive confidence
    (:mod:`searchain.eval.selective.report`). Correct = the item's cover-EM (of its final
    answer) as recorded by the run, or as rescored (:mod:`searchain.eval.rescore`). With
    ``naive_platt_runs`` (calibration runs), the naive confidence is also compared
    Platt-scaled on their fit items (:mod:`searchain.eval.selective.naive_platt`); with
    ``maxprob_platt_runs``, MaxProb too (:mod:`searchain.eval.selective.maxprob_baseline`).
    ``selective_rows`` receives the selective statistics as rows (selective.csv)."""
    from searchain.eval.analyses import ir_effects
    from searchain.eval.method_kinds import in_full
    from searchain.eval.selective.report import section as selective_answering
    from searchain.types import Trace

    out = []
    runs = load(runs)
    for run in runs:
        traces: dict[str, dict[str, Trace | None]] = {}
        correct: dict[tuple[str, str], bool] = {}
        for r in run.records:
            ok = r["status"] == "ok" and r.get("trace")
            trace = Trace.from_dict(r["trace"]) if ok else None
            traces.setdefault(r["method"], {})[r["id"]] = trace
            correct[(r["method"], r["id"])] = bool((r.get("metrics") or {}).get("cover_em"))
        if not traces:
            continue
        name = run.name
        out += _efficiency(name, traces)
        for full in [m for m in traces if in_full(m)]:
            right = {i: correct[(full, i)] for i in traces[full]}
            out += _searchain_nodes(name, traces[full], right)
        out += _routes(run)
        for full, no_ir in _ir_pairs(traces):
            ids = [i for i in traces[full] if i in traces[no_ir]]
            fx = ir_effects(
                [traces[full][i] for i in ids],
                [traces[no_ir][i] for i in ids],
                [[i] for i in ids],
                correct=lambda t, ids_, c=correct: c[(t.method, ids_[0])],
            )
            out += [
                f"**{name}: effects of IR** (Table 3, {len(ids)} questions, cover-EM): correct "
                f"without IR {100 * fx['accuracy_without_ir']:.1f} %, with IR "
                f"{100 * fx['accuracy_with_ir']:.1f} %; IR corrected or completed a node in "
                f"{fx['ir_helped']:.0f} questions (correct there: without IR "
                f"{100 * fx['accuracy_without_ir_on_ir_helped']:.1f} %, with IR "
                f"{100 * fx['accuracy_with_ir_on_ir_helped']:.1f} %); IR misled "
                f"{fx['misled']:.0f} of the {fx['correct_without_ir']:.0f} questions answered "
                f"correctly without it (misleading rate {100 * fx['misleading_rate']:.1f} %).",
                "",
            ]
    selective = selective_answering(
        runs,
        naive_platt_runs=naive_platt_runs,
        maxprob_platt_runs=maxprob_platt_runs,
        sink=selective_rows,
    )
    return "\n".join([*out, selective])


def _routes(run: RunRecords) -> list[str]:
    """How often each routed method (SearChain reading first) read once or chained, each
    route's cover-EM, and what the chain added and lost over its first read; where the
    first reads cannot be scored (no manifest naming the golds) it says so."""
    from searchain.eval.rescore import run_golds
    from searchain.eval.route_breakdown import breakdown_table, routed_methods, routed_records

    methods = routed_methods(run.records)
    if not methods:
        return []
    try:
        if run.path is None:
            raise ValueError("the run's directory is not known")
        golds = run_golds(run.path)
        tables = {m: breakdown_table(routed_records(run.records, golds, m)) for m in methods}
    except (ValueError, KeyError, OSError) as e:  # no manifest, no data set, another set
        why = e.args[0] if isinstance(e, KeyError) and e.args else e
        return [f"**{run.name}: routes** of {', '.join(methods)} not scored: {why}.", ""]
    out = []
    for method, lines in tables.items():
        out += [f"### {run.name}: {method}'s routes (read first, chain when it must)", ""]
        out += [*lines, ""]
    return out


def _ir_pairs(traces: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """(SearChain, its ablation without IR) for each such pair the run holds both of."""
    from searchain.eval.method_kinds import without_ir

    pairs = [(without_ir(m), m) for m in traces]
    return [(full, no_ir) for full, no_ir in pairs if full is not None and full in traces]


def _efficiency(name: str, traces: dict[str, dict[str, Any]]) -> list[str]:
    """Efficiency per question of each method of a run (SearChain Table 5), as Markdown."""
    from searchain.eval.analyses import efficiency

    out = [
        f"### {name}: efficiency per question (SearChain Table 5)",
        "",
        "| method | questions | LLM calls | of them cached | input tokens | output tokens "
        "| rounds | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for method, by_id in traces.items():
        e = efficiency(by_id.values())
        calls = [t.usage.llm_calls + t.usage.cached_calls for t in by_id.values() if t]
        cached = sum(t.usage.cached_calls for t in by_id.values() if t)
        out.append(
            f"| {method} | {e['questions']:.0f} | {sum(calls) / max(1, len(calls)):.1f} | "
            f"{100 * cached / max(1, sum(calls)):.0f} % | {e['prompt_tokens']:.0f} | "
            f"{e['completion_tokens']:.0f} | {e['rounds']:.2f} | {e['seconds']:.2f} |"
        )
    out += [
        "",
        "Input and output sizes are the model's tokens per question, not words: the "
        "paper's Table 5 counts words, and traces keep token counts, not the prompts "
        "whose words could be counted.",
        "",
        "Calls include those served by the LLM call cache (their tokens count; "
        "their time is near zero, so seconds are a lower bound for a method with cached "
        "calls; run with --no-cache to time every call).",
        "",
    ]
    return out


def _searchain_nodes(name: str, by_id: dict[str, Any], right: dict[str, bool]) -> list[str]:
    """Where SearChain's nodes' knowledge came from (Table 2), what IR's checks found, how
    often a question was answered as one hop, and which right answers only the node queries'
    passages stated (issue 50)."""
    from searchain.eval.analyses import knowledge_source_split, node_checks, node_only_answers

    traces = list(by_id.values())
    split = knowledge_source_split(traces)
    parts = ", ".join(f"{k} {100 * v:.1f} %" for k, v in split.items() if k != "nodes")
    checks = node_checks(traces)
    said = ", ".join(
        f"{checks[k]} {k}" for k in ("verified", "unconfirmed", "corrected", "completed")
    )
    out = [
        f"**{name}: knowledge sources** of SearChain's {split['nodes']:.0f} checked "
        f"nodes (Table 2): {parts}.",
        "",
        f"**{name}: IR's checks** of SearChain's nodes: {said}.",
    ]
    found_hops = (ChainExtras.of(t).hops for t in traces if t is not None)
    hops = [h for h in found_hops if h is not None]
    if hops:  # issue 50: a one-hop question may be answered as one; the report says how often
        one = sum(h <= 1 for h in hops)
        out.append(
            f"**{name}: answered as one hop** (at most one answered node on the path): "
            f"{one} of {len(hops)} questions ({100 * one / len(hops):.1f} %)."
        )
    found = node_only_answers((t, right.get(i, False)) for i, t in by_id.items())
    if found["answers"]:
        out.append(
            f"**{name}: answers only the node queries found**: {found['node_only']} of the "
            f"{found['answers']} right answers of the evidence step are stated only in "
            "passages the node queries brought, in none the question's own words retrieved."
        )
    if checks["verified_unconfirmed"]:
        out.append(
            f"{checks['verified_unconfirmed']} of the nodes labelled verified had a reader at "
            "or below θ: this run was made before such nodes were labelled unconfirmed."
        )
    return [*out, ""]


def bar_chart(rows: list[Row], path: str | Path) -> Path:
    """Grouped bars (one group per metric, one bar per run/method) with CI error bars."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt
    import numpy as np

    names = _metric_names(rows)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(names) * max(1, len(rows)) / 2), 4))
    width = 0.8 / max(1, len(rows))
    x = np.arange(len(names))
    for i, r in enumerate(rows):
        means = [100 * r.metrics[n].mean if n in r.metrics else 0 for n in names]
        errs = [
            [100 * (r.metrics[n].mean - r.metrics[n].lo) if n in r.metrics else 0 for n in names],
            [100 * (r.metrics[n].hi - r.metrics[n].mean) if n in r.metrics else 0 for n in names],
        ]
        ax.bar(x + i * width, means, width, yerr=errs, capsize=3, label=f"{r.method} ({r.run})")
    ax.set_xticks(x + width * (len(rows) - 1) / 2, names)
    ax.set_ylabel("%")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
