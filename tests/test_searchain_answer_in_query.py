"""SearChain's ``answer_in_query`` setting: a reader answer that the node's query already says
is the question's entity, not its answer.

The verdict replayed here is real: Qwen2.5-Coder-1.5B-Instruct, reading the top BM25 passage
for "What county shares a border with McDowell County?" in the committed MuSiQue run, copied
"McDowell County" with confidence −0.23 (above θ), and verification replaced the LLM's
answer with it. The real reader runs in ``test_searchain_chat.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchain.methods.searchain import SearChain, SearChainConfig, _Run, repeats_query
from searchain.readers.base import ReaderOutput
from searchain.readers.similarity import QueryMemory
from searchain.retrieval import BM25Index
from searchain.types import Node, Passage, Trace

QUERY = "What county shares a border with McDowell County?"
PASSAGE = {
    "id": "johnnycake",
    "title": "Johnnycake, West Virginia",
    "text": "Johnnycake is an unincorporated community in McDowell County, West Virginia, "
    "United States. Johnnycake is located on U.S. Route 52 north of Iaeger.",
}


class RecordedReader:
    """Gives the verdict the 1.5B reader gave on this passage in the committed run."""

    name = "llm"
    default_theta = -1.3

    def read(self, question: str, passage: Passage) -> ReaderOutput:
        assert question == QUERY and passage.id.startswith("johnnycake")
        return ReaderOutput("McDowell County", -0.93, -0.234, passage.id)


@pytest.fixture()
def index(tmp_path: Path) -> BM25Index:
    corpus = tmp_path / "corpus.jsonl"
    other = {"id": "jaws", "title": "Jaws (film)", "text": "Jaws is a 1975 thriller film."}
    corpus.write_text("".join(json.dumps(r) + "\n" for r in (PASSAGE, other)))
    return BM25Index.from_corpus(corpus, tmp_path / "idx")


def _node(answer: str | None, unsolved: bool = False) -> Node:
    meta = {"unsolved": unsolved, "status": "unverified", "round": 1, "step": 1}
    return Node("r1.1", QUERY, answer, "llm", "q", meta=meta)


def _traverse(index: BM25Index, setting: str, node: Node):
    method = SearChain(None, index, RecordedReader(),  # type: ignore[arg-type]
                       SearChainConfig(answer_in_query=setting))  # fmt: skip
    state = _Run(QUERY, Trace(question=QUERY, method="searchain"), QueryMemory())
    return method._traverse(state, [node]), state


def test_by_default_the_repeated_entity_corrects_the_llm(index: BM25Index) -> None:
    fb, _ = _traverse(index, "accept", node := _node("Wyoming County"))
    assert fb is not None and fb.kind == "verify" and fb.reader.answer == "McDowell County"
    assert "set_aside" not in node.meta["reader"]


def test_ignored_it_neither_corrects_nor_completes(index: BM25Index) -> None:
    fb, state = _traverse(index, "ignore", node := _node("Wyoming County"))
    assert fb is None and node.meta["status"] == "verified" and node.answer == "Wyoming County"
    assert node.meta["reader"]["answer"] == "McDowell County"  # the verdict is kept
    assert node.meta["reader"]["set_aside"] == "the answer repeats the query"
    assert state.path == [node]
    fb, _ = _traverse(index, "ignore", node := _node(None, unsolved=True))
    assert fb is None and node.meta["status"] == "unsolved"


def test_repeats_query_is_whole_words_after_normalisation() -> None:
    assert repeats_query("McDowell County.", QUERY)
    assert repeats_query("the McDowell County", QUERY)
    assert not repeats_query("Dowell", QUERY) and not repeats_query("", QUERY)
    assert not repeats_query("Wyoming County", QUERY)
    # Recorded on a tune item: a choice query names its answer.
    assert not repeats_query("Ibn Arabi", "Who was born first Mahbub ul Haq or Ibn Arabi?")


def test_an_unknown_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="answer_in_query"):
        SearChainConfig(answer_in_query="maybe").validate()
