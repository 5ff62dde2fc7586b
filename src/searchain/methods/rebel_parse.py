"""Reading what a (small, base) model writes in REBEL's steps: a JSON list of subquestions,
a yes/no, a tool number and a JSON object of tool input. Each parser is tolerant of the
usual damage — code fences, text around the JSON, a list cut off by the token limit — and
says what it did, but never guesses by splitting on commas (commas live inside questions).
"""

from __future__ import annotations

import json
import re
from typing import Any

_DECODER = json.JSONDecoder()
_FENCE = re.compile(r"```(?:json)?\s*(.*?)(?:```|$)", re.S | re.I)
_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.+?)\s*$")


def _unfence(text: str) -> str:
    m = _FENCE.search(text)
    return m.group(1) if m else text


def _strings_from(pos: int, text: str) -> list[str]:
    """Complete JSON strings of a list starting at ``text[pos] == "["``, up to where it breaks
    (a list cut off by the token limit keeps its finished items)."""
    out: list[str] = []
    i = pos + 1
    while True:
        i = _skip(text, i)
        if i >= len(text) or text[i] == "]":
            return out
        try:
            value, i = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError:
            return out
        if isinstance(value, str):
            out.append(value)


def _skip(text: str, i: int, chars: str = " \t\r\n,") -> int:
    while i < len(text) and text[i] in chars:
        i += 1
    return i


def parse_subquestions(text: str) -> tuple[list[str], str]:
    """The subquestions in a reply, and how they were read: ``"json"``, ``"json-partial"``,
    ``"list"`` (numbered or bulleted lines), ``"empty"`` or ``"unparsed"``."""
    body = _unfence(text).strip()
    if not body:
        return [], "empty"
    start = body.find("[")
    if start >= 0:
        try:
            value, _ = _DECODER.raw_decode(body, start)
            if isinstance(value, list):
                items = [v.strip() for v in value if isinstance(v, str) and v.strip()]
                return items, "json"
        except json.JSONDecodeError:
            items = [s.strip() for s in _strings_from(start, body) if s.strip()]
            if items:
                return items, "json-partial"
    lines = [m.group(1) for line in body.splitlines() if (m := _ITEM.match(line))]
    if lines:
        return [ln.strip().strip('"') for ln in lines], "list"
    return [], "unparsed"


def parse_yes_no(text: str) -> bool | None:
    """``True``/``False`` for a reply starting with yes/no (any case, punctuation), else None."""
    m = re.match(r"\W*(yes|no)\b", text, re.I)
    return None if m is None else m.group(1).lower() == "yes"


def parse_tool_number(text: str, names: list[str]) -> int | None:
    """The 1-based tool number a reply picks: its first integer in range (the reference code
    concatenated every digit in the reply), else the first tool named in it, else None."""
    for m in re.finditer(r"\d+", text):
        n = int(m.group())
        if 1 <= n <= len(names):
            return n
    lower = text.lower()
    hits = [(lower.find(n.lower()), i) for i, n in enumerate(names, 1) if n.lower() in lower]
    return min(hits)[1] if hits else None


def parse_json_object(text: str) -> tuple[dict[str, Any] | None, str]:
    """A JSON object from a reply. Whole objects first; else the leading ``"key": value``
    pairs that parse (a reply cut off by the token limit, or one that rambles on)."""
    body = _unfence(text)
    start = body.find("{")
    if start < 0:
        return None, "no JSON object"
    try:
        value, _ = _DECODER.raw_decode(body, start)
        if isinstance(value, dict):
            return value, "json"
    except json.JSONDecodeError:
        pass
    pairs: dict[str, Any] = {}
    i = _skip(body, start + 1)
    while i < len(body):
        try:
            key, i = _DECODER.raw_decode(body, i)
            i = _skip(body, i, " \t\r\n")
            if not isinstance(key, str) or body[i : i + 1] != ":":
                break
            value, i = _DECODER.raw_decode(body, _skip(body, i + 1, " \t\r\n"))
        except json.JSONDecodeError:
            break
        pairs.setdefault(key, value)  # a model repeating a key keeps its first value
        i = _skip(body, i)
    if pairs:
        return pairs, "json-partial"
    return None, "invalid JSON"
