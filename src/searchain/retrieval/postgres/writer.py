"""A collection opened for writing: its settings, its analyzer and, for a dense
collection, the embedder whose vectors go in with each unit's passages."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from searchain.retrieval._store import encoded_text
from searchain.retrieval.postgres.schema import Collection, open_collection
from searchain.retrieval.postgres.store import replace_unit
from searchain.retrieval.postgres.target import Target, connect
from searchain.retrieval.postgres.tokens import BM25_SETTINGS, Analyzer, tokenizer_settings
from searchain.types import Passage


class CollectionWriter:
    """Opens (creating if new) the target's collection; :meth:`put` replaces a unit."""

    def __init__(
        self,
        target: Target,
        *,
        dense: bool = False,
        model_path: str | Path | None = None,
        batch_size: int = 64,
    ) -> None:
        self.target = target
        self.batch_size = batch_size
        self._embedder: Any = None
        settings: dict[str, Any] = {
            "tokenizer": tokenizer_settings(),
            "bm25": dict(BM25_SETTINGS),
            "dense": None,
        }
        if dense:
            from searchain.readers.embedders import open_embedder
            from searchain.retrieval.dense.encoding import model_info

            self._embedder = open_embedder(model_path)
            settings["dense"] = model_info(self._embedder)
        self.conn = connect(target, autocommit=True)  # each unit: its own transaction
        try:
            self.collection: Collection = open_collection(self.conn, target.collection, settings)
        except BaseException:
            self.conn.close()
            raise
        self.analyzer = Analyzer(self.collection.settings["tokenizer"])

    def put(
        self,
        unit: str,
        entry: dict[str, Any] | None,
        passages: Sequence[Passage],
        vectors: np.ndarray | None = None,
    ) -> None:
        """Replace ``unit``'s passages (``entry`` None: remove it) in one transaction.
        ``vectors``: already encoded (the same model's), else encoded here if dense."""
        if vectors is None and self._embedder is not None and passages:
            vectors = self._encode(passages)
        replace_unit(self.conn, self.collection, self.analyzer, unit, entry, passages, vectors)

    def _encode(self, passages: Sequence[Passage]) -> np.ndarray:
        from searchain.retrieval.dense.encoding import encode_texts

        with_title = self.collection.settings["tokenizer"]["index_title"]
        texts = [encoded_text(p.title, p.text, with_title) for p in passages]
        return encode_texts(self._embedder, texts, self.batch_size)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> CollectionWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def batch_digest(passages: Sequence[Passage]) -> str:
    """What a batch of a corpus file holds, to tell an unchanged batch on a re-run."""
    h = hashlib.sha256()
    for p in passages:
        for part in (p.id, p.title, p.text):
            h.update(part.encode())
            h.update(b"\0")
    return h.hexdigest()
