"""What SearChain's evidence step (issue 50) says about its answer, read from the trace at no
cost: the final answer is written from passages the user's own words retrieved and passages
the chain's nodes brought (``meta.evidence``, each passage with its roles), so where the answer
is stated among them is evidence the tracing step never had.

* ``answer_in_question_passages``: a passage the question's own words retrieved states the
  answer (not only a passage a node's query found);
* ``answer_passages``: how many of the passages read state it (at most 3: more says no more);
* ``node_answer_dropped``: a node answer IR confirmed is not stated by the final content
  (``meta.dropped_node_answers``): the answer went against the chain it relied on.

Present only in traces of the evidence step, so a calibrator reads them only where every one
of its calibration answers has them (``eval/calibrate.py``).
"""

from __future__ import annotations

from searchain.scoring.match import contains_answer
from searchain.text import normalize_answer
from searchain.trace_extras import ChainExtras
from searchain.types import Trace

SIGNALS = ("answer_in_question_passages", "answer_passages", "node_answer_dropped")
MOST_PASSAGES = 3


def evidence_signals(trace: Trace) -> dict[str, float]:
    """The evidence step's signals ({} for a trace without ``meta.evidence``)."""
    extras = ChainExtras.of(trace)
    read = extras.evidence_read
    if not read:
        return {}
    text = {p.id: p.text for p in trace.references}
    answer = trace.answer or ""
    stating = (
        [e for e in read if contains_answer(text.get(e["id"], ""), answer)]
        if normalize_answer(answer)
        else []
    )
    by_question = any(r.startswith("question") for e in stating for r in e.get("roles", []))
    return {
        "answer_in_question_passages": float(by_question),
        "answer_passages": float(min(len(stating), MOST_PASSAGES)),
        "node_answer_dropped": float(extras.dropped_node_answers),
    }
