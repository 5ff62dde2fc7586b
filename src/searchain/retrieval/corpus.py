"""Streaming corpus readers: the file formats users bring, turned into ``Passage`` objects.

Supported formats (``fmt=``; detected from the extension and first record when omitted):

* ``jsonl``    one ``{"id", "title"?, "text"}`` object per line
* ``flashrag`` FlashRAG / DPR JSONL, ``{"id", "contents": "\\"Title\\"\\ntext"}``
* ``tsv``      DPR ``psgs_w100.tsv``: ``id<TAB>text<TAB>title``, optional header row
* ``hotpotqa`` HotpotQA in the IRCoT format, contexts pooled (see :mod:`.hotpotqa`)
* ``json``     a JSON array of ``{"id"?, "title"?, "text"}`` (MuSiQue corpus, full articles)
* ``title-sentences`` one JSON object ``{"Title": ["sentence", ...], ...}`` (HippoRAG's
  corpora, HotpotQA's context shape): a document per title, its sentences joined

Any of them may be gzip-compressed (``.gz``). Readers stream: only the ``json`` and
``title-sentences`` formats hold the file in memory, because a JSON document cannot be read
record by record otherwise.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchain.retrieval._lines import (
    CorpusError,
    iter_json_array,
    iter_json_lines,
    open_binary,
    open_text,
    optional_str,
    require_str,
)
from searchain.retrieval.hotpotqa import hotpotqa_supporting_ids, read_hotpotqa_pool
from searchain.retrieval.splitting import split_passages
from searchain.types import Passage

__all__ = [
    "FORMATS",
    "CorpusError",
    "corpus_fingerprint",
    "detect_format",
    "hotpotqa_supporting_ids",
    "read_corpus",
    "read_documents",
    "read_hotpotqa_pool",
]

FORMATS = ("jsonl", "flashrag", "tsv", "hotpotqa", "json", "title-sentences")
_TSV_HEADER = ["id", "text", "title"]


def detect_format(path: str | Path) -> str:
    """Guess the format from the extension, then from the first record's fields."""
    name = str(path).lower().removesuffix(".gz")
    if name.endswith(".tsv"):
        return "tsv"
    with open_binary(path) as f:
        head = f.read(1 << 16)
    stripped = head.removeprefix(codecs.BOM_UTF8).lstrip()
    if stripped.startswith(b"["):
        return "json"
    first_line = stripped.split(b"\n", 1)[0]
    try:
        first = json.loads(first_line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        if b"\t" in first_line:
            return "tsv"
        if stripped.startswith(b"{"):  # one pretty-printed object: {title: [sentences]}
            return "title-sentences"
        raise CorpusError(
            path,
            None,
            f"cannot detect the corpus format; name it with --format (one of {', '.join(FORMATS)}"
            "; fmt= in Python), or index a folder of documents instead",
        ) from None
    if (
        isinstance(first, dict)
        and first
        and "text" not in first
        and all(isinstance(v, list) for v in first.values())
    ):
        return "title-sentences"
    if isinstance(first, dict):
        if "contexts" in first:
            return "hotpotqa"
        if "contents" in first:
            return "flashrag"
    return "jsonl"


def read_corpus(
    path: str | Path, fmt: str | None = None, *, max_words: int | None = 100
) -> Iterator[Passage]:
    """Stream the passages of a corpus file, splitting documents longer than ``max_words``.

    ``max_words=None`` keeps documents whole. HotpotQA paragraphs are never split (they are
    the unit of the gold labels).
    """
    fmt = fmt or detect_format(path)
    docs = read_documents(path, fmt)
    if fmt == "hotpotqa":
        return docs
    return split_passages(docs, max_words)


def read_documents(path: str | Path, fmt: str | None = None) -> Iterator[Passage]:
    """Stream the documents of a corpus file as they are stored, without splitting."""
    fmt = fmt or detect_format(path)
    if fmt == "jsonl":
        return _read_jsonl(path)
    if fmt == "flashrag":
        return _read_flashrag(path)
    if fmt == "tsv":
        return _read_tsv(path)
    if fmt == "hotpotqa":
        return read_hotpotqa_pool(path)
    if fmt == "json":
        return _read_json_array(path)
    if fmt == "title-sentences":
        return _read_title_sentences(path)
    raise ValueError(f"unknown corpus format {fmt!r}; expected one of {', '.join(FORMATS)}")


class _FallbackIds:
    """Ids for records that carry none: ``<title>#<n>`` (n-th record with that title), else
    the record's 0-based position. Derived from the file alone, so stable across runs."""

    def __init__(self) -> None:
        self.per_title: dict[str, int] = {}

    def get(self, record_id: str | None, title: str, position: int) -> str:
        if record_id is not None:
            return record_id
        if not title:
            return str(position)
        n = self.per_title.get(title, 0)
        self.per_title[title] = n + 1
        return f"{title}#{n}"


def _records_to_passages(
    path: str | Path, records: Iterator[tuple[int, dict[str, Any]]]
) -> Iterator[Passage]:
    ids = _FallbackIds()
    for position, (line, obj) in enumerate(records):
        # Fast path for the common well-formed record: plain dict lookups and type checks,
        # since this runs once per record of corpora with millions of them.
        text, title, rid = obj.get("text"), obj.get("title", ""), obj.get("id")
        if type(text) is str and type(title) is str and type(rid) is str:
            yield Passage(rid, text, title)
            continue
        text = require_str(path, line, obj, "text")
        title = optional_str(path, line, obj, "title") or ""
        pid = ids.get(optional_str(path, line, obj, "id"), title, position)
        yield Passage(pid, text, title)


def _read_jsonl(path: str | Path) -> Iterator[Passage]:
    return _records_to_passages(path, iter_json_lines(path))


def _read_json_array(path: str | Path) -> Iterator[Passage]:
    return _records_to_passages(path, iter_json_array(path))


def _read_title_sentences(path: str | Path) -> Iterator[Passage]:
    with open_text(path) as f:
        try:
            obj = json.load(f)
        except json.JSONDecodeError as e:
            raise CorpusError(path, e.lineno, f"invalid JSON ({e.msg})") from None
    if not isinstance(obj, dict):
        raise CorpusError(path, 1, 'expected one JSON object {"Title": ["sentence", ...]}')
    for title, sentences in obj.items():
        if not isinstance(sentences, list) or not all(isinstance(x, str) for x in sentences):
            raise CorpusError(path, None, f"{title!r}: expected a list of sentence strings")
        # HotpotQA-style sentences carry their own leading space; others get one.
        text = "".join(
            x if i == 0 or x[:1].isspace() else " " + x for i, x in enumerate(sentences)
        ).strip()
        if text:
            yield Passage(str(title), text, str(title))


def _read_flashrag(path: str | Path) -> Iterator[Passage]:
    ids = _FallbackIds()
    for position, (line, obj) in enumerate(iter_json_lines(path)):
        contents = require_str(path, line, obj, "contents")
        title, text = _split_contents(contents)
        pid = ids.get(optional_str(path, line, obj, "id"), title, position)
        yield Passage(id=pid, text=text, title=title)


def _split_contents(contents: str) -> tuple[str, str]:
    """``"\\"Title\\"\\ntext"`` -> ``("Title", "text")``; the quotes are optional."""
    head, sep, text = contents.partition("\n")
    if not sep:
        return "", contents
    if len(head) >= 2 and head[0] == '"' and head[-1] == '"':
        head = head[1:-1]
    return head, text


def _read_tsv(path: str | Path) -> Iterator[Passage]:
    # Wikipedia passages can exceed csv's default 128 KiB field limit.
    csv.field_size_limit(1 << 30)
    with open_text(path) as f:
        reader = csv.reader(f, delimiter="\t")
        first = True
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as e:
                raise CorpusError(path, reader.line_num, f"invalid TSV ({e})") from None
            if first:
                first = False
                if [c.strip().lower() for c in row] == _TSV_HEADER:
                    continue
            if not row:
                continue
            if len(row) != 3:
                raise CorpusError(
                    path,
                    reader.line_num,
                    f"expected 3 tab-separated columns (id, text, title), got {len(row)}",
                )
            yield Passage(id=row[0], text=row[1], title=row[2])


def corpus_fingerprint(path: str | Path) -> dict[str, Any]:
    """Identify a corpus file's exact content: ``{"path", "size", "sha256"}``."""
    p = Path(path)
    with open(p, "rb") as f:
        digest = hashlib.file_digest(f, "sha256")
    return {"path": os.path.abspath(p), "size": p.stat().st_size, "sha256": digest.hexdigest()}
