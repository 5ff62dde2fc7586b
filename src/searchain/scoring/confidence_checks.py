"""Confidence signals that cost model calls, asked for by name (``--confidence-check``).

The signals of ``confidence.py`` are read from the trace for free. These run after the
method has answered, and their cost is said in ``confidence.cost``:

* ``nli`` — whether the passages the answer cites support it: the NLI judge (the LLM itself,
  as Think&Cite's R_a; ``readers/nli.py``) is asked whether they state that the answer
  answers the question (two scoring calls; the signal ``answer_supported``, P(supported)
  where the backend scores continuations, else 1/0 from the generated verdict). An answer
  that cites nothing is judged against the passages the method read (at most five).

A check's values are kept in ``trace.meta["confidence_checks"]`` (``{check: {signal:
value}}``), where ``signals`` finds them again; answers with a check are mapped by the
calibrator fit on runs made with it (``searchain+nli``), else by the method's own, which
then says the check's signal was shown, not used.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from searchain.readers.nli import answer_claim, make_judge, support
from searchain.scoring.attribution import format_document
from searchain.scoring.confidence import CHECKS_KEY
from searchain.text import normalize_answer
from searchain.types import Passage, Trace

MAX_PREMISE_PASSAGES = 5


def supporting_passages(trace: Trace) -> list[Passage]:
    """The passages the answer cites, else the first ones the method read."""
    cited = {c.passage_id for c in trace.citations if c.passage_id}
    chosen = [p for p in trace.references if p.id in cited]
    return chosen or trace.references[:MAX_PREMISE_PASSAGES]


def nli_check(trace: Trace, judge: Any) -> dict[str, float]:
    """``answer_supported``: P(the supporting passages state the answer); 0.0 with no answer
    or no passage (nothing supports it), without a call."""
    passages = supporting_passages(trace)
    if not normalize_answer(trace.answer) or not passages:
        return {"answer_supported": 0.0}
    premise = "\n\n".join(format_document(p) for p in passages)
    return {"answer_supported": support(judge, premise, answer_claim(trace.question, trace.answer))}


CHECKS: dict[str, Callable[[Trace, Any], dict[str, float]]] = {"nli": nli_check}


def check_names(names: Sequence[str] | str | None) -> tuple[str, ...]:
    """The checks asked for, by name, in a fixed order (ValueError for an unknown one)."""
    if not names:
        return ()
    asked = [names] if isinstance(names, str) else list(names)
    unknown = sorted(set(asked) - set(CHECKS))
    if unknown:
        raise ValueError(
            f"no confidence check {', '.join(map(repr, unknown))}; known: {', '.join(CHECKS)}"
        )
    return tuple(sorted(set(asked)))


def run_checks(trace: Trace, names: Sequence[str], llm: Any) -> dict[str, float]:
    """Run the named checks on an answered trace; their signals go into the trace's meta.
    Returns their cost (LLM calls, seconds)."""
    found: dict[str, dict[str, float]] = dict(trace.meta.get(CHECKS_KEY) or {})
    calls, t0 = 0, time.perf_counter()
    for name in names:
        judge = make_judge("llm", llm)
        found[name] = CHECKS[name](trace, judge)
        calls += judge.usage.llm_calls + judge.usage.cached_calls
        trace.usage.add(judge.usage)
    trace.meta[CHECKS_KEY] = found
    return {"llm_calls": float(calls), "seconds": round(time.perf_counter() - t0, 3)}
