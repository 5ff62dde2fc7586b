"""Pull Wikipedia article URLs out of what a model wrote, and say which of them are usable.

The research code's regex (``http[s]?://(?:[a-zA-Z]|[0-9]|[$-_@.&+]|...)+``) has a character
range ``[$-_]`` that spans ``$`` to ``_`` and so admits ``,`` ``<`` ``=`` ``>`` ``;`` and
brackets, keeps trailing ``,`` and ``)``, and never percent-decodes. Here a URL is any run of
characters that cannot end a URL in running text, then trailing punctuation is trimmed
(closing brackets only when unbalanced, so ``Kiss_and_Tell_(1945_film)`` survives;
apostrophes inside a URL stay, so ``Arthur's_Magazine`` does; the spellings that keep trimmed
``.!?'`` are kept as alternatives for when the trimmed title does not exist), the host
is normalised (``http``, ``en.m.``, ``www.``), fragments and queries are dropped, the title is
percent-decoded and put in MediaWiki's canonical form, and duplicates are removed.

Model output is hostile input: nothing here fetches anything, and a URL that is not an
``en.wikipedia.org/wiki/<Title>`` article (or another allowed host) is reported, not used.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

# A URL candidate: an explicit scheme, or a bare "host.wikipedia.org/..." the model wrote
# without one. Whitespace, double quotes, angle brackets and backticks always end a URL in
# text; an apostrophe does not (Arthur's_Magazine, Rock_'n'_roll): a quote around a URL is
# trailing punctuation, trimmed like the rest.
_CANDIDATE = re.compile(
    r"""(?ix)
    (?: https?:// | (?<![\w./@-]) (?:[a-z0-9-]+\.)*wikipedia\.org/ )
    (?: (?!https?://) [^\s"<>`\\^{}|] )*   # a glued-on next URL starts a new candidate
    """
)
_TRAILING = ".,;:!?*_~-'\"’”»…"
# Trimmed characters that can also end a title (Oklahoma!, Washington,_D.C., When_Harry_Met_
# Sally..., These_Boots_Are_Made_for_Walkin'): the spellings that keep them are tried when
# the trimmed title is not found (the trimmed one is tried first: a sentence's full stop is
# commoner than a title's).
_TITLE_END = ".!?'"
MAX_KEPT = 3
_PAIRS = {")": "(", "]": "[", "}": "{"}
# Namespaces that are not articles; a generated URL into them is not a usable document.
_NON_ARTICLE = {
    "special",
    "file",
    "image",
    "category",
    "template",
    "help",
    "portal",
    "talk",
    "user",
    "wikipedia",
    "mediawiki",
    "module",
    "draft",
    "media",
    "user talk",
    "wikipedia talk",
}
_BAD_TITLE_CHARS = re.compile(r"[#<>\[\]{}|\x00-\x1f\x7f]")
MAX_TITLE_BYTES = 255  # MediaWiki's limit


@dataclass(slots=True)
class ExtractedURL:
    """One URL candidate the model wrote, normalised, with why it can or cannot be used.

    ``status``: ``"ok"`` (a well-formed article URL on an allowed host), ``"malformed"``,
    ``"off_domain"``; fetching later sets ``"not_found"``, ``"error"`` or ``"fetched"``.
    """

    raw: str
    url: str | None = None  # canonical https://host/wiki/Title
    host: str | None = None
    title: str | None = None  # decoded, spaces, first letter upper-case
    status: str = "ok"
    reason: str = ""
    # Titles to try, in order, if ``title`` is not found: it with trimmed trailing ``.!?'``
    # kept ("Washington, D.C." for ".../Washington,_D.C."), the whole run first.
    alternatives: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Extraction:
    """Every candidate in generation order; ``urls`` are the usable ones, deduped, at most m."""

    candidates: list[ExtractedURL] = field(default_factory=list)
    duplicates: int = 0

    @property
    def urls(self) -> list[ExtractedURL]:
        return [c for c in self.candidates if c.status == "ok"]


def canonical_title(title: str) -> str:
    """MediaWiki's canonical form: ``_`` to space, whitespace collapsed, first letter upper."""
    t = unicodedata.normalize("NFC", title.replace("_", " "))
    t = " ".join(t.split())
    return t[:1].upper() + t[1:]


def title_to_path(title: str) -> str:
    """``"Kiss and Tell (1945 film)"`` -> ``"Kiss_and_Tell_(1945_film)"``, percent-encoded."""
    return quote(title.replace(" ", "_"), safe="()_,!'*:;@$-.~")


def _trim(raw: str) -> str:
    """Strip trailing punctuation, and closing brackets that have no opening partner."""
    s = raw
    while s:
        last = s[-1]
        if last in _TRAILING or (last in _PAIRS and s.count(last) > s.count(_PAIRS[last])):
            s = s[:-1]
        else:
            break
    return s


def _host(netloc: str) -> str:
    host = netloc.rsplit("@", 1)[-1].lower().rstrip(".")
    host = host.split(":", 1)[0] if not host.startswith("[") else host
    if host.endswith(".wikipedia.org"):
        lang = host.removesuffix(".wikipedia.org")
        # The mobile site and "www" serve the same articles as the desktop host.
        lang = lang.removesuffix(".m").removeprefix("www.")
        host = "en.wikipedia.org" if lang in ("", "www", "m") else f"{lang}.wikipedia.org"
    return host


def normalise(raw: str, allowed_hosts: tuple[str, ...] = ("en.wikipedia.org",)) -> ExtractedURL:
    """Normalise one candidate (already trimmed) and judge it."""
    item = ExtractedURL(raw=raw)
    text = raw if re.match(r"(?i)https?://", raw) else "https://" + raw
    try:
        parts = urlsplit(text)
        port = parts.port  # raises ValueError on a malformed port
    except ValueError as e:
        item.status, item.reason = "malformed", f"unparsable URL ({e})"
        return item
    if "@" in parts.netloc:
        # "https://en.wikipedia.org@169.254.169.254/" names another host than it shows.
        item.status, item.reason = "malformed", "credentials in the URL"
        return item
    host = _host(parts.netloc)
    item.host = host
    if not host:
        item.status, item.reason = "malformed", "no host"
        return item
    if host not in allowed_hosts or port not in (None, 80, 443):
        item.status, item.reason = "off_domain", f"host {host!r} is not allowed"
        return item
    title = _title_from(parts.path, parts.query)
    if title is None:
        item.status, item.reason = "malformed", "not an article URL (/wiki/<Title>)"
        return item
    title = canonical_title(title)
    problem = _title_problem(title)
    if problem:
        item.status, item.reason = "malformed", problem
        return item
    item.title = title
    item.url = f"https://{host}/wiki/{title_to_path(title)}"
    return item


def _title_from(path: str, query: str) -> str | None:
    if path.startswith("/wiki/"):
        return unquote(path[len("/wiki/") :], errors="strict")
    if path in ("/w/index.php", "/index.php"):
        titles = parse_qs(query).get("title")
        return titles[0] if titles else None
    return None


def _title_problem(title: str) -> str:
    if not title:
        return "empty title"
    if _BAD_TITLE_CHARS.search(title):
        return "title has characters MediaWiki forbids"
    if len(title.encode("utf-8")) > MAX_TITLE_BYTES:
        return f"title longer than {MAX_TITLE_BYTES} bytes"
    namespace, sep, _rest = title.partition(":")
    if sep and namespace.strip().lower() in _NON_ARTICLE:
        return f"{namespace} page, not an article"
    return ""


def _alternatives(
    item: ExtractedURL, trimmed: str, quoted: bool, allowed_hosts: tuple[str, ...]
) -> list[str]:
    """The titles ``item`` would have with the ``trimmed`` run of ``.!?'`` kept (capped at
    :data:`MAX_KEPT` characters), or its first character only. After an opening quote an
    apostrophe is the closing one, never part of the title."""
    ends = _TITLE_END.replace("'", "") if quoted else _TITLE_END
    run = min(len(trimmed) - len(trimmed.lstrip(ends)), MAX_KEPT)
    out: list[str] = []
    for n in dict.fromkeys(n for n in (run, 1) if 0 < n <= run):
        try:
            alt = normalise(item.raw + trimmed[:n], allowed_hosts)
        except UnicodeDecodeError:
            continue
        if alt.status == "ok" and alt.title not in (item.title, *out):
            out.append(alt.title)  # type: ignore[arg-type]
    return out


def extract_urls(
    text: str,
    m: int | None = None,
    allowed_hosts: tuple[str, ...] = ("en.wikipedia.org",),
) -> Extraction:
    """Every URL candidate in ``text``, normalised and judged; usable ones deduped, capped at
    ``m`` (candidates past the m-th usable URL are not reported: the model was asked for m)."""
    out = Extraction()
    seen: set[str] = set()
    kept = 0
    for match in _CANDIDATE.finditer(text):
        raw = _trim(match.group(0))
        if not raw or re.fullmatch(r"(?i)https?://", raw):
            continue
        try:
            item = normalise(raw, allowed_hosts)
        except UnicodeDecodeError:
            item = ExtractedURL(raw=raw, status="malformed", reason="invalid percent-encoding")
        if item.status == "ok":
            quoted = text[match.start() - 1 : match.start()] in ("'", "‘")
            trimmed = match.group(0)[len(raw) :]
            item.alternatives = _alternatives(item, trimmed, quoted, allowed_hosts)
            if item.url in seen:
                out.duplicates += 1
                continue
            if m is not None and kept >= m:
                break
            seen.add(item.url)  # type: ignore[arg-type]
            kept += 1
        out.candidates.append(item)
    return out


# -- chat replies ----------------------------------------------------------------------------
# An instruct model does not continue a primer: it answers in markdown. What it wraps around
# the URLs is unwrapped before extraction, so that only the URLs are left as URL-like runs;
# what then counts as a URL, and whether it is usable, is decided by extract_urls as for base
# models (the same validation; nothing here fetches anything).

# Markdown escapes (Kiss\_and\_Tell\_\(1945\_film\)): a backslash would end the URL.
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!'~|])")
# A URL in a markdown link target: balanced parentheses, no whitespace.
_LINK_TARGET = r"(?:[^()\s<>]|\([^()\s<>]*\))+"
# [text](target "title"), ![alt](target), [text](<target>); the text may itself be a URL
# (then its "](" would glue the two into one run).
_MD_LINK = re.compile(
    r"!?\[(?P<text>[^\]\n]*)\]\(\s*<?(?P<target>" + _LINK_TARGET + r")>?"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
# A relative article link ("/wiki/Paris", "wiki/Paris") as a link target or a list item.
_RELATIVE = re.compile(r"^/?wiki/")
_LIST_ITEM = re.compile(r"(?m)^(\s*(?:[-*+•]|\d+[.)])?\s*)(/?wiki/[^\s/])")
# Full-width and CJK punctuation the model may put after a URL, with no space before it.
_WIDE_PUNCT = re.compile(r"[，。；：、！？）（「」『』【】《》]")
RELATIVE_HOST = "https://en.wikipedia.org"


def _link(match: re.Match[str]) -> str:
    target = match.group("target")
    if _RELATIVE.match(target):
        target = f"{RELATIVE_HOST}/{target.lstrip('/')}"
    return f" {target} "


def unwrap_chat_reply(reply: str) -> str:
    """``reply`` with the markup a chat model puts around URLs taken off: markdown escapes,
    links (``[text](url)`` becomes ``url``; a relative ``/wiki/Title`` target gets the
    en.wikipedia.org host), relative ``/wiki/Title`` list items, full-width punctuation.
    Bullets, numbering, bold, angle brackets, quotes, code fences and trailing punctuation
    need nothing: :func:`extract_urls` already ends or trims URLs at them."""
    text = _MD_ESCAPE.sub(r"\1", reply)
    text = _MD_LINK.sub(_link, text)
    text = _LIST_ITEM.sub(lambda m: f"{m.group(1)}{RELATIVE_HOST}/{m.group(2).lstrip('/')}", text)
    return _WIDE_PUNCT.sub(" ", text)


def extract_chat_urls(
    reply: str, m: int | None = None, allowed_hosts: tuple[str, ...] = ("en.wikipedia.org",)
) -> Extraction:
    """:func:`extract_urls` on a chat model's reply (:func:`unwrap_chat_reply`)."""
    return extract_urls(unwrap_chat_reply(reply), m=m, allowed_hosts=allowed_hosts)
