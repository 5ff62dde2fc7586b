"""Retrieve-then-read with citations: fast tests replay recorded real model calls; one test
re-runs the real model to prove the recordings are still what it says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recordings import RECORD, reader_calls, recorded_llm
from searchain import citations
from searchain.llm import CachedLLM
from searchain.llm.local import LocalLLM
from searchain.methods import RetrieveRead
from searchain.retrieval import BM25Index
from searchain.types import Passage, Trace


@pytest.fixture(scope="module")
def questions(data_dir: Path) -> list[str]:
    with (data_dir / "hotpotqa" / "dev_subsampled.jsonl").open() as f:
        return [json.loads(next(f))["question_text"] for _ in range(3)]


def replayed() -> CachedLLM:
    return recorded_llm("retrieve_read")


def check_trace(trace: Trace, index: BM25Index, k: int) -> None:
    assert trace.method == "retrieve-read" and trace.rounds == 1
    assert len(trace.references) == k
    assert trace.references == index.search(trace.question, k=k)
    assert trace.final_content and trace.answer
    assert trace.citations, "every answer carries at least one citation"
    ids = {p.id for p in trace.references}
    for c in trace.citations:
        assert c.passage_id in ids
        assert trace.references[c.mark - 1].id == c.passage_id
        assert f"[{c.mark}]" in trace.final_content
    # Round trip through JSON, as results files and the HTTP service do.
    assert Trace.from_dict(json.loads(json.dumps(trace.to_dict()))) == trace


def test_replayed_traces_are_well_formed(index: BM25Index, questions: list[str]) -> None:
    llm = replayed()
    method = RetrieveRead(llm, index, k=5)
    for q in questions:
        trace = method.run(q)
        check_trace(trace, index, 5)
        assert trace.meta["k"] == 5  # what recall@k may be asked of it (issue 29 L2)
        if not RECORD:
            assert trace.usage.cached_calls == 1 + reader_calls(trace)
            assert trace.usage.llm_calls == 0
            assert trace.usage.prompt_tokens > 100


@pytest.mark.slow
def test_recordings_match_the_real_model(index: BM25Index, questions: list[str]) -> None:
    live = RetrieveRead(LocalLLM(), index, k=5)
    replay = RetrieveRead(replayed(), index, k=5)
    for q in questions:
        a, b = live.run(q), replay.run(q)
        check_trace(a, index, 5)
        assert a.final_content == b.final_content, "recordings are stale: SEARCHAIN_RECORD=1"


def test_citation_marks_are_resolved_and_bad_ones_reported() -> None:
    refs = [Passage(id=f"d{i}", text=f"text {i}", title=f"T{i}") for i in range(1, 4)]
    text = "Alpha is first [1]. Beta and gamma [2, 3]. Delta is unknown [7]."
    cites, errors = citations.resolve(text, refs)
    assert [(c.mark, c.passage_id) for c in cites] == [
        (1, "d1"), (2, "d2"), (3, "d3"), (7, None),
    ]  # fmt: skip
    assert cites[1].sentence == "Beta and gamma [2, 3]."
    assert errors == ["citation [7] points to no reference (there are 3)"]


def test_post_hoc_citation_picks_the_most_overlapping_passage() -> None:
    refs = [
        Passage(id="a", title="Shirley Temple", text="Shirley Temple was a diplomat."),
        Passage(id="b", title="Kiss and Tell", text="Kiss and Tell is a 1945 comedy film."),
    ]
    text, added = citations.post_cite(
        "Kiss and Tell is a comedy film from 1945. Shirley Temple became a diplomat [1]. "
        "Nothing here matches.",
        refs,
    )
    assert text == (
        "Kiss and Tell is a comedy film from 1945 [2]. Shirley Temple became a diplomat [1]. "
        "Nothing here matches."
    )
    assert [(c.mark, c.passage_id, c.origin) for c in added] == [(2, "b", "post-hoc")]


def test_a_runner_assesses_confidence_once_knowing_the_corpus(
    index: BM25Index, questions: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``assembly.answering``: the method's trace gets its corpus and model file recorded,
    then one assessment that knows them (it was three: after the method, the corpus, the
    checks)."""
    from searchain.methods.assembly import answering
    from searchain.scoring import confidence as conf_mod

    seen: list[dict] = []
    real = conf_mod.assess

    def counted(trace: Trace, model: str | None, *a: object, **kw: object) -> object:
        seen.append(dict(trace.meta))
        return real(trace, model, *a, **kw)

    monkeypatch.setattr(conf_mod, "assess", counted)
    trace = answering(RetrieveRead(replayed(), index, k=5), replayed())(questions[0])
    assert len(seen) == 1 and trace.confidence is not None
    assert seen[0]["corpus"] == trace.meta["corpus"] and "model_file" in seen[0]
