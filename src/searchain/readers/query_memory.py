"""SearChain's processed-query memory M: the queries already processed, with near-duplicate
detection by embedding similarity or, without an embedder, by normalised text."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from searchain.text import normalize_answer

if TYPE_CHECKING:
    from searchain.readers.embedders import TextEmbedder


class QueryMemory:
    """The queries already processed (SearChain's M), with near-duplicate detection.

    With an embedder, a query is a duplicate when its cosine similarity to a stored query is
    at least ``threshold``; without one, when its SQuAD-normalised form was seen before.
    """

    def __init__(self, embedder: TextEmbedder | None = None, threshold: float = 0.9) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.queries: list[str] = []
        self._vecs: list[np.ndarray] = []

    @property
    def kind(self) -> str:
        return "embedding" if self.embedder else "exact"

    def match(self, query: str) -> tuple[str, float] | None:
        """The stored query this one duplicates, with its similarity; ``None`` if new."""
        if not self.queries:
            return None
        if self.embedder is None:
            norm = normalize_answer(query)
            for q in self.queries:
                if normalize_answer(q) == norm:
                    return q, 1.0
            return None
        v = self.embedder.encode([query])[0]
        sims = np.stack(self._vecs) @ v
        best = int(np.argmax(sims))
        if float(sims[best]) >= self.threshold:
            return self.queries[best], float(sims[best])
        return None

    def add(self, query: str) -> None:
        self.queries.append(query)
        if self.embedder is not None:
            self._vecs.append(self.embedder.encode([query])[0])
