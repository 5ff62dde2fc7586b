"""SearChain's reader settings: ``answer_in_query`` (a reader answer that the node's query
already says is the question's entity, not its answer) and ``reader_passages`` (the reader
reads the top passages at once; the one holding its span supports the node).

The verdict replayed here is real: Qwen2.5-Coder-1.5B-Instruct, reading the top BM25 passage
for "What county shares a border with McDowell County?" in the committed MuSiQue run, copied
"McDowell County" with confidence −0.23 (above θ), and verification replaced the LLM's
answer with it. The real reader runs in ``test_searchain_chat.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchain.methods.searchain.method import SearChain, SearChainConfig, _Run, repeats_query
from searchain.readers.base import ReaderOutput
from searchain.readers.query_memory import QueryMemory
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
    assert fb is None and node.meta["status"] == "unconfirmed" and node.answer == "Wyoming County"
    assert node.meta["check"].startswith("inconclusive")  # a set-aside answer confirms nothing
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


def test_merged_passages_keep_rank_and_titles_and_support_is_found() -> None:
    from searchain.readers.base import merged, supporting

    a = Passage("a#0", "Seattle gets 6.8 inches of snow a year.", "Seattle")
    b = Passage("b#0", "Portland is in Oregon.", "Portland, Oregon")
    one = merged([b, a])
    assert one.id == "b#0" and one.text == (
        "Portland, Oregon: Portland is in Oregon.\n\n"
        "Seattle: Seattle gets 6.8 inches of snow a year."
    )
    assert supporting([b, a], "6.8 inches") is a
    assert supporting([b, a], "Oregon") is b  # the best-ranked one that holds it
    assert supporting([b, a], "Tacoma") is b and supporting([b, a], "") is b


class MergedReplay:
    """The 1.5B reader's real answer to "What is the usual average snowfall in Seattle?" when
    it read MuSiQue's top 3 passages at once (results/reader-theta, --passages 3)."""

    name = "llm"
    default_theta = -1.3

    def __init__(self) -> None:
        self.read_texts: list[str] = []

    def read(self, question: str, passage: Passage) -> ReaderOutput:
        self.read_texts.append(passage.text)
        return ReaderOutput("6.8 inches (17.3 cm)", -0.27, -0.0675, passage.id)


def test_reading_the_top_passages_cites_the_one_that_holds_the_span(tmp_path: Path) -> None:
    rows = [
        {"id": "d1", "title": "Seattle weather", "text": "The usual average snowfall in "
         "Seattle is the subject of local reports about snowfall in Seattle."},
        {"id": "d2", "title": "Seattle", "text": "Seattle receives 6.8 inches (17.3 cm) of "
         "snow in an average year, with most of it in January."},
        {"id": "d3", "title": "Portland", "text": "Portland gets less snowfall than Seattle."},
    ]  # fmt: skip
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    index = BM25Index.from_corpus(corpus, tmp_path / "idx")
    query = "What is the usual average snowfall in Seattle?"
    assert index.search(query, k=1)[0].id.startswith("d1")  # the top one lacks the answer
    reader = MergedReplay()
    config = SearChainConfig(reader_passages=3)
    method = SearChain(None, index, reader, config)  # type: ignore[arg-type]
    state = _Run(query, Trace(question=query, method="searchain"), QueryMemory())
    meta = {"unsolved": False, "status": "unverified", "round": 1, "step": 1}
    node = Node("r1.1", query, "12 inches", "llm", "q", meta=meta)
    fb = method._traverse(state, [node])
    assert reader.read_texts[0].count("\n\n") == 2  # three passages, read at once
    assert fb is not None and fb.kind == "verify" and fb.passage.id.startswith("d2")
    assert node.passages[0].id.startswith("d2") and len(node.passages) == 3
    assert node.meta["reader"]["passage_id"] == fb.passage.id
    with pytest.raises(ValueError, match="reader_passages"):
        SearChainConfig(reader_passages=0).validate()
