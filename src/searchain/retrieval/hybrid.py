"""Hybrid retrieval: weighted reciprocal-rank fusion (RRF) of several retrievers.

RRF (Cormack et al., 2009) scores a passage by ``Σ_i w_i / (k_rrf + rank_i)`` over the
rankings it appears in (ranks from 1). It needs only ranks, so BM25 scores and cosine
similarities, which live on unrelated scales, combine without any normalisation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from searchain.retrieval.base import Retriever
from searchain.types import Passage

__all__ = ["HybridRetriever", "rrf"]

# Fused scores are sums of a few fractions; summing the same terms in another order can
# differ in the last bit, so ties are detected on scores rounded to this many decimals.
_TIE_DECIMALS = 12


def rrf(
    rankings: Sequence[Sequence[str]],
    weights: Sequence[float] | None = None,
    k_rrf: float = 60,
) -> list[tuple[str, float]]:
    """Fuse ranked id lists into one ``[(id, score), ...]``, best first.

    An id repeated within one ranking counts at its first (best) rank only. Ties go to the
    id met first when the rankings are read round-robin (every list's rank 1, then every
    list's rank 2, ...): the better best rank wins, then the earlier ranking.
    """
    weights = _check_weights(weights, len(rankings))
    if k_rrf < 0:
        raise ValueError(f"k_rrf must be >= 0, got {k_rrf}")
    scores: dict[str, float] = {}
    first_seen: dict[str, tuple[int, int]] = {}  # id -> (rank, ranking index), round-robin
    for i, (ranking, weight) in enumerate(zip(rankings, weights, strict=True)):
        seen: set[str] = set()
        for rank, pid in enumerate(ranking, start=1):
            if pid in seen:
                continue
            seen.add(pid)
            scores[pid] = scores.get(pid, 0.0) + weight / (k_rrf + rank)
            if pid not in first_seen or (rank, i) < first_seen[pid]:
                first_seen[pid] = (rank, i)
    order = sorted(scores, key=lambda pid: (-round(scores[pid], _TIE_DECIMALS), first_seen[pid]))
    return [(pid, scores[pid]) for pid in order]


class HybridRetriever:
    """Fuse the rankings of several retrievers (e.g. BM25 + dense) with weighted RRF.

    Each retriever is asked for ``max(depth, k)`` passages; the fused ``score`` of a
    returned passage is its RRF score. The passage objects are copies, so the member
    retrievers' results are never modified.
    """

    def __init__(
        self,
        retrievers: list[Retriever],
        weights: list[float] | None = None,
        k_rrf: int = 60,
        depth: int = 50,
    ) -> None:
        if not retrievers:
            raise ValueError("HybridRetriever needs at least one retriever")
        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        if k_rrf < 0:
            raise ValueError(f"k_rrf must be >= 0, got {k_rrf}")
        self.retrievers = list(retrievers)
        self.weights = _check_weights(weights, len(self.retrievers))
        self.k_rrf = k_rrf
        self.depth = depth

    def search(self, query: str, k: int = 5) -> list[Passage]:
        """The ``k`` best passages for ``query`` by fused rank, best first."""
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: list[str], k: int = 5) -> list[list[Passage]]:
        """:meth:`search` for many queries; each member retriever gets the whole batch."""
        if k <= 0 or not queries:
            return [[] for _ in queries]
        depth = max(self.depth, k)
        per_retriever = [r.search_batch(queries, k=depth) for r in self.retrievers]
        results = []
        for hits_per_retriever in zip(*per_retriever, strict=True):
            by_id: dict[str, Passage] = {}
            for hits in hits_per_retriever:
                for p in hits:
                    by_id.setdefault(p.id, p)  # the first retriever's copy of the text
            fused = rrf(
                [[p.id for p in hits] for hits in hits_per_retriever], self.weights, self.k_rrf
            )
            # The fused score replaces the member's; the rest (text, title, where in the user's
            # document it lies) is the passage as the first retriever returned it.
            results.append(
                [dataclasses.replace(by_id[pid], score=score) for pid, score in fused[:k]]
            )
        return results


def _check_weights(weights: Sequence[float] | None, n: int) -> list[float]:
    if weights is None:
        return [1.0] * n
    if len(weights) != n:
        raise ValueError(f"got {len(weights)} weights for {n} rankings")
    if any(w < 0 for w in weights):
        raise ValueError(f"weights must be >= 0, got {list(weights)}")
    return [float(w) for w in weights]
