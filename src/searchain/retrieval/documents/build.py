"""Index folders of documents, incrementally: only new and changed files are read again.

The index directory keeps ``documents.json``: the options it was built with and, per file,
its size, modification time, SHA-256 and the rows its passages occupy. Indexing the same
paths again compares each file with it (a file whose size and time are unchanged is not even
hashed; one whose content hash is unchanged is not re-read), takes the passages of unchanged
files from the old index, reads only the rest and rebuilds the BM25 matrix (its statistics
change with any file). The new index is written beside the old one and swapped in whole, so
an interrupted or failed build leaves the previous index as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchain.retrieval.bm25 import METADATA_FILE, BM25Index
from searchain.retrieval.documents.files import FileEntry, ParseJob, discover, parse_job
from searchain.retrieval.documents.sandbox import Failure, run_sandboxed
from searchain.types import Passage

MANIFEST = "documents.json"
MANIFEST_VERSION = 1


# Skip reasons of the sandbox (sandbox.py) that say nothing about the file itself.
TRANSIENT = ("took longer than", "needs more than the", "the parser crashed")


class DocumentIndexError(ValueError):
    """A file could not be indexed and ``strict`` was asked, or nothing could be indexed."""


@dataclass(slots=True)
class IndexReport:
    """What a build did, file by file (names relative to the indexed roots)."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    read: list[str] = field(default_factory=list)  # the files parsed this time
    passages: int = 0
    seconds: float = 0.0
    parser_peak_mb: float = 0.0  # the parser workers' largest peak memory

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
            "read": self.read,
            "passages": self.passages,
            "seconds": round(self.seconds, 3),
            "parser_peak_mb": round(self.parser_peak_mb, 1),
        }

    def summary(self) -> str:
        return (
            f"{len(self.added)} added, {len(self.changed)} changed, {len(self.removed)} "
            f"removed, {len(self.unchanged)} unchanged, {len(self.skipped)} skipped; "
            f"{self.passages:,} passages"
        )


@dataclass(slots=True)
class Progress:
    """Callbacks a CLI or service turns into a progress bar."""

    total: Callable[[int], None] = lambda n: None
    file_done: Callable[[str, int], None] = lambda rel, passages: None


@dataclass(slots=True)
class ReadOptions:
    """How documents are found and read: one definition for the BM25 and the dense build."""

    include: list[str] | None = None
    exclude: list[str] | None = None
    max_words: int | None = 100
    columns: dict[str, str | None] | None = None
    strict: bool = False
    max_file_mb: float = 100
    workers: int | None = None
    timeout_s: float = 60
    memory_mb: int = 1536

    def shaping(self) -> dict[str, Any]:
        """The options that shape the passages (a change re-reads every file)."""
        return {"max_words": self.max_words, "columns": self.columns or {},
                "include": self.include or [], "exclude": self.exclude or []}  # fmt: skip

    def discover(self, paths: list[str | Path]) -> tuple[list[FileEntry], dict[str, str]]:
        files, skipped = discover([Path(p) for p in paths], self.include or [],
                                  self.exclude or [], int(self.max_file_mb * 1e6))  # fmt: skip
        if self.strict and skipped:
            name, why = next(iter(skipped.items()))
            raise DocumentIndexError(f"{name}: {why} (--strict)")
        return files, skipped

    def parse(
        self, files: list[FileEntry], stats: dict[str, float] | None = None
    ) -> Iterator[tuple[ParseJob, Any]]:
        """``(job, passages or Failure)`` per file, in order, from the sandboxed parsers."""
        jobs = [ParseJob(str(f.path), f.rel, f.kind, self.max_words, self.columns or {})
                for f in files]  # fmt: skip
        return run_sandboxed(parse_job, jobs, workers=self.workers or min(4, os.cpu_count() or 1),
                             timeout_s=self.timeout_s, memory_mb=self.memory_mb,
                             stats=stats)  # fmt: skip


