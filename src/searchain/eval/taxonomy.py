"""Failure taxonomy: for every wrong item, the first place its trace went wrong.

A score says how often a method is wrong; this says where, which is what tells an engineer
what to fix. The checks run in the order a question flows through a retrieval-augmented
method, from the end backwards to the first cause that explains the miss:

1. ``failed`` — the item ended in an error (no trace).
2. ``plan not parsed`` — a planning method (SearChain) produced no reasoning node at all.
3. ``short-answer extraction`` — the final content holds a gold answer, the short answer not.
4. ``verification turned right into wrong`` — the LLM's own answer to a node held a gold
   answer and verification replaced it with one that does not.
5. ``tracing lost a correct intermediate answer`` — some node's answer holds a gold answer,
   the final answer does not.
6. ``reader wrong`` — a retrieved gold paragraph holds a gold answer (the answer was in
   hand; for a verdict gold, any gold paragraph retrieved), yet no answer holds it.
7. ``retrieval missed the gold paragraph`` — gold paragraphs came back but none that holds
   the answer (a multi-hop question's later hop was missed), or a query named a gold
   paragraph's title (it asked about the right entity) and retrieval returned none.
8. ``query drift`` — no query named a gold title and no gold paragraph came back.
9. ``wrong without retrieval`` — the method retrieved nothing (direct prompting, CoT, no-IR).
10. ``wrong, no gold evidence`` — retrieval ran but the data set has no gold paragraphs to
    locate the miss.

A verdict gold (yes/no, FEVER's labels: :func:`is_verdict`) skips 3-5: a sub-answer "no" or
a "refutes" in passing is no intermediate answer, so its misses are located by the evidence
(6-8) alone, and it has no verification events.

"Holds a gold answer" is cover-EM (normalised containment) on citation-free text. Gold
paragraphs are matched by title: every retriever here keys passages ``Title#chunk``.
Besides the per-item category, :func:`verification_events` counts the nodes where
verification turned a wrong answer right and the other way, over all items.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from searchain.eval.datasets.base import FEVER_LABELS
from searchain.eval.method_kinds import plans_chains
from searchain.scoring.match import cover_em
from searchain.text import normalize_answer
from searchain.trace_extras import NodeExtras
from searchain.types import Passage, Trace

CATEGORIES = (
    "failed",
    "plan not parsed",
    "short-answer extraction",
    "verification turned right into wrong",
    "tracing lost a correct intermediate answer",
    "reader wrong",
    "retrieval missed the gold paragraph",
    "query drift",
    "wrong without retrieval",
    "wrong, no gold evidence",
)


@dataclass(frozen=True, slots=True)
class Gold:
    """What the taxonomy needs of an item's gold: answers and gold paragraph titles."""

    answers: Sequence[str]
    titles: Sequence[str] = ()


def _holds(text: str | None, answers: Sequence[str]) -> bool:
    """Cover-EM, the scoring layer's rule (marks stripped, whole words)."""
    return bool(cover_em(text or "", [a for a in answers if a]))


def _title(passage_id: str, title: str) -> str:
    return normalize_answer(title or passage_id.split("#", 1)[0])


def _retrieved_titles(trace: Trace) -> set[str]:
    return {_title(p.id, p.title) for p in _retrieved(trace)} - {""}


def _retrieved(trace: Trace) -> list[Passage]:
    return [*trace.references, *(p for node in trace.nodes for p in node.passages)]


VERDICTS = frozenset(normalize_answer(v) for v in ("yes", "no", *FEVER_LABELS))


def is_verdict(answers: Sequence[str]) -> bool:
    """A yes/no or FEVER gold: a judgement over the evidence, not a span of it. Any "no" in a
    sub-answer or a final content would "hold" it, so the checks that look for the gold in
    intermediate text (short answer, verification, tracing) say nothing for it."""
    return bool(answers) and {normalize_answer(a) for a in answers} <= VERDICTS


def _answer_in_hand(trace: Trace, titles: set[str], answers: Sequence[str]) -> bool:
    """Whether a retrieved gold paragraph holds a gold answer: a reader that had it and
    answered wrong is the reader's miss; one that never had it is retrieval's (HotpotQA's
    first-hop paragraph rarely holds the answer). A yes/no answer is in no paragraph's
    words, so there any gold paragraph counts."""
    gold = [p for p in _retrieved(trace) if _title(p.id, p.title) in titles]
    if is_verdict(answers):
        return bool(gold)
    return any(_holds(f"{p.title}. {p.text}", answers) for p in gold)


