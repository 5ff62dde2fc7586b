"""A node is labelled verified only when IR confirmed it (issue 41, item 5): a confident reader
that agrees. A check below θ, an inconclusive one or none at all is "unconfirmed", with what
the check found — in the trace, the tree the CLI draws and the report's count."""

from __future__ import annotations

from rich.console import Console

from searchain.eval.analyses import node_checks
from searchain.methods.searchain.method import _why_unconfirmed
from searchain.readers.base import UNGROUNDED, ReaderOutput
from searchain.render import tree_of_reasoning
from searchain.types import Node, Trace


def _out(answer: str, confidence: float) -> ReaderOutput:
    return ReaderOutput(answer=answer, span_score=confidence, confidence=confidence)


def test_why_a_node_is_unconfirmed_is_said_in_words() -> None:
    assert _why_unconfirmed(False, _out("Paris", 0.0), True).startswith("not checked")
    assert _why_unconfirmed(True, _out("No", UNGROUNDED), False).startswith("inconclusive")
    assert "disagrees" in _why_unconfirmed(True, _out("Texas", -2.0), False)
    assert "agrees" in _why_unconfirmed(True, _out("Texas", -2.0), True)


def _trace(*nodes: Node, theta: float = -1.0) -> Trace:
    trace = Trace(question="q", method="searchain", nodes=list(nodes))
    trace.meta["theta"] = theta
    return trace


def test_the_report_counts_checks_and_old_verified_labels_below_theta() -> None:
    old = Node(
        "r1.1",
        "q1",
        "Yes",
        "llm",
        meta={"status": "verified", "reader": {"confidence": UNGROUNDED}},
    )
    ok = Node(
        "r1.2", "q2", "Texas", "llm", meta={"status": "verified", "reader": {"confidence": -0.1}}
    )
    new = Node(
        "r1.3",
        "q3",
        "Yes",
        "llm",
        meta={"status": "unconfirmed", "reader": {"confidence": UNGROUNDED}},
    )
    got = node_checks([_trace(old, ok, new), None])
    assert got == {
        "verified": 2,
        "unconfirmed": 1,
        "corrected": 0,
        "completed": 0,
        "verified_unconfirmed": 1,
    }


def test_the_tree_shows_an_unconfirmed_node_and_what_the_reader_said() -> None:
    node = Node(
        "r1.1",
        "Is Woman's Viewpoint British?",
        "Yes",
        "llm",
        meta={
            "status": "unconfirmed",
            "check": "inconclusive: not a span",
            "reader": {"answer": "founded in Texas", "confidence": UNGROUNDED},
        },
    )
    console = Console(width=200, record=True)
    console.print(tree_of_reasoning(_trace(node)))
    text = console.export_text()
    assert "unconfirmed: inconclusive: not a span" in text
    assert "the reader said 'founded in Texas'" in text
