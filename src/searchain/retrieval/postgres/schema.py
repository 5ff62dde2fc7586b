"""The tables of a PostgreSQL index (schema ``searchain``), created on first use.

One set of tables holds every collection, keyed by the collection's number, so a database
keeps any number of collections and every query filters on one (and, under Citus, is routed
to the shards of one collection: ``collection`` is the distribution column):

* ``collections``: name, settings (tokenizer, BM25 k1/b, embedding model and dimension),
  the collection-wide part of the manifest, and the BM25 statistics ``n_docs`` and
  ``total_len`` that every writer updates in the transaction that changes them.
* ``units``: what was indexed, one row per file (or batch of a corpus file) with its
  manifest entry (size, time, SHA-256): the incremental rule reads it.
* ``passages``: text, title, source (file, page, section) and, for dense retrieval, the
  embedding vector; ``pk`` (a sequence) is the passage's position, the tie-break of rankings.
* ``postings``: (term, passage, tf, passage length): BM25 is scored from them in SQL.
* ``terms``: document frequency per term.

A dense collection gets a partial HNSW index of its own over ``embedding::vector(dim)``
(pgvector's recipe for vectors of several dimensions in one column).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SCHEMA_VERSION = 1
# Held while the tables are created, so two first writers do not race on CREATE.
_DDL_LOCK = 0x5EA2C4A1

DDL = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE SCHEMA IF NOT EXISTS searchain;
CREATE TABLE IF NOT EXISTS searchain.collections (
    id serial PRIMARY KEY,
    name text NOT NULL UNIQUE,
    settings jsonb NOT NULL,
    manifest jsonb NOT NULL DEFAULT '{}',
    n_docs bigint NOT NULL DEFAULT 0,
    total_len bigint NOT NULL DEFAULT 0,
    created timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS searchain.units (
    collection int NOT NULL REFERENCES searchain.collections (id) ON DELETE CASCADE,
    unit text NOT NULL,
    entry jsonb NOT NULL,
    PRIMARY KEY (collection, unit)
);
CREATE TABLE IF NOT EXISTS searchain.passages (
    pk bigserial PRIMARY KEY,
    collection int NOT NULL,
    unit text NOT NULL,
    id text NOT NULL,
    title text NOT NULL,
    text text NOT NULL,
    source jsonb,
    length int NOT NULL,
    embedding vector
);
CREATE INDEX IF NOT EXISTS passages_unit ON searchain.passages (collection, unit);
CREATE TABLE IF NOT EXISTS searchain.postings (
    collection int NOT NULL,
    term text NOT NULL,
    passage bigint NOT NULL,
    tf int NOT NULL,
    length int NOT NULL,
    PRIMARY KEY (collection, term, passage) INCLUDE (tf, length)
);
CREATE TABLE IF NOT EXISTS searchain.terms (
    collection int NOT NULL,
    term text NOT NULL,
    df bigint NOT NULL,
    PRIMARY KEY (collection, term)
);
"""


@dataclass(frozen=True)
class Collection:
    """A collection's row: its number, name and settings."""

    id: int
    name: str
    settings: dict[str, Any]

    @property
    def dim(self) -> int | None:
        """The embedding dimension (None: a lexical-only collection)."""
        dense = self.settings.get("dense")
        return int(dense["dim"]) if dense else None


def ensure_schema(conn: Any) -> None:
    """Create the tables if they are missing (idempotent; serialised between writers)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
        for statement in filter(str.strip, DDL.split(";")):
            conn.execute(statement)


def find_collection(conn: Any, name: str) -> Collection | None:
    """The collection named ``name``, or None (also when the schema does not exist)."""
    exists = conn.execute("SELECT to_regclass('searchain.collections')").fetchone()[0]
    if exists is None:
        return None
    row = conn.execute(
        "SELECT id, name, settings FROM searchain.collections WHERE name = %s", (name,)
    ).fetchone()
    return Collection(row[0], row[1], row[2]) if row else None


def open_collection(conn: Any, name: str, settings: dict[str, Any]) -> Collection:
    """The collection ``name``, created with ``settings`` if new. An existing collection
    built with other settings is refused: its statistics would not be comparable."""
    ensure_schema(conn)
    with conn.transaction():
        conn.execute(
            "INSERT INTO searchain.collections (name, settings) VALUES (%s, %s::jsonb) "
            "ON CONFLICT (name) DO NOTHING",
            (name, json.dumps(settings)),
        )
    found = find_collection(conn, name)
    assert found is not None
    if _comparable(found.settings) != _comparable(settings):
        differ = _differences(found.settings, settings)
        raise ValueError(
            f"collection {name!r} was built with other settings ({differ}); "
            "index into a new collection or drop this one"
        )
    if settings.get("dense") and not found.settings.get("dense"):
        raise ValueError(f"collection {name!r} is lexical only; index dense into a new collection")
    if found.dim:
        ensure_vector_index(conn, found)
    return found


def ensure_vector_index(conn: Any, coll: Collection) -> None:
    """The collection's HNSW index (inner product: the vectors are unit length)."""
    # Both values are integers from this database, never from the user.
    with conn.transaction():
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS passages_hnsw_{int(coll.id)} ON searchain.passages "
            f"USING hnsw ((embedding::vector({int(coll.dim or 0)})) vector_ip_ops) "
            f"WHERE collection = {int(coll.id)}"
        )


def _comparable(settings: dict[str, Any]) -> dict[str, Any]:
    dense = settings.get("dense") or {}
    return {
        "tokenizer": settings.get("tokenizer"),
        "bm25": settings.get("bm25"),
        "model": dense.get("fingerprint"),
    }


def _differences(old: dict[str, Any], new: dict[str, Any]) -> str:
    a, b = _comparable(old), _comparable(new)
    names = [k for k in a if a[k] != b[k] and b[k] is not None] or ["model"]
    if "model" in names:  # say which two, since "model" alone does not say how to mend it
        was, now = old.get("dense") or {}, new.get("dense") or {}
        names[names.index("model")] = (
            f"embedding model {was.get('name', '?')} ({was.get('dim', '?')}-d), not "
            f"{now.get('name', '?')} ({now.get('dim', '?')}-d)"
        )
    return ", ".join(names)