def _queries(trace: Trace) -> list[str]:
    return [n.query for n in trace.nodes if n.source != "question" and n.query]


def classify(method: str, status: str, trace: Trace | None, gold: Gold, *, correct: bool) -> str:
    """The category of one item (``"correct"`` for a right one)."""
    if status != "ok" or trace is None:
        return "failed"
    if correct:
        return "correct"
    answers = [a for a in gold.answers if a]
    nodes = [n for n in trace.nodes if n.source != "question"]
    if plans_chains(method) and not nodes:  # its trace must hold a plan
        return "plan not parsed"
    if is_verdict(answers):
        nodes = []  # a sub-answer "no" is not the verdict: only the evidence checks apply
    elif _holds(trace.final_content, answers) and not _holds(trace.answer, answers):
        return "short-answer extraction"
    for n in nodes:
        llm_answer = NodeExtras.of(n).llm_answer
        if llm_answer and _holds(llm_answer, answers) and not _holds(n.answer, answers):
            return "verification turned right into wrong"
    if any(_holds(n.answer, answers) for n in nodes):
        return "tracing lost a correct intermediate answer"
    retrieved = _retrieved_titles(trace)
    if not retrieved:
        return "wrong without retrieval"
    titles = {normalize_answer(t) for t in gold.titles} - {""}
    if not titles:
        return "wrong, no gold evidence"
    if retrieved & titles:
        if _answer_in_hand(trace, titles, answers):
            return "reader wrong"
        return "retrieval missed the gold paragraph"
    asked = " ".join(normalize_answer(q) for q in _queries(trace) or [trace.question])
    if any(f" {t} " in f" {asked} " for t in titles):
        return "retrieval missed the gold paragraph"
    return "query drift"


def verification_events(trace: Trace | None, gold: Gold) -> Counter[str]:
    """Nodes where verification changed the LLM's answer: ``wrong→right`` (the corrected answer
    holds a gold answer, the LLM's did not) and ``right→wrong``."""
    out: Counter[str] = Counter()
    if trace is None or is_verdict(gold.answers):
        return out
    for n in trace.nodes:
        extras = NodeExtras.of(n)
        llm_answer = extras.llm_answer
        corrected = n.source == "ir-corrected" or extras.status == "corrected"
        if not llm_answer or not corrected:  # a correction the label did not confirm counts too
            continue
        before, after = _holds(llm_answer, gold.answers), _holds(n.answer, gold.answers)
        if after and not before:
            out["wrong→right"] += 1
        elif before and not after:
            out["right→wrong"] += 1
    return out


@dataclass(slots=True)
class MethodTaxonomy:
    method: str
    items: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    events: Counter[str] = field(default_factory=Counter)


def tabulate(
    records: Iterable[Mapping[str, Any]], golds: Mapping[str, Gold], metric: str
) -> dict[str, MethodTaxonomy]:
    """Per method, the category counts of a run's records. An item is correct when its
    recorded ``metric`` is positive; records whose item has no gold are skipped."""
    out: dict[str, MethodTaxonomy] = {}
    for r in records:
        gold = golds.get(str(r["id"]))
        if gold is None:
            continue
        trace = Trace.from_dict(r["trace"]) if r.get("trace") else None
        correct = float((r.get("metrics") or {}).get(metric, 0.0)) > 0
        tax = out.setdefault(r["method"], MethodTaxonomy(r["method"]))
        tax.items += 1
        tax.counts[classify(r["method"], r.get("status", "ok"), trace, gold, correct=correct)] += 1
        tax.events += verification_events(trace, gold)
    return out


def markdown(taxonomy: Mapping[str, MethodTaxonomy]) -> str:
    """One row per method: items, correct, then each failure category that occurred."""
    used = [c for c in CATEGORIES if any(t.counts[c] for t in taxonomy.values())]
    head = (
        "| method | items | correct | "
        + " | ".join(used)
        + " | verification wrong→right / right→wrong |"
    )
    lines = [head, "|---|---|---|" + "---|" * (len(used) + 1)]
    for t in taxonomy.values():
        cells = [str(t.counts[c]) for c in used]
        ev = f"{t.events['wrong→right']} / {t.events['right→wrong']}"
        lines.append(
            f"| {t.method} | {t.items} | {t.counts['correct']} | "
            + " | ".join(cells)
            + f" | {ev} |"
        )
    return "\n".join(lines) + "\n"
