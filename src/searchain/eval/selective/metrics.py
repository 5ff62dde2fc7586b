"""The statistics of one confidence over items, point by point: the risk–coverage curve and
its area (AURC), selective accuracy at a coverage, ECE and the bins of a reliability diagram,
the Brier score (and the base rate's) and the log-loss. Ties and scales as the package notes
(:mod:`searchain.eval.selective`) say. The array kernels (:func:`arrays`,
:func:`cumulative_errors`, :func:`answered`, :func:`ece_of`, :func:`probability_scores`) are
public for :mod:`.intervals`, which computes them on each bootstrap resample.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

BINS = 10  # ECE's and the reliability diagram's equal-width bins
# ECE's other bin counts, shown beside it: how far its value moves with the count alone
SENSITIVITY_BINS = (5, 10, 15, 20)
LOG_LOSS_CLIP = 1e-6  # log-loss reads p in [1e-6, 1 − 1e-6] (as choose_l2's cross-validation)


@dataclass(frozen=True, slots=True)
class Bin:
    """One equal-width confidence bin of a reliability diagram: ``[lo, hi)`` (the last bin
    includes 1), its item count, mean confidence and accuracy (NaN when empty)."""

    lo: float
    hi: float
    count: int
    confidence: float
    accuracy: float


def arrays(confidence: Iterable[float], correct: Iterable[float]) -> tuple[np.ndarray, ...]:
    """The confidences and correctness (0 or 1) as float arrays, checked: one finite
    confidence per item, at least one item."""
    conf = np.asarray(list(confidence), dtype=float)
    right = np.asarray(list(correct), dtype=float)
    if conf.shape != right.shape or conf.ndim != 1:
        raise ValueError(f"{conf.size} confidences for {right.size} correctness values")
    if conf.size == 0:
        raise ValueError("selective metrics need at least one item")
    if not np.all(np.isfinite(conf)):
        raise ValueError("confidences must be finite numbers")
    if np.any((right != 0) & (right != 1)):
        raise ValueError("correctness must be 0 or 1")
    return conf, right


def cumulative_errors(conf: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Expected errors among the k most confident items, k = 1..n (ties spread evenly)."""
    order = np.argsort(-conf, kind="stable")
    c, err = conf[order], 1.0 - right[order]
    starts = np.concatenate(([0], np.flatnonzero(np.diff(c) != 0) + 1))
    sizes = np.diff(np.concatenate((starts, [c.size])))
    block = np.add.reduceat(err, starts)  # errors per block of ties (whole numbers)
    place = np.arange(1, c.size + 1) - np.repeat(starts, sizes)  # 1..size within its block
    before, share = np.cumsum(block) - block, np.repeat(block, sizes)
    # Errors before the block, plus its share of the block's (exact at the block's end).
    return np.repeat(before, sizes) + place * share / np.repeat(sizes, sizes)


def risk_coverage(
    confidence: Iterable[float], correct: Iterable[float]
) -> tuple[np.ndarray, np.ndarray]:
    """``(coverage, risk)``: coverage k/n and the selective risk among the k most confident
    items, for k = 1..n."""
    conf, right = arrays(confidence, correct)
    k = np.arange(1, conf.size + 1)
    return k / conf.size, cumulative_errors(conf, right) / k


def aurc(confidence: Iterable[float], correct: Iterable[float]) -> float:
    """The area under the risk–coverage curve: the mean of the n selective risks."""
    return float(risk_coverage(confidence, correct)[1].mean())


def answered(coverage: float, size: int) -> int:
    """⌈coverage·size⌉ items (at least one), robust to 0.7·10 = 7.000000000000001."""
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage must be in (0, 1], got {coverage}")
    return max(1, math.ceil(round(coverage * size, 9)))


def selective_accuracy(
    confidence: Iterable[float], correct: Iterable[float], coverage: float
) -> float:
    """The accuracy on the ⌈coverage·n⌉ most confident items (ties as in the module notes)."""
    conf, right = arrays(confidence, correct)
    k = answered(coverage, conf.size)
    return float(1.0 - cumulative_errors(conf, right)[k - 1] / k)


