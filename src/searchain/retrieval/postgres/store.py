"""Writing a collection: each unit (a file, or a batch of a corpus file) replaced in one
transaction, so a reader sees a file's old passages or its new ones, never half of each,
and an indexer killed at any moment leaves every unit either as it was or fully replaced.

Writers of one collection take its row's lock first (``SELECT ... FOR UPDATE``): the BM25
statistics (passage count, total length, document frequencies) are changed by exactly one
transaction at a time, and readers keep reading the last committed state meanwhile.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from searchain.retrieval.postgres.schema import Collection
from searchain.retrieval.postgres.tokens import Analyzer
from searchain.types import Passage

_PASSAGE_COLUMNS = "(pk, collection, unit, id, title, text, source, length, embedding)"
_POSTING_COLUMNS = "(collection, term, passage, tf, length)"


def read_units(conn: Any, coll: Collection) -> dict[str, dict[str, Any]]:
    """Every unit's manifest entry (the incremental rule compares files with them)."""
    rows = conn.execute(
        "SELECT unit, entry FROM searchain.units WHERE collection = %s", (coll.id,)
    ).fetchall()
    return {unit: entry for unit, entry in rows}


def read_manifest(conn: Any, coll: Collection) -> dict[str, Any]:
    """The collection-wide part of the manifest (options, extractors, repeated blocks)."""
    row = conn.execute(
        "SELECT manifest FROM searchain.collections WHERE id = %s", (coll.id,)
    ).fetchone()
    return row[0] if row else {}


def write_manifest(conn: Any, coll: Collection, manifest: dict[str, Any]) -> None:
    with conn.transaction():
        conn.execute(
            "UPDATE searchain.collections SET manifest = %s::jsonb WHERE id = %s",
            (json.dumps(manifest), coll.id),
        )


def replace_unit(
    conn: Any,
    coll: Collection,
    analyzer: Analyzer,
    unit: str,
    entry: dict[str, Any] | None,
    passages: Sequence[Passage],
    vectors: np.ndarray | None = None,
) -> None:
    """Replace ``unit``'s passages by ``passages`` (``entry`` None: remove the unit), in
    one transaction. ``vectors``: one unit-length row per passage, for a dense collection."""
    if coll.dim and passages and (vectors is None or vectors.shape != (len(passages), coll.dim)):
        raise ValueError(f"collection {coll.name!r} needs a {coll.dim}-d vector per passage")
    with conn.transaction():
        conn.execute("SELECT 1 FROM searchain.collections WHERE id = %s FOR UPDATE", (coll.id,))
        removed, removed_len = _delete_unit(conn, coll, unit)
        added, added_len = _insert_passages(conn, coll, analyzer, unit, passages, vectors)
        conn.execute(
            "UPDATE searchain.collections SET n_docs = n_docs + %s, total_len = total_len + %s "
            "WHERE id = %s",
            (added - removed, added_len - removed_len, coll.id),
        )
        if entry is None:
            conn.execute(
                "DELETE FROM searchain.units WHERE collection = %s AND unit = %s",
                (coll.id, unit),
            )
        else:
            conn.execute(
                "INSERT INTO searchain.units (collection, unit, entry) VALUES (%s, %s, %s::jsonb) "
                "ON CONFLICT (collection, unit) DO UPDATE SET entry = excluded.entry",
                (coll.id, unit, json.dumps(entry)),
            )


def _delete_unit(conn: Any, coll: Collection, unit: str) -> tuple[int, int]:
    """Delete a unit's passages and postings, lowering the document frequencies they
    counted in: (passages removed, their total length)."""
    count, total = conn.execute(
        "SELECT count(*), coalesce(sum(length), 0) FROM searchain.passages "
        "WHERE collection = %s AND unit = %s",
        (coll.id, unit),
    ).fetchone()
    if not count:
        return 0, 0
    conn.execute(
        "WITH gone AS (DELETE FROM searchain.postings po USING searchain.passages p "
        "  WHERE p.collection = %(c)s AND p.unit = %(u)s AND po.collection = %(c)s "
        "  AND po.passage = p.pk RETURNING po.term), "
        "counted AS (SELECT term, count(*) AS n FROM gone GROUP BY term) "
        "UPDATE searchain.terms t SET df = t.df - counted.n FROM counted "
        "WHERE t.collection = %(c)s AND t.term = counted.term",
        {"c": coll.id, "u": unit},
    )
    conn.execute("DELETE FROM searchain.terms WHERE collection = %s AND df <= 0", (coll.id,))
    conn.execute(
        "DELETE FROM searchain.passages WHERE collection = %s AND unit = %s", (coll.id, unit)
    )
    return int(count), int(total)


def _insert_passages(
    conn: Any,
    coll: Collection,
    analyzer: Analyzer,
    unit: str,
    passages: Sequence[Passage],
    vectors: np.ndarray | None,
) -> tuple[int, int]:
    """COPY the passages and their postings in; raise the document frequencies."""
    if not passages:
        return 0, 0
    pks = [
        r[0]
        for r in conn.execute(
            "SELECT nextval('searchain.passages_pk_seq') FROM generate_series(1, %s)",
            (len(passages),),
        ).fetchall()
    ]
    df: Counter[str] = Counter()
    total = 0
    with conn.cursor() as cur:
        with cur.copy(f"COPY searchain.passages {_PASSAGE_COLUMNS} FROM STDIN") as copy:
            postings = []
            for i, (pk, p) in enumerate(zip(pks, passages, strict=True)):
                tf, length = analyzer.passage_terms(p.title, p.text)
                total += length
                df.update(tf.keys())
                postings.extend((coll.id, t, pk, n, length) for t, n in tf.items())
                vector = vector_text(vectors[i]) if vectors is not None else None
                source = json.dumps(p.source, ensure_ascii=False) if p.source else None
                copy.write_row((pk, coll.id, unit, p.id, p.title, p.text, source, length, vector))
        with cur.copy(f"COPY searchain.postings {_POSTING_COLUMNS} FROM STDIN") as copy:
            for row in postings:
                copy.write_row(row)
    terms = sorted(df)
    conn.execute(
        "INSERT INTO searchain.terms (collection, term, df) "
        "SELECT %s, term, n FROM unnest(%s::text[], %s::bigint[]) AS x(term, n) "
        "ON CONFLICT (collection, term) DO UPDATE SET df = searchain.terms.df + excluded.df",
        (coll.id, terms, [df[t] for t in terms]),
    )
    return len(passages), total


def vector_text(row: np.ndarray) -> str:
    """pgvector's text form; float32's shortest repr round-trips exactly."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(row, dtype=np.float32).tolist()) + "]"
