"""SearChain's check of nodes answered Yes or No (``yesno_check``).

A "No" is never a span of a passage, so the span check of a yes/no node is inconclusive at
best. With ``yesno_check="nli"`` the NLI judge says whether the passage supports the node's
answer or the opposite one; a contradiction is fed back as IR's correction.

The replayed judge gives the probabilities Qwen2.5-Coder-1.5B-Instruct (the LLM judge, chat
form) gave for a node of a HotpotQA calibration item (results/calibration/..., not a reported
item): "Are Sorbaria and Goldenrod both genera of more than 50 flowering plants?" answered
"Yes", against the Sorbaria passage ("a genus of around 9 species"): Yes 0.651, No 0.693.
The real judge (the tests' 0.5B model) runs in the tests marked slow below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchain.methods import catalog
from searchain.methods.searchain.method import SearChain, SearChainConfig, _Run
from searchain.methods.searchain.yesno_check import yes_no_answer
from searchain.readers.base import ReaderOutput
from searchain.readers.nli import answer_claim
from searchain.readers.query_memory import QueryMemory
from searchain.retrieval import BM25Index
from searchain.types import Node, Passage, Trace, Usage

QUERY = "Are Sorbaria and Goldenrod both genera of more than 50 flowering plants?"
SORBARIA = {
    "id": "sorbaria",
    "title": "Sorbaria",
    "text": "Sorbaria is a genus of around 9 species of flowering plants belong to family "
    "Rosaceae.",
}
RECORDED = {"Yes": 0.6513838846892569, "No": 0.6933415758676921}  # the 1.5B judge's


class RecordedReader:
    """The 1.5B reader's answer on this passage in the calibration run: "Yes", no span."""

    name = "llm"
    default_theta = -1.3

    def read(self, question: str, passage: Passage) -> ReaderOutput:
        return ReaderOutput("Yes", float("-inf"), -99.0, passage.id, None, "ungrounded span")


class RecordedJudge:
    """Replays P(supported) per answer word; ``table`` may be changed for a case."""

    name = "llm"
    threshold = 0.5

    def __init__(self, table: dict[str, float]) -> None:
        self.table, self.usage, self.asked = table, Usage(), []

    def fork(self) -> RecordedJudge:
        return self

    def probability(self, premise: str, claim: str) -> float:
        assert premise.startswith("Title: Sorbaria")
        self.asked.append(claim)
        return self.table["Yes" if claim.endswith(" is Yes.") else "No"]


@pytest.fixture()
def index(tmp_path: Path) -> BM25Index:
    corpus = tmp_path / "corpus.jsonl"
    other = {"id": "jaws", "title": "Jaws (film)", "text": "Jaws is a 1975 thriller film."}
    corpus.write_text("".join(json.dumps(r) + "\n" for r in (SORBARIA, other)))
    return BM25Index.from_corpus(corpus, tmp_path / "idx")


def _node(answer: str) -> Node:
    meta = {"unsolved": False, "status": "unverified", "round": 1, "step": 1}
    return Node("r1.1", QUERY, answer, "llm", "q", meta=meta)


def _traverse(index: BM25Index, node: Node, judge: RecordedJudge | None, check: str = "nli"):
    cfg = SearChainConfig(yesno_check=check)
    method = SearChain(None, index, RecordedReader(), cfg, judge=judge)  # type: ignore[arg-type]
    state = _Run(QUERY, Trace(question=QUERY, method="searchain"), QueryMemory(), judge=judge)
    return method, method._traverse(state, [node]), state


def test_yes_no_answers_are_told_from_others() -> None:
    assert yes_no_answer("Yes, both are genera of flowering plants.") is True
    assert yes_no_answer("No") is False
    assert yes_no_answer("Nobody") is None and yes_no_answer("") is None
    assert yes_no_answer(None) is None and yes_no_answer("Rosaceae") is None
    assert answer_claim(" Is it? ", "No") == 'The answer to the question "Is it?" is No.'


