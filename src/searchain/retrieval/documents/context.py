"""A passage of a document index with its neighbours: the text around a citation.

A document's passages occupy consecutive rows of the index (the manifest records each
file's span), and a passage's id is ``<path>#<n>``, its place in the file; so the passages
just before and after it in the same file are rows away, with no search.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from searchain.retrieval.bm25 import BM25Index
from searchain.retrieval.documents.build import MANIFEST
from searchain.types import Passage


@dataclass(slots=True)
class PassageContext:
    passage: Passage
    before: list[Passage] = field(default_factory=list)
    after: list[Passage] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passage": self.passage.to_dict(),
            "before": [p.to_dict() for p in self.before],
            "after": [p.to_dict() for p in self.after],
        }


@lru_cache(maxsize=8)
def _spans(manifest: Path, mtime_ns: int) -> dict[str, tuple[int, int]]:
    files = json.loads(manifest.read_text()).get("files", {})
    return {rel: (e["rows"][0], e["rows"][1]) for rel, e in files.items() if "rows" in e}


def passage_context(index: BM25Index, passage_id: str, around: int = 1) -> PassageContext | None:
    """The passage ``passage_id`` and up to ``around`` passages of its file on each side;
    ``None`` when the index is no document index or holds no such passage."""
    manifest = Path(index.path) / MANIFEST
    if not manifest.is_file():
        return None
    spans = _spans(manifest, manifest.stat().st_mtime_ns)
    rel, sep, n = passage_id.rpartition("#")
    if not sep or rel not in spans or not n.isdigit():
        return None
    start, end = spans[rel]
    row = start + int(n)
    if not start <= row < end:
        return None
    lo, hi = max(start, row - around), min(end, row + around + 1)
    rows = index.rows(lo, hi)
    at = row - lo
    if rows[at].id != passage_id:  # an index whose rows do not follow the ids: no context
        return None
    return PassageContext(rows[at], rows[:at], rows[at + 1 :])


def passage_on_page(index: BM25Index, path: str, page: int) -> str | None:
    """The id of the first passage of the document ``path`` (as indexed, relative to the
    folder) that lies on ``page`` (PDF, 1-based); ``None`` when there is none."""
    manifest = Path(index.path) / MANIFEST
    if not manifest.is_file():
        return None
    span = _spans(manifest, manifest.stat().st_mtime_ns).get(path)
    if span is None:
        return None
    for passage in index.rows(*span):
        if passage.source and passage.source.get("page") == page:
            return passage.id
    return None


def source_file(index: BM25Index, path: str) -> Path | None:
    """The file the document ``path`` (as indexed, relative to the folder) was read from,
    while it is still inside an indexed root; ``None`` for a path the index does not hold,
    or one that now resolves outside its root (a link swapped in after indexing)."""
    manifest = Path(index.path) / MANIFEST
    if not manifest.is_file() or path not in _spans(manifest, manifest.stat().st_mtime_ns):
        return None
    roots = [Path(r) for r in json.loads(manifest.read_text()).get("roots", [])]
    for root in roots:
        if root.is_file():
            candidate, inside = root, root.parent
            if root.name != path:
                continue
        else:
            # several roots: each file's path starts with its root's name (files.discover)
            rel = path.removeprefix(f"{root.name}/") if len(roots) > 1 else path
            if len(roots) > 1 and rel == path:
                continue
            candidate, inside = root / rel, root
        real = candidate.resolve()
        if real.is_file() and real.is_relative_to(inside.resolve()):
            return real
    return None
