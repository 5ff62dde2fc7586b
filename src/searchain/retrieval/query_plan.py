"""Retrieval for questions that need two passages, without an LLM call.

Two kinds of question defeat one query:

* **Two questions in one** ("Which mount option stops reads from updating access times, and
  which filesystem holds its files only in memory?"): one ranking rarely holds both halves in
  its top 5. :func:`question_parts` splits such a question at its coordinating "and which" /
  "; " into parts (a leading "In the X guide," stays with each part), and each part is
  searched on its own.
* **A bridge** (the second passage is found only with what the first one says): as MDR
  (Xiong et al., 2021) and IRCoT (Trivedi et al., 2023) retrieve again with what the first
  hop found, :func:`bridge_query` searches the question again with the title and the names
  of the top passage that the question does not say — no LLM involved.

:class:`QueryPlanRetriever` wraps any retriever: it searches the question, its parts and the
bridge query, and fuses the rankings by reciprocal rank (the question's own ranking weighted
highest). Every passage it returns says which of those queries found it
(:attr:`Passage.found_by`), so a trace shows every query that was run.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from searchain.retrieval.base import Retriever
from searchain.retrieval.hybrid import rrf
from searchain.types import Passage

__all__ = ["QueryPlan", "QueryPlanRetriever", "bridge_query", "plan_queries", "question_parts"]

_WH = r"(?:what|which|who|whom|whose|where|when|why|how|is|are|was|were|does|do|did|can|should)"
_PREP = r"(?:(?:in|on|at|for|from|to|under|by|with|into|of)\s+)?"
# "…, and which …" / "… and in which …" / "…; what …": a second question joined to the first.
_JOIN = re.compile(
    rf"\s*(?:,\s*(?:and|but)\s+|\s+(?:and|but)\s+|;\s*(?:and\s+)?)(?={_PREP}{_WH}\b)", re.I
)
# "In the New Maintainers' Guide, which …": context that both parts need.
_CONTEXT = re.compile(r"^((?:in|according to|for|on|within|under|per)\b[^,?]{3,80}),\s+", re.I)
_MIN_PART_WORDS = 3

_STOP = frozenset(
    "a an the of in on at by for and or to from with as that this these those which who what "
    "when where why how is was are were be been it its he she they his her their there here "
    "also not no but if then than so such can may will would should could does did do has "
    "have had".split()
)
_TOKEN = re.compile(r"[A-Za-z0-9][\w./:+-]*[\w]|[A-Za-z0-9]")


def question_parts(question: str) -> list[str]:
    """The questions a question joins ("A, and which B?" → ["A?", "which B?"]), each with the
    question's leading context; ``[]`` when it asks one thing."""
    text = " ".join(question.split())
    context = ""
    m = _CONTEXT.match(text)
    if m:
        context, text = m.group(1) + ", ", text[m.end() :]
    pieces = [p.strip(" ,;") for p in _JOIN.split(text)]
    pieces = [p for p in pieces if p]
    if len(pieces) < 2 or any(len(p.split()) < _MIN_PART_WORDS for p in pieces):
        return []
    return [context + p if p.endswith("?") else f"{context}{p}?" for p in pieces]


def bridge_query(question: str, top: Sequence[Passage], max_terms: int = 6) -> str | None:
    """The question with what the top passage adds to it: its title and the distinctive
    tokens (names, numbers, identifiers) the question does not already say; ``None`` when
    the passage adds nothing."""
    if not top:
        return None
    said = {t.lower() for t in _TOKEN.findall(question)}
    passage = top[0]
    terms: list[str] = []
    title = passage.title.strip()
    if title and title.lower() not in question.lower():
        terms.append(title)
        said.update(t.lower() for t in _TOKEN.findall(title))
    for token in _TOKEN.findall(passage.text):
        low = token.lower()
        if low in said or low in _STOP or not _distinctive(token):
            continue
        said.add(low)
        terms.append(token)
        if len(terms) >= max_terms:
            break
    return f"{question} {' '.join(terms)}" if terms else None