def index_documents(
    paths: list[str | Path],
    out_dir: str | Path,
    *,
    progress: Progress | None = None,
    **options: Any,
) -> tuple[BM25Index, IndexReport]:
    """Index the documents under ``paths`` (folders and files) into ``out_dir`` (BM25).

    Supported: ``.txt .md .rst .html .pdf .docx``, ``.csv``/``.parquet`` (a row per document,
    ``columns={"text": ..., "title": ..., "id": ...}``). A file that cannot be read
    (corrupt, encrypted, binary, too large, over the parser's time or memory bound) is
    skipped and named in the report; ``strict=True`` makes that an error instead.
    ``options``: the fields of :class:`ReadOptions`.
    """
    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    progress = progress or Progress()
    read = ReadOptions(**options)
    options = read.shaping()
    files, skipped = read.discover(paths)
    old_manifest, old_index = _previous(out_dir, options)
    old_files: dict[str, Any] = old_manifest.get("files", {}) if old_manifest else {}
    report = IndexReport(skipped=dict(skipped))
    entries: dict[str, dict[str, Any]] = {}
    to_read: list[FileEntry] = []
    for f in files:
        entry, same = _compare(f, old_files.get(f.rel))
        entries[f.rel] = entry
        # A file skipped for time, memory or a crash may parse on a quieter machine: it is
        # tried again; one skipped for what it is (encrypted, binary) is not, until it changes.
        transient = any(t in entry.get("skipped", "") for t in TRANSIENT)
        if same and not transient and ("rows" in entry or "skipped" in entry):
            report.unchanged.append(f.rel)
            if "skipped" in entry:
                report.skipped[f.rel] = entry["skipped"]
        else:
            (report.changed if f.rel in old_files else report.added).append(f.rel)
            to_read.append(f)
    report.removed = sorted(set(old_files) - set(entries))
    report.read = [f.rel for f in to_read]
    progress.total(len(files))
    for rel in report.unchanged:
        progress.file_done(rel, 0)

    stats: dict[str, float] = {}
    parsed = read.parse(to_read, stats)
    rows: dict[str, list[int]] = {}

    def passages() -> Iterator[Passage]:
        n = 0
        fresh = iter(parsed)
        upcoming = next(fresh, None)
        for f in files:
            entry = entries[f.rel]
            if f.rel in report.unchanged:
                if "rows" not in entry:
                    continue
                start, end = entry["rows"]
                got = old_index.rows(start, end) if old_index else []
                for p in got:
                    p.score = None
                    yield p
                rows[f.rel] = [n, n + len(got)]
                n += len(got)
                continue
            assert upcoming is not None and upcoming[0].rel == f.rel
            result = upcoming[1]
            upcoming = next(fresh, None)
            if isinstance(result, Failure):
                if read.strict:
                    raise DocumentIndexError(f"{f.rel}: {result.reason} (--strict)")
                report.skipped[f.rel] = entry["skipped"] = result.reason
                progress.file_done(f.rel, 0)
                continue
            for pid, text, title, source in result:
                yield Passage(pid, text, title, None, source)
            rows[f.rel] = [n, n + len(result)]
            n += len(result)
            progress.file_done(f.rel, len(result))
        report.passages = n

    def manifest() -> dict[str, str]:
        for rel, span in rows.items():
            entries[rel]["rows"] = span
            entries[rel].pop("skipped", None)
        doc = {
            "version": MANIFEST_VERSION,
            "roots": [str(Path(p).resolve()) for p in paths],
            "options": options,
            "files": entries,
            "skipped": {k: v for k, v in report.skipped.items() if k not in entries},
        }
        return {MANIFEST: json.dumps(doc, indent=1, ensure_ascii=False) + "\n"}

    try:
        index = BM25Index.build(
            passages(),
            out_dir,
            show_progress=False,
            extra_files=manifest,
            reader={"fmt": "documents", "max_words": read.max_words},
        )
    except ValueError as e:
        if "empty corpus" in str(e):
            why = "".join(f"\n  {k}: {v}" for k, v in sorted(report.skipped.items())[:20])
            raise DocumentIndexError(
                f"no readable documents under {', '.join(map(str, paths))} "
                f"({len(report.skipped)} skipped){why}"
            ) from None
        raise
    finally:
        if old_index is not None:
            old_index.close()
    report.seconds = time.perf_counter() - t0
    report.parser_peak_mb = stats.get("worker_peak_mb", 0.0)
    return index, report


def _previous(
    out_dir: Path, options: dict[str, Any]
) -> tuple[dict[str, Any] | None, BM25Index | None]:
    """The old manifest and index, when they can lend passages to this build."""
    path = out_dir / MANIFEST
    if not path.is_file() or not (out_dir / METADATA_FILE).is_file():
        return None, None
    try:
        manifest = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None, None
    if manifest.get("version") != MANIFEST_VERSION or manifest.get("options") != options:
        return None, None  # other splitting or selection: every file is read again
    try:
        return manifest, BM25Index.load(out_dir, mmap=True)
    except (OSError, ValueError, RuntimeError):
        return None, None


def _compare(f: FileEntry, old: dict[str, Any] | None) -> tuple[dict[str, Any], bool]:
    """The file's manifest entry, and whether its content is what ``old`` recorded."""
    entry: dict[str, Any] = {"size": f.size, "mtime_ns": f.mtime_ns}
    if old and old.get("size") == f.size and old.get("mtime_ns") == f.mtime_ns:
        entry["sha256"] = old.get("sha256")
    else:
        with open(f.path, "rb") as fh:
            entry["sha256"] = hashlib.file_digest(fh, "sha256").hexdigest()
    same = bool(old) and old.get("sha256") == entry["sha256"]
    if same and old is not None:
        for key in ("rows", "skipped"):
            if key in old:
                entry[key] = old[key]
    return entry, same


def read_document_passages(
    paths: list[str | Path], **options: Any
) -> tuple[Iterator[Passage], IndexReport]:
    """Every passage of the documents under ``paths``, read afresh (what a dense index
    encodes: ``searchain index FOLDER --kind dense``); the report fills as the passages are
    consumed. ``options``: :class:`ReadOptions`. Skipped files are named in the report."""
    read = ReadOptions(**options)
    files, skipped = read.discover(paths)
    report = IndexReport(skipped=dict(skipped), added=[f.rel for f in files])
    report.read = list(report.added)

    def passages() -> Iterator[Passage]:
        for job, result in read.parse(files):
            if isinstance(result, Failure):
                if read.strict:
                    raise DocumentIndexError(f"{job.rel}: {result.reason} (--strict)")
                report.skipped[job.rel] = result.reason
                continue
            for pid, text, title, source in result:
                report.passages += 1
                yield Passage(pid, text, title, None, source)

    return passages(), report
