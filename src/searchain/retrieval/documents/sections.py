"""A document as a list of sections, and sections as passages of about ``max_words`` words.

Every parser (``text_formats``, ``binary_formats``) turns a file into a :class:`Document`:
its title and its blocks (paragraphs, lists, code, table rows, PDF pages), each with the
heading path it sits under, its page and its character offsets. :func:`to_passages` then
packs consecutive blocks that share a heading and a page into passages of at most
``max_words`` words (a longer block is split on sentence ends), so a passage never straddles
two sections and always says where it came from.
"""

from __future__ import annotations

import re
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


@dataclass(slots=True, frozen=True)
class Dropped:
    """Text a parser read and left out of the passages (page furniture, navigation), kept
    so the manifest can say what was dropped and why."""

    why: str
    text: str
    page: int | None = None


@dataclass(slots=True)
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)
    doc_id: str | None = None  # tables: the row's own id column
    dropped: list[Dropped] = field(default_factory=list)


# A caption ("Table 1.4. ...", "Example 10.15. ...") or a lead-in ending in a colon introduces
# what follows it: it opens the next passage rather than close the one before.
LEAD_WORDS = 30
_CAPTION = re.compile(
    r"^(?:Table|Example|Figure|Fig\.|Listing|Tableau|Exemple|Tabelle|Beispiel|Abbildung)"
    r"\s+[\dA-Z]+(?:[.-]\d+)*[.:]?\s",
    re.I,
)


def to_passages(doc: Document, path: str, max_words: int | None) -> Iterator[Passage]:
    """The passages of ``doc`` (read from ``path``, relative to the indexed root).

    Ids are ``<path>#<n>``, stable while the file is unchanged. The title is the document's
    title followed by the heading path, so both BM25 and the LLM (which sees passages as
    ``(Title: ...) text``) know which section a passage belongs to. Consecutive blocks of
    one section (and page) share a passage up to ``max_words``; a caption or lead-in that
    would end a passage opens the next one instead, and before a block too long for a
    passage it leads that block's first piece (which then holds up to ``LEAD_WORDS`` words
    more than ``max_words``).
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

    for block in doc.blocks:
        size = len(block.text.split())
        same_place = group and _place(group[0]) == _place(block)
        words = sum(len(b.text.split()) for b in group)
        if max_words is not None and size > max_words:
            lead = _lead(group) if same_place else []
            yield from flush()
            pieces = list(_split_block(doc, path, block, max_words, n, lead))
            yield from pieces
            n += len(pieces)
            continue
        if group and (not same_place or (max_words is not None and words + size > max_words)):
            lead = _lead(group) if same_place else []
            yield from flush()
            group.extend(lead)
        group.append(block)
    yield from flush()


def _place(block: Block) -> tuple[object, ...]:
    return (block.heading, block.page, block.row)


def _lead(group: list[Block]) -> list[Block]:
    """The captions and lead-ins that end ``group``, taken out of it (at most
    ``LEAD_WORDS`` words: a passage grows past ``max_words`` by no more)."""
    lead: list[Block] = []
    words = 0
    while group and _introduces(group[-1].text):
        size = len(group[-1].text.split())
        if words + size > LEAD_WORDS:
            break
        lead.insert(0, group.pop())
        words += size
    return lead


def _introduces(text: str) -> bool:
    return len(text.split()) < LEAD_WORDS and (
        bool(_CAPTION.match(text)) or text.rstrip().endswith(":")
    )


def _split_block(
    doc: Document, path: str, block: Block, max_words: int, first_n: int, lead: list[Block]
) -> Iterator[Passage]:
    cursor = 0
    for i, piece in enumerate(split_text(block.text, max_words)):
        at = block.text.find(piece[:50], cursor)  # pieces are stripped, in order
        at = cursor if at < 0 else at
        cursor = at + len(piece)
        part = Block(
            piece, block.start + at, block.start + cursor, block.heading, block.page, block.row
        )
        first, text = part, piece
        if i == 0 and lead:  # the caption or lead-in stays with the start of what it introduces
            first, text = lead[0], "\n\n".join([*(b.text for b in lead), piece])
        pid = f"{doc.doc_id}#{i}" if doc.doc_id is not None else f"{path}#{first_n + i}"
        yield Passage(
            pid, text, _title(doc.title, block.heading), None, _source(path, first, part.end)
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
