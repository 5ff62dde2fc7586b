"""Evaluation datasets: every benchmark file in ``../shared/data`` and the public formats users
bring, read into one record type, :class:`Example`.

Named datasets (``load_dataset("hotpotqa")``) map to the files of the data directory,
``$SEARCHAIN_DATA`` or else ``<repo>/../shared/data``:

=========================== ========================================================= ========
name                        file                                                      task
=========================== ========================================================= ========
hotpotqa                    hotpotqa/dev_subsampled.jsonl (IRCoT format)              multihop
musique                     musique/musique_train.json                                multihop
strategyqa                  strategyqa/strategyqa_dev.json                            yesno
fever                       fever/paper_dev.jsonl                                     factcheck
nq                          nq/NQ-open.dev.jsonl                                      open
nq-efficientqa              nq/NQ-open.efficientqa.test.1.1.jsonl                     open
webq / webq-train           webq/webq-test.jsonl / webq-train.jsonl                   open
compositional-celebrities   compositional_celebrities/compositional_celebrities.json  multihop
eli5                        alce/eli5.json                                            longform
qampari                     alce/qampari.json                                         list
bamboogle                   bamboogle/test.csv                                        multihop
=========================== ========================================================= ========

Any other argument is a path; its format is detected from the extension and the fields of
the first record (or forced with ``fmt=``):

* ``ircot``       IRCoT processed multi-hop QA (HotpotQA / 2Wiki / MuSiQue): ``question_id,
  question_text, answers_objects[{spans}], contexts[{title, paragraph_text, is_supporting}]``
* ``hotpotqa``    HotpotQA original (distractor or fullwiki): ``_id, question, answer,
  supporting_facts[[title, sent]], context[[title, [sentences]]], type, level``
* ``2wikimultihopqa``  as HotpotQA plus ``evidences`` (and 2Wiki's ``type`` values)
* ``musique``     MuSiQue (JSON array or JSONL): ``id, question, answer, answer_aliases,
  answerable, question_decomposition, paragraphs[{idx, title, paragraph_text, is_supporting}]``
* ``strategyqa``  ``qid, question, answer (bool), facts, decomposition, term, description``
* ``fever``       ``id, claim, label, verifiable, evidence[[[ann, ev, title, sent]]]``
* ``webquestions`` WebQuestions original: ``utterance, targetValue "(list (description …))"``
* ``alce``        ALCE ASQA (``qa_pairs``, ``annotations``), QAMPARI (``answers`` as alias
  lists) and ELI5 (``claims``), with their retrieved ``docs`` kept in ``meta``
* ``compositional-celebrities``  ``{"data": [{Q1, A1, Q2, A2, Question, Answer, category}]}``
* ``qa``          any ``{id?, question, answers | answer, label?, task?}`` JSON/JSONL record:
  NQ-open (``question, answer[]``), EfficientQA, WebQuestions as used by LLM-URL
  (``id, question, answer[]``), TriviaQA (original ``{"Data": […]}`` with
  ``Question, Answer{Value, Aliases}``, or Hugging Face / DPR JSONL), plain ``{id, question,
  answers}`` files
* ``csv``         a header row with ``question`` and ``answer`` columns (Bamboogle)
* ``dpr-qas``     DPR's ``question<TAB>["answer", …]`` files (``nq-test.qa.csv``)

Files may be gzip-compressed. A malformed record raises :class:`DatasetError` (the corpus
readers' :class:`~searchain.retrieval.CorpusError`, a ``ValueError``) whose message starts
with ``<path>:<line>:``.

Ids are the dataset's own where it has them, else ``q`` + 16 hex digits of the SHA-256 of the
question; a repeated id gets ``~2``, ``~3``… so ids are unique and depend only on the file.
Gold passage ids agree with the ids the corpus readers give the same data: IRCoT files use
the pooled ``<title>#<n>`` ids of :func:`searchain.retrieval.read_hotpotqa_pool`, MuSiQue the
``<title>#<n>`` ids of its pooled corpus file (``musique_train_corpus.json`` read with
:func:`~searchain.retrieval.read_documents`), HotpotQA / 2Wiki originals the article title.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

from searchain.retrieval._lines import (
    CorpusError,
    iter_json_array,
    iter_json_lines,
    open_binary,
    open_text,
)
from searchain.retrieval.corpus import corpus_fingerprint
from searchain.retrieval.hotpotqa import _walk as _walk_ircot

__all__ = [
    "DATASETS",
    "DATA_ENV",
    "FORMATS",
    "TASKS",
    "DatasetError",
    "Example",
    "data_dir",
    "dataset_fingerprint",
    "dataset_path",
    "detect_dataset_format",
    "load_dataset",
    "subsample",
]

DATA_ENV = "SEARCHAIN_DATA"
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


@dataclass(frozen=True, slots=True)
class _Named:
    path: str
    fmt: str
    task: str | None = None  # overrides the format's task


DATASETS: dict[str, _Named] = {
    "hotpotqa": _Named("hotpotqa/dev_subsampled.jsonl", "ircot"),
    "musique": _Named("musique/musique_train.json", "musique"),
    "strategyqa": _Named("strategyqa/strategyqa_dev.json", "strategyqa"),
    "fever": _Named("fever/paper_dev.jsonl", "fever"),
    "nq": _Named("nq/NQ-open.dev.jsonl", "qa"),
    "nq-efficientqa": _Named("nq/NQ-open.efficientqa.test.1.1.jsonl", "qa"),
    "webq": _Named("webq/webq-test.jsonl", "qa"),
    "webq-train": _Named("webq/webq-train.jsonl", "qa"),
    "compositional-celebrities": _Named(
        "compositional_celebrities/compositional_celebrities.json", "compositional-celebrities"
    ),
    "eli5": _Named("alce/eli5.json", "alce"),
    "qampari": _Named("alce/qampari.json", "alce"),
    "bamboogle": _Named("bamboogle/test.csv", "csv", task="multihop"),
}
_ALIASES = {
    "hotpot": "hotpotqa",
    "nq-open": "nq",
    "efficientqa": "nq-efficientqa",
    "webq-test": "webq",
    "webquestions": "webq",
    "compositional_celebrities": "compositional-celebrities",
    "cc": "compositional-celebrities",
    "alce-eli5": "eli5",
    "alce-qampari": "qampari",
}


def data_dir() -> Path:
    """``$SEARCHAIN_DATA``, else ``../shared/data`` next to the repository."""
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[3]  # src/searchain/eval/datasets.py -> repo
    return repo.parent / "shared" / "data"


def _named(name: str) -> tuple[str, _Named] | None:
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    spec = DATASETS.get(key)
    return (key, spec) if spec is not None else None


def dataset_path(name_or_path: str | os.PathLike[str]) -> Path:
    """The file a dataset name stands for, or the path itself."""
    named = _named(str(name_or_path))
    if named is not None:
        path = data_dir() / named[1].path
        if not path.is_file():
            raise FileNotFoundError(
                f"dataset {named[0]!r}: {path} not found (set ${DATA_ENV} to the data directory)"
            )
        return path
    path = Path(name_or_path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no dataset named {str(name_or_path)!r} and no such file; "
            f"named datasets: {', '.join(DATASETS)}"
        )
    return path


def dataset_fingerprint(name_or_path: str | os.PathLike[str]) -> dict[str, Any]:
    """Identify a dataset file's exact content: ``{"path", "size", "sha256"}`` (+ ``"name"``)."""
    fp = corpus_fingerprint(dataset_path(name_or_path))
    named = _named(str(name_or_path))
    if named is not None:
        fp["name"] = named[0]
    return fp


