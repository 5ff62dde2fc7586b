"""PDF (PDFium: text per page, the outline as headings), Word .docx (python-docx: heading
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

from searchain.retrieval.documents.sections import Block, Document, Dropped, paragraphs

# A .docx whose parts inflate past this, or 100x past their compressed size, is a zip bomb
# as far as indexing is concerned (real documents with images stay far below either).
DOCX_MAX_INFLATED = 256 << 20
DOCX_MAX_RATIO = 100


class UnreadableDocument(Exception):
    """A file that cannot be indexed, for a reason a person can act on ("encrypted")."""


def parse_pdf(path: Path) -> Document:
    """A PDF's pages through PDFium, without running headers, footers, page numbers and
    table-of-contents leaders (:mod:`.pdf_text`); the outline (bookmarks) gives headings."""
    import pypdfium2 as pdfium

    from searchain.retrieval.documents import pdf_text

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as e:
        if "password" in str(e).lower():
            raise UnreadableDocument("encrypted PDF (needs a password)") from None
        raise UnreadableDocument(f"not a readable PDF ({e})") from None
    try:
        title = (pdf.get_metadata_dict().get("Title") or "").strip() or path.stem
        outline, titles, opening = _outline_by_page(pdf)
        texts = [_page_text(pdf, i) for i in range(len(pdf))]
    finally:
        pdf.close()
    compounds = pdf_text.compounds(texts)
    raw = [pdf_text.page_lines(text, compounds) for text in texts]
    pages, dropped = pdf_text.clean_pages(raw, titles, opening)
    blocks: list[Block] = []
    heading: tuple[str, ...] = ()
    folded = pdf_text.fold_titles(titles)
    for number, lines in enumerate(pages, 1):
        heading = outline.get(number, heading)
        # Paragraphs from the lines' lengths and ends (PDF text has no paragraph marks).
        blocks += paragraphs(pdf_text.paragraphs_of(lines, folded), heading, page=number)
    furniture = [Dropped(why, line, page) for page, why, line in dropped]
    return Document(title=str(title), blocks=blocks, dropped=furniture)


def _page_text(pdf: Any, index: int) -> str:
    import pypdfium2 as pdfium

    from searchain.retrieval.documents.pdf_spacing import spaced_text

    try:
        page = pdf[index]
        textpage = page.get_textpage()
        try:
            return spaced_text(textpage.raw, str(textpage.get_text_range()))
        finally:
            textpage.close()
            page.close()
    except pdfium.PdfiumError as e:
        raise UnreadableDocument(f"page {index + 1} unreadable ({e})") from None


def _outline_by_page(
    pdf: Any,
) -> tuple[dict[int, tuple[str, ...]], list[str], dict[int, list[str]]]:
    """``{page: heading path}`` for the pages where an outline (bookmark) entry starts,
    every title of the outline, and ``{page: titles of the entries starting there}``."""
    starts: dict[int, tuple[str, ...]] = {}
    opening: dict[int, list[str]] = {}
    titles: list[str] = []
    path: list[str] = []
    try:
        for item in pdf.get_toc(max_depth=8):
            title = " ".join((item.get_title() or "").split())
            del path[item.level :]
            path.append(title)
            titles.append(title)
            dest = item.get_dest()
            index = dest.get_index() if dest is not None else None
            if index is not None and title:
                starts.setdefault(index + 1, tuple(path))
                opening.setdefault(index + 1, []).append(title)
    except Exception:  # a malformed outline only costs the headings
        pass
    return starts, titles, opening


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
