"""Which files of the given paths are documents, and reading one into passages.

Folders are walked recursively. Hidden entries (``.git``, ``.venv``) are left out; a
symbolic link is followed only while it stays inside the folder being indexed (a link out
of it, a loop back into a folder already walked or a dangling link is named and skipped).
``--include``/``--exclude`` globs match a file's path relative to its root, or its name
when the glob holds no ``/``.
"""

from __future__ import annotations

import fnmatch
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchain.retrieval.documents.sections import Document, to_passages

KINDS = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".pdf": "pdf",
    ".docx": "docx",
    ".csv": "table",
    ".parquet": "table",
}
_SNIFF = 8192

# What reads each kind of file. A change that alters the passages a file gives raises its
# revision, so an index built before re-reads those files (documents.json records these).
# 2: PDFium for PDF; page furniture, navigation and table-of-contents lines dropped;
# captions kept with what follows; HTML code keeps its lines and table rows their cells.
# 3: PDF word spaces from the glyphs' places, slide steps, compounds at line ends; HTML
# blocks repeated across a site's pages (the manifest keeps each page's edge blocks).
REVISIONS = {
    "pdf": 3,
    "html": 3,
    "markdown": 2,
    "rst": 2,
    "text": 2,
    "docx": 2,
    "table": 1,
}


def extractors() -> dict[str, str]:
    """``{kind: what reads it, with its version}``: recorded in the manifest."""
    from searchain.retrieval.documents.pdf_text import extractor_version

    out = {kind: f"searchain {rev}" for kind, rev in REVISIONS.items()}
    out["pdf"] += f"; {extractor_version()}"
    return out


@dataclass(slots=True)
class FileEntry:
    path: Path  # where to read it
    rel: str  # how it is named in the index: relative to its root, '/'-separated
    kind: str
    size: int
    mtime_ns: int


@dataclass(slots=True)
class ParseJob:
    path: str
    rel: str
    kind: str
    max_words: int | None
    columns: dict[str, str | None]


def discover(
    paths: list[Path], include: list[str], exclude: list[str], max_bytes: int
) -> tuple[list[FileEntry], dict[str, str]]:
    """The document files under ``paths`` (sorted by name) and ``{name: reason}`` for the
    ones named and skipped."""
    found: list[FileEntry] = []
    skipped: dict[str, str] = {}
    prefix_roots = len(paths) > 1
    for given in paths:
        if not given.exists() and not given.is_symlink():
            raise FileNotFoundError(f"{given}: no such file or folder")
        if given.is_file():
            _consider(given, given.name, found, skipped, include, exclude, max_bytes, True)
            continue
        root = given.resolve()
        prefix = f"{given.resolve().name}/" if prefix_roots else ""
        _walk(root, root, prefix, set(), found, skipped, include, exclude, max_bytes)
    found.sort(key=lambda f: f.rel)
    return found, skipped


def _walk(
    root: Path,
    folder: Path,
    prefix: str,
    seen: set[Path],
    found: list[FileEntry],
    skipped: dict[str, str],
    include: list[str],
    exclude: list[str],
    max_bytes: int,
) -> None:
    real = folder.resolve()
    if real in seen:
        skipped[prefix + str(folder.relative_to(root)) + "/"] = (
            "symbolic link to a folder already walked (a loop or a duplicate)"
        )
        return
    seen.add(real)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as e:
        skipped[prefix + str(folder.relative_to(root)) + "/"] = f"unreadable folder ({e})"
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        rel = prefix + path.relative_to(root).as_posix()
        if entry.is_symlink():
            target = path.resolve()
            if not target.exists():
                skipped[rel] = "dangling symbolic link"
                continue
            if not target.is_relative_to(root):
                skipped[rel] = f"symbolic link out of the indexed folder (to {target})"
                continue
        if entry.is_dir(follow_symlinks=True):
            if not any(
                fnmatch.fnmatch(rel + "/", p) or fnmatch.fnmatch(entry.name, p) for p in exclude
            ):
                _walk(root, path, prefix, seen, found, skipped, include, exclude, max_bytes)
        elif entry.is_file(follow_symlinks=True):
            _consider(path, rel, found, skipped, include, exclude, max_bytes, False)