def load_dataset(
    name_or_path: str | os.PathLike[str],
    *,
    limit: int | None = None,
    seed: int | None = 0,
    fmt: str | None = None,
) -> list[Example]:
    """Read a named dataset or a file into :class:`Example` records, in file order.

    ``limit`` keeps that many items: with a ``seed``, a seeded shuffle picks them (the same
    items on every machine and Python version, see :func:`subsample`) and they are returned
    in file order; ``seed=None`` takes the first ``limit``. A dataset name wins over a file
    of the same name in the working directory (write ``./nq`` for the file). ``fmt`` forces
    a format (one of :data:`FORMATS`) instead of detecting it.
    """
    named = _named(str(name_or_path))
    path = dataset_path(name_or_path)
    task = None
    if named is not None:
        fmt = fmt or named[1].fmt
        task = named[1].task
    fmt = fmt or detect_dataset_format(path)
    try:
        reader = _READERS[fmt]
    except KeyError:
        raise ValueError(f"unknown dataset format {fmt!r}; expected one of {FORMATS}") from None
    examples = list(reader(path))
    if task is not None:
        for ex in examples:
            ex.task = task
    _unique_ids(examples)
    for ex in examples:
        ex.meta.setdefault("format", fmt)
        if named is not None:
            ex.meta.setdefault("dataset", named[0])
    return subsample(examples, limit, seed)


