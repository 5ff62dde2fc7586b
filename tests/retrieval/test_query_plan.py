"""A query per part and a hop from the bridge (retrieval/query_plan.py), over the real BM25
index of the demo corpus; the ``+parts`` / ``+bridge`` retriever specs; the corpus key."""

from __future__ import annotations

import re

import pytest

from searchain.retrieval import factory
from searchain.retrieval.bm25 import BM25Index
from searchain.retrieval.demo import default_index
from searchain.retrieval.identity import corpus_key, corpus_of_run
from searchain.retrieval.query_plan import (
    QueryPlanRetriever,
    bridge_query,
    interleave,
    question_parts,
)
from searchain.types import Passage


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "Which mount option stops reads from updating access times, and which filesystem "
            "holds its files only in memory?",
            [
                "Which mount option stops reads from updating access times?",
                "which filesystem holds its files only in memory?",
            ],
        ),
        (  # the leading context belongs to both parts
            "In the New Maintainers' Guide, which debhelper compatibility level goes into "
            "debian/compat, and which distribution value keeps an entry from being uploaded?",
            [
                "In the New Maintainers' Guide, which debhelper compatibility level goes into "
                "debian/compat?",
                "In the New Maintainers' Guide, which distribution value keeps an entry from "
                "being uploaded?",
            ],
        ),
        (  # a preposition before the second question word
            "Where was the first DebConf held, and in which city did DebConf first come to "
            "Africa?",
            ["Where was the first DebConf held?",
             "in which city did DebConf first come to Africa?"],
        ),
        ("Where should a novice ask questions; who handles missing maintainers?",
         ["Where should a novice ask questions?", "who handles missing maintainers?"]),
    ],
)  # fmt: skip
def test_a_question_that_asks_two_things_is_split(question: str, parts: list[str]) -> None:
    assert question_parts(question) == parts


@pytest.mark.parametrize(
    "question",
    [
        "Who was known by his stage name Aladin and helped organizations improve?",
        "Is Gasherbrum II or Nuptse closest to the tallest mountain in the world?",
        "Which Linux kernel versions did Debian 6.0 squeeze and Debian 11 bullseye ship with?",
        "What and why?",  # parts too short to search on their own
    ],
)
def test_a_question_that_asks_one_thing_is_not_split(question: str) -> None:
    assert question_parts(question) == []


def test_the_bridge_query_adds_what_the_top_passage_says_and_the_question_does_not() -> None:
    top = Passage(
        id="p",
        title="Kiss and Tell (1945 film)",
        text="Kiss and Tell is a 1945 comedy starring Shirley Temple as Corliss Archer.",
    )
    q = "What government position was held by the woman who portrayed Corliss Archer?"
    bridged = bridge_query(q, [top])
    assert bridged is not None and bridged.startswith(q)
    added = re.findall(r"\w+", bridged[len(q) :])
    assert "Kiss" in added and "Shirley" in added and "Temple" in added and "1945" in added
    assert "Corliss" not in added and "Archer" not in added  # the question says them already
    assert bridge_query(q, []) is None
    assert bridge_query("Corliss Archer", [Passage(id="x", text="corliss archer")]) is None


def test_interleave_takes_each_ranking_in_turn() -> None:
    fused = interleave([["a", "b", "c"], ["d", "a", "e"], ["f"]])
    assert [pid for pid, _ in fused] == ["a", "d", "f", "b", "c", "e"]
    assert [s for _, s in fused] == sorted((s for _, s in fused), reverse=True)


@pytest.fixture(scope="module")
def demo() -> BM25Index:
    return default_index()


def test_parts_bring_both_halves_that_one_query_misses(demo: BM25Index) -> None:
    question = (
        "Which year was the Esma Sultan Mansion built, and what government position was held "
        "by Shirley Temple?"
    )
    plain = {p.title for p in demo.search(question, k=4)}
    planned = QueryPlanRetriever(demo, parts=True, bridge=False).search(question, k=4)
    titles = {p.title for p in planned}
    assert {"Esma Sultan Mansion", "Shirley Temple"} <= titles
    assert not {"Esma Sultan Mansion", "Shirley Temple"} <= plain  # one query missed a half
    parts = question_parts(question)
    for p in planned:  # every passage says which of the queries ranked it
        assert p.found_by and set(p.found_by) <= {question, *parts}
    assert p.to_dict()["found_by"] == p.found_by
    assert Passage.from_dict(p.to_dict()) == p
    assert "found_by" not in demo.search(question, k=1)[0].to_dict()  # one query: as it was


def test_the_bridge_hop_is_recorded_and_a_one_hop_question_keeps_its_top_hit(
    demo: BM25Index,
) -> None:
    question = "What government position was held by the woman who portrayed Corliss Archer?"
    plain = demo.search(question, k=5)
    planned = QueryPlanRetriever(demo, parts=True, bridge=True).search(question, k=5)
    assert planned[0].id == plain[0].id
    queries = {q for p in planned for q in p.found_by or []}
    bridges = queries - {question}
    assert len(bridges) == 1 and next(iter(bridges)).startswith(question + " ")
    assert QueryPlanRetriever(demo).search_batch([], k=5) == []
    assert QueryPlanRetriever(demo).search(question, k=0) == []


def test_the_spec_names_the_plan_and_the_corpus_key_says_it(demo: BM25Index) -> None:
    r = factory.open_retriever("bm25+parts+bridge")
    assert isinstance(r, QueryPlanRetriever) and r.parts and r.bridge
    assert corpus_key(r) == "bm25:demo+parts+bridge"
    assert corpus_key(factory.open_retriever("bm25+bridge")) == "bm25:demo+bridge"
    assert corpus_of_run({"retriever": "bm25+parts"}) == "bm25:demo+parts"
    with pytest.raises(ValueError, match=r"\+parts, \+bridge"):
        factory.open_retriever("bm25+hops")
    with pytest.raises(ValueError, match="repeated"):
        factory.open_retriever("bm25+parts+parts")
    with pytest.raises(ValueError, match="parts, bridge or both"):
        QueryPlanRetriever(demo, parts=False, bridge=False)
