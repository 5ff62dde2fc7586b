"""The shape of issue 39's question set over real documentation
(``bench/data/real_docs_questions.jsonl``, used by ``bench/real_docs_recall.py``). No
downloads: the documents themselves are checked by the bench, not here."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "bench" / "data" / "real_docs_questions.jsonl"
KINDS = {"one-passage": 1, "two-passages": 2}
FIELDS = {"id", "question", "answer", "source", "kind", "how"}


def records() -> list[dict]:
    return [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]


def as_list(value: object) -> list:
    return value if isinstance(value, list) else [value]


def test_enough_questions_with_unique_ids() -> None:
    rs = records()
    assert len(rs) >= 40
    ids = [r["id"] for r in rs]
    assert len(ids) == len(set(ids))
    assert sum(r["kind"] == "two-passages" for r in rs) >= 8


def test_every_record_is_well_formed() -> None:
    for r in records():
        assert set(r) == FIELDS, r["id"]
        assert r["kind"] in KINDS, r["id"]
        assert r["question"].strip().endswith("?"), r["id"]
        assert r["how"].startswith("paraphrased: "), r["id"]
        answers, sources = as_list(r["answer"]), as_list(r["source"])
        assert len(answers) == len(sources) == KINDS[r["kind"]], r["id"]
        for answer in answers:
            assert isinstance(answer, str) and answer.strip(), r["id"]
        for source in sources:
            assert source["package"] and source["file"], r["id"]
            located = "page" if source["file"].endswith(".pdf") else "section"
            assert source.get(located), r["id"]


def test_questions_are_not_the_answers_sentence() -> None:
    """Paraphrased: no question holds its (multi-word) answer word for word."""
    for r in records():
        for answer in as_list(r["answer"]):
            if len(answer.split()) > 1:
                assert answer.casefold() not in r["question"].casefold(), r["id"]


def test_both_source_types_are_covered() -> None:
    files = [s["file"] for r in records() for s in as_list(r["source"])]
    assert any(f.endswith(".pdf") for f in files)
    assert any(f.endswith(".html") for f in files)
