"""SearChain on an instruct model, in the paper's dialogue form, for real.

The 0.5B Qwen instruct model (the tests' chat model) runs the whole loop locally through its
own chat template: the chain is an assistant turn, feedback a user turn, tracing a last user
turn. And a real ``llama_cpp.server`` serving the same model answers through the OpenAI chat
API with log-probs (asked with ``top_logprobs``), so the reader's confidences are numbers and
IR verification can fire. ``r_max`` is 2 to bound the suite's time; the loop is the same.
"""

from __future__ import annotations

import math

import pytest

from searchain import citations
from searchain.llm import make_llm
from searchain.llm.local import LocalLLM
from searchain.methods.base import run_traced
from searchain.methods.searchain.method import SearChain, SearChainConfig, _Run
from searchain.readers.llm_reader import LLMReader
from searchain.readers.query_memory import QueryMemory
from searchain.retrieval import BM25Index
from searchain.types import Node, Trace

pytestmark = pytest.mark.slow


def _check(trace: Trace) -> None:
    assert trace.meta["prompt_form"] == "chat"
    assert trace.answer.strip(), f"empty answer; errors: {trace.errors}"
    chains = trace.meta["chains"]
    assert chains and all(isinstance(c, str) for c in chains)  # what the model wrote, kept
    calls = trace.meta["llm_calls"]
    assert calls and {c["form"] for c in calls} == {"chat"}
    assert next(c["output"] for c in calls if c["kind"] == "chat") == chains[0]
    nodes = [n for n in trace.nodes if n.id != "q"]
    if trace.meta.get("answered_without_nodes"):
        assert trace.final_content and not trace.citations
        return
    assert nodes, "a chain of nodes"
    # The final content cites what the answering step read (the evidence step's passages by
    # default, the verified path when tracing): every mark resolves to a passage.
    assert trace.final_content and trace.references
    for c in trace.citations:  # resolved to a passage of the path, or said not to be
        if c.passage_id is None:
            assert any(f"[{c.mark}]" in e for e in trace.errors), trace.errors
        else:
            assert c.passage_id in {p.id for p in trace.references}
    written = trace.meta.get("evidence_output", trace.meta.get("tracing_output"))
    assert written is not None, "what the model wrote is kept"
    model_marks = citations.marks(written)
    # A mark outside the path is not dropped silently: the trace says so.
    assert all(1 <= m <= len(trace.references) for m in model_marks) or any(
        "points to" in e for e in trace.errors
    )
    read = [n.meta["reader"] for n in nodes if "reader" in n.meta]
    assert read, "IR read the nodes"
    for r in read:  # confidences are measured numbers, and say where they came from
        assert r["confidence_source"] in ("logprobs (chat form)", "ungrounded span")
        if r["confidence_source"] == "logprobs (chat form)":
            assert r["confidence"] is not None and -20 < r["confidence"] <= 0


def test_local_chat_searchain_answers_three_hotpotqa_questions(
    chat_llm: LocalLLM, index: BM25Index, hotpot: list[dict]
) -> None:
    method = SearChain(
        chat_llm, index, LLMReader(chat_llm), SearChainConfig(r_max=2, route="chain")
    )
    for item in hotpot[:3]:
        _check(run_traced(method, item["question_text"], chat_llm))


def test_a_wrong_answer_contradicting_a_confident_passage_is_corrected(
    chat_llm: LocalLLM, two_films: BM25Index
) -> None:
    idx = two_films
    method = SearChain(chat_llm, idx, LLMReader(chat_llm), SearChainConfig(route="chain"))
    question = "Who directed the film Jaws?"
    state = _Run(question, Trace(question=question, method="searchain"), QueryMemory())
    meta = {"unsolved": False, "status": "unverified", "round": 1, "step": 1}
    node = Node("r1.1", "Who directed the film Jaws?", "George Lucas", "llm", "q", meta=meta)
    fb = method._traverse(state, [node])  # the real retrieval, reader and θ
    assert fb is not None and fb.kind == "verify"
    assert fb.reader.answer == "Steven Spielberg" and fb.passage.id.startswith("jaws")
    assert math.isfinite(fb.reader.confidence) and fb.reader.confidence > method.theta
    method._apply(state, fb)
    assert node.answer == "Steven Spielberg" and node.source == "ir-corrected"
    assert node.meta["llm_answer"] == "George Lucas"  # what the model said stays in the trace


def test_chat_searchain_through_a_real_llama_cpp_server(
    chat_server: str, index: BM25Index, hotpot: list[dict]
) -> None:
    llm = make_llm("openai", model="qwen2.5-coder-0.5b", base_url=chat_server, cache=False)
    assert llm.form == "chat"
    method = SearChain(llm, index, LLMReader(llm), SearChainConfig(r_max=2, route="chain"))
    _check(run_traced(method, hotpot[0]["question_text"], llm))


# Qwen2.5-Coder-1.5B-Instruct's whole reply to the completion-form CoQ prompt of HotpotQA's
# first question (recorded from `searchain eval --api completions`): no node, a [Final
# Content], then the chain again in a loop until the token limit.
LOOPING = (
    " [Query]\n[Answer]\n[Final Content]: The woman who portrayed Corliss Archer in the film "
    "Kiss and Tell was held by the position of actress. So the answer is actress. [Query] = "
    '"What government position was held by the woman who portrayed Corliss Archer in the film '
    'Kiss and Tell? " [Answer] = actress. [Final Content] = The woman who portrayed Corliss '
    "Archer in the film Kiss and Tell was held by the position of actress. So the answer is "
    "actress. [Query] ="
)


def test_a_chain_without_nodes_answers_from_its_final_content() -> None:
    from searchain.answers import short_answer
    from searchain.methods.searchain import content_only
    from searchain.methods.searchain.coq_parser import parse_chain

    chain = parse_chain(LOOPING)
    assert not chain.nodes and chain.final_content
    content = content_only(chain.final_content)
    assert content.endswith("So the answer is actress.") and "[Query]" not in content
    assert short_answer(content) == "actress"
