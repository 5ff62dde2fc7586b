"""HotpotQA in the IRCoT processed format, pooled into an open-retrieval corpus.

Each line of ``dev_subsampled.jsonl`` is a question with ~10 ``contexts`` (2 supporting, the
rest distractors). Pooling the contexts of all questions, with identical (title, paragraph)
pairs kept once, gives the corpus IRCoT-style evaluations retrieve from.

Passage ids are ``<title>#<n>``: the title plus the index of the paragraph among the distinct
paragraphs with that title, in file order. They depend only on the file's content, so the same
file always gives the same ids and gold labels can refer to them.

Paragraphs are never split: they are the unit the gold labels (``is_supporting``) refer to,
and splitting would make Recall@k ill-defined.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchain.retrieval._lines import CorpusError, iter_json_lines, require_str
from searchain.types import Passage


def _contexts(path: str | Path, line: int, record: dict[str, Any]) -> list[dict[str, Any]]:
    contexts = record.get("contexts")
    if contexts is None:
        raise CorpusError(path, line, 'missing field "contexts"')
    if not isinstance(contexts, list) or not all(isinstance(c, dict) for c in contexts):
        raise CorpusError(path, line, 'field "contexts" must be an array of objects')
    return contexts


def _walk(path: str | Path) -> Iterator[tuple[dict[str, Any], list[Passage | None], list[str]]]:
    """Yield, per question: the record, new passages (None where already seen), their ids.

    The id assignment lives here only, so the corpus and the gold mapping cannot disagree.
    """
    ids: dict[tuple[str, str], str] = {}
    per_title: dict[str, int] = {}
    for line, record in iter_json_lines(path):
        new: list[Passage | None] = []
        context_ids: list[str] = []
        for ctx in _contexts(path, line, record):
            title = require_str(path, line, ctx, "title")
            text = require_str(path, line, ctx, "paragraph_text")
            key = (title, text)
            pid = ids.get(key)
            if pid is None:
                n = per_title.get(title, 0)
                per_title[title] = n + 1
                pid = ids[key] = f"{title}#{n}"
                new.append(Passage(id=pid, text=text, title=title))
            else:
                new.append(None)
            context_ids.append(pid)
        yield record, new, context_ids


def read_hotpotqa_pool(path: str | Path) -> Iterator[Passage]:
    """Stream the deduplicated pool of all questions' context paragraphs."""
    for _record, new, _ids in _walk(path):
        for passage in new:
            if passage is not None:
                yield passage


def hotpotqa_supporting_ids(path: str | Path) -> dict[str, list[str]]:
    """Map each ``question_id`` to the passage ids of its supporting paragraphs.

    The ids are those :func:`read_hotpotqa_pool` gives the same file, which is what
    Recall@k against a pooled index needs.
    """
    gold: dict[str, list[str]] = {}
    for record, _new, ids in _walk(path):
        contexts = record["contexts"]
        qid = str(record.get("question_id", len(gold)))
        pairs = zip(ids, contexts, strict=True)
        gold[qid] = [pid for pid, ctx in pairs if ctx.get("is_supporting")]
    return gold
