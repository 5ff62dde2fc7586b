"""Percentile bootstrap confidence intervals for per-item metric means."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

_CHUNK = 1 << 22  # resampled values held in memory at once


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
    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK // x.size)
    means = np.empty(n)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        idx = rng.integers(0, x.size, size=(stop - start, x.size))
        means[start:stop] = x[idx].mean(axis=1)
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return mean, float(lo), float(hi)
