"""A node is labelled verified only when the evidence confirmed it (issues 41 and 47): a
confident reader whose span is not drawn from the node's query and agrees with the node's
answer; a yes/no node only by entailment. Anything else is "unconfirmed", with what the check
found — in the trace, the tree the CLI draws and the report's count. The label changes no
answer: when IR corrects stays the paper's rule."""

from __future__ import annotations

from rich.console import Console

from searchain.eval.analyses import node_checks
from searchain.methods.searchain.node_labels import AGREEMENT_F1, LABEL_RULE, agreement, label
from searchain.readers.base import UNGROUNDED, ReaderOutput
from searchain.render import tree_of_reasoning
from searchain.types import Node, Trace


def _out(answer: str, confidence: float) -> ReaderOutput:
    return ReaderOutput(answer=answer, span_score=confidence, confidence=confidence)


THETA = -1.3  # the 1.5B LLM reader's θ


def test_why_a_node_is_unconfirmed_is_said_in_words() -> None:
    q = "Where is Paris?"
    assert label(q, "France", _out("France", 0.0), THETA, False).check.startswith("not checked")
    assert label(q, "France", _out("x", UNGROUNDED), THETA, True).check.startswith("inconclusive")
    assert "disagrees" in label(q, "Texas", _out("France", -2.0), THETA, True).check
    assert "agrees" in label(q, "France", _out("France", -2.0), THETA, True).check


def test_a_span_that_only_repeats_the_query_does_not_verify() -> None:
    """Recorded in the HotpotQA-100 run: the answer restates the query, so the paper's
    containment finds the query's own entity "in" it."""
    found = label(
        "Who publishes Human Events?",
        "The publisher of Human Events is The New York Times",
        _out("Human Events", -0.2),
        THETA,
        True,
    )
    assert found.status == "unconfirmed" and "repeats the node's query" in found.check
    found = label(
        "Who wrote and directed Joby Harold's film?",
        'Joby Harold wrote and directed "The Last of the Mohicans" (1992).',
        _out("Joby Harold", -0.1),
        THETA,
        True,
    )
    assert found.status == "unconfirmed"  # drawn from the query, past its possessive


def test_a_matching_span_verifies_and_a_partial_one_does_not() -> None:
    query = "What is the common name for the plant known as Aldrovanda vesiculosa?"
    answer = "The common name for the plant known as Aldrovanda vesiculosa is the waterwheel plant."
    assert label(query, answer, _out("waterwheel plant", -0.3), THETA, True).status == "verified"
    query = "What is the geographical location of Taizhou?"
    answer = "Taizhou is located in Jiangsu Province, China."
    assert agreement(answer, "Jiangsu Province", query) > AGREEMENT_F1
    assert label(query, answer, _out("Jiangsu Province", -0.3), THETA, True).status == "verified"
    # The paper's containment finds "China" in the answer; one word of four is no agreement.
    assert agreement(answer, "China", query) <= AGREEMENT_F1
    found = label(query, answer, _out("China", -0.3), THETA, True)
    assert found.status == "unconfirmed" and "does not match" in found.check
    # Below θ a matching span is not enough either.
    assert label(query, answer, _out("Jiangsu Province", -2.0), THETA, True).status == "unconfirmed"


def test_a_choice_query_verifies_the_pick_the_node_names() -> None:
    query = "Who was born first, Connie Willis or Margaret Landon?"
    answer = "Connie Willis was born in 1922."
    assert label(query, answer, _out("Connie Willis", -0.2), THETA, True).status == "verified"
    assert label(query, answer, _out("Margaret Landon", -0.2), THETA, True).status != "verified"


def test_a_yes_no_node_without_a_judge_is_unconfirmed() -> None:
    found = label("Is Jaws a film?", "Yes, it is.", _out("Yes", -0.1), THETA, True)
    assert found.status == "unconfirmed"
    assert found.check.startswith("a yes/no answer is not a span")


def test_the_rule_is_named() -> None:
    assert LABEL_RULE == 2


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