def test_a_contradicted_yes_is_corrected_like_ir_corrects(index: BM25Index) -> None:
    judge = RecordedJudge(dict(RECORDED))
    method, fb, state = _traverse(index, node := _node("Yes, both are."), judge)
    assert fb is not None and fb.kind == "verify" and fb.passage.id.startswith("sorbaria")
    assert fb.reader.answer == "No" and fb.reader.confidence == RECORDED["No"]
    assert "opposite" in fb.reader.confidence_source
    assert node.meta["nli"] == {"judge": "llm", **RECORDED, "verdict": "contradicted"}
    assert node.meta["reader"]["answer"] == "Yes"  # the reader's own verdict is kept
    method._apply(state, fb)
    assert node.answer == "No" and node.source == "ir-corrected"
    assert node.meta["llm_answer"] == "Yes, both are."  # what the model said stays


def test_a_supported_answer_is_verified_and_a_tie_is_unconfirmed(index: BM25Index) -> None:
    judge = RecordedJudge({"Yes": 0.745, "No": 0.604})
    _, fb, state = _traverse(index, node := _node("Yes"), judge)
    assert fb is None and node.meta["status"] == "verified" and state.path == [node]
    assert node.meta["nli"]["verdict"] == "entailed" and "check" not in node.meta
    judge = RecordedJudge({"Yes": 0.41, "No": 0.38})  # neither reaches the threshold
    _, fb, state = _traverse(index, node := _node("No"), judge)
    assert fb is None and node.meta["status"] == "unconfirmed" and node.answer == "No"
    assert node.meta["check"] == (
        "inconclusive: the NLI judge finds the passage supports Yes at 0.41 and No at 0.38"
    )


def test_other_answers_and_the_default_keep_the_span_check(index: BM25Index) -> None:
    judge = RecordedJudge(dict(RECORDED))
    _, fb, _ = _traverse(index, node := _node("Rosaceae"), judge)
    assert judge.asked == [] and "nli" not in node.meta
    assert fb is None and node.meta["check"].startswith("inconclusive: the reader's answer")
    _, fb, _ = _traverse(index, node := _node("Yes"), None, check="span")
    assert fb is None and node.meta["status"] == "unconfirmed" and "nli" not in node.meta


def test_the_nli_check_needs_a_judge_and_the_registry_gives_one(index: BM25Index) -> None:
    with pytest.raises(ValueError, match="needs an NLI judge"):
        SearChain(None, index, RecordedReader(), SearChainConfig(yesno_check="nli"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="yesno_check"):
        SearChainConfig(yesno_check="entails").validate()


@pytest.mark.slow
def test_the_real_judge_checks_a_yes_no_node_end_to_end(chat_llm, two_films: BM25Index) -> None:
    """The 0.5B model as reader and judge, BM25 over two passages: a "No" that the passage
    contradicts is corrected to "Yes", and the judge's calls are the question's cost."""
    idx = two_films
    method = catalog.build_method("searchain", chat_llm, idx, yesno_check="nli")
    assert method.judge is not None and method.judge.name == "llm"
    question = "Was Jaws directed by Steven Spielberg?"
    judge = method.judge.fork()
    state = _Run(question, Trace(question=question, method="searchain"), QueryMemory(), judge=judge)
    meta = {"unsolved": False, "status": "unverified", "round": 1, "step": 1}
    node = Node("r1.1", question, "No", "llm", "q", meta=meta)
    fb = method._traverse(state, [node])
    detail = node.meta["nli"]
    assert 0 <= detail["Yes"] <= 1 and 0 <= detail["No"] <= 1
    assert detail["verdict"] == "contradicted", detail
    assert fb is not None and fb.kind == "verify" and fb.reader.answer == "Yes"
    assert judge.usage.llm_calls + judge.usage.cached_calls >= 2
