"""A node is labelled verified only when the evidence confirmed it (issues 41, 47 and 61): a
confident reader whose span is not drawn from the node's query (a choice's option only where
the passage states the comparison) and agrees with the node's answer, naming nothing
different; a yes/no node only by entailment. A node IR corrected or completed passes the same
checks of the reader's span, or is "unconfirmed" too. Anything else is "unconfirmed", with what
the check found — in the trace, the tree the CLI draws and the report's count. The label
changes no answer: when IR corrects stays the paper's rule."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from searchain.eval.analyses import node_checks
from searchain.eval.runner import LABEL_RULE_CHANGE, MANIFEST, environment_changes
from searchain.methods.searchain.node_labels import (
    AGREEMENT_F1,
    FIRST_LABEL_RULE,
    LABEL_RULE,
    NodeLabel,
    agreement,
    choice_options,
    conflict,
    ir_label,
    label,
    own_words,
)
from searchain.readers.base import UNGROUNDED, ReaderOutput
from searchain.render import tree_of_reasoning
from searchain.scoring.confidence.configuration import configuration, label_rule
from searchain.types import Node, Trace


def _out(answer: str, confidence: float) -> ReaderOutput:
    return ReaderOutput(answer=answer, span_score=confidence, confidence=confidence)


THETA = -1.3  # the 1.5B LLM reader's θ
NO_PASSAGE = ""  # where the passage plays no part in the check


def kept(query: str, answer: str, span: str, passage: str = NO_PASSAGE, conf: float = -0.2):
    """The label of a node kept as the LLM wrote it, read by a confident reader."""
    return label(query, answer, _out(span, conf), THETA, True, passage=passage)


def _v2_f1(node_answer: str, span: str, query: str) -> float:
    """Rule 2's agreement for a span not holding all the node's own words: their token F1."""
    claimed, found = own_words(node_answer, query), span.lower().split()
    common = sum(min(claimed.count(w), found.count(w)) for w in set(claimed))
    if not common:
        return 0.0
    p, r = common / len(found), common / len(claimed)
    return 2 * p * r / (p + r)


def test_why_a_node_is_unconfirmed_is_said_in_words() -> None:
    q = "Where is Paris?"
    off = label(q, "France", _out("France", 0.0), THETA, False, passage="")
    assert off.check.startswith("not checked")
    assert kept(q, "France", "x", conf=UNGROUNDED).check.startswith("inconclusive")
    assert "disagrees" in kept(q, "Texas", "France", conf=-2.0).check
    assert "agrees" in kept(q, "France", "France", conf=-2.0).check


def test_a_span_that_only_repeats_the_query_does_not_verify() -> None:
    """Recorded in the HotpotQA-100 run: the answer restates the query, so the paper's
    containment finds the query's own entity "in" it."""
    found = kept(
        "Who publishes Human Events?",
        "The publisher of Human Events is The New York Times",
        "Human Events",
    )
    assert found.status == "unconfirmed" and "repeats the node's query" in found.check
    found = kept(
        "Who wrote and directed Joby Harold's film?",
        'Joby Harold wrote and directed "The Last of the Mohicans" (1992).',
        "Joby Harold",
        conf=-0.1,
    )
    assert found.status == "unconfirmed"  # drawn from the query, past its possessive


def test_an_or_that_offers_no_choice_of_the_span_does_not_exempt_it() -> None:
    """Rule 2 exempted any span from the query check once the query said "or"."""
    query = "Which city or town is the publisher of Human Events based in?"
    answer = "The publisher of Human Events is based in Washington, D.C."
    assert choice_options(query) == ["city", "town"]  # "Human Events" is neither
    found = kept(query, answer, "Human Events")
    assert found.status == "unconfirmed" and "repeats the node's query" in found.check


def test_a_matching_span_verifies_and_a_partial_one_does_not() -> None:
    query = "What is the common name for the plant known as Aldrovanda vesiculosa?"
    answer = "The common name for the plant known as Aldrovanda vesiculosa is the waterwheel plant."
    assert kept(query, answer, "waterwheel plant", conf=-0.3).status == "verified"
    query = "What is the geographical location of Taizhou?"
    answer = "Taizhou is located in Jiangsu Province, China."
    assert agreement(answer, "Jiangsu Province", query) > AGREEMENT_F1
    assert kept(query, answer, "Jiangsu Province", conf=-0.3).status == "verified"
    # The paper's containment finds "China" in the answer; one word of four is no agreement.
    assert agreement(answer, "China", query) <= AGREEMENT_F1
    found = kept(query, answer, "China", conf=-0.3)
    assert found.status == "unconfirmed" and "does not match" in found.check
    # Below θ a matching span is not enough either.
    assert kept(query, answer, "Jiangsu Province", conf=-2.0).status == "unconfirmed"


