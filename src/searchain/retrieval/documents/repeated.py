"""Blocks repeated across the pages of one site: navigation its markup does not mark.

HTML navigation is first left out by its markup (``text_formats``: DocBook's navheader,
Sphinx's related bar, ARIA roles). A site whose generator marks nothing still repeats its
navigation bar, banner and footer on every page, at the same places: before the page's
first heading, or after its last paragraph. So, over the HTML pages of one folder indexed
together (a site):

* a page's *edge blocks* are its short blocks (``MAX_WORDS`` words at most) before its
  first heading, and the short blocks after its last long one; at most ``EDGE`` of each;
* an edge block whose text (case and spacing aside) is an edge block of at least
  ``MIN_PAGES`` pages and ``MIN_SHARE`` of the folder's pages is *repeated*, and is left
  out of every page of the folder where it stands at an edge.

Content survives by construction: a block inside the page (an admonition's "Note", a
table's header row) is never at an edge; a long block never counts; what is dropped is
named in the index's manifest (``documents.json``), with the number of pages it stood on.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping

from searchain.retrieval.documents.sections import Block, Document, Dropped

EDGE = 40
MAX_WORDS = 40
MIN_PAGES = 3
MIN_SHARE = 0.3
WHY = "repeated on the site's pages (navigation, banner or footer)"


def fingerprint(text: str) -> str:
    """A block's text, case and spacing aside, as a short hash."""
    return hashlib.sha1(" ".join(text.lower().split()).encode()).hexdigest()[:16]


def folder_of(rel: str) -> str:
    """The folder of a file as indexed (``docs/a.html`` is in ``docs``)."""
    return rel.rpartition("/")[0]


def edge_prints(doc: Document) -> dict[str, str]:
    """``{fingerprint: text}`` of the page's edge blocks (see the module's description)."""
    return {fingerprint(b.text): b.text for b in _lead(doc.blocks) + _tail(doc.blocks)}


def repeated_prints(pages: Mapping[str, Iterable[str]]) -> dict[str, int]:
    """``{fingerprint: pages}`` of the edge blocks repeated across one folder's pages;
    ``pages``: each page's edge fingerprints."""
    count: Counter[str] = Counter()
    for prints in pages.values():
        count.update(set(prints))
    least = max(MIN_PAGES, MIN_SHARE * len(pages))
    return {p: n for p, n in count.items() if n >= least}


def strip(doc: Document, repeated: Mapping[str, object]) -> Document:
    """``doc`` without its edge blocks that are ``repeated``; they go to ``doc.dropped``."""
    if not repeated:
        return doc
    edges = {id(b) for b in _lead(doc.blocks) + _tail(doc.blocks)}
    kept: list[Block] = []
    for block in doc.blocks:
        if id(block) in edges and fingerprint(block.text) in repeated:
            doc.dropped.append(Dropped(WHY, block.text))
        else:
            kept.append(block)
    doc.blocks = kept
    return doc


def _short(block: Block) -> bool:
    return len(block.text.split()) <= MAX_WORDS


def _lead(blocks: list[Block]) -> list[Block]:
    """The short blocks before the page's first heading (at most ``EDGE``)."""
    lead = []
    for block in blocks[:EDGE]:
        if block.heading:
            break
        if _short(block):
            lead.append(block)
    return lead


def _tail(blocks: list[Block]) -> list[Block]:
    """The short blocks ending the page, walking back from its end to its last long block
    (at most ``EDGE``)."""
    tail = []
    for block in reversed(blocks[-EDGE:]):
        if not _short(block):
            break
        tail.append(block)
    return tail
