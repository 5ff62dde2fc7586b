"""PDF (pypdf: text per page, the outline as headings), Word .docx (python-docx: heading
styles) and tables (CSV, Parquet: one document per row).

These parse untrusted files, so they run in the sandboxed workers of :mod:`.sandbox`
(memory and time bounded); the checks here catch what can be seen before parsing: an
encrypted PDF, a .docx whose zip would inflate past a bound.
"""

from __future__ import annotations

import csv
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchain.retrieval.documents.sections import Block, Document, paragraphs

# A .docx whose parts inflate past this, or 100x past their compressed size, is a zip bomb
# as far as indexing is concerned (real documents with images stay far below either).
DOCX_MAX_INFLATED = 256 << 20
DOCX_MAX_RATIO = 100


class UnreadableDocument(Exception):
    """A file that cannot be indexed, for a reason a person can act on ("encrypted")."""


def parse_pdf(path: Path) -> Document:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableDocument("encrypted PDF (needs a password)")
        pages = reader.pages
        outline = _outline_by_page(reader)
        title = ((reader.metadata or {}).get("/Title") or "").strip() or path.stem
    except UnreadableDocument:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise UnreadableDocument(f"not a readable PDF ({type(e).__name__}: {e})") from None
    blocks: list[Block] = []
    heading: tuple[str, ...] = ()
    for number, page in enumerate(pages, 1):
        heading = outline.get(number, heading)
        try:
            text = page.extract_text() or ""
        except (PdfReadError, ValueError, KeyError, TypeError) as e:
            raise UnreadableDocument(f"page {number} unreadable ({e})") from None
        # PDF text has a line break per printed line: a paragraph per blank line when the
        # writer left them, else the page's text, cut into passages by sentence ends.
        blocks += paragraphs(text, heading, page=number)
    return Document(title=str(title), blocks=blocks)


def _outline_by_page(reader: Any) -> dict[int, tuple[str, ...]]:
    """``{page: heading path}`` for the pages where an outline (bookmark) entry starts."""
    starts: dict[int, tuple[str, ...]] = {}

    def walk(items: list[Any], path: tuple[str, ...]) -> None:
        last: tuple[str, ...] = path
        for item in items:
            if isinstance(item, list):
                walk(item, last)
                continue
            try:
                page = reader.get_destination_page_number(item) + 1
            except Exception:  # a broken destination: the heading is skipped, not the file
                continue
            last = (*path, str(item.title).strip())
            starts.setdefault(page, last)

    try:
        walk(reader.outline, ())
    except Exception:  # a malformed outline only costs the headings
        return {}
    return starts


def check_docx(path: Path) -> None:
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, OSError) as e:
        raise UnreadableDocument(f"not a readable .docx ({e})") from None
    inflated = sum(i.file_size for i in infos)
    packed = sum(i.compress_size for i in infos) or 1
    if inflated > DOCX_MAX_INFLATED or (
        inflated > (8 << 20) and inflated / packed > DOCX_MAX_RATIO
    ):
        raise UnreadableDocument(
            f"decompression bomb: {packed:,} bytes inflate to {inflated:,} (ratio "
            f"{inflated / packed:.0f}); not opened"
        )


def parse_docx(path: Path) -> Document:
    check_docx(path)
    import docx

    try:
        document = docx.Document(str(path))
    except Exception as e:  # python-docx raises a zoo of types for broken packages
        raise UnreadableDocument(f"not a readable .docx ({type(e).__name__}: {e})") from None
    stack: list[tuple[int, str]] = []
    blocks: list[Block] = []
    title = (document.core_properties.title or "").strip()
    pos = 0
    for para in document.paragraphs:
        body = " ".join(para.text.split())
        if not body:
            continue
        style = (para.style.name if para.style is not None else "") or ""
        level = _heading_level(style)
        if level is not None:
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, body))
            if not title and level <= 1:
                title = body
            continue
        blocks.append(Block(body, pos, pos + len(body), tuple(h for _, h in stack)))
        pos += len(body) + 2
    for table in document.tables:
        for row in table.rows:
            body = " | ".join(" ".join(c.text.split()) for c in row.cells)
            if body.strip(" |"):
                blocks.append(Block(body, pos, pos + len(body), tuple(h for _, h in stack)))
                pos += len(body) + 2
    return Document(title=title or path.stem, blocks=blocks)


def _heading_level(style: str) -> int | None:
    if style == "Title":
        return 0
    if style.startswith("Heading "):
        tail = style.removeprefix("Heading ").strip()
        return int(tail) if tail.isdigit() else None
    return None


def parse_table(path: Path, columns: dict[str, str | None]) -> Iterator[Document]:
    """One document per row: ``columns`` names the text column and, optionally, the title
    and id columns (``{"text": ..., "title": ..., "id": ...}``)."""
    rows = _parquet_rows(path) if path.suffix.lower() == ".parquet" else _csv_rows(path)
    header, records = next(rows), rows
    text_col = columns.get("text") or "text"
    if text_col not in header:
        raise UnreadableDocument(
            f"no column {text_col!r} (columns: {', '.join(map(str, header))}); "
            "name the text column with --text-column"
        )
    title_col = columns.get("title") or ("title" if "title" in header else None)
    id_col = columns.get("id") or ("id" if "id" in header else None)
    for number, record in enumerate(records, 1):
        text = str(record.get(text_col) or "").strip()
        if not text:
            continue
        title = str(record.get(title_col) or "") if title_col else ""
        doc_id = str(record[id_col]) if id_col and record.get(id_col) not in (None, "") else None
        block = Block(text, 0, len(text), row=number)
        yield Document(title=title or path.stem, blocks=[block], doc_id=doc_id)


def _csv_rows(path: Path) -> Iterator[Any]:
    csv.field_size_limit(16 << 20)
    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f)
        yield reader.fieldnames or []
        try:
            yield from reader
        except csv.Error as e:
            raise UnreadableDocument(f"invalid CSV at line {reader.line_num} ({e})") from None


def _parquet_rows(path: Path) -> Iterator[Any]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UnreadableDocument(
            "reading Parquet needs pyarrow (pip install 'searchain[documents]')"
        ) from None
    try:
        table = pq.ParquetFile(str(path))
    except Exception as e:
        raise UnreadableDocument(f"not a readable Parquet file ({e})") from None
    yield table.schema_arrow.names
    for batch in table.iter_batches(batch_size=1024):
        yield from batch.to_pylist()
