"""Plain text, Markdown, reStructuredText and HTML, split by their own structure.

Markdown is parsed with markdown-it-py (CommonMark): each top-level block keeps its source
text and line span, and headings give the heading path. reStructuredText's sections are
found by their underlines (an optional overline too; levels in order of first use, as
docutils assigns them) — no docutils, whose full parser and directives are far more than
splitting needs. HTML goes through the standard library's tolerant parser, with the same
skip rules (scripts, navigation, footers) as LLM-URL's page reader.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from searchain.retrieval.documents.sections import Block, Document, Dropped, paragraphs
from searchain.retrieval.llm_url.html_text import SKIP_TAGS

_HEADING_TAGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_HTML_BLOCKS = {
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "tr",
    "table",
    "section",
    "article",
    "blockquote",
    "pre",
    "figure",
    "br",
    "hr",
    "caption",
    "main",
    "body",
}
# Page furniture that site generators mark as such (DocBook's navheader/navfooter, Publican's
# docnav and banner, Sphinx's related bar and sidebar, ARIA roles): left out of the passages.
_NAV_MARKS = set(
    "navheader navfooter docnav navbar navigation nav breadcrumb breadcrumbs sphinxsidebar "
    "related footer header banner menu skip-link headerlink toc".split()
)
_NAV_ROLES = {"navigation", "banner", "contentinfo", "search"}
NAVIGATION = "navigation marked in the page's markup"
_VOID = set("area base br col embed hr img input link meta source track wbr".split())
_RST_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+:._])\1{2,}\s*$")


def parse_text(text: str, path: Path) -> Document:
    return Document(title=path.stem, blocks=paragraphs(text))


def parse_markdown(text: str, path: Path) -> Document:
    from markdown_it import MarkdownIt

    lines = text.splitlines(keepends=True)
    line_start = [0]
    for line in lines:
        line_start.append(line_start[-1] + len(line))
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    stack: list[tuple[int, str]] = []  # (level, heading text)
    blocks: list[Block] = []
    title = ""
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "heading_open":
            level = int(tok.tag[1])
            heading = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading))
            if not title and level == 1:
                title = heading
            i += 3  # heading_open, inline, heading_close
            continue
        if tok.level == 0 and tok.map is not None and tok.nesting in (0, 1):
            first, last = tok.map
            start, end = line_start[first], line_start[min(last, len(lines))]
            body = text[start:end].strip()
            if body:
                lead = len(text[start:end]) - len(text[start:end].lstrip())
                blocks.append(
                    Block(body, start + lead, start + lead + len(body), tuple(h for _, h in stack))
                )
        i += 1
    return Document(title=title or path.stem, blocks=blocks)


def parse_rst(text: str, path: Path) -> Document:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    levels: list[tuple[str, bool]] = []  # adornment styles in order of first use
    stack: list[tuple[int, str]] = []
    blocks: list[Block] = []
    title = ""
    body_from = 0  # first line of the current section's body
    i = 0
    while i < len(lines):
        heading = _rst_heading(lines, i)
        if heading is None:
            i += 1
            continue
        text_line, style, used = heading
        blocks += paragraphs(
            text[offsets[body_from] : offsets[i]],
            tuple(h for _, h in stack),
            offset=offsets[body_from],
        )
        if style not in levels:
            levels.append(style)
        level = levels.index(style)
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text_line))
        if not title and level == 0:
            title = text_line
        i += used
        body_from = i
    blocks += paragraphs(
        text[offsets[body_from] :], tuple(h for _, h in stack), offset=offsets[body_from]
    )
    return Document(title=title or path.stem, blocks=blocks)


def _rst_heading(lines: list[str], i: int) -> tuple[str, tuple[str, bool], int] | None:
    """``(title, (char, overlined), lines used)`` if a section title starts at line ``i``."""
    over = _RST_ADORNMENT.match(lines[i])
    if over and i + 2 < len(lines):
        title = lines[i + 1].strip()
        under = _RST_ADORNMENT.match(lines[i + 2])
        if title and under and under.group(1) == over.group(1):
            return title, (over.group(1), True), 3
    if i + 1 < len(lines) and lines[i].strip() and not lines[i][0].isspace():
        under = _RST_ADORNMENT.match(lines[i + 1])
        title = lines[i].strip()
        if (
            under
            and len(lines[i + 1].rstrip()) >= len(title)
            and not _RST_ADORNMENT.match(lines[i])
        ):
            return title, (under.group(1), False), 2
    return None


def parse_html(text: str, path: Path) -> Document:
    parser = _Sections(skip_navigation=True)
    parser.feed(text)
    parser.close()
    parser.end_block()
    if not parser.blocks:  # a page of navigation only (a site's table of contents): keep it
        parser = _Sections(skip_navigation=False)
        parser.feed(text)
        parser.close()
        parser.end_block()
    title = " ".join("".join(parser.title_parts).split())
    first_h1 = next((b.heading[0] for b in parser.blocks if b.heading), "")
    dropped = [Dropped(NAVIGATION, mark) for mark in parser.navigation]
    return Document(title=title or first_h1 or path.stem, blocks=parser.blocks, dropped=dropped)


class _Sections(HTMLParser):
    """Text blocks of an HTML page under their heading path; offsets into the text that
    the blocks themselves make up (joined by blank lines)."""

    def __init__(self, skip_navigation: bool = True) -> None:
        super().__init__(convert_charrefs=True)
        self.skip_navigation = skip_navigation
        self._nav: tuple[str, int] | None = None  # (tag, depth) of the navigation element
        self.navigation: list[str] = []  # the navigation elements left out, as marked
        self.blocks: list[Block] = []
        self.title_parts: list[str] = []
        self.stack: list[tuple[int, str]] = []
        self._skip_depth = 0
        self._in_title = False
        self._heading: tuple[int, list[str]] | None = None
        self._buffer: list[str] = []
        self._pos = 0
        self._pre = 0  # inside <pre>: lines are kept

    def _navigation(self, tag: str, attrs: list[tuple[str, str | None]], start: bool) -> bool:
        """Whether this tag opens, closes or sits inside a navigation element."""
        if self._nav is not None:
            if tag == self._nav[0] and tag not in _VOID:
                depth = self._nav[1] + (1 if start else -1)
                self._nav = (tag, depth) if depth else None
            return True
        if not (start and self.skip_navigation) or tag in _VOID:
            return False
        a = dict(attrs)
        marks = set((a.get("class") or "").lower().split()) | {(a.get("id") or "").lower()}
        if marks & _NAV_MARKS or (a.get("role") or "").lower() in _NAV_ROLES:
            self.end_block()
            self._nav = (tag, 1)
            self.navigation.append(
                f"<{tag} {' '.join(sorted(marks & _NAV_MARKS)) or a.get('role')}>"
            )
            return True
        return False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._navigation(tag, attrs, True):
            return
        if tag == "title":
            self._in_title = True
        elif tag in SKIP_TAGS:
            self._skip_depth += 1
        elif tag in _HEADING_TAGS and not self._skip_depth:
            self.end_block()
            self._heading = (int(tag[1]), [])
        elif tag in _HTML_BLOCKS and not self._skip_depth:
            self.end_block()
            self._pre += tag == "pre"
        elif tag in ("td", "th") and "".join(self._buffer).strip():
            self._buffer.append(" | ")  # a table row stays one block, its cells separated

    def handle_endtag(self, tag: str) -> None:
        if self._navigation(tag, [], False):
            return
        if tag == "title":
            self._in_title = False
        elif tag in SKIP_TAGS:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in _HEADING_TAGS and self._heading is not None:
            level, parts = self._heading
            self._heading = None
            while self.stack and self.stack[-1][0] >= level:
                self.stack.pop()
            self.stack.append((level, " ".join("".join(parts).split())))
        elif tag in _HTML_BLOCKS and not self._skip_depth:
            self.end_block()
            self._pre = max(0, self._pre - (tag == "pre"))

    def handle_data(self, data: str) -> None:
        if self._nav is not None:
            return
        if self._in_title:
            self.title_parts.append(data)
        elif self._skip_depth:
            return
        elif self._heading is not None:
            self._heading[1].append(data)
        else:
            self._buffer.append(data)

    def end_block(self) -> None:
        raw = "".join(self._buffer)
        if self._pre:  # code keeps its lines
            body = "\n".join(line.rstrip() for line in raw.strip("\n").splitlines()).strip()
        else:
            body = " ".join(raw.split())
        self._buffer.clear()
        if not body:
            return
        start = self._pos
        self._pos += len(body) + 2
        self.blocks.append(Block(body, start, start + len(body), tuple(h for _, h in self.stack)))
