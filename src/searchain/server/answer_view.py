"""What the service's chat faces show — the OpenAI-compatible chat endpoint
(``server/openai_face.py``) and the MCP server (``server/mcp_face.py``): a trace turned into
what a chat window or an agent shows (the answer with its ``[n]`` marks, a "Sources" list of
locators, the confidence where the method reports one) and progress events as lines. They
answer through the one request pipeline (``server/pipeline.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from searchain.scoring.confidence import abstention_text
from searchain.types import Passage, Trace


def describe(event: dict[str, Any]) -> str | None:
    """A progress event as one line a person reads while waiting (``None``: not worth one)."""
    kind = event.get("event")
    if kind == "round":
        return f"Round {event.get('n')}"
    if kind == "chain":
        queries = event.get("queries") or []
        return "Chain of queries:\n" + "\n".join(f"  {i}. {q}" for i, q in enumerate(queries, 1))
    if kind == "node":
        return f"  checked {event.get('id')}: {event.get('status')} (from {event.get('source')})"
    if kind == "retrieve":
        return f"Searching: {event.get('query')}"
    if kind == "subquestion":
        return f"Sub-question: {event.get('text')}"
    if kind == "tool":
        return f"Tool: {event.get('name')}"
    if kind == "mcts_iteration":
        best = event.get("best_value")
        value = f" (best value {best:.2f})" if isinstance(best, int | float) else ""
        return f"Search iteration {event.get('i')}{value}"
    if kind == "note":
        return f"Note: {event.get('text')}"
    if kind == "route":
        return (
            "One read answered: no chain needed"
            if event.get("taken") == "read"
            else ("Planning a chain: " + "; ".join(event.get("why") or []))
        )
    return None


@dataclass(slots=True)
class Source:
    """A passage the answer cites: its mark and where a person finds it."""

    mark: int
    passage: Passage

    @property
    def locator(self) -> str:
        return self.passage.locator() or self.passage.title or self.passage.id

    def to_dict(self) -> dict[str, Any]:
        p = self.passage
        return {
            "mark": self.mark,
            "id": p.id,
            "locator": self.locator,
            "title": p.title,
            "text": p.text,
            "source": p.source,
        }


def sources(trace: Trace) -> list[Source]:
    return [Source(mark, p) for mark, p in trace.cited().items()]


def answer_text(trace: Trace) -> str:
    """The answer as written, with its ``[n]`` marks (the short answer when there is none)."""
    return (trace.final_content or trace.answer).strip()


def shown_answer(trace: Trace) -> str:
    """The answer as a chat shows it: a withheld answer says so before the guess."""
    notice = abstention_text(trace)
    return f"{notice}\n\n{answer_text(trace)}" if notice else answer_text(trace)


def confidence(trace: Trace) -> dict[str, Any] | None:
    """The answer's confidence as the trace records it: its value, whether it is a calibrated
    probability (else an uncalibrated score, said so), what lowered it, and whether the answer
    was withheld."""
    conf = trace.confidence
    if conf is None or not math.isfinite(conf.value):
        return None
    return {
        # a score that is not a probability is not given as a bare value (headline, score)
        "value": conf.value if conf.calibrated else None,
        "score": None if conf.calibrated else conf.value,
        "calibrated": conf.calibrated,
        "headline": conf.headline(),
        "holds": conf.holds(),
        "fails": conf.fails(),
        "lowered_by": list(conf.lowered_by),
        "raised_by": list(conf.raised_by),
        "abstained": conf.abstained,
        # as the CLI and /v1/ask give them: the threshold (None: none asked, or none
        # certified), its terms, the calibrator's provenance, and what an uncalibrated says
        "threshold": conf.threshold,
        "terms": conf.terms,
        "calibrator": conf.calibrator,
        "note": conf.note,
    }


def footer(srcs: list[Source], conf: dict[str, Any] | None, route: str | None = None) -> str:
    """The "Sources" list (the route SearChain took, and the confidence) a chat window shows
    under the answer."""
    lines = ["**Sources**", *(f"- [{s.mark}] {s.locator}" for s in srcs)] if srcs else []
    if not srcs:
        lines.append("_No passage is cited._")
    if route:
        lines.append(f"\n{route}")
    if conf is not None:
        if conf["calibrated"]:
            lines.append(f"\nConfidence: {conf['value']:.2f} (probability that it is right)")
            if conf["lowered_by"]:
                lines.append(f"Lowered by: {'; '.join(conf['lowered_by'])}")
            if conf["raised_by"]:
                lines.append(f"Raised by: {'; '.join(conf['raised_by'])}")
        else:  # no number: what holds and what fails lead
            lines.append("\nConfidence: not a probability (uncalibrated)")
            lines.append(f"What holds: {conf['holds']}")
            lines.append(f"What fails: {conf['fails']}")
            if conf["note"]:
                lines.append(conf["note"])
        if conf["terms"]:
            lines.append(f"Threshold: {conf['terms']}")
    return "\n".join(lines)
