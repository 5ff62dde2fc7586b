"""The frozen git-doc set's own form read into the documentation benches' (issue 62): kinds,
aliases, sources and evidence map over, a citation of a page's AsciiDoc twin counts, a file in
another form is refused with its file and line, and the frozen file itself reads whole and
unchanged (its digest) — read, never answered."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from searchain.eval.document_questions import (
    GIT_DOC_SHA256,
    QuestionFormError,
    from_git_doc,
    load_git_doc,
)
from searchain.scoring.document_answers import cite_source, needs, rescore, score
from searchain.scoring.match import alias_match

# Written here in the set's form, about no real page of it.
TWO_PART = {
    "id": "x-31",
    "question": "Which option does A, and which command does B?",
    "answers": [["--alpha"], ["git beta", "beta"]],
    "kind": "two-part",
    "sources": [
        {"file": "git-a.html", "heading": "OPTIONS"},
        {"file": "howto/b.txt", "heading": "B"},
    ],
    "evidence": ["--alpha does A", "run git beta for B"],
}
BRIDGE = {
    "id": "x-46",
    "question": "What does the tool that does C write?",
    "answers": ["the-file"],
    "kind": "bridge",
    "sources": [{"file": "git-c.html", "heading": "C"}, {"file": "git-d.html", "heading": "D"}],
    "evidence": ["git-d does C", "git-d writes the-file"],
    "bridge": "git-d is the tool that does C.",
}
FROZEN = Path(__file__).resolve().parents[3] / "shared" / "splits" / "git-doc" / "questions.jsonl"


def test_a_two_part_item_needs_every_part_and_each_source() -> None:
    q = from_git_doc(TWO_PART, "git-doc")
    assert q["kind"] == "two-passages" and q["answers"] == TWO_PART["answers"]
    assert needs(q) == [
        ("git-doc/git-a.html", "--alpha does a"),
        ("git-doc/howto/b.txt", "run git beta for b"),
    ]
    assert alias_match("Use --alpha, then git beta.", q["answers"])
    assert not alias_match("Use --alpha.", q["answers"])  # one part is not the answer


def test_a_bridge_item_is_answered_by_its_last_source() -> None:
    q = from_git_doc(BRIDGE, "git-doc")
    assert (q["kind"], q["bridge"]) == ("bridge", BRIDGE["bridge"])
    assert needs(q) == [("git-doc/git-d.html", "git-d writes the-file")]


def test_a_citation_of_a_page_s_twin_is_a_citation_of_the_page() -> None:
    q = from_git_doc(BRIDGE, "git-doc")
    twin = [{"file": "git-doc/git-d.txt", "page": None, "text": "git-d writes the-file"}]
    other = [{"file": "git-doc/git-e.txt", "page": None, "text": "git-d writes the-file"}]
    assert score(q, "the-file [1]", twin, twin)["cite_file"] == 1.0
    assert score(q, "the-file [1]", twin, twin)["in_hand"] is True
    assert score(q, "the-file [1]", other, other)["cite_file"] == 0.0


def test_the_set_s_citation_rule_takes_any_source_file_or_its_twin() -> None:
    """Its README: a citation is right when a cited passage comes from a source file (or its
    twin) — a bridge's first file too, which ``cite_file`` (every answer file) does not take."""
    q = from_git_doc(BRIDGE, "git-doc")
    first = [{"file": "git-doc/git-c.txt", "page": None}]  # the bridge fact's file, its twin
    assert cite_source(q, first) == 1.0
    assert score(q, "x", [], [{**first[0], "text": ""}])["cite_file"] == 0.0
    assert cite_source(q, [{"file": "git-doc/git-e.html", "page": None}]) == 0.0
    assert cite_source(q, []) == 0.0
    record = {"status": "ok", "answer": "the-file [1]", "short_answer": "the-file", "cited": first}
    assert rescore(q, record)["cite_source"] == 1.0 and rescore(q, record)["right_short"] == 1.0


def test_a_part_on_two_quotes_looks_for_each_in_any_source() -> None:
    item = {**TWO_PART, "evidence": [*TWO_PART["evidence"], "and --alpha again"]}
    q = from_git_doc(item, "git-doc")
    assert len(needs(q)) == 3
    cited = [{"file": "git-doc/git-a.txt", "page": None, "text": ""},
             {"file": "git-doc/howto/b.html", "page": None, "text": ""}]  # fmt: skip
    assert score(q, "x", cited, cited)["cite_file"] == 1.0


def test_another_form_is_refused_with_its_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "questions.jsonl"
    bad.write_text(json.dumps(BRIDGE) + "\n" + json.dumps({**BRIDGE, "kind": "multi"}) + "\n")
    with pytest.raises(QuestionFormError, match=r"questions.jsonl:2: ValueError: kind 'multi'"):
        load_git_doc(bad)
    with pytest.raises(QuestionFormError, match="not the frozen file"):
        load_git_doc(bad, sha256="0" * 64)


@pytest.mark.skipif(
    not FROZEN.is_file(), reason="../shared/splits/git-doc is not beside the checkout"
)
def test_the_frozen_file_reads_whole_and_unchanged() -> None:
    questions = load_git_doc(FROZEN, sha256=GIT_DOC_SHA256)
    assert Counter(q["kind"] for q in questions) == {
        "one-passage": 30,
        "two-passages": 15,
        "bridge": 15,
    }
    assert all(needs(q) for q in questions)
