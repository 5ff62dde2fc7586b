"""A PDF's pages as a reader sees them: PDFium's text, without the page furniture.

PDFium (``pypdfium2``, Chrome's PDF engine) was chosen by measurement: against poppler's
``pdftotext`` it keeps the spaces between words on the PDFs people have (pdfTeX, dblatex
through xdvipdfmx, groff, cairo, Ghostscript, FOP, ReportLab) where pypdf glues them on
many pages (``bench/documents_fidelity.py``; docs/benchmarks.md). Its text then loses:

* running headers and footers: a line among the first or last two of a page whose text,
  digits aside, comes back on at least three pages of the document, or that is made of the
  document's own outline titles (dblatex's ``CHAPTER 8. MORE EXAMPLES 8.11. MULTIARCH``);
* page numbers (``12``, ``xii``, ``Page 3 of 10``) at the top or bottom of a page;
* table-of-contents lines: dot leaders ending in a page number (``1.2 Setup . . . . 5``);
* hyphens at line ends before a lower-case continuation (``pack-``/``age`` is ``package``).

Lines are gathered into paragraphs: a line well shorter than the page's full lines, ending
a sentence, ends its paragraph, and so does an outline title standing on its own line.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

EXTRACTOR = "pypdfium2"

_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(
    r"^(?:page\s+)?(?:\d+|[ivxlcdm]+)(?:\s*(?:/|of)\s*\d+)?$|^[-–—]\s*\d+\s*[-–—]$", re.I
)
_LEADER = re.compile(r"(?:\.\s?){4,}\s*(?:\d+|[ivxlcdm]+)?\s*$|(?:…\s?){2,}\s*\d*\s*$", re.I)
_NUMBERING = re.compile(
    r"\b(?:chapter|appendix|section|part|kapitel|chapitre|anhang|annexe)\b|"
    r"\b(?:[A-Z]|\d+)(?:\.\d+)*\.?(?=\s|$)|[…·|]|\.{3}",
    re.I,
)
_HYPHEN_END = re.compile(r"(?<=[^\W\d_]{2})-$")
_SENTENCE_END = re.compile(r"[.!?:;)\"”]$")


def extractor_version() -> str:
    """``pypdfium2 <version> (PDFium <build>)``: what the manifest records."""
    import pypdfium2

    info = pypdfium2.version
    return f"{EXTRACTOR} {info.PYPDFIUM_INFO} (PDFium {info.PDFIUM_INFO})"


def page_lines(raw: str) -> list[str]:
    """A page's text from PDFium as lines; a soft hyphen PDFium marks (U+FFFE) joins the
    word it splits."""
    raw = re.sub("\ufffe(?:\r?\n)?", "", raw)
    return [" ".join(line.split()) for line in re.split(r"\r\n|\r|\n", raw)]


def clean_pages(pages: Sequence[list[str]], titles: Iterable[str]) -> list[list[str]]:
    """The pages' lines without running headers and footers, page numbers and
    table-of-contents leaders (see the module's description)."""
    folded = {_fold(t) for t in titles if _fold(t)}
    edge_count: Counter[str] = Counter()
    for lines in pages:
        kept = [line for line in lines if line]
        for line in {_shape(x) for x in kept[:2] + kept[-2:]}:
            edge_count[line] += 1
    repeated = {s for s, n in edge_count.items() if n >= 3} if len(pages) >= 4 else set()
    out = []
    for lines in pages:
        kept = [line for line in lines if line]
        edges = set(range(min(2, len(kept)))) | set(range(max(0, len(kept) - 2), len(kept)))
        page = []
        for i, line in enumerate(kept):
            if _LEADER.search(line):
                continue
            if i in edges and (
                _shape(line) in repeated
                or _PAGE_NUMBER.match(line)
                or _made_of_titles(line, folded)
            ):
                continue
            page.append(line)
        out.append(page)
    return out


def paragraphs_of(lines: list[str], titles: Iterable[str] = ()) -> str:
    """The lines of a page as text: paragraphs separated by blank lines, a line-end hyphen
    joined to its continuation."""
    folded = {_fold(t) for t in titles if _fold(t)}
    widths = sorted(len(line) for line in lines)
    full = widths[int(len(widths) * 0.8)] if widths else 0
    paras: list[list[str]] = [[]]
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        current = paras[-1]
        if current and _HYPHEN_END.search(current[-1]) and line[:1].islower():
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
