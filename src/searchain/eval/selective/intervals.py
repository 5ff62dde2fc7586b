"""Every statistic of a confidence at once (AURC, ECE, Brier, log-loss, selective accuracy at
each coverage, the lift at 50 %) with percentile bootstrap intervals over item resamples
(:func:`searchain.eval.bootstrap.resample_indices`); :func:`compare` computes two confidences'
statistics on the *same* resamples, which gives the paired interval of their difference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from searchain.eval.bootstrap import percentile_interval, resample_indices
from searchain.eval.selective.metrics import (
    BINS,
    answered,
    arrays,
    cumulative_errors,
    ece_of,
    probability_scores,
)

COVERAGES = (0.5, 0.8, 1.0)  # the coverages selective accuracy is reported at


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point estimate on the items and its percentile bootstrap interval."""

    value: float
    lo: float
    hi: float

    def __str__(self) -> str:
        return f"{100 * self.value:.1f} [{100 * self.lo:.1f}, {100 * self.hi:.1f}]"

    def signed(self) -> str:
        """As a difference: with its sign, in points of %."""
        return f"{100 * self.value:+.1f} [{100 * self.lo:+.1f}, {100 * self.hi:+.1f}]"

    def decimal(self, sign: str = "") -> str:
        """On its own scale, three decimals (a Brier score, a log-loss); ``sign="+"`` for a
        difference."""
        f = f"{sign}.3f"
        return f"{self.value:{f}} [{self.lo:{f}}, {self.hi:{f}}]"


def statistic_names(coverages: Sequence[float] = COVERAGES) -> tuple[str, ...]:
    """The names :func:`statistics` gives its values, in order."""
    return (
        "aurc",
        "ece",
        "brier",
        "brier_base_rate",
        "log_loss",
        *(f"accuracy@{c:g}" for c in coverages),
        *(("lift@0.5",) if _lifts(coverages) else ()),
    )


def _lifts(coverages: Sequence[float]) -> bool:
    """Whether the statistics hold the lift at 50 % coverage (both its coverages asked)."""
    return 0.5 in coverages and 1.0 in coverages


def _lift(accuracy: Sequence[float], coverages: Sequence[float]) -> list[float]:
    """Cover-EM at 50 % coverage over cover-EM at 100 % (how much answering only the more
    confident half gains: issue 51's 1.5× target), NaN when none of all is right; [] unless
    both coverages are asked."""
    if not _lifts(coverages):
        return []
    half, whole = accuracy[list(coverages).index(0.5)], accuracy[list(coverages).index(1.0)]
    return [half / whole if whole > 0 else math.nan]


def _statistics(conf: np.ndarray, right: np.ndarray, coverages: Sequence[float], bins: int):
    k = np.arange(1, conf.size + 1)
    errors = cumulative_errors(conf, right)
    accuracy = [1.0 - errors[(j := answered(c, conf.size)) - 1] / j for c in coverages]
    share = right.mean()
    probability = probability_scores(conf, right)
    return np.array(
        [
            (errors / k).mean(),
            ece_of(conf, right, bins),
            probability[0],
            share * (1 - share),
            probability[1],
            *accuracy,
            *_lift(accuracy, coverages),
        ]
    )


def statistics(
    confidence: Iterable[float],
    correct: Iterable[float],
    coverages: Sequence[float] = COVERAGES,
    bins: int = BINS,
) -> dict[str, float]:
    """AURC, ECE (``bins`` bins), the Brier score, the base rate's Brier score, the log-loss
    and the selective accuracy at each coverage, by :func:`statistic_names`."""
    values = _statistics(*arrays(confidence, correct), coverages, bins)
    return dict(zip(statistic_names(coverages), map(float, values), strict=True))


def _samples(
    scores: Sequence[np.ndarray],
    right: np.ndarray,
    coverages: Sequence[float],
    bins: int,
    n: int,
    seed: int | None,
) -> np.ndarray:
    """Shape ``(len(scores), n, statistics)``: every score's statistics on each of the same
    ``n`` item resamples (so differences between scores are paired)."""
    out = np.empty((len(scores), n, len(statistic_names(coverages))))
    row = 0
    for chunk in resample_indices(right.size, n, seed):
        for idx in chunk:
            for s, conf in enumerate(scores):
                out[s, row] = _statistics(conf[idx], right[idx], coverages, bins)
            row += 1
    return out


def _estimates(
    point: np.ndarray, sample: np.ndarray, coverages: Sequence[float], alpha: float
) -> dict[str, Estimate]:
    return {
        name: Estimate(float(point[j]), *percentile_interval(sample[:, j], alpha))
        for j, name in enumerate(statistic_names(coverages))
    }


@dataclass(frozen=True, slots=True)
class Comparison:
    """Each statistic of confidence ``a`` and of confidence ``b`` on the same items, and of
    their paired difference ``a − b`` (on the same bootstrap resamples)."""

    items: int
    a: dict[str, Estimate]
    b: dict[str, Estimate]
    difference: dict[str, Estimate]


def compare(
    a: Iterable[float],
    b: Iterable[float],
    correct: Iterable[float],
    *,
    coverages: Sequence[float] = COVERAGES,
    bins: int = BINS,
    n: int = 1000,
    seed: int | None = 0,
    alpha: float = 0.05,
) -> Comparison:
    """Two confidences of the same items (e.g. a calibrated one and the naive one) with
    percentile bootstrap intervals from ``n`` item resamples, and the paired intervals of
    the differences ``a − b``."""
    ca, right = arrays(a, correct)
    cb, _ = arrays(b, correct)
    samples = _samples((ca, cb), right, coverages, bins, n, seed)
    pa, pb = (_statistics(c, right, coverages, bins) for c in (ca, cb))
    return Comparison(
        int(ca.size),
        _estimates(pa, samples[0], coverages, alpha),
        _estimates(pb, samples[1], coverages, alpha),
        _estimates(pa - pb, samples[0] - samples[1], coverages, alpha),
    )


def bootstrap(
    confidence: Iterable[float],
    correct: Iterable[float],
    *,
    coverages: Sequence[float] = COVERAGES,
    bins: int = BINS,
    n: int = 1000,
    seed: int | None = 0,
    alpha: float = 0.05,
) -> dict[str, Estimate]:
    """Each statistic of one confidence with its percentile bootstrap interval."""
    conf, right = arrays(confidence, correct)
    samples = _samples((conf,), right, coverages, bins, n, seed)
    return _estimates(_statistics(conf, right, coverages, bins), samples[0], coverages, alpha)
