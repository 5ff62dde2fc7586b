"""Every baseline through a real ``llama_cpp.server`` serving the 0.5B instruct model, over
the OpenAI chat API (``--api chat``): each answers three HotpotQA questions with a non-empty
answer in its own format. (SearChain, REBEL and LLM-URL have their own server tests; the
local chat path of these methods is in test_baselines_chat.py.)"""

from __future__ import annotations

import pytest

from searchain.llm import LLM, make_llm
from searchain.methods.base import run_traced
from searchain.methods.catalog import build_method
from searchain.retrieval import BM25Index

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server_llm(chat_server: str) -> LLM:
    llm = make_llm("openai", model="qwen2.5-coder-0.5b", base_url=chat_server, api="chat",
                   cache=False)  # fmt: skip
    assert llm.form == "chat"
    return llm


@pytest.mark.parametrize("name", ["direct-prompting", "cot", "retrieve-read", "self-ask", "react"])
def test_each_baseline_answers_over_the_chat_api(
    name: str, server_llm: LLM, index: BM25Index, hotpot: list[dict]
) -> None:
    method = build_method(name, server_llm, index)
    for item in hotpot[:3]:
        trace = run_traced(method, item["question_text"], server_llm)
        assert trace.answer.strip(), (name, trace.errors, trace.final_content)
        calls = trace.meta["llm_calls"]
        assert calls and all(c["kind"] == "chat" for c in calls)  # messages, never a prompt
        assert trace.meta["prompt_form"] == "chat"
        if name in ("direct-prompting", "cot"):  # one reply, read for its answer
            assert len(calls) == 1 and trace.answer in trace.final_content.replace("**", "")
        elif name == "retrieve-read":
            assert trace.references and trace.nodes[0].passages
        elif name == "self-ask":  # follow-ups answered from retrieval
            follow = [n for n in trace.nodes if n.passages]
            assert follow or any("final answer" in e for e in trace.errors)
        elif name == "react":  # Search actions with their observations
            assert any(str(n.meta.get("action", "")).startswith("Search[") for n in trace.nodes)
