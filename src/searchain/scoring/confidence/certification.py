"""Certify an abstention threshold on items the calibrator never saw (Learn-then-Test).

A threshold's guarantee ("the error rate among answered questions is at most R with
probability 1 - δ") holds only over items that neither fit nor chose the calibrator. So the
calibration items are split once, by a committed rule on their ids (:func:`split_of`): the
*fit* items fit the calibrator and choose its penalty; the *certification* items are scored
by the fitted calibrator and certify its threshold.

Certification is Learn-then-Test's fixed-sequence testing over a grid fixed in advance
(:data:`GRID`, 0.99 down to 0.01): for each threshold, the null hypothesis "the selective risk
exceeds R" is rejected when the exact binomial tail of the errors among the certification
items answered is at most δ; the sequence runs from the most confident threshold down and
stops at the first one not rejected. It starts at the first threshold that answers enough
certification items to reject at all (ln δ / ln(1 − R) of them: their scores, never their
labels) and where the fit items' out-of-fold answers err at most R (learnt on items the test
never reads), so a top of the grid that answers nobody, or that the fit items already show
to fail, does not stop it before it begins.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from searchain.scoring.confidence.calibration import binomial_cdf

# The split rule (committed: changing it changes which items certify): an item certifies
# when the sha256 of "certify:" + its id is odd; otherwise it fits.
SPLIT_RULE = "sha256('certify:' + item id) odd: certification item; even: fit item"
# The thresholds tested, most confident first, fixed before any score is seen.
GRID = tuple(round(1 - i / 100, 2) for i in range(1, 100))
# The risks at which the lowest certifiable one is looked for (the table in the docs).
RISKS = tuple(round(i / 100, 2) for i in range(1, 100))
DEFAULT_DELTA = 0.1


def item_hash(item_id: str) -> str:
    """An item's id as the calibrator file keeps it (the first 16 hex digits of its sha256)."""
    return hashlib.sha256(item_id.encode()).hexdigest()[:16]


def split_of(item_id: str) -> str:
    """``"certify"`` or ``"fit"``, by :data:`SPLIT_RULE`."""
    digest = hashlib.sha256(f"certify:{item_id}".encode()).digest()
    return "certify" if digest[-1] % 2 else "fit"


def fewest_answers(max_risk: float, delta: float) -> int:
    """The fewest answered items that can certify ``max_risk`` at all (with no error)."""
    return math.ceil(math.log(delta) / math.log(1 - max_risk))


@dataclass(frozen=True)
class Certificate:
    """A certified threshold (None: none certified, ``reason`` says why) and its terms."""

    threshold: float | None
    max_risk: float
    delta: float
    items: int  # certification items
    answered: int = 0  # certification items at or above the threshold
    errors: int = 0  # wrong among them
    reason: str = ""

    def terms(self) -> str:
        if self.threshold is None:
            return (
                f"no threshold is certified at risk {self.max_risk:g} with probability "
                f"{1 - self.delta:g}: {self.reason}; every answer is withheld"
            )
        return (
            f"answer when confidence >= {self.threshold:.2f}: the error rate among answered "
            f"questions is at most {self.max_risk:g} with probability at least "
            f"{1 - self.delta:g}, if new questions are exchangeable with the {self.items} "
            f"certification items the calibrator was not fit on ({self.answered} answered "
            f"there, {self.errors} wrong)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "max_risk": self.max_risk,
            "delta": self.delta,
            "items": self.items,
            "answered": self.answered,
            "errors": self.errors,
            "reason": self.reason or None,
        }


def sequence_start(
    scores: Sequence[float],
    fit: Sequence[tuple[float, bool]],
    max_risk: float,
    delta: float,
) -> int:
    """The grid index the sequence starts at: the most confident threshold that answers
    enough certification items to certify ``max_risk`` at all (their scores, never their
    labels) and at which the fit items (their out-of-fold scores and labels, ``fit``) err
    at most ``max_risk`` among those they answer — Learn-then-Test's "learn" step, on items
    the test never reads. ``len(GRID)``: nowhere."""
    need = fewest_answers(max_risk, delta)
    for i, threshold in enumerate(GRID):
        if sum(s >= threshold for s in scores) < need:
            continue
        kept = [ok for p, ok in fit if p >= threshold]
        if kept and kept.count(False) <= max_risk * len(kept):
            return i
    return len(GRID)


def certify(
    scores: Sequence[float],
    right: Sequence[bool],
    fit: Sequence[tuple[float, bool]],
    max_risk: float,
    delta: float = DEFAULT_DELTA,
) -> Certificate:
    """The lowest grid threshold certified at ``max_risk`` on the certification items
    (``scores``, ``right``), the sequence started with the fit items' out-of-fold scores
    and labels (``fit``; see above)."""
    if not 0 < max_risk < 1 or not 0 < delta < 1:
        raise ValueError("the maximum risk and δ are between 0 and 1")
    n = len(scores)
    start = sequence_start(scores, fit, max_risk, delta)
    best = Certificate(None, max_risk, delta, n)
    for threshold in GRID[start:]:
        kept = [ok for s, ok in zip(scores, right, strict=True) if s >= threshold]
        errors = len(kept) - sum(kept)
        # H0: the risk at this threshold exceeds max_risk; rejected when few errors are seen.
        if not kept or binomial_cdf(errors, len(kept), max_risk) > delta:
            break
        best = Certificate(threshold, max_risk, delta, n, len(kept), errors)
    if best.threshold is None:
        need = fewest_answers(max_risk, delta)
        reason = (
            f"on the {n} certification items, the first threshold tested ({GRID[start]:.2f}) fails"
            if start < len(GRID)
            else f"no threshold answers the {need} of them a certification needs where the "
            "fit items err at most that often"
        )
        best = Certificate(None, max_risk, delta, n, reason=reason)
    return best


def lowest_certified_risk(
    scores: Sequence[float],
    right: Sequence[bool],
    fit: Sequence[tuple[float, bool]],
    delta: float = DEFAULT_DELTA,
) -> Certificate | None:
    """The certificate at the lowest risk of :data:`RISKS` that certifies a threshold."""
    for risk in RISKS:
        found = certify(scores, right, fit, risk, delta)
        if found.threshold is not None:
            return found
    return None


def certification_record(
    certify_items: Sequence[tuple[str, float, bool]],
    fit: Sequence[tuple[float, bool]],
    configuration: dict[str, Any],
    delta: float = DEFAULT_DELTA,
) -> dict[str, Any]:
    """What a calibrator file keeps of its certification: the configuration, δ, the grid and
    rule, each certification item's hash, score and label, and the lowest certifiable risk
    (None with the reason when none is)."""
    scores = [s for _, s, _ in certify_items]
    right = [ok for _, _, ok in certify_items]
    lowest = lowest_certified_risk(scores, right, fit, delta)
    return {
        "procedure": "Learn-then-Test, fixed sequence over the grid, exact binomial tail",
        "split_rule": SPLIT_RULE,
        "grid": {"from": GRID[0], "to": GRID[-1], "step": 0.01},
        "configuration": configuration,
        "delta": delta,
        "lowest_certified_risk": None if lowest is None else lowest.max_risk,
        "at_lowest_risk": None if lowest is None else lowest.to_dict(),
        "reason": None
        if lowest is not None
        else f"no risk below 1 is certified on these {len(scores)} certification items",
        "items": [[h, round(s, 6), int(ok)] for h, s, ok in certify_items],
    }
