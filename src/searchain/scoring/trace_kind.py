"""What kind of answer a trace is, read from what the trace itself records.

Scoring sits below the methods, so it cannot ask the method catalog, and a method's name says
nothing its trace does not: the code that needs a kind of trace asks for the fact it needs.
"""

from __future__ import annotations

from searchain.trace_extras import ChainExtras
from searchain.types import Passage, Trace


def chain_of_query(trace: Trace) -> bool:
    """Whether ``trace`` was made by a Chain-of-Query (SearChain, any of its ablations), whose
    settings and node labels it carries: such a trace records every round's chain
    (``meta["chains"]``, ``[]`` when it answered in one read), and no other method's does.
    Every SearChain trace committed under ``results/`` holds it."""
    return ChainExtras.of(trace).chain_of_query


def ranked_list(trace: Trace) -> list[Passage] | None:
    """The one ranked list ``trace`` answered from: the passages retrieved for the question
    itself and read in one step (retrieve-read's one node); None for a trace that searched in
    steps (Self-Ask's follow-ups, a chain's nodes), whose passages are no single ranking."""
    if trace.rounds != 1 or len(trace.nodes) != 1:
        return None
    node = trace.nodes[0]
    if node.source != "retrieval" or node.query != trace.question:
        return None
    return node.passages
