"""Why a calibrated confidence is what it is: the calibrator's own largest contributions.

A logistic calibrator's log-odds are its bias plus one term per signal, ``weight × (value −
mean) / scale``: each term is how far that signal moved this answer from the calibration
items' average. The reasons shown are those terms, largest first, in words: what lowered the
probability and what raised it — read from the number itself, so they never contradict it
(the rule set of an uncalibrated score may: it does not weigh).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from searchain.scoring.confidence.calibrator import Calibrator

# A term smaller than this (in log-odds) moves the probability by about a percentage point
# at most: not a reason.
SMALLEST = 0.05
MOST = 4  # reasons shown on each side


def _yes_no(yes: str, no: str) -> Callable[[float], str]:
    return lambda v: yes if v >= 0.5 else no


# Each signal's value, in words.
SAID: dict[str, Callable[[float], str]] = {
    "has_answer": _yes_no("there is an answer", "there is no answer"),
    "answer_in_references": _yes_no(
        "the answer is in the passages found", "the answer is not in the passages found"
    ),
    "answer_in_cited": _yes_no(
        "the answer is in the passages cited", "the answer is not in the passages cited"
    ),
    "citations": lambda v: f"{int(v)} passage(s) cited",
    "answer_is_yes_no": _yes_no("the answer is a bare Yes or No", "the answer is not Yes or No"),
    "answer_from_confirmed_node": _yes_no(
        "the answer is one the search confirmed", "the answer is not one the search confirmed"
    ),
    "path_confirmed_share": lambda v: f"the search confirmed {v:.0%} of the reasoning steps",
    "path_unconfirmed_share": lambda v: f"the search could not confirm {v:.0%} of the steps",
    "ir_changed_a_node": _yes_no(
        "the search corrected or completed a step", "the search changed no step"
    ),
    "rounds": lambda v: f"the chain took {int(v)} round(s)",
    "reader_logprob_mean": lambda v: f"the reader's mean log-probability on the path is {v:.2f}",
    "answer_supported": lambda v: f"the judge finds the answer supported at {v:.2f}",
    "answer_agreement": lambda v: f"asked again, the model gives this answer {v:.0%} of the time",
    "answer_logprob": lambda v: f"the model's mean token log-probability for its answer is {v:.2f}",
}


def _said(name: str, value: float) -> str:
    return SAID[name](value) if name in SAID else f"{name} = {value:g}"


def calibrated_reasons(
    calibrator: Calibrator, found: dict[str, float]
) -> tuple[list[str], list[str]]:
    """``(lowered_by, raised_by)``: the signals whose terms pull the probability down / up
    the most (``Calibrator.contributions``), largest first, each in words."""
    terms = calibrator.contributions(found)
    down = sorted((t, n) for n, t in terms.items() if t <= -SMALLEST)
    up = sorted(((t, n) for n, t in terms.items() if t >= SMALLEST), reverse=True)
    return (
        [_said(n, found[n]) for _, n in down[:MOST]],
        [_said(n, found[n]) for _, n in up[:MOST]],
    )
