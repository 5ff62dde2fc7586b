"""The format registry: one reader per format name, and detecting a file's format from its
extension and the fields of its first record."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from searchain.eval.datasets.alce import read_alce
from searchain.eval.datasets.base import QUESTION_KEYS, DatasetError, Example, json_records
from searchain.eval.datasets.celebrities import read_compositional_celebrities
from searchain.eval.datasets.csvfile import read_csv
from searchain.eval.datasets.fever import read_fever
from searchain.eval.datasets.hotpotqa import read_hotpotqa_like, read_ircot
from searchain.eval.datasets.musique import read_musique
from searchain.eval.datasets.qa import read_dpr_qas, read_qa, read_webquestions
from searchain.eval.datasets.strategyqa import read_strategyqa
from searchain.retrieval._lines import open_text

READERS: dict[str, Callable[[Path], Iterator[Example]]] = {
    "ircot": read_ircot,
    "hotpotqa": lambda p: read_hotpotqa_like(p, two_wiki=False),
    "2wikimultihopqa": lambda p: read_hotpotqa_like(p, two_wiki=True),
    "musique": read_musique,
    "strategyqa": read_strategyqa,
    "fever": read_fever,
    "webquestions": read_webquestions,
    "compositional-celebrities": read_compositional_celebrities,
    "alce": read_alce,
    "qa": read_qa,
    "csv": read_csv,
    "dpr-qas": read_dpr_qas,
}
FORMATS = tuple(READERS)


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
    _, records = json_records(path)
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
    if any(k in keys for k in QUESTION_KEYS):
        return "qa"
    raise DatasetError(
        path, None, f"cannot detect the dataset format from the fields {sorted(keys)}; pass fmt="
    )


# 2Wiki's question types HotpotQA lacks (both have "comparison"; only HotpotQA has "level").
_2WIKI_ONLY_TYPES = {"inference", "compositional", "bridge_comparison"}