def subsample(examples: Sequence[Example], limit: int | None, seed: int | None) -> list[Example]:
    """``limit`` examples, deterministically, in their original order.

    ``seed=None``: the first ``limit``. Otherwise the examples are shuffled by the SHA-256 of
    ``(seed, position)`` — a seeded shuffle that, unlike :mod:`random`, is guaranteed to stay
    the same across Python versions — and the first ``limit`` of the shuffle are returned
    sorted back to file order. A larger ``limit`` with the same seed keeps every item a
    smaller one picked.
    """
    if limit is None:
        return list(examples)
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    if seed is None or limit >= len(examples):
        return list(examples[:limit])

    def key(i: int) -> bytes:
        return hashlib.sha256(f"{seed}\x00{i}".encode()).digest()

    chosen = sorted(sorted(range(len(examples)), key=key)[:limit])
    return [examples[i] for i in chosen]


# -- format detection ----------------------------------------------------------------------


def detect_dataset_format(path: str | os.PathLike[str]) -> str:
    """Guess a file's format from its extension and the fields of its first record."""
    name = str(path).lower().removesuffix(".gz")
    if name.endswith((".csv", ".tsv")):
        first = _first_line(path)
        if "\t" in first:
            cells = first.split("\t")
            if len(cells) >= 2 and cells[1].lstrip().startswith("["):
                return "dpr-qas"
        return "csv"
    _, records = _json_records(path)
    for _line, obj in records:
        return _format_of(obj, path)
    raise DatasetError(path, None, "the file holds no records")


def _first_line(path: str | os.PathLike[str]) -> str:
    with open_text(path) as f:
        for line in f:
            if line.strip():
                return line.lstrip("\ufeff")
    return ""


def _format_of(obj: dict[str, Any], path: str | os.PathLike[str]) -> str:
    keys = set(obj)
    if "contexts" in keys and "question_text" in keys:
        return "ircot"
    if "paragraphs" in keys and ("question_decomposition" in keys or "answer_aliases" in keys):
        return "musique"
    if isinstance(obj.get("context"), list | dict) and keys & {"supporting_facts", "_id", "level"}:
        if "level" not in keys and (
            keys & {"evidences", "entity_ids"} or obj.get("type") in _2WIKI_ONLY_TYPES
        ):
            return "2wikimultihopqa"
        return "hotpotqa"
    if "qid" in keys and ("term" in keys or "facts" in keys or "decomposition" in keys):
        return "strategyqa"
    if "claim" in keys:
        return "fever"
    if {"Q1", "Q2", "Question"} <= keys:
        return "compositional-celebrities"
    if "qa_pairs" in keys or "claims" in keys or "question_ctx" in keys or "docs" in keys:
        return "alce"
    answers = obj.get("answers")
    if isinstance(answers, list) and answers and all(isinstance(a, list) for a in answers):
        return "alce"  # QAMPARI: one alias list per answer
    if "utterance" in keys and "targetValue" in keys:
        return "webquestions"
    if any(k in keys for k in _QUESTION_KEYS):
        return "qa"
    raise DatasetError(
        path, None, f"cannot detect the dataset format from the fields {sorted(keys)}; pass fmt="
    )


