"""StrategyQA: yes/no questions with facts and decompositions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchain.eval.datasets.base import Example, qid, read_records, yes_no


def read_strategyqa(path: Path) -> Iterator[Example]:
    for ctx, record in read_records(path):
        question = ctx.text(record, "question")
        raw = record.get("answer")
        label = yes_no(raw)
        if raw is not None and label is None:
            raise ctx.fail(f'field "answer" must be a boolean, got {raw!r}')
        meta: dict[str, Any] = {
            k: record[k]
            for k in ("term", "description", "decomposition", "evidence")
            if k in record
        }
        meta["facts"] = ctx.array(record, "facts")
        yield Example(
            id=ctx.text(record, "qid", "id", required=False) or qid(question),
            question=question.strip(),
            answers=[label] if label else [],
            label=label,
            task="yesno",
            meta=meta,
        )
