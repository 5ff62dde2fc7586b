"""MuSiQue (JSON array or JSONL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from searchain.eval.datasets.base import Example, answer_values, qid, read_records


def read_musique(path: Path) -> Iterator[Example]:
    """MuSiQue. Gold ids: ``<title>#<n>``, the n-th distinct paragraph with that title when
    all questions' paragraphs are pooled in file order — the ids the pooled corpus file
    (``musique_train_corpus.json``) gets from :func:`searchain.retrieval.read_documents`."""
    pool: dict[tuple[str, str], str] = {}
    per_title: dict[str, int] = {}
    for ctx, record in read_records(path):
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
                {
                    "id": pid,
                    "title": title,
                    "text": text,
                    "idx": p.get("idx"),
                    "is_supporting": bool(p.get("is_supporting")),
                }
            )
        answers = answer_values([record.get("answer"), *ctx.array(record, "answer_aliases")])
        yield Example(
            id=ctx.text(record, "id", required=False) or qid(question),
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
