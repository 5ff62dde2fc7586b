"""The SearChain paper's analyses of whole runs: :func:`knowledge_source_split` (Table 2),
:func:`ir_effects` / :func:`ir_misleading_rate` (Table 3), :func:`efficiency` (Table 5).
Per-item scores (SKC of Table 4 included) are in :mod:`searchain.scoring`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from searchain.scoring import as_golds, cover_em
from searchain.text import contains_answer
from searchain.trace_extras import ChainExtras, ChainSettings, NodeExtras
from searchain.types import Trace

KNOWLEDGE_SOURCES = ("llm", "ir-corrected", "ir-completed")
# "unconfirmed": IR read a passage for it but did not confirm it (below θ, inconclusive).
_CHECKED = {"verified", "unconfirmed", "corrected", "completed"}


def _checked(status: str | None) -> bool:
    return (status if status is not None else "verified") in _CHECKED  # no status: counted


def knowledge_source_split(
    traces: Iterable[Trace | None], *, scope: Literal["checked", "path", "all"] = "checked"
) -> dict[str, float]:
    """SearChain Table 2: the share of Tree-of-Reasoning nodes whose knowledge came from the
    LLM, was corrected by IR (verification) or was provided by IR (completion), pooled over
    all traces (node-level, as the paper counts).

    ``scope="checked"`` counts the nodes IR actually checked (status verified, unconfirmed,
    corrected or completed; nodes without a status are counted too), ``"path"`` the nodes of
    the final reasoning path (``trace.meta["path"]``), ``"all"`` every node but the root question.
    Returns the fractions keyed by source (other sources, e.g. ``"tool"``, appear when
    present) and ``"nodes"``, the number of nodes counted.
    """
    counts: Counter[str] = Counter()
    for trace in traces:
        if trace is None:
            continue
        nodes = [n for n in trace.nodes if n.source != "question"]
        if scope == "path":
            on_path = set(ChainExtras.of(trace).path or [])
            nodes = [n for n in nodes if n.id in on_path]
        elif scope == "checked":
            nodes = [n for n in nodes if _checked(NodeExtras.of(n).status)]
        elif scope != "all":
            raise ValueError(f'scope must be "checked", "path" or "all", got {scope!r}')
        counts.update(n.source for n in nodes)
    total = sum(counts.values())
    out = {s: (counts[s] / total if total else 0.0) for s in (*KNOWLEDGE_SOURCES, *counts)}
    out["nodes"] = float(total)
    return out


def node_checks(traces: Iterable[Trace | None]) -> dict[str, int]:
    """What IR's check found for SearChain's nodes, pooled over traces: ``verified`` (a
    confident reader agreed), ``unconfirmed`` (below θ, inconclusive, or verification off),
    ``corrected``, ``completed``; and ``verified_unconfirmed``: nodes labelled verified by
    code before the label was honest whose reader was not confident (at or below θ) — a run
    made now has none."""
    out = dict.fromkeys(("verified", "unconfirmed", "corrected", "completed"), 0)
    out["verified_unconfirmed"] = 0
    for trace in traces:
        if trace is None:
            continue
        theta = ChainSettings.of(trace).theta
        for node in trace.nodes:
            extras = NodeExtras.of(node)
            status, confidence = extras.status, extras.reader_confidence
            if status in out:
                out[status] += 1
            below = theta is not None and (confidence is None or confidence <= theta)
            if status == "verified" and below:
                out["verified_unconfirmed"] += 1
    return out


def _default_correct(trace: Trace, golds: Sequence[str]) -> bool:
    return cover_em(trace.answer, golds) == 1.0  # the final answer, as eval scores it


def _answers(g: Any) -> list[str]:
    answers = getattr(g, "answers", g)  # an Example or a list of gold answers
    return as_golds(answers)


def ir_effects(
    traces_with_ir: Sequence[Trace | None],
    traces_without_ir: Sequence[Trace | None],
    golds: Sequence[Any],
    *,
    correct: Callable[[Trace, Sequence[str]], bool] | None = None,
) -> dict[str, float]:
    """SearChain Table 3, from aligned runs with and without IR over the same questions.

    * (a) positive effect: S_IR = questions where IR corrected or completed a node of the
      with-IR trace; accuracy without IR on all questions (S) and on S_IR, and with IR on S_IR;
    * (b) negative effect: S_t = questions answered correctly without IR; the misleading
      rate is the fraction of S_t answered wrongly with IR.

    ``golds[i]`` is the gold answer list (or an :class:`~searchain.eval.datasets.Example`);
    ``correct(trace, golds)`` defaults to cover-EM of the final answer (``trace.answer``).
    A missing trace (``None``: the item failed) counts as wrong.
    """
    n = len(golds)
    if len(traces_with_ir) != n or len(traces_without_ir) != n:
        raise ValueError("traces with IR, traces without IR and golds must align one to one")
    judge = correct or _default_correct
    answers = [_answers(g) for g in golds]
    ok_w = [t is not None and judge(t, a) for t, a in zip(traces_with_ir, answers, strict=True)]
    ok_wo = [t is not None and judge(t, a) for t, a in zip(traces_without_ir, answers, strict=True)]
    helped = [
        i
        for i, t in enumerate(traces_with_ir)
        if t is not None and any(nd.source in ("ir-corrected", "ir-completed") for nd in t.nodes)
    ]
    s_t = [i for i in range(n) if ok_wo[i]]
    misled = [i for i in s_t if not ok_w[i]]

    def mean(flags: Iterable[bool]) -> float:
        flags = list(flags)
        return sum(flags) / len(flags) if flags else 0.0

    return {
        "questions": float(n),
        "accuracy_without_ir": mean(ok_wo),
        "accuracy_with_ir": mean(ok_w),
        "ir_helped": float(len(helped)),
        "accuracy_without_ir_on_ir_helped": mean(ok_wo[i] for i in helped),
        "accuracy_with_ir_on_ir_helped": mean(ok_w[i] for i in helped),
        "correct_without_ir": float(len(s_t)),
        "misled": float(len(misled)),
        "misleading_rate": len(misled) / len(s_t) if s_t else 0.0,
    }


def ir_misleading_rate(
    traces_with_ir: Sequence[Trace | None],
    traces_without_ir: Sequence[Trace | None],
    golds: Sequence[Any],
    *,
    correct: Callable[[Trace, Sequence[str]], bool] | None = None,
) -> float:
    """SearChain Table 3(b): of the questions the LLM answers correctly without IR, the
    fraction it answers wrongly with IR (lower is better; 0.0 when none is correct without
    IR). See :func:`ir_effects`."""
    return ir_effects(traces_with_ir, traces_without_ir, golds, correct=correct)["misleading_rate"]


def efficiency(traces: Iterable[Trace | None]) -> dict[str, float]:
    """SearChain Table 5 columns, averaged per question: LLM input (``prompt_tokens``) and
    output (``completion_tokens``) size, ``rounds`` of LLM–IR interaction and wall time
    (``seconds``), plus ``llm_calls`` and ``llm_seconds``. Units: the paper's Table 5 counts
    words; traces record the model's token counts (``usage``), not the prompts, so the size
    columns are in tokens (their keys say so) and cannot be recounted as words. Failed items
    (None) are skipped."""
    done = [t for t in traces if t is not None]
    n = len(done)

    def mean(values: Iterable[float]) -> float:
        return sum(values) / n if n else 0.0

    return {
        "questions": float(n),
        "prompt_tokens": mean(t.usage.prompt_tokens for t in done),
        "completion_tokens": mean(t.usage.completion_tokens for t in done),
        "rounds": mean(t.rounds for t in done),
        "seconds": mean(t.wall_seconds for t in done),
        "llm_calls": mean(t.usage.llm_calls for t in done),
        "llm_seconds": mean(t.usage.llm_seconds for t in done),
    }


def node_only_answers(answered: Iterable[tuple[Trace | None, bool]]) -> dict[str, int]:
    """Issue 50: of SearChain's right answers written by the evidence step, how many state an
    answer found only in passages the node queries brought (read by the answering step, in
    none of the passages the user's own words retrieved) — what the chain itself added.
    ``answered``: (trace, right) pairs. ``answers``: right answers of the evidence step;
    ``node_only``: of them, those. Tracing-step traces (no ``meta.evidence``) are not counted."""
    answers = node_only = 0
    for trace, right in answered:
        read = ChainExtras.of(trace).evidence_read if trace else None
        if not read or not right:
            continue
        answers += 1
        text = {p.id: p.text for p in trace.references}
        asked = [e["id"] for e in read if any(r.startswith("question") for r in e["roles"])]
        others = [e["id"] for e in read if e["id"] not in asked]
        node_only += _states(text, others, trace.answer) and not _states(text, asked, trace.answer)
    return {"answers": answers, "node_only": node_only}


def one_hop_lines(runs: dict[str, list[dict[str, Any]]]) -> list[str]:
    """How often each run's SearChain answered as one hop (``meta.hops`` <= 1: at most one
    answered node on its verified path), a line per run (``{name: records}``); records made
    before ``hops`` existed are not counted."""
    out = []
    for name, records in runs.items():
        hops = [(r["trace"].get("meta") or {}).get("hops") for r in records if r.get("trace")]
        known = [h for h in hops if h is not None]
        if known:
            one = sum(1 for h in known if h <= 1)
            share = f"{100 * one / len(known):.0f} %"
            out.append(f"Answered as one hop, {name}: {one} of {len(known)} ({share}).")
    return out


def _states(text: dict[str, str], ids: Iterable[str], answer: str) -> bool:
    """Whether any of the passages ``ids`` states ``answer`` (whole words, normalised)."""
    return any(contains_answer(text.get(i, ""), answer) for i in ids)