# 2Wiki's question types HotpotQA lacks (both have "comparison"; only HotpotQA has "level").
_2WIKI_ONLY_TYPES = {"inference", "compositional", "bridge_comparison"}


# -- reading records -----------------------------------------------------------------------

Records = Iterator[tuple[int | None, dict[str, Any]]]


def _json_records(path: str | os.PathLike[str]) -> tuple[str, Records]:
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
        if isinstance(value, list) and not any(k in obj for k in _QUESTION_KEYS):
            return value
    return None


def _wrapped_records(path: str | os.PathLike[str], records: list[Any]) -> Records:
    for i, obj in enumerate(records):
        if not isinstance(obj, dict):
            raise DatasetError(path, None, f"record {i}: expected a JSON object")
        yield None, obj


class _Ctx:
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


def _with_ctx(path: str | os.PathLike[str], records: Records) -> Iterator[tuple[_Ctx, dict]]:
    for i, (line, obj) in enumerate(records):
        yield _Ctx(path, line, i), obj


def _records(path: str | os.PathLike[str]) -> Iterator[tuple[_Ctx, dict[str, Any]]]:
    _, records = _json_records(path)
    return _with_ctx(path, records)


def _qid(question: str) -> str:
    return "q" + hashlib.sha256(question.encode()).hexdigest()[:16]


def _unique_ids(examples: list[Example]) -> None:
    seen: dict[str, int] = {}
    for ex in examples:
        n = seen.get(ex.id, 0) + 1
        seen[ex.id] = n
        if n > 1:
            ex.id = f"{ex.id}~{n}"


def _strs(values: Iterable[Any]) -> list[str]:
    """Answers as distinct non-empty strings, order kept (numbers become text)."""
    out: list[str] = []
    for v in values:
        if isinstance(v, bool) or v is None:
            continue
        s = str(v).strip()
        if s and s not in out:
            out.append(s)
    return out


def _answer_values(value: Any) -> list[str]:
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
        return _strs(values)
    if isinstance(value, list):
        flat: list[Any] = []
        for v in value:
            flat.extend(v if isinstance(v, list) else [v])
        return _strs(flat)
    return _strs([value])


# -- the format readers --------------------------------------------------------------------


def _read_ircot(path: Path) -> Iterator[Example]:
    """IRCoT processed format. Gold ids are the pooled ``<title>#<n>`` corpus ids."""
    # The pooled ids come from the corpus reader's own walk (one place assigns them); the
    # second pass only recovers each record's line number for error messages.
    lines = (line for line, _obj in iter_json_lines(path))
    for index, (record, _new, ids) in enumerate(_walk_ircot(path)):
        ctx = _Ctx(path, next(lines, None), index)
        question = ctx.text(record, "question_text", "question")
        answers: list[str] = []
        for obj in ctx.array(record, "answers_objects"):
            if not isinstance(obj, dict):
                raise ctx.fail('field "answers_objects" must be an array of objects')
            spans = obj.get("spans") or []
            answers += spans if isinstance(spans, list) else [spans]
            if not spans and obj.get("number"):
                answers.append(obj["number"])
            date = obj.get("date") or {}
            if not spans and isinstance(date, dict) and any(date.values()):
                answers.append(" ".join(str(date[k]) for k in ("day", "month", "year") if date[k]))
        contexts = [
            {
                "id": pid,
                "title": c["title"],
                "text": c["paragraph_text"],
                "is_supporting": bool(c.get("is_supporting")),
            }
            for pid, c in zip(ids, record["contexts"], strict=True)
        ]
        yield Example(
            id=ctx.text(record, "question_id", "id", required=False) or _qid(question),
            question=question.strip(),
            answers=_strs(answers),
            task="multihop",
            gold_passages=[
                {"id": c["id"], "title": c["title"], "text": c["text"]}
                for c in contexts
                if c["is_supporting"]
            ],
            meta={"contexts": contexts},
        )


