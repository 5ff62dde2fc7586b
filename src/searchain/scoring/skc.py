"""Scope of Knowledge Coverage (SearChain §4.3.4, Table 4): how many knowledge items of an
answer carry a supporting document. SearChain records it in its traces at run time and the
evaluation reports it, so it lives here, below both.

The paper's unit is the knowledge item: a sentence of the final content marked with a
document, "[1][3]" being two (a step and its reference each). :func:`supported_knowledge_count`
counts those, distinct sentence–mark pairs; :func:`supported_sentence_count` is the earlier
count, supported sentences, kept for comparison with traces recorded before the change.
"""

from __future__ import annotations

from collections.abc import Sequence

from searchain import citations
from searchain.types import Citation, Trace


def _resolved_pairs(text: str, cites: Sequence[Citation]) -> set[tuple[str, int]]:
    sentences = set(citations.split_sentences(text))
    return {(c.sentence, c.mark) for c in cites if c.passage_id and c.sentence in sentences}


def supported_knowledge_count(text: str, cites: Sequence[Citation]) -> int:
    """Knowledge items (the paper's SKC unit, Table 4): distinct (sentence, mark) pairs of
    the final content whose citation resolves to a passage."""
    return len(_resolved_pairs(text, cites))


def supported_sentence_count(text: str, cites: Sequence[Citation]) -> int:
    """Sentences of the final content that carry at least one citation resolved to a
    passage (this code's SKC before issue 21; a sentence with two marks counts once)."""
    return len({sentence for sentence, _ in _resolved_pairs(text, cites)})


def skc(trace: Trace, *, post_hoc: bool = False, unit: str = "items") -> int:
    """Scope of Knowledge Coverage (SearChain §4.3.4): the number of knowledge items —
    distinct sentence–mark pairs of the final content — marked with a supporting document (a
    citation that resolves to a passage). ``unit="sentences"`` counts supported sentences
    instead. Post-hoc citations count only with ``post_hoc=True``; the paper counts what the
    LLM marked itself."""
    cites = [c for c in trace.citations if post_hoc or c.origin == "model"]
    if unit == "sentences":
        return supported_sentence_count(trace.final_content, cites)
    if unit != "items":
        raise ValueError(f'unit must be "items" or "sentences", got {unit!r}')
    return supported_knowledge_count(trace.final_content, cites)
