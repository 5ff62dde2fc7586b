"""What every reader returns and the protocol SearChain's verification step talks to.

SearChain (spec, section "Reader") checks each node of the Chain-of-Query against a
retrieved passage: a reader extracts the span ``g`` the passage gives as the answer and a
confidence ``f``; the node's answer is corrected when ``f > θ`` and the LLM's answer
disagrees with ``g``. ``θ`` depends on the reader (a DPR relevance logit and a SQuAD
"span minus null" margin live on different scales), so each reader carries the
``default_theta`` that suits it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from searchain.types import Passage, Usage, finite_float

# The confidence of an answer that does not occur in its passage (an LLM reader's guess):
# far below any θ, so it never overrules the LLM, and never counts as what IR found.
UNGROUNDED = -99.0


@dataclass(slots=True)
class ReaderOutput:
    """One reader verdict on one (question, passage) pair.

    ``answer`` is an exact substring of ``passage.text`` (``""`` when the passage gave no
    span). ``span_score`` scores the chosen span (``start_logit + end_logit`` for HF
    readers; a log-prob for LLM readers); ``confidence`` is what SearChain compares with
    ``θ`` (the relevance logit for DPR readers). Scores are ``-inf`` when there is no span;
    :meth:`to_dict` writes non-finite scores as ``None`` so the result is strict JSON.
    ``usage`` is the LLM cost of producing this verdict (LLM readers; ``None`` otherwise).
    """

    answer: str
    span_score: float
    confidence: float
    passage_id: str | None = None
    usage: Usage | None = None
    # Where ``confidence`` came from ("logprobs (chat form)", "ungrounded span", "dpr
    # relevance", ...): a reader never hides a missing measurement behind a number.
    confidence_source: str = ""

    @property
    def grounded(self) -> bool:
        """Whether the answer is a span of the passage (what IR can vouch for)."""
        return bool(self.answer) and self.confidence > UNGROUNDED

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["span_score"] = finite_float(self.span_score)
        d["confidence"] = finite_float(self.confidence)
        d["usage"] = self.usage.to_dict() if self.usage is not None else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ReaderOutput:
        def score(key: str) -> float:
            v = d.get(key)
            return float("-inf") if v is None else float(v)

        return cls(
            answer=d.get("answer", ""),
            span_score=score("span_score"),
            confidence=score("confidence"),
            passage_id=d.get("passage_id"),
            usage=Usage.from_dict(d["usage"]) if d.get("usage") else None,
            confidence_source=d.get("confidence_source", ""),
        )


@runtime_checkable
class Reader(Protocol):
    """An extractive reader: (question, passage) -> (span, span score, confidence)."""

    name: str
    default_theta: float  # the confidence threshold that suits this reader

    def read(self, question: str, passage: Passage) -> ReaderOutput: ...


def read_passages(reader: Reader, question: str, passages: Sequence[Passage]) -> list[ReaderOutput]:
    """Read several passages, batched when the reader has a ``read_batch`` method."""
    batch = getattr(reader, "read_batch", None)
    if callable(batch):
        return list(batch(question, list(passages)))
    return [reader.read(question, p) for p in passages]


def merged(passages: Sequence[Passage]) -> Passage:
    """Several retrieved passages as one for a reader to copy its span from: each on its own
    lines, titled, in rank order (the id is the top passage's until :func:`supporting` says
    which one holds the answer)."""
    text = "\n\n".join(f"{p.title}: {p.text}" if p.title else p.text for p in passages)
    return Passage(id=passages[0].id, text=text)


def supporting(passages: Sequence[Passage], answer: str) -> Passage:
    """The best-ranked passage whose text holds ``answer`` (cover-EM), else the top one."""
    from searchain.text import contains_answer

    return next(
        (p for p in passages if contains_answer(f"{p.title} {p.text}", answer)), passages[0]
    )
