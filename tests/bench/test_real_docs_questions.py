"""The shape of issue 39's question set over real documentation
(``bench/data/real_docs_questions.jsonl``, used by ``bench/real_docs_recall.py``), and the
alias golds (``answers``) of it and of the tune set (``real_docs_tune_questions.jsonl``). No
downloads: the documents themselves are checked by the bench, not here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchain.scoring.match import alias_match, squash

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT / "bench" / "data" / "real_docs_questions.jsonl"
TUNE = ROOT / "bench" / "data" / "real_docs_tune_questions.jsonl"
KINDS = {"one-passage": 1, "two-passages": 2}
FIELDS = {"id", "question", "answer", "answers", "source", "kind", "how"}


def records(path: Path = QUESTIONS) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


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


@pytest.mark.parametrize(("path", "count"), [(QUESTIONS, 53), (TUNE, 24)])
def test_every_record_has_alias_golds(path: Path, count: int) -> None:
    """``answers``, right after ``answer``: a flat list of aliases for a one-passage
    question, one alias list per part (as many as ``answer`` has) for a two-passage one; no
    alias is empty once squashed (lower case, no punctuation, no whitespace)."""
    rs = records(path)
    assert len(rs) == count
    for r in rs:
        keys = list(r)
        assert keys[keys.index("answer") + 1] == "answers", r["id"]
        golds = r["answers"]
        if r["kind"] == "one-passage":
            parts = [golds]
        else:
            assert all(isinstance(part, list) for part in golds), r["id"]
            assert len(golds) == len(r["answer"]), r["id"]
            parts = golds
        for part in parts:
            assert part, r["id"]
            for alias in part:
                assert isinstance(alias, str) and squash(alias), (r["id"], alias)


@pytest.mark.parametrize("path", [QUESTIONS, TUNE])
def test_alias_golds_hold_in_their_evidence(path: Path) -> None:
    """The evidence quote in ``answer`` holds the short answer, except where the quote was
    picked for retrieval and names it elsewhere (the novice list's parenthesis; the
    ``+really`` convention, whose bare name is an English word and is not an alias)."""
    unquoted = {"two-help-mia", "tune-two-pol-version"}
    for r in records(path):
        quote = " ; ".join(as_list(r["answer"]))
        assert alias_match(quote, r["answers"]) != (r["id"] in unquoted), r["id"]
