"""What a node of SearChain's Tree-of-Reasoning is labelled once IR has read it.

The paper's rule decides *when IR corrects* a node: a confident reader (confidence > θ) whose
answer g is not contained in the node's answer a. It never promised a label, and read as one
it claims too much: a span that only repeats the node's query ("Human Events" for "Who
publishes Human Events?") is contained in an answer that restates the query, and "agrees".

So the label has a rule of its own, checked both ways. A node is **verified** only when

* IR checked it (verification is on) and the reader's answer is a span of its passage;
* the reader is confident (confidence > θ);
* the reader's answer is not words the node's query already says — except where the query
  offers a choice ("X or Y?") and the reader picks one;
* the reader's answer matches the node's: the words of the node's short answer that its query
  does not already say lie within the reader's span, or their token F1 is above
  :data:`AGREEMENT_F1` (for a choice query, the node's answer names the reader's pick);
* and it is not a bare Yes or No: a passage holds a span, never a verdict, so only an
  entailment check (the NLI judge, ``yesno_check="nli"``) can verify one.

Every other node the chain kept is **unconfirmed**, with what the check found. The label
changes no answer, path or prompt. :data:`LABEL_RULE` is the rule's version; traces and run
manifests record it, so signals read from one rule's labels are not mixed with another's.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from searchain.answers import short_answer
from searchain.methods.searchain.yesno_check import yes_no_answer
from searchain.readers.base import ReaderOutput
from searchain.text import contains_answer, normalize_answer

# The rule's version, recorded in each trace (meta "label_rule") and run manifest. Traces without
# it were labelled by version 1: verified when a confident reader's span was contained in the
# node's answer (the paper's containment, read as a label).
LABEL_RULE = 2
FIRST_LABEL_RULE = 1
# Token F1 between the reader's span and the node answer's own words (those its query does not
# already say, function words aside) above which the two agree. Chosen on the calibration items'
# recorded nodes (bench/node_labels.py --pairs lists the pairs it decides): above 0.4 keeps 11 of
# their 12 agreeing pairs (all but a span of one of three words) and refuses every span that
# states one of four or more of the node's words ("China" for "located in Jiangsu Province,
# China"); 0.3 would accept those, 0.5 would lose two more agreeing pairs (docs/searchain.md).
AGREEMENT_F1 = 0.4
# Words that carry no claim of their own: "Taizhou is located in Jiangsu" claims "located Jiangsu".
FUNCTION_WORDS = frozenset(
    "is was are were be been being it its he she they his her their in of on at by for and "
    "to from with as that this which who also".split()
)
_POSSESSIVE = re.compile(r"['’]s\b")


@dataclass(frozen=True)
class NodeLabel:
    status: str  # "verified" | "unconfirmed"
    check: str | None = None  # what the check found, for an unconfirmed node


def repeats_query(answer: str, query: str) -> bool:
    """Whether ``answer`` is words the query itself says (normalised, whole words). A choice
    query ("Who was born first, X or Y?") names its answer, so it never counts."""
    return contains_answer(query, answer) and not is_choice(query)


def is_choice(query: str) -> bool:
    return contains_answer(query, "or")


def drawn_from_query(answer: str, query: str) -> bool:
    """:func:`repeats_query`, also against the query without its possessives ("Joby Harold"
    is drawn from "Who directed Joby Harold's film?")."""
    return repeats_query(answer, query) or repeats_query(answer, _POSSESSIVE.sub("", query))


def own_words(node_answer: str, query: str) -> list[str]:
    """The words of the node's short answer that its query does not already say."""
    said = set(normalize_answer(query).split()) | set(
        normalize_answer(_POSSESSIVE.sub("", query)).split()
    )
    words = normalize_answer(short_answer(node_answer)).split()
    return [w for w in words if w not in said and w not in FUNCTION_WORDS]


def _f1(found: list[str], claimed: list[str]) -> float:
    common = sum((Counter(found) & Counter(claimed)).values())
    if not common:
        return 0.0
    precision, recall = common / len(found), common / len(claimed)
    return 2 * precision * recall / (precision + recall)


def agreement(node_answer: str, reader_answer: str, query: str) -> float:
    """How far the reader's span states the node's answer, 0-1: 1 when the node's own words
    all lie within the span, else their token F1. For a choice query ("X or Y?") the pick is
    what is compared: 1 when the node's answer names the reader's pick, else 0."""
    if is_choice(query):
        return float(
            bool(normalize_answer(reader_answer)) and contains_answer(node_answer, reader_answer)
        )
    claimed = own_words(node_answer, query)
    found = normalize_answer(reader_answer).split()
    if not claimed or not found:
        return 0.0
    if all(w in found for w in claimed):
        return 1.0
    return _f1(found, claimed)


def label(
    query: str, node_answer: str, reader: ReaderOutput, theta: float, verification: bool
) -> NodeLabel:
    """The label of a node that IR read and did not correct (no NLI judge for it)."""
    if not verification:
        return NodeLabel("unconfirmed", "not checked (verification is off)")
    if yes_no_answer(node_answer) is not None:
        return NodeLabel("unconfirmed", "a yes/no answer is not a span (no NLI judge checked it)")
    if not reader.grounded:
        return NodeLabel(
            "unconfirmed", "inconclusive: the reader's answer is not a span of the passage"
        )
    match = agreement(node_answer, reader.answer, query) > AGREEMENT_F1
    if reader.confidence <= theta:
        said = "agrees" if match else "disagrees"
        return NodeLabel("unconfirmed", f"the reader {said}, below the confidence threshold θ")
    if drawn_from_query(reader.answer, query):
        return NodeLabel("unconfirmed", "the reader's span only repeats the node's query")
    if not match:
        return NodeLabel("unconfirmed", "the reader's span does not match the node's answer")
    return NodeLabel("verified")