def _paragraphs(ctx: _Ctx, record: dict[str, Any]) -> list[dict[str, Any]]:
    """HotpotQA / 2Wiki ``context``: ``[[title, [sentence, …]], …]`` (or HF's columnar
    ``{"title": […], "sentences": […]}``) joined into paragraphs."""
    context = record.get("context")
    if isinstance(context, dict):  # Hugging Face datasets layout
        pairs = list(zip(context.get("title", []), context.get("sentences", []), strict=False))
    else:
        pairs = context or []
    out = []
    for item in pairs:
        if not (isinstance(item, list | tuple) and len(item) == 2 and isinstance(item[0], str)):
            raise ctx.fail('field "context" must be a list of [title, [sentences]] pairs')
        title, sentences = item
        if isinstance(sentences, str):
            sentences = [sentences]
        out.append({"title": title, "text": "".join(sentences).strip(), "sentences": sentences})
    return out


def _supporting(ctx: _Ctx, record: dict[str, Any]) -> dict[str, list[int]]:
    facts = record.get("supporting_facts") or []
    if isinstance(facts, dict):  # Hugging Face datasets layout
        facts = list(zip(facts.get("title", []), facts.get("sent_id", []), strict=False))
    out: dict[str, list[int]] = {}
    for fact in facts:
        if not (isinstance(fact, list | tuple) and len(fact) == 2):
            raise ctx.fail('field "supporting_facts" must be a list of [title, sentence] pairs')
        out.setdefault(str(fact[0]), []).append(fact[1])
    return out


def _read_hotpotqa_like(path: Path, two_wiki: bool) -> Iterator[Example]:
    for ctx, record in _records(path):
        question = ctx.text(record, "question")
        paragraphs = _paragraphs(ctx, record)
        support = _supporting(ctx, record)
        contexts = [
            {"id": p["title"], "title": p["title"], "text": p["text"],
             "is_supporting": p["title"] in support}
            for p in paragraphs
        ]  # fmt: skip
        gold = [
            {"id": p["title"], "title": p["title"], "text": p["text"],
             "sentence_ids": support[p["title"]]}
            for p in paragraphs
            if p["title"] in support
        ]  # fmt: skip
        # Supporting titles missing from the context (fullwiki files): ids without text.
        have = {g["title"] for g in gold}
        gold += [
            {"id": t, "title": t, "text": "", "sentence_ids": s}
            for t, s in support.items()
            if t not in have
        ]
        meta: dict[str, Any] = {"contexts": contexts}
        for key in ("type", "level"):
            if key in record:
                meta[key] = record[key]
        if two_wiki and "evidences" in record:
            meta["evidences"] = record["evidences"]
        answer = record.get("answer")
        yield Example(
            id=ctx.text(record, "_id", "id", required=False) or _qid(question),
            question=question.strip(),
            answers=_answer_values([answer, *ctx.array(record, "answer_aliases")]),
            task="multihop",
            gold_passages=gold,
            meta=meta,
        )


def _read_musique(path: Path) -> Iterator[Example]:
    """MuSiQue. Gold ids: ``<title>#<n>``, the n-th distinct paragraph with that title when
    all questions' paragraphs are pooled in file order — the ids the pooled corpus file
    (``musique_train_corpus.json``) gets from :func:`searchain.retrieval.read_documents`."""
    pool: dict[tuple[str, str], str] = {}
    per_title: dict[str, int] = {}
    for ctx, record in _records(path):
        question = ctx.text(record, "question", "question_text")
        contexts = []
        for p in ctx.array(record, "paragraphs"):
            if not isinstance(p, dict):
                raise ctx.fail('field "paragraphs" must be an array of objects')
            title = ctx.text(p, "title")
            text = ctx.text(p, "paragraph_text", "text")
            pid = pool.get((title, text))
            if pid is None:
                n = per_title.get(title, 0)
                per_title[title] = n + 1
                pid = pool[(title, text)] = f"{title}#{n}"
            contexts.append(
                {"id": pid, "title": title, "text": text, "idx": p.get("idx"),
                 "is_supporting": bool(p.get("is_supporting"))}
            )  # fmt: skip
        answers = _answer_values([record.get("answer"), *ctx.array(record, "answer_aliases")])
        yield Example(
            id=ctx.text(record, "id", required=False) or _qid(question),
            question=question.strip(),
            answers=answers,
            task="multihop",
            gold_passages=[
                {"id": c["id"], "title": c["title"], "text": c["text"], "idx": c["idx"]}
                for c in contexts
                if c["is_supporting"]
            ],
            meta={
                "contexts": contexts,
                "answerable": record.get("answerable", True),
                "decomposition": ctx.array(record, "question_decomposition"),
            },
        )