# Two-word answers that share one word with the span: rule 2's token F1 (above 0.4) agreed.
SHARED_WORD = [
    ("In which state is Morgantown?", "West Virginia", "Virginia", "part of a name"),
    ("In which state is Morgantown?", "Virginia", "West Virginia", "part of a name"),
    ("When did the battle take place?", "December 1950", "December 1951", "another number"),
    ("Who was the first president?", "George Washington", "George Bush", "another name"),
    ("Who was the first president?", "George Washington", "George", "part of a name"),
]


@pytest.mark.parametrize(("query", "answer", "span", "why"), SHARED_WORD)
def test_a_span_sharing_one_word_of_a_two_word_answer_does_not_verify(
    query: str, answer: str, span: str, why: str
) -> None:
    assert _v2_f1(answer, span, query) > AGREEMENT_F1  # rule 2 would have verified it
    assert agreement(answer, span, query) == 0.0
    found = kept(query, answer, span)
    assert found.status == "unconfirmed"
    assert found.check.startswith("the reader's span does not match") and why in found.check


# Agreements rule 2 accepted on the calibration items' recorded nodes (bench/node_labels.py
# --pairs), and spans that leave out only a middle name or the kind of thing a name is.
STILL_AGREE = [
    ("Who wrote the song Chattahoochee?", "Alan Jackson and Jim McBride.", "Alan Jackson"),
    ("What award did Ivo Andrić receive?", "Nobel Prize for Literature.", "Nobel prize"),
    (
        "Who was the Chairman of Kaiser Aluminum and Chemical Corporation?",
        "Edgar Fosburgh Kaiser Sr.",
        "Edgar Fosburgh Kaiser",
    ),
    ("Where is Lucie Šafářová from?", "Czech Republic.", "Czech"),
    ("Who is Edward Curzon?", "Edward Curzon is an English 6th Earl Howe.", "6th Earl Howe"),
    ("What sport does Sergio Casal play?", "He plays tennis.", "tennis"),
    ("Who was the goalkeeper's father?", "Peter Bolesław Schmeichel", "Peter Schmeichel"),
    ("When did the battle take place?", "December 1950", "1950"),
]


@pytest.mark.parametrize(("query", "answer", "span"), STILL_AGREE)
def test_legitimate_agreements_still_verify(query: str, answer: str, span: str) -> None:
    assert conflict(answer, span, query) is None
    assert kept(query, answer, span).status == "verified"


def test_a_differing_number_is_named() -> None:
    assert conflict("Apollo 11", "Apollo 13", "Which mission landed first?") == (
        "another number (13, not 11)"
    )
    assert conflict("Apollo 11", "Apollo 11", "Which mission landed first?") is None


# The recorded choice nodes: the query offers "X or Y", the reader's span picks one.
GASHERBRUM = "Is Gasherbrum II or Nuptse closer to Mount Everest?"
BIOGRAPHY = (
    "(Title: Jerzy Kukuczka) Jerzy Kukuczka was a Polish alpine and high-altitude climber. "
    "In 1983 he climbed Gasherbrum II and Gasherbrum I with Wojciech Kurtyka."
)
WILLIS = "Who was born first, Connie Willis or Margaret Landon?"
WINNEBAGOS = (
    '(Title: The Last of the Winnebagos) "The Last of the Winnebagos" is a science fiction '
    "novella by American writer Connie Willis, published in 1988."
)


def test_the_options_of_a_choice_are_read_beside_its_or() -> None:
    assert choice_options(GASHERBRUM) == ["Gasherbrum II", "Nuptse"]
    assert choice_options(WILLIS) == ["Connie Willis", "Margaret Landon"]
    assert choice_options("Who was born first Am Rong or Ava DuVernay ?") == [
        "Am Rong",
        "Ava DuVernay",
    ]
    assert choice_options(
        "Which magazine was started first, Arthur's Magazine or First for Women?"
    ) == ["Arthur's Magazine", "First for Women"]
    assert choice_options("Who publishes Human Events?") == []


