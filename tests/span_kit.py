"""The reader's span search by brute force, to check ``best_span`` and the readers against."""

from __future__ import annotations

import math


def brute_force(start, end, allowed, max_len):
    best = (-1, -1, -math.inf)
    n = len(start)
    for i in range(n):
        for j in range(i, min(n, i + max_len)):
            if all(allowed[i : j + 1]) and start[i] + end[j] > best[2]:
                best = (i, j, start[i] + end[j])
    return best


def assert_valid(span, allowed, max_len):
    s, e, _ = span
    assert 0 <= s <= e < len(allowed)
    assert e - s + 1 <= max_len
    assert all(allowed[s : e + 1])
