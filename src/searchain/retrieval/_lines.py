"""Low-level, line-aware reading shared by every corpus reader.

Every reader reports problems as ``path:line: what`` so a user with a 20 GB corpus can jump
straight to the broken record; these helpers carry the line number along with each record.
"""

from __future__ import annotations

import codecs
import gzip
import json
import os
import re
from collections.abc import Iterator
from typing import IO, Any


class CorpusError(ValueError):
    """A corpus file is malformed. The message starts with ``<path>:<line>:``."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


def open_binary(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open a corpus file for reading bytes, transparently decompressing ``.gz``."""
    if str(path).endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def open_text(path: str | os.PathLike[str]) -> IO[str]:
    """Text-mode twin of :func:`open_binary` (``newline=""`` as the csv module wants)."""
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def iter_json_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line of a JSONL file."""
    loads = json.loads
    with open_binary(path) as f:
        for lineno, raw in enumerate(f, 1):
            # Decoding each line ourselves lets us blame the right line for bad UTF-8 (a text
            # stream fails somewhere inside a buffered read), and loads(str) beats loads(bytes).
            if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]  # files saved by Windows editors
            try:
                obj = loads(raw.decode())
            except json.JSONDecodeError as e:
                if not raw.strip():
                    continue
                raise CorpusError(path, lineno, f"invalid JSON ({e.msg})") from None
            except UnicodeDecodeError as e:
                raise CorpusError(path, lineno, f"invalid UTF-8 ({e.reason})") from None
            if not isinstance(obj, dict):
                raise CorpusError(path, lineno, f"expected a JSON object, got {_kind(obj)}")
            yield lineno, obj


_WS = re.compile(r"\s*")


def iter_json_array(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each element of a top-level JSON array.

    The file is decoded element by element with ``raw_decode`` rather than ``json.load`` so
    that errors inside element 12,345 can still be reported with the line it starts on.
    """
    with open_binary(path) as f:
        try:
            text = f.read().decode("utf-8-sig")  # -sig: tolerate a leading BOM
        except UnicodeDecodeError as e:
            line = _line_of_bytes(path, e.start)
            raise CorpusError(path, line, f"invalid UTF-8 ({e.reason})") from None
    decoder = json.JSONDecoder()
    # Line numbers are tracked incrementally (newlines counted between consecutive elements
    # only), so reporting them costs O(file) overall rather than O(file) per element.
    line, line_pos = 1, 0

    def line_at(pos: int) -> int:
        nonlocal line, line_pos
        line += text.count("\n", line_pos, pos)
        line_pos = pos
        return line

    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    if text[pos : pos + 1] != "[":
        raise CorpusError(path, line_at(pos), "expected a JSON array of objects")
    pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
    if text[pos : pos + 1] == "]":
        pos += 1
    else:
        while True:
            try:
                obj, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as e:
                raise CorpusError(path, e.lineno, f"invalid JSON ({e.msg})") from None
            if not isinstance(obj, dict):
                raise CorpusError(path, line_at(pos), f"expected a JSON object, got {_kind(obj)}")
            yield line_at(pos), obj
            pos = _WS.match(text, end).end()  # type: ignore[union-attr]
            sep = text[pos : pos + 1]
            if sep == "]":
                pos += 1
                break
            if sep != ",":
                raise CorpusError(path, line_at(pos), "invalid JSON (Expecting ',' delimiter)")
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
    if text[pos:].strip():
        raise CorpusError(path, line_at(pos), "invalid JSON (Extra data)")


def require_str(path: str | os.PathLike[str], line: int, obj: dict[str, Any], field: str) -> str:
    """Return ``obj[field]`` as a string, or raise a CorpusError naming the field."""
    try:
        value = obj[field]
    except KeyError:
        raise CorpusError(path, line, f'missing field "{field}"') from None
    if not isinstance(value, str):
        raise CorpusError(path, line, f'field "{field}" must be a string, got {_kind(value)}')
    return value


def optional_str(
    path: str | os.PathLike[str], line: int, obj: dict[str, Any], field: str
) -> str | None:
    """Like :func:`require_str`, but a missing or null field gives ``None``."""
    value = obj.get(field)
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)  # numeric ids are common (e.g. DPR); keep them as their text
    if not isinstance(value, str):
        raise CorpusError(path, line, f'field "{field}" must be a string, got {_kind(value)}')
    return value


def _kind(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, int | float) else "null"
    )


def _line_of_bytes(path: str | os.PathLike[str], offset: int) -> int:
    with open_binary(path) as f:
        return f.read(offset).count(b"\n") + 1
