"""Index folders of documents into a collection, incrementally, one file per transaction.

The same rule as ``documents/build.py``: a file whose size and time are unchanged is not
hashed, one whose SHA-256 is unchanged is not read; the entries live in the ``units``
table instead of ``documents.json``. Unlike the file index, nothing is rebuilt around a
changed file: its passages are replaced in one transaction and the BM25 statistics move
with them, so an unchanged file costs nothing and a reader never sees half a file.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchain.retrieval.documents.build import (
    MANIFEST_VERSION,
    DocumentIndexError,
    ReadOptions,
    nothing_readable,
    plan_files,
    survey_sites,
)
from searchain.retrieval.documents.files import FileEntry, extractors
from searchain.retrieval.documents.report import IndexReport, Progress
from searchain.retrieval.documents.sandbox import Failure
from searchain.retrieval.postgres.store import read_manifest, read_units, write_manifest
from searchain.retrieval.postgres.target import Target
from searchain.retrieval.postgres.writer import CollectionWriter
from searchain.types import Passage


def index_folders(
    paths: list[str | Path],
    target: Target,
    *,
    dense: bool = False,
    model_path: str | Path | None = None,
    progress: Progress | None = None,
    **options: Any,
) -> IndexReport:
    """Index the documents under ``paths`` into ``target``; ``options``: ReadOptions."""
    t0 = time.perf_counter()
    progress = progress or Progress()
    read = ReadOptions(**options)
    shaping = read.shaping()
    files, skipped = read.discover(paths)
    with CollectionWriter(target, dense=dense, model_path=model_path) as writer:
        manifest = read_manifest(writer.conn, writer.collection)
        readers = extractors()
        # Each file's entry records the options and parsers it was read with (not the
        # collection once at the end: a killed run must not lose what it committed).
        shape = _shape(shaping, readers)
        units = read_units(writer.conn, writer.collection)
        old_files = {u: e for u, e in units.items() if e.get("shape") == shape}
        stale: set[str] = set()
        report = IndexReport(skipped=dict(skipped))
        entries, to_read = plan_files(files, old_files, report, stale)
        report.removed = sorted(set(units) - set(entries))
        progress.total(len(files))
        stats: dict[str, float] = {}
        old_sites = manifest.get("repeated_blocks") or {}
        sites = survey_sites(read, stats, files, entries, to_read, report, old_sites)
        for rel in report.unchanged:
            progress.file_done(rel, 0)
        parsed = read.parse([f for f in to_read if f.kind != "html"], stats)
        for f, result in _results(to_read, parsed, sites):
            passages = _passages(f.rel, result, entries[f.rel], report, read.strict)
            entries[f.rel]["shape"] = shape
            if f.kind == "html":
                entries[f.rel]["edges"] = sites.prints(f.rel)
            writer.put(f.rel, entries[f.rel], passages)
            progress.file_done(f.rel, len(passages))
        for rel in report.removed:
            writer.put(rel, None, [])
        write_manifest(
            writer.conn,
            writer.collection,
            {
                "version": MANIFEST_VERSION,
                "options": shaping,
                "extractors": readers,
                "repeated_blocks": sites.record(old_sites),
            },
        )
        report.passages = _count(writer)
    if not report.passages:
        raise nothing_readable(paths, report)
    report.seconds = time.perf_counter() - t0
    report.parser_peak_mb = stats.get("worker_peak_mb", 0.0)
    return report


def _shape(shaping: dict[str, Any], readers: dict[str, str]) -> str:
    """What shaped a file's passages: the reading options and the parsers' versions."""
    text = json.dumps([MANIFEST_VERSION, shaping, readers], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _results(to_read: list[FileEntry], parsed: Iterator[Any], sites: Any) -> Iterator[Any]:
    """``(file, passages or Failure)`` for each file read, in order (HTML from its site)."""
    fresh = iter(parsed)
    for f in to_read:
        if f.kind == "html":
            yield f, sites.finish(f.rel)
            continue
        job, result = next(fresh)
        assert job.rel == f.rel
        yield f, result


def _passages(
    rel: str, result: Any, entry: dict[str, Any], report: IndexReport, strict: bool
) -> list[Passage]:
    """A file's passages; a skipped file's reason in its entry (an error when strict)."""
    for key in ("rows", "skipped", "dropped"):
        entry.pop(key, None)
    if isinstance(result, Failure):
        if strict:
            raise DocumentIndexError(f"{rel}: {result.reason} (--strict)")
        report.skipped[rel] = entry["skipped"] = result.reason
        return []
    if result.dropped:
        entry["dropped"] = result.dropped
        for why, n in result.dropped.items():
            report.left_out[why] = report.left_out.get(why, 0) + n
    entry["rows"] = [0, len(result.passages)]  # "indexed": the incremental rule's mark
    return [Passage(pid, text, title, None, source) for pid, text, title, source in result.passages]


def _count(writer: CollectionWriter) -> int:
    row = writer.conn.execute(
        "SELECT n_docs FROM searchain.collections WHERE id = %s", (writer.collection.id,)
    ).fetchone()
    return int(row[0])
