"""Compositional Celebrities (Self-Ask): two-hop questions with their sub-questions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchain.eval.datasets.base import Example, answer_values, qid, read_records


def read_compositional_celebrities(path: Path) -> Iterator[Example]:
    for ctx, record in read_records(path):
        question = ctx.text(record, "Question")
        subs = []
        for q, a in (("Q1", "A1"), ("Q2", "A2")):
            subs.append({"question": ctx.text(record, q), "answers": answer_values(record.get(a))})
        meta: dict[str, Any] = {
            "category": ctx.text(record, "category", required=False),
            "sub_questions": subs,
        }
        for key in ("person", "person_id"):
            if key in record:
                meta[key] = record[key]
        yield Example(
            id=ctx.text(record, "id", required=False) or qid(question),
            question=question.strip(),
            answers=answer_values(record.get("Answer")),
            task="multihop",
            meta=meta,
        )
