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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchain.retrieval.bm25 import BM25Index
from searchain.retrieval.documents.files import (
    FileEntry,
    ParseJob,
    discover,
    extractors,
    parse_job,
)
from searchain.retrieval.documents.report import IndexReport, Progress
from searchain.retrieval.documents.sandbox import Failure, run_sandboxed
from searchain.retrieval.documents.sites import Record, Sites, survey
from searchain.retrieval.index_dir import METADATA_FILE
from searchain.types import Passage

MANIFEST = "documents.json"
MANIFEST_VERSION = 1


# Skip reasons of the sandbox (sandbox.py) that say nothing about the file itself.
TRANSIENT = ("took longer than", "needs more than the", "the parser crashed")


class DocumentIndexError(ValueError):
    """A file could not be indexed and ``strict`` was asked, or nothing could be indexed."""


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
        return {
            "max_words": self.max_words,
            "columns": self.columns or {},
            "include": self.include or [],
            "exclude": self.exclude or [],
        }

    def discover(self, paths: list[str | Path]) -> tuple[list[FileEntry], dict[str, str]]:
        files, skipped = discover(
            [Path(p) for p in paths],
            self.include or [],
            self.exclude or [],
            int(self.max_file_mb * 1e6),
        )
        if self.strict and skipped:
            name, why = next(iter(skipped.items()))
            raise DocumentIndexError(f"{name}: {why} (--strict)")
        return files, skipped

    def parse(
        self, files: list[FileEntry], stats: dict[str, float] | None = None
    ) -> Iterator[tuple[ParseJob, Any]]:
        """``(job, passages or Failure)`` per file, in order, from the sandboxed parsers."""
        jobs = [
            ParseJob(str(f.path), f.rel, f.kind, self.max_words, self.columns or {}) for f in files
        ]
        return run_sandboxed(
            parse_job,
            jobs,
            workers=self.workers or min(4, os.cpu_count() or 1),
            timeout_s=self.timeout_s,
            memory_mb=self.memory_mb,
            stats=stats,
        )


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
    shaping = read.shaping()
    files, skipped = read.discover(paths)
    old_manifest, old_index = _previous(out_dir, shaping)
    old_files: dict[str, Any] = old_manifest.get("files", {}) if old_manifest else {}
    readers = extractors()
    old_readers = (old_manifest or {}).get("extractors") or {}
    stale = {kind for kind, name in readers.items() if old_readers.get(kind) != name}
    report = IndexReport(skipped=dict(skipped))
    entries, to_read = plan_files(files, old_files, report, stale)
    progress.total(len(files))
    stats: dict[str, float] = {}
    old_sites: Record = (old_manifest or {}).get("repeated_blocks") or {}
    sites = survey_sites(read, stats, files, entries, to_read, report, old_sites)
    for rel in report.unchanged:
        progress.file_done(rel, 0)

    parsed = read.parse([f for f in to_read if f.kind != "html"], stats)
    build = _Build(
        paths, shaping, readers, files, entries, report, old_index, progress, read.strict
    )
    build.sites, build.old_sites = sites, old_sites
    try:
        index = BM25Index.build(
            build.passages(parsed),
            out_dir,
            show_progress=False,
            extra_files=build.manifest,
            reader={"fmt": "documents", "max_words": read.max_words},
        )
    except ValueError as e:
        if "empty corpus" in str(e):
            raise nothing_readable(paths, report) from None
        raise
    finally:
        if old_index is not None:
            old_index.close()
    report.seconds = time.perf_counter() - t0
    report.parser_peak_mb = stats.get("worker_peak_mb", 0.0)
    return index, report


def survey_sites(
    read: ReadOptions,
    stats: dict[str, float],
    files: list[FileEntry],
    entries: dict[str, dict[str, Any]],
    to_read: list[FileEntry],
    report: IndexReport,
    old_sites: Record,
) -> Sites:
    """The HTML pages' sites (:mod:`.sites`): the pages to read parsed, and the unchanged
    pages of a site whose repeated blocks changed moved from ``unchanged`` to ``resited``."""
    html = {f.rel for f in files if f.kind == "html"}
    kept = {r: entries[r]["edges"] for r in report.unchanged if r in html and "edges" in entries[r]}
    sites, again = survey(
        lambda some: read.parse(some, stats), read.max_words, files, to_read, kept, old_sites
    )
    report.resited = [f.rel for f in again]
    report.unchanged = [r for r in report.unchanged if r not in set(report.resited)]
    report.read += report.resited
    return sites


def plan_files(
    files: list[FileEntry], old_files: dict[str, Any], report: IndexReport, stale: set[str]
) -> tuple[dict[str, dict[str, Any]], list[FileEntry]]:
    """Each file's manifest entry, and the files to read again (added, changed, read by an
    older extractor — its kind in ``stale`` — or skipped for a reason that may pass); fills
    the report's added, changed, outdated, unchanged, removed and read lists."""
    entries: dict[str, dict[str, Any]] = {}
    to_read: list[FileEntry] = []
    for f in files:
        entry, same = _compare(f, old_files.get(f.rel))
        entries[f.rel] = entry
        # A file skipped for time, memory or a crash may parse on a quieter machine: it is
        # tried again; one skipped for what it is (encrypted, binary) is not, until it changes.
        transient = any(t in entry.get("skipped", "") for t in TRANSIENT)
        if same and f.kind in stale:
            report.outdated.append(f.rel)
            to_read.append(f)
        elif same and not transient and ("rows" in entry or "skipped" in entry):
            report.unchanged.append(f.rel)
            if "skipped" in entry:
                report.skipped[f.rel] = entry["skipped"]
        else:
            (report.changed if f.rel in old_files else report.added).append(f.rel)
            to_read.append(f)
    report.removed = sorted(set(old_files) - set(entries))
    report.read = [f.rel for f in to_read]
    return entries, to_read


