"""Which corpus an answer searched, as one short name (a calibrator's configuration holds it).

A calibrator fit on answers over one corpus says nothing about answers over another, so the
corpus is part of the configuration an answer was made with
(``scoring/confidence/configuration.py``).
The name is the retriever's kind and its index's folder name — ``bm25:demo`` for the bundled
HotpotQA demo index, ``bm25:debian-docs`` for ``--index ~/indexes/debian-docs`` — never a
machine path or a URL's credentials (a PostgreSQL collection is ``postgres-bm25:NAME``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

# The demo indexes' cache folders (retrieval/demo.py, factory.default_dense_index).
_DEMO = re.compile(r"demo-(dense-)?[0-9a-f]{12}")
_KINDS = {"BM25Index": "bm25", "DenseIndex": "dense"}


def _index_name(retriever: Any) -> str:
    path = getattr(retriever, "path", None)
    if path is None:
        return "in-memory"
    name = Path(path).name
    return "demo" if _DEMO.fullmatch(name) else name


def corpus_key(retriever: Any) -> str | None:
    """The corpus ``retriever`` searches, named (None: no retriever)."""
    if retriever is None:
        return None
    kind = type(retriever).__name__
    if kind in _KINDS:
        return f"{_KINDS[kind]}:{_index_name(retriever)}"
    if kind == "QueryPlanRetriever":  # the same corpus, searched otherwise: a configuration
        plan = "".join(f"+{o}" for o in ("parts", "bridge") if getattr(retriever, o))
        return f"{corpus_key(retriever.base)}{plan}"
    if kind == "HybridRetriever":
        return "hybrid(" + ",".join(str(corpus_key(r)) for r in retriever.retrievers) + ")"
    if kind == "PostgresIndex":  # the collection's own name: no host, user or password
        return f"postgres-{retriever.mode}:{retriever.collection.name}"
    if kind == "RemoteRetriever":
        parts = urlsplit(str(retriever.url))
        return f"remote:{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    if kind == "QuestionPools":
        return "question-pools"
    if kind == "LLMURLRetriever":
        return "llm-url"
    return kind


def corpus_of_run(config: dict[str, Any]) -> str | None:
    """The corpus name of an evaluation run, from its manifest's config (made before answers
    recorded it): its retriever and index, the demo index when none was named."""
    spec = config.get("retriever")
    retriever, _, plan = str(spec).partition("+")
    plan = f"+{plan}" if plan else ""
    if retriever not in ("bm25", "dense"):
        return None if spec is None else str(spec)
    index = config.get("index" if retriever == "bm25" else "dense_index")
    if isinstance(index, str) and urlsplit(index).scheme.startswith("postgres"):
        named = [v for k, v in parse_qsl(urlsplit(index).query) if k == "collection"]
        return f"postgres-{retriever}:{named[0] if named else 'default'}{plan}"
    return f"{retriever}:{Path(str(index)).name if index else 'demo'}{plan}"
