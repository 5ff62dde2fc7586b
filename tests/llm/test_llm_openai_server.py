"""The OpenAI backend against a real ``llama_cpp.server`` on 127.0.0.1 serving the embedded
model."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from searchain.llm import CachedLLM, SqliteStore
from searchain.llm.local import LocalLLM
from searchain.llm.openai_backend import OpenAILLM
from servers import llama_server

pytestmark = pytest.mark.slow
PROMPT = "Question: What is the capital of France?\nAnswer:"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with llama_server() as url:
        yield url


@pytest.fixture(scope="module")
def llm(server: str) -> OpenAILLM:
    return OpenAILLM("gemma-3-270m", base_url=server, timeout=120)


def test_completion_through_the_real_server(llm: OpenAILLM) -> None:
    r = llm.complete(PROMPT, max_tokens=8, stop=["\n"])
    assert r.text.strip()
    assert "\n" not in r.text
    assert r.usage.prompt_tokens > 5 and 0 < r.usage.completion_tokens <= 8
    assert r.usage.llm_calls == 1


def test_server_and_embedded_model_agree_on_greedy_output(llm: OpenAILLM) -> None:
    # Same weights, both greedy: the first words must match.
    remote = llm.complete(PROMPT, max_tokens=4, stop=["\n"]).text.split()
    local = LocalLLM().complete(PROMPT, max_tokens=4, stop=["\n"]).text.split()
    assert remote[:1] == local[:1]


async def test_eight_concurrent_async_calls(llm: OpenAILLM) -> None:
    prompts = [f"Count: {i}, {i + 1}," for i in range(8)]
    before = llm.usage.llm_calls
    results = await asyncio.gather(*(llm.acomplete(p, max_tokens=6) for p in prompts))
    assert len(results) == 8
    assert all(r.text for r in results)
    assert llm.usage.llm_calls == before + 8
    assert sum(r.usage.completion_tokens for r in results) > 8


def test_cache_in_front_of_the_server(llm: OpenAILLM, tmp_path) -> None:
    cached = CachedLLM(llm, SqliteStore(tmp_path / "c.sqlite"))
    calls = llm.usage.llm_calls
    a = cached.complete(PROMPT, max_tokens=6)
    b = cached.complete(PROMPT, max_tokens=6)
    assert a.text == b.text
    assert llm.usage.llm_calls == calls + 1  # the second call never reached the server
    assert b.cached and cached.usage.cached_calls == 1
