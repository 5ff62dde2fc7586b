"""Fit a confidence calibrator, and pick an abstention threshold with a risk guarantee.

* :func:`fit_logistic` — logistic regression of "the answer is right" on a trace's signals
  (``confidence.signals``), standardised, with a small L2 penalty, fit by Newton's method
  (IRLS): a handful of features and a few hundred items need nothing more.
* :func:`risk_controlling_threshold` — the lowest confidence threshold at which the error
  rate among the answered questions is at most ``max_risk`` with probability at least
  ``1 - delta`` over the calibration items, under exchangeability (Learn-then-Test's fixed
  sequence testing with exact binomial p-values, as conformal risk control of a RAG answer
  in C-RAG): thresholds are tested from the most confident down, and the first one whose
  p-value is above ``delta`` stops the sequence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

VERSION = 1


def fit_logistic(
    rows: Sequence[dict[str, float]],
    correct: Sequence[bool],
    features: Sequence[str],
    *,
    l2: float = 1.0,
    iterations: int = 50,
) -> dict[str, Any]:
    """Weights, bias and the standardisation of ``features`` (as ``apply_calibrator`` reads)."""
    if len(rows) != len(correct) or not rows:
        raise ValueError("need as many labels as rows, and at least one row")
    x = np.array([[r.get(f, 0.0) for f in features] for r in rows], dtype=float)
    y = np.array(correct, dtype=float)
    means = x.mean(axis=0)
    scales = x.std(axis=0)
    scales[scales == 0] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - means) / scales])
    w = np.zeros(z.shape[1])
    penalty = np.diag([0.0, *([l2] * len(features))])  # the bias is not shrunk
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-np.clip(z @ w, -30, 30)))
        grad = z.T @ (p - y) + penalty @ w
        hess = (z * (p * (1 - p))[:, None]).T @ z + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return {
        "kind": "logistic",
        "version": VERSION,
        "features": list(features),
        "weights": [float(v) for v in w[1:]],
        "bias": float(w[0]),
        "means": [float(v) for v in means],
        "scales": [float(v) for v in scales],
    }


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


@dataclass(frozen=True)
class RiskThreshold:
    """An abstention threshold and the terms of its guarantee."""

    threshold: float | None  # None: no threshold meets the risk (abstain on everything)
    max_risk: float
    delta: float
    items: int
    answered: int  # calibration items at or above the threshold
    errors: int  # wrong among them

    def terms(self) -> str:
        if self.threshold is None:
            return (
                f"no threshold keeps the error rate among answered questions at or below "
                f"{self.max_risk:g} with probability {1 - self.delta:g} on these {self.items} "
                "calibration items: every answer would be withheld"
            )
        return (
            f"answer when confidence >= {self.threshold:.3f}: the error rate among answered "
            f"questions is at most {self.max_risk:g} with probability at least "
            f"{1 - self.delta:g}, if new questions are exchangeable with the {self.items} "
            f"calibration items ({self.answered} answered there, {self.errors} wrong)"
        )


def risk_controlling_threshold(
    confidences: Sequence[float],
    correct: Sequence[bool],
    max_risk: float,
    delta: float = 0.1,
) -> RiskThreshold:
    """The lowest threshold whose selective risk is certified at ``max_risk`` (see above)."""
    if not 0 < max_risk < 1 or not 0 < delta < 1:
        raise ValueError("max_risk and delta are between 0 and 1")
    pairs = sorted(zip(confidences, correct, strict=True), key=lambda t: -t[0])
    n = len(pairs)
    best = RiskThreshold(None, max_risk, delta, n, 0, 0)
    errors = 0
    for i, (conf, ok) in enumerate(pairs, 1):
        errors += not ok
        if i < n and pairs[i][0] == conf:
            continue  # a threshold answers every item of its confidence
        if (1 - max_risk) ** i > delta:
            continue  # too few answered to reject even with no error: not in the sequence
        # H0: the risk at this threshold exceeds max_risk. Reject when few errors are seen.
        if binomial_cdf(errors, i, max_risk) > delta:
            break
        best = RiskThreshold(conf, max_risk, delta, n, i, errors)
    return best
