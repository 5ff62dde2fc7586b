"""ALCE: ASQA, QAMPARI and ELI5, with their retrieved documents."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchain.eval.datasets.base import Example, answer_values, qid, read_records, strs


def read_alce(path: Path) -> Iterator[Example]:
    """ALCE: ASQA (``qa_pairs``), QAMPARI (alias lists) and ELI5 (``claims``). Answer groups
    (one alias list per required answer) go to ``meta["answer_groups"]``, the long reference
    answers to ``meta["long_answers"]``, the retrieved ``docs`` to ``meta["docs"]``."""
    for ctx, record in read_records(path):
        question = ctx.text(record, "question")
        meta: dict[str, Any] = {}
        claims: list[str] = []
        if "qa_pairs" in record:  # ASQA
            groups = [
                answer_values(qa.get("short_answers")) for qa in ctx.array(record, "qa_pairs")
            ]
            meta.update(alce="asqa", answer_groups=groups, qa_pairs=record["qa_pairs"])
            longs = [
                a.get("long_answer")
                for a in ctx.array(record, "annotations")
                if isinstance(a, dict) and a.get("long_answer")
            ]
            if record.get("answer") and not longs:
                longs = [record["answer"]]
            meta["long_answers"] = longs
            answers = strs(a for g in groups for a in g)
            task = "longform"
        elif "claims" in record or "question_ctx" in record:  # ELI5
            claims = strs(ctx.array(record, "claims"))
            answer = ctx.text(record, "answer", required=False)
            meta.update(alce="eli5", long_answers=[answer] if answer else [])
            if "question_ctx" in record:
                meta["question_ctx"] = record["question_ctx"]
            answers = [answer] if answer else []
            task = "longform"
        else:  # QAMPARI
            raw = ctx.array(record, "answers")
            groups = [answer_values(g) for g in raw]
            meta.update(alce="qampari", answer_groups=groups)
            answers = strs(a for g in groups for a in g)
            task = "list"
        if "docs" in record:
            meta["docs"] = ctx.array(record, "docs")
        yield Example(
            id=ctx.text(record, "id", "sample_id", required=False) or qid(question),
            question=question.strip(),
            answers=answers,
            task=task,
            claims=claims,
            meta=meta,
        )
