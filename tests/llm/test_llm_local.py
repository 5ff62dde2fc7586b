"""The embedded model, for real: Gemma 3 270M through llama-cpp-python."""

from __future__ import annotations

import asyncio
import math

import pytest

from searchain.llm import LLMError
from searchain.llm.local import LocalLLM

PROMPT = "Question: What is the capital of France?\nAnswer:"


@pytest.fixture(scope="module")
def llm() -> LocalLLM:
    return LocalLLM()


def test_generates_text_with_usage(llm: LocalLLM) -> None:
    before = llm.usage.llm_calls
    r = llm.complete(PROMPT, max_tokens=12, stop=["\n"])
    assert r.text.strip(), "the model produced nothing"
    assert "\n" not in r.text
    assert r.usage.prompt_tokens == len(llm.tokenize(PROMPT))
    assert 0 < r.usage.completion_tokens <= 12
    assert r.usage.llm_calls == 1 and r.usage.llm_seconds > 0
    assert llm.usage.llm_calls == before + 1


def test_max_tokens_is_respected(llm: LocalLLM) -> None:
    r = llm.complete("Once upon a time", max_tokens=5)
    assert r.usage.completion_tokens == 5
    assert r.completions[0].finish_reason == "length"


def test_logprobs_of_generated_tokens(llm: LocalLLM) -> None:
    r = llm.complete(PROMPT, max_tokens=8, stop=["\n"], logprobs=True)
    c = r.completions[0]
    assert c.tokens is not None and c.token_logprobs is not None
    assert len(c.tokens) == len(c.token_logprobs) > 0
    assert "".join(c.tokens) == c.text  # the stop sequence is cut from tokens too
    assert all(lp <= 0.0 and math.isfinite(lp) for lp in c.token_logprobs)


def test_greedy_is_deterministic_whatever_the_cache_holds(llm: LocalLLM) -> None:
    a = llm.complete(PROMPT, max_tokens=10)
    llm.complete("Something else entirely, to change the KV cache.", max_tokens=3)
    b = llm.complete(PROMPT, max_tokens=10)
    c = llm.complete(PROMPT, max_tokens=10)  # prompt fully cached
    assert a.text == b.text == c.text


def test_seeded_samples_are_reproducible_and_differ(llm: LocalLLM) -> None:
    kw = dict(max_tokens=20, temperature=1.0, seed=7, n=3)
    r1 = llm.complete("Once upon a time", **kw)
    llm.complete(PROMPT, max_tokens=2)
    r2 = llm.complete("Once upon a time", **kw)
    texts = [c.text for c in r1.completions]
    assert texts == [c.text for c in r2.completions]
    assert len(set(texts)) > 1, "n samples with temperature 1 should not all be equal"
    assert 0 < r1.usage.completion_tokens <= 3 * 20


def test_score_matches_generation_logprobs(llm: LocalLLM) -> None:
    r = llm.complete(PROMPT, max_tokens=6, logprobs=True)
    c = r.completions[0]
    s = llm.score(PROMPT, c.text)
    assert len(s.token_logprobs) == len(c.token_logprobs)  # type: ignore[arg-type]
    # Same tokens, same model: equal up to batch-split float noise.
    for a, b in zip(s.token_logprobs, c.token_logprobs, strict=True):  # type: ignore[arg-type]
        assert abs(a - b) < 0.5
    assert s.total == pytest.approx(sum(s.token_logprobs))


def test_score_prefers_the_likely_continuation(llm: LocalLLM) -> None:
    good = llm.score(PROMPT, " Paris")
    bad = llm.score(PROMPT, " Sausage")
    assert good.total > bad.total


def test_prompt_longer_than_context_is_a_clear_error() -> None:
    small = LocalLLM(n_ctx=256)
    with pytest.raises(LLMError, match="context"):
        small.complete("word " * 400, max_tokens=4)


async def test_async_calls_share_the_model_safely(llm: LocalLLM) -> None:
    prompts = [f"{i} + {i} =" for i in range(4)]
    results = await asyncio.gather(*(llm.acomplete(p, max_tokens=4) for p in prompts))
    sync = [llm.complete(p, max_tokens=4).text for p in prompts]
    assert [r.text for r in results] == sync
