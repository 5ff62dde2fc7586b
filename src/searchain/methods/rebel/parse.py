"""Reading what a (small, base or chat) model writes in REBEL's steps: a JSON list of
subquestions, a yes/no, a tool number, a JSON object of tool input and an answer. Each parser
is tolerant of the usual damage — code fences, text around the JSON, a list cut off by the
token limit — and says what it did, but never guesses by splitting on commas (commas live
inside questions). Chat models add habits of their own ("Sure, here are the subquestions:",
markdown lists and bold, "**No**", "Answer: ..."): the ``chat=True`` readers take those too.
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


def parse_subquestions(text: str, *, chat: bool = False) -> tuple[list[str], str]:
    """The subquestions in a reply, and how they were read: ``"json"``, ``"json-partial"``,
    ``"list"`` (numbered or bulleted lines), ``"empty"`` or ``"unparsed"``. With ``chat``,
    markdown is removed first and a reply of question lines with no list marks is read as
    ``"questions"``, one a line."""
    if chat:
        return _chat_subquestions(text)
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


def find_tool_number(text: str, names: list[str], descriptions: list[str]) -> int | None:
    """A chat model's tool choice. Chat replies often echo the tool list before choosing
    ("Tool 1: Search: ...\nTool 2: Calculator: ...\n\nTool 2 is best"): lines that repeat a
    tool's description are skipped, then as ``parse_tool_number``."""
    marks = [d.lower()[:24] for d in descriptions if d]
    kept = [ln for ln in _demarkdown(text).splitlines() if not any(m in ln.lower() for m in marks)]
    return parse_tool_number("\n".join(kept), names) or parse_tool_number(text, names)


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


# -- chat habits --------------------------------------------------------------------------
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)|`")
_LABEL = re.compile(r"^(?:sub-?questions?\s*\d*|q\d*|step\s*\d+)\s*[:.)-]\s*", re.I)
# "Sure!" alone, or a line introducing what follows ("Sure, here are the subquestions:").
_FILLER = re.compile(
    r"^(?:(?:sure|certainly|of course|okay|ok)\W*|(?:sure|certainly|okay|ok|here)\b.*:)$", re.I
)


def _demarkdown(line: str) -> str:
    line = re.sub(r"^\s*#+\s*", "", line)
    return _EMPHASIS.sub("", line).strip()


def _chat_subquestions(text: str) -> tuple[list[str], str]:
    fenced = _FENCE.search(text)
    if fenced and "[" in fenced.group(1):
        subs, how = parse_subquestions(fenced.group(1))
        if how.startswith("json"):
            return subs, how
    lines = [_demarkdown(ln) for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("```")]
    body = "\n".join(lines)
    if not body:
        return [], "empty"
    subs, how = parse_subquestions(body)
    if how.startswith("json") or how == "list":
        items = [_LABEL.sub("", s).strip().strip('"').strip() for s in subs]
        return [s for s in items if s], how
    questions = [_LABEL.sub("", ln).strip('"') for ln in lines if not _FILLER.match(ln)]
    if questions and all(q.endswith("?") for q in questions):
        return questions, "questions"
    return [], "unparsed"


def find_yes_no(text: str) -> bool | None:
    """A chat model's yes/no: the first "yes" or "no" word anywhere in the reply ("**No**",
    "Answer: yes", "The answer is no."), else None."""
    m = re.search(r"\b(yes|no)\b", _demarkdown(text), re.I)
    return None if m is None else m.group(1).lower() == "yes"


_ANSWER_LABEL = re.compile(r"^(?:a|answer|final answer)\s*:\s*", re.I)


def chat_answer(text: str) -> str:
    """The answer sentence of a chat reply: its first line that is not a "Sure!"-style
    preamble, without markdown or an "A:"/"Answer:" label ("" for an empty reply)."""
    for raw in text.splitlines():
        line = _ANSWER_LABEL.sub("", _demarkdown(re.sub(r"^\s*[-*•]\s+", "", raw))).strip()
        if line and not _FILLER.match(line):
            return re.sub(r"^(?:sure|certainly|of course)[,!]\s+(?=\S)", "", line, flags=re.I)
    return ""
