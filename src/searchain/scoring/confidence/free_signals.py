"""Signals of whether the question was *answered*, not only whether the answer is grounded
(issue 61): read from the trace, no model call. On the recorded runs the main error is an
answer that sits in the passages but answers something else — the bridge entity, a
distractor — which grounding signals cannot see.

* ``answer_from_earlier_hop`` (a chain only): the final answer is the answer of an earlier
  step of the reasoning path and not of its last — usually the bridge entity (on the
  recorded HotpotQA calibration pool such answers were right 6 of 27 times, the others 88 of
  213).
* ``chain_agrees_with_first_read`` (SearChain read first, then chained): the chain's answer and
  the first read's say the same.
* ``answer_type_matches`` (every method): the answer has the type the question asks for —
  a year or date for "when", a number for "how many", yes or no for a yes/no question, not a
  bare number for "who". Absent where the question's form names no type.

A signal is absent, not 0, where it does not apply: 0 would say "failed".
"""

from __future__ import annotations

import re

from searchain.text import answers_agree, normalize_answer
from searchain.trace_extras import ChainExtras
from searchain.types import Trace

SIGNALS = ("answer_from_earlier_hop", "chain_agrees_with_first_read", "answer_type_matches")

_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})s?\b")
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_DATE = re.compile(rf"\b({_MONTHS})\b|\b\d{{1,2}}(st|nd|rd|th)\b", re.I)
_NUMBER_WORDS = (
    "zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    "fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
    "eighty|ninety|hundred|thousand|million|billion|dozen|several|once|twice"
)
_NUMBER = re.compile(rf"\d|\b({_NUMBER_WORDS})\b", re.I)
_YES_NO_START = re.compile(
    r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|shall|may)\b", re.I
)
_WHEN = re.compile(r"^(when\b|in what year|in which year|what year|which year|what date)", re.I)
_HOW_MANY = re.compile(r"^how (many|much|long|old|far|tall|big|large|often)\b", re.I)
_WHO = re.compile(r"^(who|whom|whose)\b", re.I)


def question_type(question: str) -> str | None:
    """``when``, ``how many``, ``yes/no``, ``who`` or None (a form that names no type)."""
    q = " ".join(question.split()).strip()
    if _WHEN.match(q):
        return "when"
    if _HOW_MANY.match(q):
        return "how many"
    if _WHO.match(q):
        return "who"
    if _YES_NO_START.match(q) and " or " not in f" {q.lower()} ":  # "Is X or Y …?" is a choice
        return "yes/no"
    return None


def answer_type_matches(question: str, answer: str) -> float | None:
    """1.0 where ``answer`` has the type ``question`` asks for, 0.0 where it has not, None
    where the question names no type or there is no answer."""
    kind, said = question_type(question), normalize_answer(answer)
    if kind is None or not said:
        return None
    yes_no = said in ("yes", "no")
    if kind == "yes/no":
        return float(yes_no)
    if kind == "when":
        return float(bool(_YEAR.search(answer) or _DATE.search(answer)))
    if kind == "how many":
        return float(bool(_NUMBER.search(answer)))
    return float(not yes_no and not said.replace(" ", "").isdigit())  # who: a name


def free_signals(trace: Trace) -> dict[str, float]:
    """The signals above that apply to ``trace``."""
    out: dict[str, float] = {}
    typed = answer_type_matches(trace.question, trace.answer)
    if typed is not None:
        out["answer_type_matches"] = typed
    extras = ChainExtras.of(trace)
    by_id = {n.id: n for n in trace.nodes}
    steps = [by_id[i] for i in extras.path or [] if i in by_id]
    if steps and normalize_answer(trace.answer):
        said = [answers_agree(trace.answer, n.answer or "") for n in steps]
        out["answer_from_earlier_hop"] = float(any(said[:-1]) and not said[-1])
    route = extras.route
    if route is not None and route.get("taken") == "chain":
        first = str((route.get("first_read") or {}).get("answer") or "")
        if normalize_answer(first):
            out["chain_agrees_with_first_read"] = float(answers_agree(trace.answer, first))
    return out