def test_a_pick_from_a_passage_that_names_one_option_does_not_verify() -> None:
    """Recorded: the Connie Willis story verified "Connie Willis was born first" (gold:
    Margaret Landon); a mountaineer's biography verified the other pick than the node's."""
    found = kept(WILLIS, "Connie Willis was born in 1922.", "Connie Willis", WINNEBAGOS)
    assert found.status == "unconfirmed"
    assert found.check == (
        "the passage does not state the comparison: it does not name Margaret Landon"
    )
    answer = "Nuptse is closer to Mount Everest than Gasherbrum II"
    found = kept(GASHERBRUM, answer, "Gasherbrum II", BIOGRAPHY)
    assert found.status == "unconfirmed" and "does not name Nuptse" in found.check
    # A passage naming both options still verifies neither pick of a node that names both.
    both = BIOGRAPHY + " He also climbed Nuptse, near Mount Everest."
    found = kept(GASHERBRUM, answer, "Gasherbrum II", both)
    assert found.status == "unconfirmed" and "does not pick the reader's option" in found.check
    assert kept(GASHERBRUM, answer, "Nuptse", both).status == "unconfirmed"


def test_a_pick_from_a_passage_that_states_the_comparison_verifies() -> None:
    passage = (
        "Margaret Landon (born 1903) wrote Anna and the King of Siam; Connie Willis "
        "(born 1945) writes science fiction."
    )
    answer = "Margaret Landon was born first."
    assert kept(WILLIS, answer, "Margaret Landon", passage).status == "verified"
    # The node picking the other option disagrees; a passage that says nothing of what is
    # compared (birth, first) does not state the comparison.
    assert kept(WILLIS, "Connie Willis.", "Margaret Landon", passage).status == "unconfirmed"
    listing = "Authors: Margaret Landon; Connie Willis."
    found = kept(WILLIS, answer, "Margaret Landon", listing)
    assert found.status == "unconfirmed" and "says nothing of 'born' or 'first'" in found.check


def test_an_ir_answer_passes_the_same_checks_of_the_span() -> None:
    """Recorded: IR corrected nodes with a span of their own query ("Who was Peter
    Schmeichel's father?" → "Peter Schmeichel"); such a node is not confirmed."""
    passage = "(Title: Kasper Schmeichel) Kasper is the son of Peter Schmeichel."
    query = "Who was Peter Schmeichel's father?"
    found = ir_label("verify", query, _out("Peter Schmeichel", -0.2), THETA, passage=passage)
    assert found.status == "unconfirmed"
    assert found.check == "IR corrected it, but the reader's span only repeats the node's query"
    assert ir_label("verify", query, _out("Kasper", -0.2), THETA, passage=passage) == NodeLabel(
        "corrected"
    )
    query = "Who is the son of Peter Schmeichel?"
    assert ir_label("complete", query, _out("Kasper", -0.2), THETA, passage=passage) == NodeLabel(
        "completed"
    )
    # Completion asks no confidence of the reader (the paper's rule); the label does.
    found = ir_label("complete", query, _out("Kasper", -2.0), THETA, passage=passage)
    assert found.status == "unconfirmed" and "below the confidence threshold" in found.check
    found = ir_label("complete", query, _out("Danish", UNGROUNDED), THETA, passage=passage)
    assert found.status == "unconfirmed" and "not a span of the passage" in found.check
    found = ir_label("verify", WILLIS, _out("Connie Willis", -0.1), THETA, passage=WINNEBAGOS)
    assert found.status == "unconfirmed" and "does not name Margaret Landon" in found.check


def test_a_yes_no_node_without_a_judge_is_unconfirmed() -> None:
    found = kept("Is Jaws a film?", "Yes, it is.", "Yes", conf=-0.1)
    assert found.status == "unconfirmed"
    assert found.check.startswith("a yes/no answer is not a span")


def test_the_rule_is_named() -> None:
    assert (LABEL_RULE, FIRST_LABEL_RULE) == (3, 1)


def test_a_trace_and_a_run_made_under_rule_2_are_still_read_as_rule_2(tmp_path) -> None:
    """Nothing relabels a trace on loading: its labels are its own rule's, and the signals
    read from them are that rule's (the shipped calibrators were fit on rule 2's)."""
    corrected = Node("r1.1", "Who was Peter Schmeichel's father?", "Peter Schmeichel",
                     "ir-corrected", meta={"status": "corrected"})  # fmt: skip
    trace = Trace(question="q", method="searchain", nodes=[corrected], meta={"chains": []})
    trace.meta["label_rule"] = 2
    loaded = Trace.from_dict(json.loads(json.dumps(trace.to_dict())))
    assert label_rule(loaded) == 2 and loaded.nodes[0].meta["status"] == "corrected"
    assert configuration(loaded, "m")["label_rule"] == 2
    del loaded.meta["label_rule"]
    assert label_rule(loaded) == FIRST_LABEL_RULE
    (tmp_path / MANIFEST).write_text(json.dumps({"label_rule": 2, "environment": {}}))
    assert environment_changes(tmp_path, {}) == [
        f"{LABEL_RULE_CHANGE} 3 (the run started with rule 2)"
    ]


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
