"""HotpotQA-style multi-hop QA: IRCoT's processed files (HotpotQA / 2Wiki / MuSiQue) and the
HotpotQA and 2WikiMultihopQA originals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchain.eval.datasets.base import (
    Ctx,
    Example,
    answer_values,
    qid,
    read_records,
    strs,
)
from searchain.retrieval._lines import iter_json_lines
from searchain.retrieval.hotpotqa import _walk as _walk_ircot


def read_ircot(path: Path) -> Iterator[Example]:
    """IRCoT processed format. Gold ids are the pooled ``<title>#<n>`` corpus ids."""
    # The pooled ids come from the corpus reader's own walk (one place assigns them); the
    # second pass only recovers each record's line number for error messages.
    lines = (line for line, _obj in iter_json_lines(path))
    for index, (record, _new, ids) in enumerate(_walk_ircot(path)):
        ctx = Ctx(path, next(lines, None), index)
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
            id=ctx.text(record, "question_id", "id", required=False) or qid(question),
            question=question.strip(),
            answers=strs(answers),
            task="multihop",
            gold_passages=[
                {"id": c["id"], "title": c["title"], "text": c["text"]}
                for c in contexts
                if c["is_supporting"]
            ],
            meta={"contexts": contexts},
        )


def _paragraphs(ctx: Ctx, record: dict[str, Any]) -> list[dict[str, Any]]:
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


def _supporting(ctx: Ctx, record: dict[str, Any]) -> dict[str, list[int]]:
    facts = record.get("supporting_facts") or []
    if isinstance(facts, dict):  # Hugging Face datasets layout
        facts = list(zip(facts.get("title", []), facts.get("sent_id", []), strict=False))
    out: dict[str, list[int]] = {}
    for fact in facts:
        if not (isinstance(fact, list | tuple) and len(fact) == 2):
            raise ctx.fail('field "supporting_facts" must be a list of [title, sentence] pairs')
        out.setdefault(str(fact[0]), []).append(fact[1])
    return out


def read_hotpotqa_like(path: Path, two_wiki: bool) -> Iterator[Example]:
    for ctx, record in read_records(path):
        question = ctx.text(record, "question")
        paragraphs = _paragraphs(ctx, record)
        support = _supporting(ctx, record)
        contexts = [
            {
                "id": p["title"],
                "title": p["title"],
                "text": p["text"],
                "is_supporting": p["title"] in support,
            }
            for p in paragraphs
        ]
        gold = [
            {
                "id": p["title"],
                "title": p["title"],
                "text": p["text"],
                "sentence_ids": support[p["title"]],
            }
            for p in paragraphs
            if p["title"] in support
        ]
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
            id=ctx.text(record, "_id", "id", required=False) or qid(question),
            question=question.strip(),
            answers=answer_values([answer, *ctx.array(record, "answer_aliases")]),
            task="multihop",
            gold_passages=gold,
            meta=meta,
        )