def _yes_no(value: Any) -> str | None:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str) and value.strip().lower() in {"yes", "no", "true", "false"}:
        return "yes" if value.strip().lower() in {"yes", "true"} else "no"
    return None


def _read_strategyqa(path: Path) -> Iterator[Example]:
    for ctx, record in _records(path):
        question = ctx.text(record, "question")
        raw = record.get("answer")
        label = _yes_no(raw)
        if raw is not None and label is None:
            raise ctx.fail(f'field "answer" must be a boolean, got {raw!r}')
        meta: dict[str, Any] = {k: record[k] for k in ("term", "description", "decomposition",
                                                       "evidence") if k in record}  # fmt: skip
        meta["facts"] = ctx.array(record, "facts")
        yield Example(
            id=ctx.text(record, "qid", "id", required=False) or _qid(question),
            question=question.strip(),
            answers=[label] if label else [],
            label=label,
            task="yesno",
            meta=meta,
        )


def _fever_label(ctx: _Ctx, value: str | None) -> str | None:
    if value is None:
        return None
    label = " ".join(value.upper().split())
    label = {"NEI": "NOT ENOUGH INFO", "NOT ENOUGH INFORMATION": "NOT ENOUGH INFO"}.get(
        label, label
    )
    if label not in FEVER_LABELS:
        raise ctx.fail(f'field "label" must be one of {", ".join(FEVER_LABELS)}, got {value!r}')
    return label


def _read_fever(path: Path) -> Iterator[Example]:
    """FEVER. Gold passages are the evidence sentences (``<wiki title>#<sentence id>``, no
    text: FEVER ships none); ``meta["evidence_sets"]`` keeps the sets (any one suffices)."""
    for ctx, record in _records(path):
        claim = ctx.text(record, "claim")
        label = _fever_label(ctx, ctx.text(record, "label", required=False))
        sets, gold, seen = [], [], set()
        for group in ctx.array(record, "evidence"):
            members = []
            for ev in group if isinstance(group, list) else []:
                if isinstance(ev, list) and len(ev) == 4 and ev[2] is not None:
                    title, sent = str(ev[2]), ev[3]
                    members.append([title, sent])
                    if (title, sent) not in seen:
                        seen.add((title, sent))
                        gold.append({"id": f"{title}#{sent}", "title": title, "text": "",
                                     "sentence_id": sent})  # fmt: skip
            if members:
                sets.append(members)
        meta: dict[str, Any] = {"evidence_sets": sets}
        if "verifiable" in record:
            meta["verifiable"] = record["verifiable"]
        yield Example(
            id=ctx.text(record, "id", required=False) or _qid(claim),
            question=claim.strip(),
            answers=[label] if label else [],
            label=label,
            task="factcheck",
            gold_passages=gold,
            meta=meta,
        )


_QUESTION_KEYS = ("question", "Question", "query", "question_text", "utterance")
_ANSWER_KEYS = ("answers", "answer", "Answer", "Answers", "target", "targets")
_ID_KEYS = ("id", "_id", "qid", "question_id", "QuestionId", "example_id", "sample_id")
_QA_META = ("def_correct_predictions", "poss_correct_predictions", "def_incorrect_predictions",
            "question_source", "QuestionSource")  # fmt: skip


