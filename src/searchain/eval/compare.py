"""Paired comparisons of methods that answered the same items.

Two methods' means each carry a wide interval at benchmark sizes of 50–100 items, yet most of
that width is item difficulty, which both methods share. The paired difference (method A's
score minus method B's on each item, then the mean) removes it; its percentile-bootstrap
interval tells whether A beats B on these items. That is the comparison the papers' orderings
need, and the one ``bench/quality.py`` prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from searchain.eval.bootstrap import bootstrap_ci


@dataclass(frozen=True, slots=True)
class PairedDiff:
    """``a − b`` on the ``items`` both answered (failed items count 0, as in the report)."""

    a: str
    b: str
    metric: str
    items: int
    mean: float
    lo: float
    hi: float
    wins: int  # items where a scored higher
    losses: int  # items where b scored higher

    @property
    def significant(self) -> bool:
        """The 95 % interval excludes 0 (a real difference on these items, either way)."""
        return self.lo > 0 or self.hi < 0

    def __str__(self) -> str:
        return f"{100 * self.mean:+.1f} [{100 * self.lo:+.1f}, {100 * self.hi:+.1f}]"


def item_scores(records: Iterable[Mapping], metric: str) -> dict[str, dict[str, float]]:
    """``{method: {item id: score}}`` from a run's records (latest record per item)."""
    out: dict[str, dict[str, float]] = {}
    for r in records:
        value = (r.get("metrics") or {}).get(metric, 0.0) if r.get("status") == "ok" else 0.0
        out.setdefault(r["method"], {})[r["id"]] = float(value)
    return out


def paired_difference(
    scores: Mapping[str, Mapping[str, float]],
    a: str,
    b: str,
    metric: str,
    *,
    seed: int = 0,
    n: int = 2000,
) -> PairedDiff | None:
    """The paired difference ``a − b`` over the items both methods have; None when they share
    no item (a comparison on nothing must not print as 0)."""
    sa, sb = scores.get(a, {}), scores.get(b, {})
    ids = sorted(set(sa) & set(sb))
    if not ids:
        return None
    diffs = [sa[i] - sb[i] for i in ids]
    mean, lo, hi = bootstrap_ci(diffs, n=n, seed=seed)
    return PairedDiff(
        a,
        b,
        metric,
        len(ids),
        mean,
        lo,
        hi,
        wins=sum(d > 0 for d in diffs),
        losses=sum(d < 0 for d in diffs),
    )
