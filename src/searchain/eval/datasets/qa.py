"""Open-domain QA: any ``{id?, question, answers | answer, …}`` record (NQ-open,
EfficientQA, WebQuestions as LLM-URL uses it, TriviaQA), the WebQuestions original and DPR's
``question<TAB>[answers]`` files."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchain.eval.datasets.base import (
    FEVER_LABELS,
    QUESTION_KEYS,
    TASKS,
    Ctx,
    DatasetError,
    Example,
    answer_values,
    qid,
    read_records,
    strs,
    yes_no,
)
from searchain.retrieval._lines import open_text

_ANSWER_KEYS = ("answers", "answer", "Answer", "Answers", "target", "targets")
_ID_KEYS = ("id", "_id", "qid", "question_id", "QuestionId", "example_id", "sample_id")
_QA_META = (
    "def_correct_predictions",
    "poss_correct_predictions",
    "def_incorrect_predictions",
    "question_source",
    "QuestionSource",
)


def _qa_example(ctx: Ctx, record: dict[str, Any]) -> Example:
    question = ctx.text(record, *QUESTION_KEYS)
    answers: list[str] = []
    for key in _ANSWER_KEYS:
        if key in record:
            answers = answer_values(record[key])
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
        label = yes_no(raw_label) or " ".join(str(raw_label).split())
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
        id=ctx.text(record, *_ID_KEYS, required=False) or qid(question),
        question=question.strip(),
        answers=answers,
        label=label,
        task=task,
        claims=strs(claims) if isinstance(claims, list) else [],
        meta=meta,
    )


def read_qa(path: Path) -> Iterator[Example]:
    for ctx, record in read_records(path):
        yield _qa_example(ctx, record)


_DESCRIPTION = re.compile(r'\(description\s+(?:"((?:[^"\\]|\\.)*)"|([^()]*?))\s*\)')


def read_webquestions(path: Path) -> Iterator[Example]:
    """WebQuestions original: ``targetValue`` is ``(list (description X) (description "Y Z"))``."""
    for ctx, record in read_records(path):
        question = ctx.text(record, "utterance", "question")
        target = ctx.text(record, "targetValue")
        answers = [
            (quoted.replace('\\"', '"') if quoted else bare)
            for quoted, bare in _DESCRIPTION.findall(target)
        ]
        meta = {"url": record["url"]} if "url" in record else {}
        yield Example(
            id=ctx.text(record, "id", required=False) or qid(question),
            question=question.strip(),
            answers=strs(answers),
            task="open",
            meta=meta,
        )


def read_dpr_qas(path: Path) -> Iterator[Example]:
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
            yield Example(
                id=qid(question),
                question=question,
                answers=answer_values(list(answers)),
                task="open",
            )
