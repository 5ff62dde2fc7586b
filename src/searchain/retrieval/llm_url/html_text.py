"""Wikipedia HTML -> clean article text: no markup, no navigation, no edit links, no footnotes.

A single pass of the standard library's ``html.parser`` (no dependency, tolerant of broken
markup). When the page has MediaWiki's content container (``mw-parser-output`` or
``#mw-content-text``) only its text is kept, so menus, search boxes, category lists and
footers fall away; inside it, navigation boxes, reference lists, ``[edit]`` links, ``[1]``
footnote marks, hatnotes and the table of contents are dropped. Block elements end a line,
so paragraphs survive as lines for passage splitting.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser

# Tags whose text is never content (a document folder's HTML reader skips them too).
SKIP_TAGS = set(
    "script style noscript nav header footer form button svg math template iframe object select "
    "textarea head".split()
)
_SKIP_CLASSES = set(
    "navbox vertical-navbox navbar sistersitebox mw-editsection reference reflist references "
    "toc hatnote noprint metadata mw-jump-link catlinks printfooter mw-indicators "
    "shortdescription mw-cite-backlink ambox thumbcaption authority-control".split()
)
_SKIP_IDS = set(
    "mw-navigation mw-head mw-panel footer catlinks toc siteSub contentSub jump-to-nav p-search "
    "References External_links".split()
)
_CONTENT_CLASSES = {"mw-parser-output"}
_CONTENT_IDS = {"mw-content-text"}
_BLOCK = set(
    "p div li ul ol dl dt dd tr table section article h1 h2 h3 h4 h5 h6 blockquote pre figure "
    "br hr caption main body".split()
)
_VOID = set("br hr img meta link input source area base col embed param track wbr".split())
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_TITLE_SUFFIX = re.compile(r"\s+[-–—]\s+Wikipedia\s*$")


@dataclass(slots=True)
class Page:
    title: str
    text: str


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        # One entry per open element: (tag, skipping, in_content).
        self.stack: list[tuple[str, bool, bool]] = []
        self.body: list[str] = []
        self.content: list[str] = []
        self.saw_content = False
        self.title_parts: list[str] = []
        self.heading_parts: list[str] = []
        self._in_title = False
        self._in_first_heading = False

    def _state(self) -> tuple[bool, bool]:
        return (self.stack[-1][1], self.stack[-1][2]) if self.stack else (False, False)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        skipping, in_content = self._state()
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        ident = a.get("id") or ""
        if tag == "title":
            self._in_title = True
        if tag == "h1" and ident == "firstHeading":
            self._in_first_heading = True
        skip = skipping or tag in SKIP_TAGS or bool(classes & _SKIP_CLASSES) or ident in _SKIP_IDS
        if a.get("role") == "navigation" or a.get("hidden") is not None:
            skip = True
        if not skip and (classes & _CONTENT_CLASSES or ident in _CONTENT_IDS):
            in_content = self.saw_content = True
        if tag in _BLOCK and not skip:
            self._emit("\n", in_content)
        if tag not in _VOID:
            self.stack.append((tag, skip, in_content))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag == "h1":
            self._in_first_heading = False
        # Close up to the matching open element; an end tag with no open match is ignored
        # (broken markup must not unbalance the skip state).
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                _t, skip, in_content = self.stack[i]
                del self.stack[i:]
                if tag in _BLOCK and not skip:
                    self._emit("\n", in_content)
                return

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
            return
        if self._in_first_heading:
            self.heading_parts.append(data)
        skipping, in_content = self._state()
        if not skipping:
            self._emit(data, in_content)

    def _emit(self, text: str, in_content: bool) -> None:
        self.body.append(text)
        if in_content:
            self.content.append(text)


def _tidy(parts: list[str]) -> str:
    lines = (_SPACES.sub(" ", line).strip() for line in "".join(parts).split("\n"))
    return "\n".join(line for line in lines if line)


def html_to_text(markup: str) -> Page:
    """The title and clean text of an HTML page (Wikipedia or Wikipedia-like)."""
    parser = _Extractor()
    parser.feed(markup)
    parser.close()
    text = _tidy(parser.content if parser.saw_content else parser.body)
    heading = " ".join("".join(parser.heading_parts).split())
    title = heading or _TITLE_SUFFIX.sub("", " ".join("".join(parser.title_parts).split()))
    return Page(title=html.unescape(title), text=text)
