"""A PDF's pages as a reader sees them: PDFium's text, without the page furniture.

PDFium (``pypdfium2``, Chrome's PDF engine) was chosen by measurement: against poppler's
``pdftotext`` it keeps the spaces between words on the PDFs people have (pdfTeX, dblatex
through xdvipdfmx, groff, cairo, Ghostscript, FOP, ReportLab) where pypdf glues them on
many pages (``bench/documents_fidelity.py``; docs/benchmarks.md). Its text then loses:

* running headers and footers: a line among the first or last two of a page whose text,
  digits aside, comes back there on at least three pages of the document (and there more
  often than inside pages), or that is made of the document's own outline titles (dblatex's
  ``CHAPTER 8. MORE EXAMPLES 8.11. MULTIARCH``) but for the title of a section that starts
  on that page;
* page numbers (``12``, ``xii``, ``Page 3 of 10``) at the top or bottom of a page;
* table-of-contents and index lines: dot leaders ending in a page number or a list of them
  (``1.2 Setup . . . . 5``, ``abs . . . . 25, 26, 69``);
* a page whose every line comes back, in order, on the next (a slide revealed step by
  step: each step would repeat the same passage);
* hyphens at line ends: PDFium marks the ones it takes for hyphenation, and the word is
  joined (``dis-``/``tribution``), unless the document writes it with its hyphen elsewhere
  and never without (``dpkg-``/``buildpackage`` stays ``dpkg-buildpackage``); another
  hyphen at a line end before a lower-case continuation joins too, and so does a path or
  URL that dblatex breaks after a slash with a hyphen (``/usr/share/-``/``doc``);

Before that, :mod:`.pdf_spacing` puts the spaces between words where the glyphs' places
say so and PDFium's text does not.

Lines are gathered into paragraphs: a line well shorter than the page's full lines, ending
a sentence, ends its paragraph, and so does an outline title standing on its own line.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import pairwise

EXTRACTOR = "pypdfium2"

_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(
    r"^(?:page\s+)?(?:\d+|[ivxlcdm]+)(?:\s*(?:/|of)\s*\d+)?$|^[-–—]\s*(?:\d+|[ivxlcdm]+)\s*[-–—]$",
    re.I,
)
# Dot leaders before a page number, or a list of them (a back-of-book index: ``abs . . 25, 69``)
_LEADER = re.compile(
    r"(?:\.\s?){4,}\s*(?:(?:\d+|[ivxlcdm]+)(?:,\s*(?:\d+|[ivxlcdm]+))*)?\s*$|(?:…\s?){2,}\s*\d*\s*$",
    re.I,
)
_NUMBERING = re.compile(
    r"\b(?:chapter|appendix|section|part|kapitel|chapitre|anhang|annexe)\b|"
    r"\b(?:[A-Z]|\d+)(?:\.\d+)*\.?(?=\s|$)|[…·|]|\.{3}",
    re.I,
)
_HYPHEN_END = re.compile(r"(?<=[^\W\d_]{2})-$")
# U+FB00-FB06 (ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ): PDFium spells most ligature glyphs out, but not where a
# PDF maps the glyph to the ligature's own code point.
_LIGATURES = {c: unicodedata.normalize("NFKC", chr(c)) for c in range(0xFB00, 0xFB07)}
_SOFT_HYPHEN = re.compile(r"([^\W\d_]*)\ufffe(?:\r?\n)?([^\W\d_]*)")
_SPLIT = re.compile(r"\S*\ufffe(?:\r?\n)?\S*")  # a word split at a line end
_COMPOUND = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)+")
_WORD = re.compile(r"[^\W\d_]+")
_SENTENCE_END = re.compile(r"[.!?:;)\"”]$")


def extractor_version() -> str:
    """``pypdfium2 <version> (PDFium <build>)``: what the manifest records."""
    import pypdfium2

    info = pypdfium2.version
    return f"{EXTRACTOR} {info.PYPDFIUM_INFO} (PDFium {info.PDFIUM_INFO})"


def compounds(texts: Iterable[str]) -> set[str]:
    """The hyphenated words a document writes (``dpkg-buildpackage``, lower case) and never
    writes joined: where one is split at a line end, its hyphen is the word's own."""
    hyphenated: set[str] = set()
    joined: set[str] = set()
    for text in texts:
        hyphenated.update(m.group(0).lower() for m in _COMPOUND.finditer(text))
        joined.update(w.lower() for w in _WORD.findall(_SPLIT.sub(" ", text)))
    return {w for w in hyphenated if w.replace("-", "") not in joined}


