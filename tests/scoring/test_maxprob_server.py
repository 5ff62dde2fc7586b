"""MaxProb through the OpenAI-compatible backend: a real ``llama_cpp.server`` on 127.0.0.1
(completion form with the embedded Gemma model; chat form with the 0.5B instruct model,
whose log-probs the server returns only with ``top_logprobs``), and, by fault injection, an
endpoint that returns no log-probabilities: MaxProb is then absent with its reason."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from recordings import Observed
from searchain.llm.base import LLM, GenerationParams, Message
from searchain.llm.local import LocalLLM
from searchain.llm.openai_backend import OpenAILLM
from searchain.methods import RetrieveRead
from searchain.methods.searchain import SearChain, SearChainConfig
from searchain.readers.llm_reader import LLMReader
from searchain.scoring.confidence import signals
from searchain.types import CompletionResult, Trace
from servers import FaultServer, llama_server

pytestmark = pytest.mark.slow
QUESTION = "Who directed Jaws?"


@pytest.fixture(scope="module")
def gemma_server() -> Iterator[str]:
    with llama_server(n_threads=1) as url:
        yield url


class Seen(Observed):
    """Passes calls through to the real server and keeps what it returned."""

    def __init__(self, inner: LLM) -> None:
        super().__init__(inner)
        self.results: list[CompletionResult] = []

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        self.results.append(super()._complete(prompt, params))
        return self.results[-1]

    def _chat(self, messages: list[Message], params: GenerationParams) -> CompletionResult:
        self.results.append(super()._chat(messages, params))
        return self.results[-1]


def _answer_tokens(tokens: list[str], answer: str) -> list[int]:
    """This test's own reading: the tokens overlapping the answer's occurrence after the
    last "answer is", else its first."""
    text = "".join(tokens)
    start = text.find(answer, max(0, text.rfind("answer is")))
    start = text.find(answer) if start == -1 else start
    assert start >= 0
    offsets = [sum(map(len, tokens[:i])) for i in range(len(tokens))]
    return [
        i
        for i, (t, o) in enumerate(zip(tokens, offsets, strict=True))
        if o < start + len(answer) and o + len(t) > start
    ]


def _check(trace: Trace, seen: Seen, chat: bool) -> None:
    found = trace.meta["maxprob"]
    assert found["call"] == "retrieve-read" and 0 < found["value"] <= 1, found
    assert trace.usage.llm_calls == 1 and len(seen.results) == 1
    sent = seen.inner._chat_kwargs if chat else seen.inner._completion_kwargs
    assert sent(seen.prompts[0], seen.params(logprobs=True)).get("logprobs") in (1, True)
    # Independently: the tokens and log-probs the server returned for that call.
    reply = seen.results[0].completions[0]
    chosen = _answer_tokens(reply.tokens, trace.answer)
    assert found["tokens"] == [reply.tokens[i] for i in chosen]
    mean = sum(reply.token_logprobs[i] for i in chosen) / len(chosen)
    assert found["value"] == pytest.approx(math.exp(mean), rel=1e-9)


def test_completion_form_through_the_real_server(gemma_server: str, two_films) -> None:
    seen = Seen(OpenAILLM("gemma-3-270m", base_url=gemma_server, api="completions"))
    trace = RetrieveRead(seen, two_films, k=2, maxprob=True).run(QUESTION)
    _check(trace, seen, chat=False)
    # The same weights embedded: the same answer, and about the same MaxProb (the server's
    # KV cache batches the prompt its own way: llama.cpp's quantised kernels differ a bit).
    embedded = RetrieveRead(LocalLLM(n_threads=1), two_films, k=2, maxprob=True).run(QUESTION)
    assert embedded.answer == trace.answer
    assert embedded.meta["maxprob"]["value"] == pytest.approx(
        trace.meta["maxprob"]["value"], abs=0.05
    )


def test_chat_form_through_the_real_server(chat_server: str, two_films) -> None:
    seen = Seen(OpenAILLM("qwen2.5-coder-0.5b", base_url=chat_server, api="chat"))
    trace = RetrieveRead(seen, two_films, k=2, maxprob=True).run(QUESTION)
    _check(trace, seen, chat=True)


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_an_endpoint_without_log_probs_gives_a_reason_not_a_zero(two_films, api: str) -> None:
    kind = "ok" if api == "completions" else "chat"
    with FaultServer([(kind, " Steven Spielberg [1].")]) as fault:
        llm = OpenAILLM("fault", base_url=fault.url, api=api)
        trace = RetrieveRead(llm, two_films, k=2, maxprob=True).run(QUESTION)
        sent = fault.requests[-1]["body"]
    assert sent.get("logprobs") in (1, True)  # it was asked for
    assert trace.answer == "Steven Spielberg"
    found = trace.meta["maxprob"]
    assert found["value"] is None
    assert found["reason"] == "the backend returned no token log-probabilities for the " + (
        "retrieve-read call"
    )
    assert "answer_maxprob" not in signals(trace)


def test_searchain_evidence_step_through_an_endpoint_without_log_probs(two_films) -> None:
    chain = "[Question]: Who directed Jaws?\n[Query 1]: Who directed Jaws?\n"
    chain += "[Answer 1]: Steven Spielberg"
    # The chain, then the evidence step's line; the reader is the embedded model (it needs
    # log-probs too, and fails loudly without them).
    script = [("ok", chain), ("ok", " So the answer is Steven Spielberg [1].")]
    with FaultServer(script) as fault:
        llm = OpenAILLM("fault", base_url=fault.url, api="completions")
        config = SearChainConfig(r_max=1, maxprob=True, final_step="evidence", route="chain")
        reader = LLMReader(LocalLLM(n_threads=1))
        trace = SearChain(llm, two_films, reader, config).run(QUESTION)
        asked = [r["body"].get("logprobs") for r in fault.requests]
    assert trace.answer == "Steven Spielberg"
    assert asked == [None, 1]  # the chain, then the evidence call asked for its log-probs
    found = trace.meta["maxprob"]
    assert found["call"] == "evidence" and found["value"] is None, found
    assert "no token log-probabilities for the evidence call" in found["reason"]