def _matches(rel: str, patterns: list[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(rel if "/" in p else name, p) for p in patterns)


def _consider(
    path: Path,
    rel: str,
    found: list[FileEntry],
    skipped: dict[str, str],
    include: list[str],
    exclude: list[str],
    max_bytes: int,
    explicit: bool,
) -> None:
    if exclude and _matches(rel, exclude):
        return
    kind = KINDS.get(path.suffix.lower())
    if include and not _matches(rel, include):
        return
    if kind is None:
        if not (explicit or include):  # other files in a folder are not documents
            return
        kind = "text"  # asked for by name or glob: read as text if it is text
    try:
        st = path.stat()
    except OSError as e:
        skipped[rel] = f"unreadable ({e.strerror})"
        return
    if st.st_size > max_bytes:
        skipped[rel] = f"too large ({st.st_size / 1e6:,.1f} MB; the limit is --max-file-mb)"
        return
    found.append(FileEntry(path, rel, kind, st.st_size, st.st_mtime_ns))


def read_text_file(path: Path) -> str:
    """The text of a text document; binary content is refused."""
    from searchain.retrieval.documents.binary_formats import UnreadableDocument

    data = path.read_bytes()
    if b"\x00" in data[:_SNIFF]:
        raise UnreadableDocument("binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Text files from older tools are often Windows-1252; control bytes mean binary.
        if sum(b < 9 or 13 < b < 32 for b in data[:_SNIFF]) > 8:
            raise UnreadableDocument("binary file, not text") from None
        return data.decode("cp1252", errors="replace")


PassageRow = tuple[str, str, str, dict[str, Any] | None]  # id, text, title, source


@dataclass(slots=True)
class Parsed:
    """What a parser worker sends back for one file: its passages as ``(id, text, title,
    source)`` rows (cheap to send), and how many lines or blocks it left out, by why. An
    HTML page comes back as its ``document`` instead, made into passages once its site's
    repeated blocks are known (:mod:`.repeated`)."""

    passages: list[PassageRow]
    dropped: dict[str, int]
    document: Document | None = None


def parse_job(job: ParseJob) -> Parsed:
    """Read one file (runs inside the sandbox)."""
    from searchain.retrieval.documents import binary_formats as bf
    from searchain.retrieval.documents import text_formats as tf

    path = Path(job.path)
    if job.kind == "table":
        docs = list(bf.parse_table(path, job.columns))
    elif job.kind == "pdf":
        docs = [bf.parse_pdf(path)]
    elif job.kind == "docx":
        docs = [bf.parse_docx(path)]
    else:
        parse = {"markdown": tf.parse_markdown, "rst": tf.parse_rst, "html": tf.parse_html}
        docs = [parse.get(job.kind, tf.parse_text)(read_text_file(path), path)]
    dropped = dict(Counter(d.why for doc in docs for d in doc.dropped))
    if job.kind == "html":
        return Parsed([], dropped, docs[0])
    return Parsed(passages_of(docs, job.rel, job.max_words, job.kind), dropped)


def passages_of(
    docs: list[Document], rel: str, max_words: int | None, kind: str
) -> list[PassageRow]:
    """The passages of a file's documents as rows; a file with none is unreadable."""
    from searchain.retrieval.documents.binary_formats import UnreadableDocument

    out = []
    for doc in docs:
        for p in to_passages(doc, rel, max_words):
            out.append((p.id, p.text, p.title, p.source))
    if not out:
        raise UnreadableDocument(_NO_TEXT.get(kind, "no text found (empty)"))
    return out


_NO_TEXT = {
    "pdf": "no text found (a scanned PDF needs OCR, which is not done)",
    "docx": "no text found (no paragraph or table has text)",
    "markdown": "no text found (only headings, or empty)",
    "rst": "no text found (only section titles, or empty)",
    "html": "no text found (no visible text in the page)",
}
