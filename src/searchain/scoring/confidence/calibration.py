"""Fit a confidence calibrator, and pick an abstention threshold with a risk guarantee.

* :func:`fit_logistic` — logistic regression of "the answer is right" on a trace's signals
  (``assessment.signals``), standardised, with an L2 penalty, fit by Newton's method
  (IRLS): a handful of features and a few hundred items need nothing more.
* :func:`choose_l2` — the penalty, by repeated cross-validated log-loss on the calibration
  items: with a few dozen of them and weak signals, the fit that ranks best is often not the
  one whose probabilities are honest.
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


def auroc(values: Sequence[float], right: Sequence[bool]) -> float:
    """How often a right answer's value is above a wrong one's (ties count half): 0.5 says
    nothing, 1 ranks every right answer first; NaN without both kinds."""
    x, ok = np.asarray(values, dtype=float), np.asarray(right, dtype=bool)
    pos, neg = x[ok], x[~ok]
    if not len(pos) or not len(neg):
        return float("nan")
    above = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    return float(above.mean())


# The penalties cross-validation chooses among (``choose_l2``): from almost none to one
# that pulls every prediction to the base rate, as a few dozen items may need.
L2_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 1000.0)


def _design(x: np.ndarray, means: np.ndarray, scales: np.ndarray) -> np.ndarray:
    return np.hstack([np.ones((len(x), 1)), (x - means) / scales])


def _newton(z: np.ndarray, y: np.ndarray, l2: float, iterations: int) -> np.ndarray:
    """Penalised logistic regression's weights (bias first, not shrunk) by Newton's method."""
    w = np.zeros(z.shape[1])
    penalty = np.diag([0.0, *([l2] * (z.shape[1] - 1))])
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-np.clip(z @ w, -30, 30)))
        grad = z.T @ (p - y) + penalty @ w
        hess = (z * (p * (1 - p))[:, None]).T @ z + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return w


def _standardisation(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scales = x.std(axis=0)
    scales[scales == 0] = 1.0
    return x.mean(axis=0), scales


def _matrix(rows: Sequence[dict[str, float]], features: Sequence[str]) -> np.ndarray:
    return np.array([[r.get(f, 0.0) for f in features] for r in rows], dtype=float)


def fit_logistic(
    rows: Sequence[dict[str, float]],
    correct: Sequence[bool],
    features: Sequence[str],
    *,
    l2: float = 1.0,
    iterations: int = 50,
) -> dict[str, Any]:
    """Weights, bias and the standardisation of ``features``: a calibrator file's map
    (``calibrator.Calibrator.from_dict`` reads it)."""
    if len(rows) != len(correct) or not rows:
        raise ValueError("need as many labels as rows, and at least one row")
    x = _matrix(rows, features)
    means, scales = _standardisation(x)
    w = _newton(_design(x, means, scales), np.array(correct, dtype=float), l2, iterations)
    return {
        "kind": "logistic",
        "version": VERSION,
        "features": list(features),
        "weights": [float(v) for v in w[1:]],
        "bias": float(w[0]),
        "means": [float(v) for v in means],
        "scales": [float(v) for v in scales],
        "l2": l2,
    }


def choose_l2(
    rows: Sequence[dict[str, float]],
    correct: Sequence[bool],
    features: Sequence[str],
    *,
    grid: Sequence[float] = L2_GRID,
    folds: int = 5,
    repeats: int = 10,
    seed: int = 0,
) -> tuple[float, dict[float, float]]:
    """The penalty of ``grid`` with the lowest out-of-fold log-loss (``repeats`` shuffles of
    ``folds`` folds, fixed by ``seed``), and every penalty's mean log-loss. The
    standardisation is refit on each fold's training items, as a new item never adds to it."""
    x = _matrix(rows, features)
    y = np.array(correct, dtype=float)
    n = len(y)
    losses = {float(l2): 0.0 for l2 in grid}
    rng = np.random.default_rng(seed)
    for _ in range(repeats):
        fold_of = np.empty(n, dtype=int)
        fold_of[rng.permutation(n)] = np.arange(n) % folds
        for k in range(folds):
            train, test = fold_of != k, fold_of == k
            if y[train].min() == y[train].max():
                continue  # one class to learn from: this split says nothing
            means, scales = _standardisation(x[train])
            z_train, z_test = _design(x[train], means, scales), _design(x[test], means, scales)
            for l2 in losses:
                w = _newton(z_train, y[train], l2, 50)
                p = np.clip(1 / (1 + np.exp(-np.clip(z_test @ w, -30, 30))), 1e-6, 1 - 1e-6)
                losses[l2] -= float(np.sum(y[test] * np.log(p) + (1 - y[test]) * np.log(1 - p)))
    mean = {l2: total / (n * repeats) for l2, total in losses.items()}
    return min(mean, key=lambda l2: (mean[l2], -l2)), mean  # a tie goes to the simpler model


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


def share_right_log_loss(right: Sequence[bool]) -> float:
    """The log-loss of predicting the share right for every item: the bar a calibrator's
    cross-validated log-loss must clear to add anything."""
    share = min(max(sum(right) / len(right), 1e-6), 1 - 1e-6)
    return -(share * math.log(share) + (1 - share) * math.log(1 - share))
