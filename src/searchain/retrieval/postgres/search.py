"""Searching a collection: BM25 scored in SQL from stored statistics, pgvector HNSW, and
both fused by reciprocal rank in one query.

BM25 is Lucene's, as bm25s computes it: ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` and
``tf / (tf + k1 (1 - b + b len / avg_len))`` per query term (a repeated query term counts
again), summed; the terms are made in Python by :class:`Analyzer`. Equal scores are ordered
by the passage's position (``pk``), as ``BM25Index`` orders them by row. Hybrid fuses the
top 50 of each ranking as ``HybridRetriever`` does (``1 / (60 + rank)`` each, ties to the
better best rank, then to the lexical ranking).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from searchain.retrieval.postgres.schema import Collection, find_collection
from searchain.retrieval.postgres.store import vector_text
from searchain.retrieval.postgres.target import Target, connect, parse_target
from searchain.retrieval.postgres.tokens import Analyzer
from searchain.types import Passage

MODES = ("bm25", "dense", "hybrid")
DEPTH = 50  # each ranking's depth in hybrid: HybridRetriever's default
K_RRF = 60
EF_SEARCH = 100  # HNSW candidates per query (pgvector's default, 40, loses recall)

_LEXICAL = """
lex AS (
  SELECT po.passage AS pk,
         sum(q.n * ln(1 + (st.n_docs - t.df + 0.5) / (t.df + 0.5))
             * po.tf / (po.tf + %(k1)s * (1 - %(b)s + %(b)s * po.length / st.avg_len))) AS score
  FROM unnest(%(terms)s::text[], %(counts)s::int[]) AS q(term, n)
  JOIN searchain.terms t ON t.collection = %(c)s AND t.term = q.term
  JOIN searchain.postings po ON po.collection = %(c)s AND po.term = q.term
  CROSS JOIN (SELECT n_docs::float8 AS n_docs,
                     greatest(total_len, 1)::float8 / greatest(n_docs, 1) AS avg_len
              FROM searchain.collections WHERE id = %(c)s) AS st
  GROUP BY po.passage
  ORDER BY score DESC, po.passage
  LIMIT %(depth)s
)"""

_DENSE = """
den AS (
  SELECT pk, -(embedding::vector({dim}) <#> %(vec)s::vector({dim})) AS score
  FROM searchain.passages
  WHERE collection = {c}
  ORDER BY embedding::vector({dim}) <#> %(vec)s::vector({dim})
  LIMIT %(depth)s
)"""

_FUSED = """
ranked AS (
  SELECT pk, row_number() OVER (ORDER BY score DESC, pk) AS r FROM lex),
dranked AS (
  SELECT pk, row_number() OVER (ORDER BY score DESC, pk) AS r FROM den),
fused AS (
  SELECT * FROM (
    SELECT coalesce(l.pk, d.pk) AS pk,
           coalesce(1.0 / (%(krrf)s + l.r), 0) + coalesce(1.0 / (%(krrf)s + d.r), 0) AS score,
           least(coalesce(l.r, 1e9), coalesce(d.r, 1e9)) AS best,
           CASE WHEN coalesce(l.r, 1e9) <= coalesce(d.r, 1e9) THEN 0 ELSE 1 END AS first
    FROM ranked l FULL OUTER JOIN dranked d ON l.pk = d.pk) AS f
  ORDER BY round(score::numeric, 12) DESC, best, first
  LIMIT %(k)s
)"""

_PASSAGES = """
SELECT h.score, p.id, p.title, p.text, p.source
FROM {hits} h JOIN searchain.passages p ON p.pk = h.pk
ORDER BY {order}"""


class PostgresIndex:
    """A retriever over one collection of a PostgreSQL database (``bm25``, ``dense`` or
    ``hybrid``). One connection, used by one search at a time (a server's threads share
    it); each search reads one committed snapshot of the collection."""

    def __init__(
        self, target: Target | str, mode: str = "bm25", model_path: str | None = None
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.target = parse_target(target) if isinstance(target, str) else target
        self.mode = mode
        self._conn = connect(self.target, autocommit=True)
        coll = find_collection(self._conn, self.target.collection)
        if coll is None:
            self._conn.close()
            raise FileNotFoundError(
                f"no collection {self.target.collection!r} at {self.target.display}"
            )
        if mode != "bm25" and not coll.dim:
            self._conn.close()
            raise ValueError(
                f"collection {coll.name!r} holds no vectors (index it with --kind dense) "
                f"for --retriever {mode}"
            )
        self.collection: Collection = coll
        self.metadata = {"kind": "postgres", "collection": coll.name, **coll.settings}
        self._analyzer = Analyzer(coll.settings["tokenizer"])
        self._bm25 = coll.settings["bm25"]
        self._model_path = model_path
        self._embedder: Any = None
        self._lock = threading.Lock()
        if coll.dim:
            self._conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
            self._conn.execute("SET hnsw.iterative_scan = relaxed_order")

    def __len__(self) -> int:
        row = self._conn.execute(
            "SELECT n_docs FROM searchain.collections WHERE id = %s", (self.collection.id,)
        ).fetchone()
        return int(row[0]) if row else 0

    def __repr__(self) -> str:
        return f"PostgresIndex({self.target.display!r}, mode={self.mode!r})"

    def close(self) -> None:
        self._conn.close()

    def encode_queries(self, queries: list[str]) -> np.ndarray:
        """Unit-length query vectors of the collection's model (the packaged GGUF found anew
        on this machine; a collection of a model not installed here says how to rebuild)."""
        if self._embedder is None:
            from searchain.readers.embedders import open_embedder
            from searchain.retrieval.dense.encoding import resolve_model

            recorded = self.collection.settings["dense"]
            self._embedder = open_embedder(resolve_model(recorded, self._model_path))
        return self._embedder.encode_queries(queries)

    def search(self, query: str, k: int = 5) -> list[Passage]:
        """The ``k`` best passages for ``query``, best first, with their ``score``."""
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: list[str], k: int = 5) -> list[list[Passage]]:
        """:meth:`search` for each query (the vectors encoded as one batch)."""
        if k <= 0 or not queries:
            return [[] for _ in queries]
        vectors = None
        if self.mode != "bm25":
            todo = [q if q.strip() else "." for q in queries]
            vectors = self.encode_queries(todo)
        results = []
        for i, q in enumerate(queries):
            vec = vectors[i] if vectors is not None and q.strip() else None
            results.append(self.search_encoded(q, vec, k))
        return results

    def search_encoded(self, query: str, vector: np.ndarray | None, k: int) -> list[Passage]:
        """One query, its vector already encoded (the bench times the encoding apart)."""
        terms, counts = self._analyzer.query_terms(query)
        if self.mode == "bm25" or (self.mode == "hybrid" and vector is None):
            if not terms:
                return []
            sql = f"WITH {_LEXICAL} {_PASSAGES.format(hits='lex', order='h.score DESC, h.pk')}"
            params = self._params(terms, counts, None, k, k)
        elif vector is None:
            return []
        elif self.mode == "dense":
            sql = f"WITH {self._dense()} {_PASSAGES.format(hits='den', order='h.score DESC, h.pk')}"
            params = self._params(terms, counts, vector, k, k)
        else:
            order = "round(h.score::numeric, 12) DESC, h.best, h.first"
            hits = _PASSAGES.format(hits="fused", order=order)
            sql = f"WITH {_LEXICAL}, {self._dense()}, {_FUSED} {hits}"
            params = self._params(terms, counts, vector, max(DEPTH, k), k)
        with self._lock:
            rows = self._conn.execute(
                sql.replace("SELECT h.score", "SELECT h.score", 1), params
            ).fetchall()
        return [
            Passage(pid, text, title, float(score), source)
            for score, pid, title, text, source in rows
        ]

    def _dense(self) -> str:
        return _DENSE.format(dim=int(self.collection.dim or 0), c=int(self.collection.id))

    def _params(
        self, terms: list[str], counts: list[int], vector: np.ndarray | None, depth: int, k: int
    ) -> dict[str, Any]:
        return {
            "c": self.collection.id,
            "terms": terms,
            "counts": counts,
            "k1": float(self._bm25["k1"]),
            "b": float(self._bm25["b"]),
            "vec": vector_text(vector) if vector is not None else None,
            "depth": depth,
            "krrf": K_RRF,
            "k": k,
        }
