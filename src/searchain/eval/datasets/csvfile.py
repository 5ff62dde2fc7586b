"""CSV / TSV files with a question and an answer column (Bamboogle)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

from searchain.eval.datasets.base import DatasetError, Example, answer_values, qid
from searchain.retrieval._lines import open_text


def read_csv(path: Path) -> Iterator[Example]:
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
                    answers = answer_values(json.loads(cell))
                except json.JSONDecodeError:
                    answers = [cell]
            elif cell:
                answers = [cell]
        yield Example(
            id=(row[id_col].strip() if id_col is not None else "") or qid(question),
            question=question,
            answers=answers,
            task="open",
        )
