"""A document as a list of sections, and sections as passages of about ``max_words`` words.

Every parser (``text_formats``, ``binary_formats``) turns a file into a :class:`Document`:
its title and its blocks (paragraphs, lists, code, table rows, PDF pages), each with the
heading path it sits under, its page and its character offsets. :func:`to_passages` then
packs consecutive blocks that share a heading and a page into passages of at most
``max_words`` words (a longer block is split on sentence ends), so a passage never straddles
two sections and always says where it came from.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from searchain.retrieval.splitting import split_text
from searchain.types import Passage


@dataclass(slots=True)
class Block:
    """A run of text from a document: ``start``/``end`` are character offsets into the
    document's text (a PDF's: into its page's extracted text)."""

    text: str
    start: int
    end: int
    heading: tuple[str, ...] = ()
    page: int | None = None
    row: int | None = None  # CSV/Parquet: 1-based data row


@dataclass(slots=True)
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)
    doc_id: str | None = None  # tables: the row's own id column


def to_passages(doc: Document, path: str, max_words: int | None) -> Iterator[Passage]:
    """The passages of ``doc`` (read from ``path``, relative to the indexed root).

    Ids are ``<path>#<n>``, stable while the file is unchanged. The title is the document's
    title followed by the heading path, so both BM25 and the LLM (which sees passages as
    ``(Title: ...) text``) know which section a passage belongs to.
    """
    n = 0
    group: list[Block] = []

    def flush() -> Iterator[Passage]:
        nonlocal n
        if not group:
            return
        first = group[0]
        text = "\n\n".join(b.text for b in group)
        pid = doc.doc_id if doc.doc_id is not None else f"{path}#{n}"
        yield Passage(
            pid, text, _title(doc.title, first.heading), None, _source(path, first, group[-1].end)
        )
        n += 1
        group.clear()

    words = 0
    for block in doc.blocks:
        size = len(block.text.split())
        if max_words is not None and size > max_words:
            yield from flush()
            words = 0
            yield from _split_block(doc, path, block, max_words, n)
            n += len(split_text(block.text, max_words))
            continue
        same_place = group and (group[0].heading, group[0].page, group[0].row) == (
            block.heading,
            block.page,
            block.row,
        )
        if group and (not same_place or (max_words is not None and words + size > max_words)):
            yield from flush()
            words = 0
        group.append(block)
        words += size
    yield from flush()


def _split_block(
    doc: Document, path: str, block: Block, max_words: int, first_n: int
) -> Iterator[Passage]:
    cursor = 0
    for i, piece in enumerate(split_text(block.text, max_words)):
        at = block.text.find(piece[:50], cursor)  # pieces are stripped, in order
        at = cursor if at < 0 else at
        cursor = at + len(piece)
        part = Block(
            piece, block.start + at, block.start + cursor, block.heading, block.page, block.row
        )
        pid = f"{doc.doc_id}#{i}" if doc.doc_id is not None else f"{path}#{first_n + i}"
        yield Passage(
            pid, piece, _title(doc.title, block.heading), None, _source(path, part, part.end)
        )


def _title(title: str, heading: tuple[str, ...]) -> str:
    parts = [title] if title else []
    for h in heading:
        if h and h != (parts[-1] if parts else None):
            parts.append(h)
    return " › ".join(parts)


def _source(path: str, first: Block, end: int) -> dict[str, object]:
    src: dict[str, object] = {"path": path}
    if first.page is not None:
        src["page"] = first.page
    if first.row is not None:
        src["row"] = first.row
    if first.heading:
        src["heading"] = list(first.heading)
    src["start"], src["end"] = first.start, end
    return src


def paragraphs(
    text: str, heading: tuple[str, ...] = (), page: int | None = None, offset: int = 0
) -> list[Block]:
    """Blank-line-separated paragraphs of ``text`` as blocks, with their offsets."""
    blocks = []
    start = None
    pos = 0
    for line in text.splitlines(keepends=True):
        if line.strip():
            if start is None:
                start = pos
        elif start is not None:
            blocks.append(_block(text, start, pos, heading, page, offset))
            start = None
        pos += len(line)
    if start is not None:
        blocks.append(_block(text, start, pos, heading, page, offset))
    return blocks


def _block(
    text: str, start: int, end: int, heading: tuple[str, ...], page: int | None, offset: int
) -> Block:
    raw = text[start:end]
    lead = len(raw) - len(raw.lstrip())
    body = raw.strip()
    return Block(body, offset + start + lead, offset + start + lead + len(body), heading, page)
