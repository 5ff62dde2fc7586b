"""The retriever interface every method programs against."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from searchain.types import Passage


@runtime_checkable
class Retriever(Protocol):
    """Anything that returns ranked passages for a query (BM25, dense, a web search API)."""

    def search(self, query: str, k: int = 5) -> list[Passage]:
        """The ``k`` best passages for ``query``, best first."""
        ...

    def search_batch(self, queries: list[str], k: int = 5) -> list[list[Passage]]:
        """``search`` for each query; implementations batch where they can."""
        ...