@dataclass(slots=True)
class _Build:
    """One build's passages, file by file in order (an unchanged file's from the old index,
    the others' from the parsers), and the manifest that records the rows each file took."""

    paths: list[str | Path]
    options: dict[str, Any]  # ReadOptions.shaping()
    extractors: dict[str, str]  # files.extractors()
    files: list[FileEntry]
    entries: dict[str, dict[str, Any]]
    report: IndexReport
    old_index: BM25Index | None
    progress: Progress
    strict: bool
    sites: Sites = field(default_factory=lambda: Sites(None))  # the HTML pages read
    old_sites: Record = field(default_factory=dict)  # the old manifest's repeated_blocks
    rows: dict[str, list[int]] = field(default_factory=dict)
    n: int = 0  # passages so far

    def passages(self, parsed: Iterable[tuple[ParseJob, Any]]) -> Iterator[Passage]:
        """Every passage of the new index; ``parsed``: the files read again but HTML pages
        (:attr:`sites` holds those), in order."""
        fresh = iter(parsed)
        upcoming = next(fresh, None)
        unchanged = set(self.report.unchanged)
        for f in self.files:
            if f.rel in unchanged:
                yield from self._kept(f.rel)
                continue
            if f.kind == "html":
                yield from self._read(f.rel, self.sites.finish(f.rel))
                self.entries[f.rel]["edges"] = self.sites.prints(f.rel)
                continue
            assert upcoming is not None and upcoming[0].rel == f.rel
            result = upcoming[1]
            upcoming = next(fresh, None)
            yield from self._read(f.rel, result)
        self.report.passages = self.n

    def _kept(self, rel: str) -> Iterator[Passage]:
        """An unchanged file's passages, from the old index (none for a skipped file)."""
        entry = self.entries[rel]
        if "rows" not in entry:
            return
        start, end = entry["rows"]
        got = self.old_index.rows(start, end) if self.old_index else []
        for p in got:
            p.score = None
            yield p
        self._took(rel, len(got))

    def _read(self, rel: str, result: Any) -> Iterator[Passage]:
        """A file read again: its passages, or (a :class:`Failure`) its skip reason recorded,
        an error when ``strict``."""
        if isinstance(result, Failure):
            if self.strict:
                raise DocumentIndexError(f"{rel}: {result.reason} (--strict)")
            self.report.skipped[rel] = self.entries[rel]["skipped"] = result.reason
            self.progress.file_done(rel, 0)
            return
        for pid, text, title, source in result.passages:
            yield Passage(pid, text, title, None, source)
        if result.dropped:
            self.entries[rel]["dropped"] = result.dropped
            for why, n in result.dropped.items():
                self.report.left_out[why] = self.report.left_out.get(why, 0) + n
        self._took(rel, len(result.passages))
        self.progress.file_done(rel, len(result.passages))

    def _took(self, rel: str, count: int) -> None:
        self.rows[rel] = [self.n, self.n + count]
        self.n += count

    def manifest(self) -> dict[str, str]:
        """``documents.json``: the options, and each file's entry with the rows it took."""
        for rel, span in self.rows.items():
            self.entries[rel]["rows"] = span
            self.entries[rel].pop("skipped", None)
        doc = {
            "version": MANIFEST_VERSION,
            "roots": [str(Path(p).resolve()) for p in self.paths],
            "options": self.options,
            "extractors": self.extractors,
            "files": self.entries,
            "skipped": {k: v for k, v in self.report.skipped.items() if k not in self.entries},
            # what the repeated-block rule left out of each site's pages (sites.py)
            "repeated_blocks": self.sites.record(self.old_sites),
        }
        return {MANIFEST: json.dumps(doc, indent=1, ensure_ascii=False) + "\n"}


def nothing_readable(paths: list[str | Path], report: IndexReport) -> DocumentIndexError:
    """The error of a build that found no passage: the first files skipped, and why."""
    why = "".join(f"\n  {k}: {v}" for k, v in sorted(report.skipped.items())[:20])
    return DocumentIndexError(
        f"no readable documents under {', '.join(map(str, paths))} "
        f"({len(report.skipped)} skipped){why}"
    )


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
        for key in ("rows", "skipped", "dropped", "edges"):
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
    entries: dict[str, dict[str, Any]] = {f.rel: {} for f in files}
    build = _Build(paths, {}, {}, files, entries, report, None, Progress(), read.strict)

    def passages() -> Iterator[Passage]:
        build.sites = survey_sites(read, {}, files, entries, files, report, {})
        yield from build.passages(read.parse([f for f in files if f.kind != "html"]))

    return passages(), report