def _distinctive(token: str) -> bool:
    """A name, a number or an identifier: what a bridge is made of."""
    return (
        token[0].isupper() or any(c.isdigit() for c in token) or any(c in "./:_-+" for c in token)
    ) and len(token) > 1


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """The queries searched for one question, in the order they were run."""

    question: str
    parts: tuple[str, ...] = ()
    bridge: str | None = None

    @property
    def queries(self) -> list[str]:
        return [self.question, *self.parts, *([self.bridge] if self.bridge else [])]


def plan_queries(question: str, parts: bool = True) -> QueryPlan:
    return QueryPlan(question, tuple(question_parts(question)) if parts else ())


class QueryPlanRetriever:
    """A retriever that also searches a question's parts and a hop from its bridge.

    ``depth`` passages are asked of each query; the question's own ranking counts
    ``question_weight`` times as much as a part's or the bridge's in the fusion, so a
    one-passage question keeps its own best hits on top."""

    def __init__(
        self,
        base: Retriever,
        *,
        parts: bool = True,
        bridge: bool = True,
        depth: int = 20,
        question_weight: float = 2.0,
        bridge_from: int = 1,
        fusion: str = "interleave",
    ) -> None:
        if not (parts or bridge):
            raise ValueError("a query plan needs parts, bridge or both; else use the base")
        self.base = base
        self.parts = parts
        self.bridge = bridge
        self.depth = depth
        self.question_weight = question_weight
        self.bridge_from = bridge_from
        if fusion not in ("interleave", "rrf"):
            raise ValueError(f"fusion is interleave or rrf, not {fusion!r}")
        self.fusion = fusion

    @property
    def plan_settings(self) -> dict[str, object]:
        """How the base is searched (recorded beside the base index's fingerprint)."""
        return {
            "parts": self.parts,
            "bridge": self.bridge,
            "depth": self.depth,
            "question_weight": self.question_weight,
            "bridge_from": self.bridge_from,
            "fusion": self.fusion,
        }

    def search(self, query: str, k: int = 5) -> list[Passage]:
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: list[str], k: int = 5) -> list[list[Passage]]:
        if k <= 0 or not queries:
            return [[] for _ in queries]
        depth = max(self.depth, k)
        plans = [plan_queries(q, self.parts) for q in queries]
        first = self.base.search_batch([q for p in plans for q in p.queries], k=depth)
        rankings: list[list[list[Passage]]] = []
        at = 0
        for plan in plans:
            rankings.append(first[at : at + len(plan.queries)])
            at += len(plan.queries)
        if self.bridge:
            plans = [
                dataclasses.replace(p, bridge=bridge_query(p.question, r[0][: self.bridge_from]))
                for p, r in zip(plans, rankings, strict=True)
            ]
            todo = [i for i, p in enumerate(plans) if p.bridge]
            hops = self.base.search_batch([plans[i].bridge for i in todo], k=depth)  # type: ignore[misc]
            for i, hits in zip(todo, hops, strict=True):
                rankings[i].append(hits)
        return [self._fuse(p, r, k) for p, r in zip(plans, rankings, strict=True)]

    def _fuse(self, plan: QueryPlan, rankings: list[list[Passage]], k: int) -> list[Passage]:
        queries = plan.queries
        by_id: dict[str, Passage] = {}
        found_by: dict[str, list[str]] = {}
        for query, hits in zip(queries, rankings, strict=True):
            for p in hits:
                by_id.setdefault(p.id, p)
                found_by.setdefault(p.id, []).append(query)
        ids = [[p.id for p in hits] for hits in rankings]
        if self.fusion == "interleave":
            fused = interleave(ids)
        else:
            weights = [self.question_weight] + [1.0] * (len(rankings) - 1)
            fused = rrf(ids, weights)
        return [
            dataclasses.replace(by_id[pid], score=score, found_by=found_by[pid])
            for pid, score in fused[:k]
        ]


def interleave(rankings: Sequence[Sequence[str]]) -> list[tuple[str, float]]:
    """Round-robin over the rankings (each one's rank 1, then each one's rank 2, ...), each id
    at its first appearance; the score is 1 / position. Every part's best hits reach the top
    k, which a fused score lets the question's own long ranking crowd out."""
    out: list[str] = []
    seen: set[str] = set()
    for rank in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking) and ranking[rank] not in seen:
                seen.add(ranking[rank])
                out.append(ranking[rank])
    return [(pid, 1.0 / (i + 1)) for i, pid in enumerate(out)]
