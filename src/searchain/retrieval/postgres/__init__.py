"""PostgreSQL + pgvector as a shared, transactional index: ``postgresql://...?collection=``
wherever an index directory goes (the ``postgres`` extra: psycopg and pgvector)."""

from searchain.retrieval.postgres.corpus import index_corpus
from searchain.retrieval.postgres.folders import index_folders
from searchain.retrieval.postgres.search import MODES, PostgresIndex
from searchain.retrieval.postgres.target import (
    PostgresTargetError,
    Target,
    check_collection,
    is_postgres_url,
    parse_target,
)

__all__ = [
    "MODES",
    "PostgresIndex",
    "PostgresTargetError",
    "Target",
    "check_collection",
    "index_corpus",
    "index_folders",
    "is_postgres_url",
    "parse_target",
]
