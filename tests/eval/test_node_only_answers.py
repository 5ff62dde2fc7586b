"""Issue 50: which of SearChain's right answers only the node queries' passages stated."""

from __future__ import annotations

from searchain.eval.analyses import node_only_answers
from searchain.types import Passage, Trace


def _trace(answer: str, read: list[tuple[str, str, list[str]]]) -> Trace:
    """An evidence-step trace that read ``(id, text, roles)`` and answered ``answer``."""
    trace = Trace(question="q", method="searchain", answer=answer)
    trace.references = [Passage(id=i, text=text) for i, text, _ in read]
    trace.meta["evidence"] = {"passages": [{"id": i, "roles": roles} for i, _, roles in read]}
    return trace


NODE = ("n", "Animorphs was written by K. A. Applegate.", ["corrects r1.1"])
ASKED = ("q", "A science fantasy series for young adults.", ["question rank 1"])


def test_an_answer_only_a_node_passage_states_is_counted() -> None:
    found = node_only_answers([(_trace("K. A. Applegate", [ASKED, NODE]), True)])
    assert found == {"answers": 1, "node_only": 1}


def test_an_answer_the_question_passages_also_state_is_not() -> None:
    both = ("q", "The series' author, K. A. Applegate, ...", ["question rank 2", "verifies r1.1"])
    found = node_only_answers([(_trace("K. A. Applegate", [both, NODE]), True)])
    assert found == {"answers": 1, "node_only": 0}


def test_wrong_answers_and_tracing_traces_are_not_counted() -> None:
    tracing = Trace(question="q", method="searchain", answer="K. A. Applegate")
    found = node_only_answers(
        [(_trace("K. A. Applegate", [ASKED, NODE]), False), (tracing, True), (None, False)]
    )
    assert found == {"answers": 0, "node_only": 0}