def page_lines(raw: str, compounds: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """A page's text from PDFium as lines. A hyphen PDFium marks as a line-end one (U+FFFE)
    joins the word it splits, but for one of ``compounds`` whose hyphen stays; a Latin
    ligature is its letters (``ﬁle`` is searched as ``file``)."""

    def mend(m: re.Match[str]) -> str:
        left, right = m.group(1), m.group(2)
        return f"{left}-{right}" if f"{left}-{right}".lower() in compounds else left + right

    raw = _SOFT_HYPHEN.sub(mend, raw).translate(_LIGATURES)
    return [" ".join(line.split()) for line in re.split(r"\r\n|\r|\n", raw)]


# Why a line is not text, as the manifest records it.
HEADER = "running header or footer"
PAGE_NUMBER = "page number"
CONTENTS = "table of contents"
OVERLAY = "earlier step of the next page (a slide revealed step by step)"


def clean_pages(
    pages: Sequence[list[str]],
    titles: Iterable[str],
    opening: dict[int, list[str]] | None = None,
) -> tuple[list[list[str]], list[tuple[int, str, str]]]:
    """The pages' lines without running headers and footers, page numbers and
    table-of-contents leaders (see the module's description), and what was dropped:
    ``(page, why, line)``, pages counted from 1. ``opening``: per page, the outline titles
    whose sections start there; such a title alone on its line is that section's heading,
    kept even at the top of the page."""
    folded = fold_titles(titles)
    opening = opening or {}
    repeated = _running_lines(pages) if len(pages) >= 4 else set()
    out, dropped = [], []
    for number, lines in enumerate(pages, 1):
        kept = [line for line in lines if line]
        edges = set(range(min(2, len(kept)))) | set(range(max(0, len(kept) - 2), len(kept)))
        page = []
        headings = {_fold(t) for t in opening.get(number, ())}
        for i, line in enumerate(kept):
            why = _furniture(line, i in edges, repeated, folded)
            if why == HEADER and _fold(line) in headings and _shape(line) not in repeated:
                why = None
            if why:
                dropped.append((number, why, line))
            else:
                page.append(line)
        out.append(page)
    for number in _overlays(out):
        dropped += [(number, OVERLAY, line) for line in out[number - 1]]
        out[number - 1] = []
    return out, dropped


def _overlays(pages: list[list[str]]) -> list[int]:
    """The pages (from 1) whose every line comes back, in order, on the next page: the
    builds of a slide revealed step by step (Beamer's overlays, mom's slides). Their text
    is all on the next page, so leaving them out loses none; kept, each step would be one
    more copy of the same passage."""
    found = []
    for number, (page, after) in enumerate(pairwise(pages), 1):
        rest = iter(after)
        if page and all(line in rest for line in page):  # ``in`` consumes: in order
            found.append(number)
    return found


def _running_lines(pages: Sequence[list[str]]) -> set[str]:
    """The shapes of the lines that recur among the first or last two lines of three pages
    or more, and stand there more often than inside pages: a section heading that happens
    to open a few pages (R's ``Arguments``) is found inside many more."""
    edge_count: Counter[str] = Counter()
    body_count: Counter[str] = Counter()
    for lines in pages:
        kept = [line for line in lines if line]
        edges = {_shape(x) for x in kept[:2] + kept[-2:]}
        edge_count.update(edges)
        body_count.update({_shape(x) for x in kept[2:-2]} - edges)
    return {s for s, n in edge_count.items() if n >= 3 and n > body_count[s]}


def _furniture(line: str, at_edge: bool, repeated: set[str], folded: set[str]) -> str | None:
    """Why ``line`` is page furniture rather than text, or ``None``."""
    if _LEADER.search(line):
        return CONTENTS
    if not at_edge:
        return None
    if _PAGE_NUMBER.match(line):
        return PAGE_NUMBER
    if _shape(line) in repeated or _made_of_titles(line, folded):
        return HEADER
    return None


def fold_titles(titles: Iterable[str]) -> frozenset[str]:
    """The outline's titles as :func:`paragraphs_of` compares lines with them (folded once
    per document: a 2,400-page manual has 1,400 titles)."""
    return frozenset(f for f in map(_fold, titles) if f)


def paragraphs_of(lines: list[str], folded: frozenset[str] = frozenset()) -> str:
    """The lines of a page as text: paragraphs separated by blank lines, a line-end hyphen
    joined to its continuation; ``folded``: the outline's titles (:func:`fold_titles`), each
    of which, alone on its line, is a paragraph of its own."""
    widths = sorted(len(line) for line in lines)
    full = widths[int(len(widths) * 0.8)] if widths else 0
    paras: list[list[str]] = [[]]
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        current = paras[-1]
        if current and (
            (_HYPHEN_END.search(current[-1]) and line[:1].islower())
            or current[-1].endswith("/-")  # a path or URL broken after a slash
        ):
            current[-1] = current[-1][:-1] + line
        else:
            if _fold(line) in folded and current:
                paras.append(current := [])
            current.append(line)
        last = current[-1]
        ends = (_SENTENCE_END.search(last) and len(last) < 0.75 * full) or _fold(last) in folded
        if ends and nxt:
            paras.append([])
    return "\n\n".join("\n".join(p) for p in paras if p)


def _shape(line: str) -> str:
    """A line as a repeated header compares: lower case, any number as ``#``."""
    return _DIGITS.sub("#", line.lower())


def _fold(text: str) -> str:
    """A title or line without its numbering (``Chapter 8.``, ``8.11.``), lower case."""
    return " ".join(_NUMBERING.sub(" ", text).lower().split())


def _made_of_titles(line: str, folded: set[str]) -> bool:
    """Whether ``line`` is one or more outline titles with their numbering (a running
    header), possibly cut short by an ellipsis."""
    rest = _fold(line)
    if not rest or not folded:
        return False
    for title in sorted(folded, key=len, reverse=True):
        if title and title in rest:
            rest = rest.replace(title, " ")
    rest = " ".join(rest.split())
    if not rest:
        return True
    return line.rstrip().endswith(("…", "...")) and any(t.startswith(rest) for t in folded)
