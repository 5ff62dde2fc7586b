"""What every dataset reader shares: the :class:`Example` record, reading JSON / JSONL /
wrapped-list files record by record with the file and line of each for error messages, and
the answer shapes datasets use."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, overload

from searchain.retrieval._lines import CorpusError, iter_json_array, iter_json_lines, open_binary

TASKS = ("multihop", "yesno", "factcheck", "longform", "list", "open")
FEVER_LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")

DatasetError = CorpusError
"""A dataset file is malformed; the message starts with ``<path>:<line>:``."""


@dataclass(slots=True)
class Example:
    """One evaluation item, whatever file it came from.

    ``answers`` are the gold answers and their aliases (any one counts as correct; for
    StrategyQA and FEVER the label itself, so cover-EM works there too). ``label`` is the
    gold class for classification tasks (``"yes"``/``"no"``, FEVER's three labels).
    ``gold_passages`` are ``{"id", "title", "text", …}`` dicts of the gold evidence and
    ``claims`` the gold claims (ALCE ELI5). ``meta`` keeps what else the file says (the
    distractor ``contexts``, decompositions, answer groups, retrieved ``docs``, …).
    """

    id: str
    question: str
    answers: list[str]
    label: str | None = None
    task: str = "open"  # multihop | yesno | factcheck | longform | list | open
    gold_passages: list[dict[str, Any]] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Example:
        return cls(
            id=str(d["id"]),
            question=d["question"],
            answers=list(d.get("answers", [])),
            label=d.get("label"),
            task=d.get("task", "open"),
            gold_passages=list(d.get("gold_passages", [])),
            claims=list(d.get("claims", [])),
            meta=dict(d.get("meta", {})),
        )


QUESTION_KEYS = ("question", "Question", "query", "question_text", "utterance")

Records = Iterator[tuple[int | None, dict[str, Any]]]


def json_records(path: str | os.PathLike[str]) -> tuple[str, Records]:
    """``(container, records)``: a JSON array, JSONL, or one object wrapping a list
    (``{"data": […]}``, TriviaQA's ``{"Data": […]}``). Wrapped records have no line number."""
    with open_binary(path) as f:
        head = f.read(1 << 16)
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped.startswith(b"["):
        return "json", iter_json_array(path)
    first_line = stripped.split(b"\n", 1)[0]
    try:
        first = json.loads(first_line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        first = None
    if isinstance(first, dict) and _wrapped_list(first) is None:
        return "jsonl", iter_json_lines(path)
    # One (possibly pretty-printed) JSON object around the records.
    with open_binary(path) as f:
        raw = f.read()
    try:
        obj = json.loads(raw.decode("utf-8-sig"))
    except json.JSONDecodeError as e:
        if first is None and stripped.startswith(b"{"):
            # Most likely JSONL with a broken first line: let the line reader blame it.
            return "jsonl", iter_json_lines(path)
        raise DatasetError(path, e.lineno, f"invalid JSON ({e.msg})") from None
    except UnicodeDecodeError as e:
        raise DatasetError(path, None, f"invalid UTF-8 ({e.reason})") from None
    records = _wrapped_list(obj) if isinstance(obj, dict) else None
    if records is None:
        raise DatasetError(path, None, 'expected JSON lines, a JSON array or {"data": [...]}')
    return "wrapped", _wrapped_records(path, records)


def _wrapped_list(obj: dict[str, Any]) -> list[Any] | None:
    for key in ("data", "Data"):
        value = obj.get(key)
        if isinstance(value, list) and not any(k in obj for k in QUESTION_KEYS):
            return value
    return None


def _wrapped_records(path: str | os.PathLike[str], records: list[Any]) -> Records:
    for i, obj in enumerate(records):
        if not isinstance(obj, dict):
            raise DatasetError(path, None, f"record {i}: expected a JSON object")
        yield None, obj


class Ctx:
    """Where a record came from, for error messages."""

    __slots__ = ("index", "line", "path")

    def __init__(self, path: str | os.PathLike[str], line: int | None, index: int) -> None:
        self.path, self.line, self.index = path, line, index

    def fail(self, message: str) -> DatasetError:
        if self.line is None:
            return DatasetError(self.path, None, f"record {self.index}: {message}")
        return DatasetError(self.path, self.line, message)

    @overload
    def text(self, obj: dict[str, Any], *keys: str, required: Literal[True] = ...) -> str: ...

    @overload
    def text(self, obj: dict[str, Any], *keys: str, required: Literal[False]) -> str | None: ...

    def text(self, obj: dict[str, Any], *keys: str, required: bool = True) -> str | None:
        """The first present key's value as a string (numbers become their text); a missing
        one is an error naming the file and line unless ``required=False`` (then ``None``)."""
        for key in keys:
            value = obj.get(key)
            if value is None:
                continue
            if isinstance(value, str):
                return value
            if isinstance(value, int | float) and not isinstance(value, bool):
                return str(value)
            raise self.fail(f'field "{key}" must be a string, got {type(value).__name__}')
        if required:
            raise self.fail(f'missing field "{keys[0]}"')
        return None

    def array(self, obj: dict[str, Any], key: str, *, required: bool = False) -> list[Any]:
        value = obj.get(key)
        if value is None:
            if required:
                raise self.fail(f'missing field "{key}"')
            return []
        if not isinstance(value, list):
            raise self.fail(f'field "{key}" must be an array, got {type(value).__name__}')
        return value


def _with_ctx(path: str | os.PathLike[str], records: Records) -> Iterator[tuple[Ctx, dict]]:
    for i, (line, obj) in enumerate(records):
        yield Ctx(path, line, i), obj


def read_records(path: str | os.PathLike[str]) -> Iterator[tuple[Ctx, dict[str, Any]]]:
    _, records = json_records(path)
    return _with_ctx(path, records)


def qid(question: str) -> str:
    return "q" + hashlib.sha256(question.encode()).hexdigest()[:16]


def unique_ids(examples: list[Example]) -> None:
    seen: dict[str, int] = {}
    for ex in examples:
        n = seen.get(ex.id, 0) + 1
        seen[ex.id] = n
        if n > 1:
            ex.id = f"{ex.id}~{n}"


def strs(values: Iterable[Any]) -> list[str]:
    """Answers as distinct non-empty strings, order kept (numbers become text)."""
    out: list[str] = []
    for v in values:
        if isinstance(v, bool) or v is None:
            continue
        s = str(v).strip()
        if s and s not in out:
            out.append(s)
    return out


def answer_values(value: Any) -> list[str]:
    """Gold answers from the shapes datasets use: a string, a list (possibly of alias lists),
    or TriviaQA's ``{"value"/"Value", "aliases"/"Aliases", …}``."""
    if value is None:
        return []
    if isinstance(value, dict):
        lower = {k.lower(): v for k, v in value.items()}
        values = [lower.get("value")]
        for key in ("aliases", "answers", "text"):  # TriviaQA aliases; SQuAD-style {"text": […]}
            v = lower.get(key)
            values += v if isinstance(v, list) else [v]
        return strs(values)
    if isinstance(value, list):
        flat: list[Any] = []
        for v in value:
            flat.extend(v if isinstance(v, list) else [v])
        return strs(flat)
    return strs([value])


def yes_no(value: Any) -> str | None:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str) and value.strip().lower() in {"yes", "no", "true", "false"}:
        return "yes" if value.strip().lower() in {"yes", "true"} else "no"
    return None
