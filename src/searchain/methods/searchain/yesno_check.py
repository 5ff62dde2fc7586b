"""IR's check of a node the LLM answered Yes or No (``yesno_check="nli"``).

A reader extracts a span, and "No" is not a span of a passage that says "founded in Texas":
the span check of a yes/no node is at best inconclusive, and when it agrees it agrees by
accident. Here the node is checked by whether its passage *supports* the answer, with the
NLI judge (``readers/nli.py``) asked twice, once for each answer to the node's query:

* the passage supports the node's answer, more than the opposite one: **verified**;
* the passage supports the opposite answer, more than the node's: **contradicted** — fed
  back to the LLM as IR's correction is, with the opposite answer and the passage;
* neither (or both alike): **inconclusive**, the node stays unconfirmed and says so.

The judge's probabilities (or its verdicts, where the backend cannot score) are kept in
``node.meta["nli"]``; the judge's LLM calls are the question's own cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from searchain.readers.base import ReaderOutput
from searchain.readers.nli import answer_claim, support, yes_no
from searchain.scoring.attribution import format_document
from searchain.types import Passage

YESNO_CHECKS = ("span", "nli")
OPPOSITE = {True: "No", False: "Yes"}


def yes_no_answer(answer: str | None) -> bool | None:
    """True for an answer that opens with "Yes", False for "No", None for any other."""
    return None if not answer else yes_no(answer)


@dataclass
class YesNoVerdict:
    verdict: str  # "entailed" | "contradicted" | "inconclusive"
    answer: str  # the answer the passage supports ("Yes"/"No"), or the node's own
    support: float  # P(the passage supports it), or 1.0/0.0 for a generated verdict
    detail: dict[str, Any]

    def reader_output(self, passage: Passage) -> ReaderOutput:
        """The correction as SearChain's feedback carries a reader's answer."""
        return ReaderOutput(
            answer=self.answer,
            span_score=float("nan"),
            confidence=self.support,
            passage_id=passage.id,
            confidence_source="NLI judge: the passage supports the opposite answer",
        )


def check_yes_no(judge: Any, query: str, said_yes: bool, passage: Passage) -> YesNoVerdict:
    """Judge a node that answered ``said_yes`` against its passage (see the module doc)."""
    own, other = ("Yes", "No") if said_yes else ("No", "Yes")
    premise = format_document(passage)  # as the judge's demos show a passage
    p_own = support(judge, premise, answer_claim(query, own))
    p_other = support(judge, premise, answer_claim(query, other))
    threshold = float(getattr(judge, "threshold", 0.5))
    detail = {"judge": getattr(judge, "name", type(judge).__name__), own: p_own, other: p_other}
    if p_own >= threshold and p_own > p_other:
        verdict = YesNoVerdict("entailed", own, p_own, detail)
    elif p_other >= threshold and p_other > p_own:
        verdict = YesNoVerdict("contradicted", other, p_other, detail)
    else:
        verdict = YesNoVerdict("inconclusive", own, p_own, detail)
    detail["verdict"] = verdict.verdict
    return verdict