def _qa_example(ctx: _Ctx, record: dict[str, Any]) -> Example:
    question = ctx.text(record, *_QUESTION_KEYS)
    answers: list[str] = []
    for key in _ANSWER_KEYS:
        if key in record:
            answers = _answer_values(record[key])
            break
    meta: dict[str, Any] = {k: record[k] for k in _QA_META if k in record}
    for key in ("answer", "Answer"):  # TriviaQA's normalised aliases
        value = record.get(key)
        if isinstance(value, dict):
            lower = {k.lower(): v for k, v in value.items()}
            if lower.get("normalized_aliases") or lower.get("normalizedaliases"):
                meta["normalized_aliases"] = lower.get("normalized_aliases") or lower.get(
                    "normalizedaliases"
                )
    label = None
    raw_label = record.get("label")
    if raw_label is not None:
        label = _yes_no(raw_label) or " ".join(str(raw_label).split())
        if label.upper() in FEVER_LABELS:
            label = label.upper()
    task = record.get("task")
    if task not in TASKS:
        if label in ("yes", "no"):
            task = "yesno"
        elif label in FEVER_LABELS:
            task = "factcheck"
        else:
            task = "open"
    if label is not None and not answers:
        answers = [label]
    claims = record.get("claims")
    return Example(
        id=ctx.text(record, *_ID_KEYS, required=False) or _qid(question),
        question=question.strip(),
        answers=answers,
        label=label,
        task=task,
        claims=_strs(claims) if isinstance(claims, list) else [],
        meta=meta,
    )


def _read_qa(path: Path) -> Iterator[Example]:
    for ctx, record in _records(path):
        yield _qa_example(ctx, record)


_DESCRIPTION = re.compile(r'\(description\s+(?:"((?:[^"\\]|\\.)*)"|([^()]*?))\s*\)')


def _read_webquestions(path: Path) -> Iterator[Example]:
    """WebQuestions original: ``targetValue`` is ``(list (description X) (description "Y Z"))``."""
    for ctx, record in _records(path):
        question = ctx.text(record, "utterance", "question")
        target = ctx.text(record, "targetValue")
        answers = [
            (quoted.replace('\\"', '"') if quoted else bare)
            for quoted, bare in _DESCRIPTION.findall(target)
        ]
        meta = {"url": record["url"]} if "url" in record else {}
        yield Example(
            id=ctx.text(record, "id", required=False) or _qid(question),
            question=question.strip(),
            answers=_strs(answers),
            task="open",
            meta=meta,
        )


def _read_compositional_celebrities(path: Path) -> Iterator[Example]:
    for ctx, record in _records(path):
        question = ctx.text(record, "Question")
        subs = []
        for q, a in (("Q1", "A1"), ("Q2", "A2")):
            subs.append({"question": ctx.text(record, q), "answers": _answer_values(record.get(a))})
        meta: dict[str, Any] = {
            "category": ctx.text(record, "category", required=False),
            "sub_questions": subs,
        }
        for key in ("person", "person_id"):
            if key in record:
                meta[key] = record[key]
        yield Example(
            id=ctx.text(record, "id", required=False) or _qid(question),
            question=question.strip(),
            answers=_answer_values(record.get("Answer")),
            task="multihop",
            meta=meta,
        )


def _read_alce(path: Path) -> Iterator[Example]:
    """ALCE: ASQA (``qa_pairs``), QAMPARI (alias lists) and ELI5 (``claims``). Answer groups
    (one alias list per required answer) go to ``meta["answer_groups"]``, the long reference
    answers to ``meta["long_answers"]``, the retrieved ``docs`` to ``meta["docs"]``."""
    for ctx, record in _records(path):
        question = ctx.text(record, "question")
        meta: dict[str, Any] = {}
        claims: list[str] = []
        if "qa_pairs" in record:  # ASQA
            groups = [
                _answer_values(qa.get("short_answers")) for qa in ctx.array(record, "qa_pairs")
            ]
            meta.update(alce="asqa", answer_groups=groups, qa_pairs=record["qa_pairs"])
            longs = [a.get("long_answer") for a in ctx.array(record, "annotations")
                     if isinstance(a, dict) and a.get("long_answer")]  # fmt: skip
            if record.get("answer") and not longs:
                longs = [record["answer"]]
            meta["long_answers"] = longs
            answers = _strs(a for g in groups for a in g)
            task = "longform"
        elif "claims" in record or "question_ctx" in record:  # ELI5
            claims = _strs(ctx.array(record, "claims"))
            answer = ctx.text(record, "answer", required=False)
            meta.update(alce="eli5", long_answers=[answer] if answer else [])
            if "question_ctx" in record:
                meta["question_ctx"] = record["question_ctx"]
            answers = [answer] if answer else []
            task = "longform"
        else:  # QAMPARI
            raw = ctx.array(record, "answers")
            groups = [_answer_values(g) for g in raw]
            meta.update(alce="qampari", answer_groups=groups)
            answers = _strs(a for g in groups for a in g)
            task = "list"
        if "docs" in record:
            meta["docs"] = ctx.array(record, "docs")
        yield Example(
            id=ctx.text(record, "id", "sample_id", required=False) or _qid(question),
            question=question.strip(),
            answers=answers,
            task=task,
            claims=claims,
            meta=meta,
        )