def _bin_of(conf: np.ndarray, bins: int) -> np.ndarray:
    """The equal-width bin of each confidence in [0, 1] (1 falls in the last bin)."""
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    return np.clip(np.floor(conf * bins).astype(int), 0, bins - 1)


def reliability_bins(
    confidence: Iterable[float], correct: Iterable[float], bins: int = BINS
) -> list[Bin]:
    """The ``bins`` equal-width bins of [0, 1] with their counts, mean confidences and
    accuracies: the points of a reliability diagram."""
    conf, right = arrays(confidence, correct)
    if conf.min() < 0 or conf.max() > 1:
        raise ValueError("a reliability diagram needs confidences in [0, 1]")
    which = _bin_of(conf, bins)
    out = []
    for b in range(bins):
        mask = which == b
        count = int(mask.sum())
        mean_conf = float(conf[mask].mean()) if count else math.nan
        accuracy = float(right[mask].mean()) if count else math.nan
        out.append(Bin(b / bins, (b + 1) / bins, count, mean_conf, accuracy))
    return out


def ece_of(conf: np.ndarray, right: np.ndarray, bins: int) -> float:
    """:func:`ece` of checked arrays (:func:`arrays`)."""
    if conf.min() < 0 or conf.max() > 1:
        return math.nan  # not on the scale of a probability: nothing to calibrate against
    which = _bin_of(conf, bins)
    count = np.bincount(which, minlength=bins)
    gap = np.abs(
        np.bincount(which, weights=right, minlength=bins)
        - np.bincount(which, weights=conf, minlength=bins)
    )
    return float(gap.sum() / count.sum())  # Σ_b (n_b/n)·|acc_b − conf_b|


def ece(confidence: Iterable[float], correct: Iterable[float], bins: int = BINS) -> float:
    """Expected calibration error: Σ over equal-width bins of (n_b / n)·|acc_b − conf_b|;
    NaN when a confidence lies outside [0, 1]."""
    return ece_of(*arrays(confidence, correct), bins)


def probability_scores(conf: np.ndarray, right: np.ndarray) -> tuple[float, float]:
    """Brier score and log-loss (NaN, NaN for a confidence outside [0, 1])."""
    if conf.min() < 0 or conf.max() > 1:
        return math.nan, math.nan
    p = np.clip(conf, LOG_LOSS_CLIP, 1 - LOG_LOSS_CLIP)
    loss = -(right * np.log(p) + (1 - right) * np.log(1 - p))
    return float(np.mean((conf - right) ** 2)), float(loss.mean())


def brier(confidence: Iterable[float], correct: Iterable[float]) -> float:
    """The Brier score, mean (confidence − correct)² (lower is better); NaN when a
    confidence lies outside [0, 1]."""
    return probability_scores(*arrays(confidence, correct))[0]


def base_rate_brier(correct: Iterable[float]) -> float:
    """The Brier score of always predicting the share right, p·(1 − p): what a confidence
    that knows nothing of the items scores."""
    right = np.asarray(list(correct), dtype=float)
    share = float(right.mean())
    return share * (1 - share)


def log_loss(confidence: Iterable[float], correct: Iterable[float]) -> float:
    """The log-loss in nats, −mean(correct·ln p + (1 − correct)·ln(1 − p)), with each
    confidence p clipped to [LOG_LOSS_CLIP, 1 − LOG_LOSS_CLIP] = [1e-6, 1 − 1e-6] so that a
    wrong 0 or 1 costs ln(10⁶) ≈ 13.8, not infinity; NaN when a confidence lies outside
    [0, 1]."""
    return probability_scores(*arrays(confidence, correct))[1]


def naive_probability(logprob_mean: Iterable[float]) -> np.ndarray:
    """exp(mean token log-probability of the answer): the naive confidence on the scale of
    [0, 1] (the geometric mean of the tokens' probabilities, an uncalibrated score). It ranks
    items as the log-probability does, so its curve and AURC are the log-probability's."""
    return np.exp(np.asarray(list(logprob_mean), dtype=float))
