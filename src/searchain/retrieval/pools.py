"""Per-question passage pools: search only the passages a data set ships with each question.

ALCE gives every question its own top-100 retrieved passages (``docs``: GTR or BM25 over
Wikipedia), and the ALCE and Think&Cite papers search those, not a shared corpus. A
:class:`QuestionPools` is a retriever over many such pools: while a question is being answered
(:meth:`QuestionPools.answering`), ``search`` ranks that question's own passages with BM25 —
an index per pool, built on first use (a hundred passages: milliseconds). A search outside an
``answering`` block, or for a question without a pool, is an error, never a silent search of
some other pool.
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from searchain.retrieval.bm25 import BM25Index
from searchain.retrieval.remote import RetrievalError
from searchain.types import Passage

_CURRENT: ContextVar[str | None] = ContextVar("searchain_question_pool", default=None)


def pool_passages(key: str, docs: Sequence[Mapping[str, Any]]) -> list[Passage]:
    """ALCE ``docs`` (``title``, ``text``, maybe ``id``) as passages with ids unique to the
    question (``<key>#<rank>``: the same Wikipedia passage may be in several pools)."""
    return [
        Passage(f"{key}#{i}", str(d.get("text") or ""), str(d.get("title") or ""))
        for i, d in enumerate(docs)
        if str(d.get("text") or "").strip()
    ]


class QuestionPools:
    """A retriever whose corpus is the passage pool of the question being answered."""

    def __init__(self, pools: Mapping[str, list[Passage]]) -> None:
        self.pools = {k: v for k, v in pools.items() if v}
        self._indexes: dict[str, BM25Index] = {}
        self._lock = threading.Lock()
        self._dir = tempfile.TemporaryDirectory(prefix="searchain-pools-")

    def __len__(self) -> int:
        return len(self.pools)

    @contextlib.contextmanager
    def answering(self, key: str) -> Iterator[None]:
        """Searches inside this block rank ``key``'s pool (thread- and task-local)."""
        token = _CURRENT.set(key)
        try:
            yield
        finally:
            _CURRENT.reset(token)

    def _index(self) -> BM25Index:
        key = _CURRENT.get()
        if key is None:
            raise RetrievalError("a per-question pool was searched outside any question")
        if key not in self.pools:
            raise RetrievalError(f"no passage pool for this question ({key[:60]!r})")
        with self._lock:
            if key not in self._indexes:
                name = hashlib.sha256(key.encode()).hexdigest()[:16]
                self._indexes[key] = BM25Index.build(
                    self.pools[key], Path(self._dir.name) / name, show_progress=False
                )
            return self._indexes[key]

    def search(self, query: str, k: int = 5) -> list[Passage]:
        return self._index().search(query, k)

    def search_batch(self, queries: list[str], k: int = 5) -> list[list[Passage]]:
        return self._index().search_batch(queries, k)
