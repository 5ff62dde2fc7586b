"""Percentile bootstrap confidence intervals for per-item metric means, and the item
resamples they are made of (shared with statistics that are not means, such as the
selective-answering metrics of :mod:`searchain.eval.selective`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

import numpy as np

_CHUNK = 1 << 22  # resampled values held in memory at once


def resample_indices(size: int, n: int = 1000, seed: int | None = 0) -> Iterator[np.ndarray]:
    """The ``n`` bootstrap resamples of ``size`` items, as arrays of item indices drawn with
    replacement, in chunks of shape ``(rows, size)`` (at most about 4 M indices each).

    The same ``size``, ``n`` and ``seed`` always give the same resamples (numpy's PCG64), so
    two statistics computed on them are paired. Raises ValueError for ``size < 1`` or ``n < 1``.
    """
    if size < 1:
        raise ValueError("a bootstrap needs at least one item")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK // size)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        yield rng.integers(0, size, size=(stop - start, size))


def percentile_interval(samples: np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """``(lo, hi)``: the ``1 - alpha`` percentile interval of bootstrap ``samples``."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    values = np.asarray(samples, dtype=float)
    # a ratio is undefined on a resample whose denominator is 0: those resamples are left out
    if values.size == 0 or np.isnan(values).all():
        return math.nan, math.nan
    lo, hi = np.nanquantile(values, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def bootstrap_ci(
    values: Iterable[float], n: int = 1000, seed: int | None = 0, alpha: float = 0.05
) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the sample mean and the ``1 - alpha`` percentile bootstrap interval
    of the mean (Efron & Tibshirani 1993, §13.3) from ``n`` resamples with replacement.

    The same ``values`` and ``seed`` always give the same interval (numpy's PCG64 generator).
    Raises ValueError for no values, ``n < 1`` or ``alpha`` outside (0, 1).
    """
    x = np.asarray(list(values), dtype=float)
    if x.size == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    mean = float(x.mean())
    if x.size == 1 or np.all(x == x[0]):
        return mean, mean, mean
    means = np.concatenate([x[idx].mean(axis=1) for idx in resample_indices(x.size, n, seed)])
    return (mean, *percentile_interval(means, alpha))
