"""Short answers out of what models write, base and chat alike.

Base models given few-shot demos end with "So the answer is X." Chat models have habits of
their own: markdown (``**X**``), "The answer is X", "Answer: X", a one-line answer followed
by an explanation, a leading "Sure!" line. ``short_answer`` returns the span EM and F1 are
scored on; methods keep the whole text as ``final_content`` (what cover-EM reads).
"""

from __future__ import annotations

import re

from searchain.citations import split_sentences, strip_marks

# The last stated answer wins: "..., so the answer is X" after reasoning.
_MARKERS = re.compile(
    r"(?:so the (?:final )?answer is|the (?:final |short )?answer is|"
    r"(?:final |short )?answer\s*:|answer is)\s*:?\s*",
    re.I,
)
_FILLER = re.compile(
    r"^(?:sure|certainly|of course|okay|ok|yes, of course)[!.,]?\s*(?:here is[^:]*:)?\s*$", re.I
)
_MARKDOWN = re.compile(r"(\*\*|__|`|^#+\s*|^\s*[-*•]\s+)", re.M)


def clean_span(text: str) -> str:
    """Strip markdown, citation marks, quotes and the trailing full stop around an answer."""
    text = strip_marks(_MARKDOWN.sub("", text))
    text = text.strip().strip("\"'“”‘’").strip()
    return text.rstrip(".").strip()


_ABBREVIATIONS = {"dr", "mr", "mrs", "ms", "st", "jr", "sr", "inc", "co", "ltd", "vs", "mt", "no"}


def _first_sentence(text: str) -> str:
    line = text.strip().split("\n", 1)[0]
    for m in re.finditer(r"[.!?](?:\s|$)", line):
        before = line[: m.start()]
        # A title in quotes ("Hey Pa! There's a Goat on the Roof") does not end at its "!".
        if before.count('"') % 2 or before.count("“") > before.count("”"):
            continue
        word = re.search(r"(\w+)$", before)
        # "U.S." and "Dr. No" do not end a sentence.
        if word and (len(word.group(1)) == 1 or word.group(1).lower() in _ABBREVIATIONS):
            continue
        return line[: m.start()]
    return line


def after_last_marker(text: str) -> int:
    """Where the text after the last answer marker ("So the answer is", "Answer:") starts;
    0 without one. ``short_answer`` reads the last stated answer there."""
    found = list(_MARKERS.finditer(text))
    return found[-1].end() if found else 0


def short_answer(text: str) -> str:
    """The short answer stated in ``text`` ("" for empty text)."""
    text = text.strip()
    if not text:
        return ""
    found = list(_MARKERS.finditer(text))
    for marker in reversed(found):  # the last stated answer that says something
        tail = text[marker.end() :]
        bold = re.match(r"\s*\*\*(.+?)\*\*", tail)
        span = clean_span(bold.group(1) if bold else _first_sentence(tail))
        if span:
            return span
    if found:  # "So the answer is [1].": the last sentence that states something
        said = [clean_span(x) for x in split_sentences(text) if not _MARKERS.search(x)]
        said = [x for x in said if x]
        return said[-1] if said else ""
    lines = [ln for ln in text.split("\n") if ln.strip() and not _FILLER.match(ln.strip())]
    if not lines:
        return ""
    bold = re.search(r"\*\*(.+?)\*\*", lines[0])
    if bold and len(lines[0]) < 200:
        return clean_span(bold.group(1))
    return clean_span(_first_sentence(lines[0]))
