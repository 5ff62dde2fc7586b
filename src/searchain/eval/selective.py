"""Selective answering: how well a confidence tells right answers from wrong ones.

A method that may abstain answers only its most confident items. From per-item
``(confidence, correct)`` pairs this module gives

* the **risk–coverage curve**: items sorted by confidence, highest first; at coverage k/n
  (the k most confident answered) the selective risk is the error rate among those k;
* **AURC**, the area under that curve as Geifman & El-Yaniv (2017) and UniCR compute it: the
  mean of the n selective risks (lower is better; a perfect ranking reaches the least area its
  error rate allows, a constant confidence the error rate itself);
* **selective accuracy** at a coverage c: the accuracy on the ⌈c·n⌉ most confident items;
* **ECE**, the expected calibration error over equal-width bins of [0, 1] (each bin's
  |accuracy − mean confidence|, weighted by its share of the items), and the bins of a
  reliability diagram. ECE reads the confidence as a probability: for an uncalibrated score
  it is only a description of the score. Its value depends on the bin count (:data:`BINS`),
  so a report states it;
* the **Brier score**, the mean of (confidence − correct)², beside the Brier score of always
  predicting the share right (p·(1 − p), the bar a confidence must clear to say anything),
  and the **log-loss**, −mean(correct·ln p + (1 − correct)·ln(1 − p)) with p clipped to
  [:data:`LOG_LOSS_CLIP`, 1 − :data:`LOG_LOSS_CLIP`] (a confident 0 or 1 that is wrong would
  be infinite). Both are proper scoring rules: unlike ECE, they need no bins and reward
  ranking and calibration together. Like ECE they read the confidence as a probability
  (NaN for a score outside [0, 1]).

**Ties** are deterministic and order-free: items of equal confidence are answered together
or not at all, so inside a block of ties the curve takes the expectation over the block's
orders (its errors spread evenly over its places). A constant confidence therefore has the
flat curve at the overall error rate, whatever order the items came in.

Bootstrap intervals resample items (:func:`searchain.eval.bootstrap.resample_indices`);
:func:`compare` computes every statistic of two confidences on the *same* resamples, which
gives the paired interval of their difference (e.g. AURC(calibrated) − AURC(naive)).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from searchain.eval.bootstrap import percentile_interval, resample_indices

COVERAGES = (0.5, 0.8, 1.0)  # the coverages selective accuracy is reported at
BINS = 10  # ECE's and the reliability diagram's equal-width bins
# ECE's other bin counts, shown beside it: how far its value moves with the count alone
SENSITIVITY_BINS = (5, 10, 15, 20)
LOG_LOSS_CLIP = 1e-6  # log-loss reads p in [1e-6, 1 − 1e-6] (as choose_l2's cross-validation)


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


@dataclass(frozen=True, slots=True)
class Bin:
    """One equal-width confidence bin of a reliability diagram: ``[lo, hi)`` (the last bin
    includes 1), its item count, mean confidence and accuracy (NaN when empty)."""

    lo: float
    hi: float
    count: int
    confidence: float
    accuracy: float


def _arrays(confidence: Iterable[float], correct: Iterable[float]) -> tuple[np.ndarray, ...]:
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


def _cumulative_errors(conf: np.ndarray, right: np.ndarray) -> np.ndarray:
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
    conf, right = _arrays(confidence, correct)
    k = np.arange(1, conf.size + 1)
    return k / conf.size, _cumulative_errors(conf, right) / k


def aurc(confidence: Iterable[float], correct: Iterable[float]) -> float:
    """The area under the risk–coverage curve: the mean of the n selective risks."""
    return float(risk_coverage(confidence, correct)[1].mean())


def _answered(coverage: float, size: int) -> int:
    """⌈coverage·size⌉ items (at least one), robust to 0.7·10 = 7.000000000000001."""
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage must be in (0, 1], got {coverage}")
    return max(1, math.ceil(round(coverage * size, 9)))


def selective_accuracy(
    confidence: Iterable[float], correct: Iterable[float], coverage: float
) -> float:
    """The accuracy on the ⌈coverage·n⌉ most confident items (ties as in the module notes)."""
    conf, right = _arrays(confidence, correct)
    k = _answered(coverage, conf.size)
    return float(1.0 - _cumulative_errors(conf, right)[k - 1] / k)


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
    conf, right = _arrays(confidence, correct)
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


def _ece(conf: np.ndarray, right: np.ndarray, bins: int) -> float:
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
    return _ece(*_arrays(confidence, correct), bins)


def _probability_scores(conf: np.ndarray, right: np.ndarray) -> tuple[float, float]:
    """Brier score and log-loss (NaN, NaN for a confidence outside [0, 1])."""
    if conf.min() < 0 or conf.max() > 1:
        return math.nan, math.nan
    p = np.clip(conf, LOG_LOSS_CLIP, 1 - LOG_LOSS_CLIP)
    loss = -(right * np.log(p) + (1 - right) * np.log(1 - p))
    return float(np.mean((conf - right) ** 2)), float(loss.mean())


def brier(confidence: Iterable[float], correct: Iterable[float]) -> float:
    """The Brier score, mean (confidence − correct)² (lower is better); NaN when a
    confidence lies outside [0, 1]."""
    return _probability_scores(*_arrays(confidence, correct))[0]


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
    return _probability_scores(*_arrays(confidence, correct))[1]


def naive_probability(logprob_mean: Iterable[float]) -> np.ndarray:
    """exp(mean token log-probability of the answer): the naive confidence on the scale of
    [0, 1] (the geometric mean of the tokens' probabilities, an uncalibrated score). It ranks
    items as the log-probability does, so its curve and AURC are the log-probability's."""
    return np.exp(np.asarray(list(logprob_mean), dtype=float))


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
    errors = _cumulative_errors(conf, right)
    accuracy = [1.0 - errors[(j := _answered(c, conf.size)) - 1] / j for c in coverages]
    share = right.mean()
    probability = _probability_scores(conf, right)
    return np.array(
        [
            (errors / k).mean(),
            _ece(conf, right, bins),
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
    values = _statistics(*_arrays(confidence, correct), coverages, bins)
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
    ca, right = _arrays(a, correct)
    cb, _ = _arrays(b, correct)
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
    conf, right = _arrays(confidence, correct)
    samples = _samples((conf,), right, coverages, bins, n, seed)
    return _estimates(_statistics(conf, right, coverages, bins), samples[0], coverages, alpha)