def _read_csv(path: Path) -> Iterator[Example]:
    """A CSV/TSV file with a header naming a question and an answer column (Bamboogle's
    ``Question,Answer``). An answer cell holding a JSON list gives several answers."""
    delimiter = "\t" if str(path).lower().removesuffix(".gz").endswith(".tsv") else ","
    with open_text(path) as f:
        text = f.read().lstrip("\ufeff")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as e:
        raise DatasetError(path, 1, f"invalid CSV ({e})") from None
    lower = [h.strip().lower() for h in header]

    def column(*names: str) -> int | None:
        return next((lower.index(n) for n in names if n in lower), None)

    q_col = column("question", "query", "utterance")
    a_col = column("answer", "answers", "gold", "target")
    id_col = column("id", "qid", "question_id")
    if q_col is None:
        raise DatasetError(path, 1, f'no "question" column in the header {header}')
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise DatasetError(path, reader.line_num, f"invalid CSV ({e})") from None
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise DatasetError(
                path, reader.line_num, f"expected {len(header)} columns, got {len(row)}"
            )
        question = row[q_col].strip()
        if not question:
            raise DatasetError(path, reader.line_num, "empty question")
        answers: list[str] = []
        if a_col is not None:
            cell = row[a_col].strip()
            if cell.startswith("["):
                try:
                    answers = _answer_values(json.loads(cell))
                except json.JSONDecodeError:
                    answers = [cell]
            elif cell:
                answers = [cell]
        yield Example(
            id=(row[id_col].strip() if id_col is not None else "") or _qid(question),
            question=question,
            answers=answers,
            task="open",
        )


def _read_dpr_qas(path: Path) -> Iterator[Example]:
    """DPR's QA files: ``question<TAB>["answer", …]`` per line (a Python list literal)."""
    with open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\r\n").lstrip("\ufeff")
            if not line.strip():
                continue
            question, sep, answers_text = line.partition("\t")
            if not sep:
                raise DatasetError(path, lineno, "expected question<TAB>[answers]")
            try:
                answers = ast.literal_eval(answers_text.strip())
            except (ValueError, SyntaxError):
                raise DatasetError(path, lineno, "the answers are not a list literal") from None
            if not isinstance(answers, list | tuple):
                raise DatasetError(path, lineno, "the answers are not a list literal")
            question = question.strip()
            yield Example(id=_qid(question), question=question, answers=_answer_values(
                list(answers)), task="open")  # fmt: skip


_READERS: dict[str, Callable[[Path], Iterator[Example]]] = {
    "ircot": _read_ircot,
    "hotpotqa": lambda p: _read_hotpotqa_like(p, two_wiki=False),
    "2wikimultihopqa": lambda p: _read_hotpotqa_like(p, two_wiki=True),
    "musique": _read_musique,
    "strategyqa": _read_strategyqa,
    "fever": _read_fever,
    "webquestions": _read_webquestions,
    "compositional-celebrities": _read_compositional_celebrities,
    "alce": _read_alce,
    "qa": _read_qa,
    "csv": _read_csv,
    "dpr-qas": _read_dpr_qas,
}
FORMATS = tuple(_READERS)
