"""Scope of Knowledge Coverage (SearChain §4.3.4, Table 4): how many knowledge items of an
answer carry a supporting document. SearChain records it in its traces at run time and the
evaluation reports it, so it lives here, below both."""

from __future__ import annotations

from collections.abc import Sequence

from searchain import citations
from searchain.types import Citation, Trace


def supported_knowledge_count(text: str, cites: Sequence[Citation]) -> int:
    """Supported knowledge count: sentences of the final content that carry at least one
    citation resolved to a passage (the paper's SKC, Table 4)."""
    supported = {c.sentence for c in cites if c.passage_id}
    return sum(1 for s in citations.split_sentences(text) if s in supported)


def skc(trace: Trace, *, post_hoc: bool = False) -> int:
    """Scope of Knowledge Coverage (SearChain §4.3.4): the number of knowledge items —
    sentences of the final content — marked with a supporting document (a citation that
    resolves to a passage). Post-hoc citations count only with ``post_hoc=True``; the paper
    counts what the LLM marked itself."""
    cites = [c for c in trace.citations if post_hoc or c.origin == "model"]
    return supported_knowledge_count(trace.final_content, cites)
