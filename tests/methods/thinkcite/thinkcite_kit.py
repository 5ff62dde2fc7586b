"""Think&Cite's test doubles (a scripted chat client, a list retriever and its passages) and
the requantised reference models its reward tests compare against."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from searchain.llm import LLM, LLMError
from searchain.llm.base import ContinuationScore, GenerationParams
from searchain.types import Completion, CompletionResult, Passage, Usage


class ScriptedChat(LLM):
    """A chat-form client that replies from a script and records every call."""

    backend = "scripted"
    form = "chat"

    def __init__(self, replies: list[str], can_score: bool = True) -> None:
        super().__init__("scripted")
        self.replies, self.can_score = list(replies), can_score
        self.calls: list[Any] = []

    def _chat(self, messages: list[dict[str, str]], params: GenerationParams) -> CompletionResult:
        self.calls.append(messages)
        return CompletionResult([Completion(self.replies.pop(0))], Usage(prompt_tokens=1))

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        raise AssertionError("a chat-form client must not get completion prompts")

    def _score_chat(self, messages: list[dict[str, str]], continuation: str) -> ContinuationScore:
        if not self.can_score:
            raise LLMError("scripted backend cannot score")
        self.calls.append(("score_chat", messages, continuation))
        return ContinuationScore([continuation], [-1.0 if continuation == "Yes" else -3.0])


class ListRetriever:
    def __init__(self, passages: list[Passage]) -> None:
        self.passages = passages

    def search(self, query: str, k: int = 3) -> list[Passage]:
        return self.passages[:k]


DOCS = [
    Passage("p1", "Shirley Temple played Corliss Archer in Kiss and Tell.", "Kiss and Tell"),
    Passage("p2", "Shirley Temple later served as Chief of Protocol.", "Shirley Temple"),
    Passage("p3", "Bananas are rich in potassium.", "Banana"),
]


def kept_dir(request: pytest.FixtureRequest, name: str) -> Path:
    """A folder kept between runs in pytest's cache; a session's temporary one when the cache
    provider is off (``-p no:cacheprovider``), so the tests run either way."""
    cache = getattr(request.config, "cache", None)
    if cache is not None:
        return Path(cache.mkdir(name))
    return request.getfixturevalue("tmp_path_factory").mktemp(name)


def requantised(source: Path, out: Path, threads: int = 1) -> Path:
    """``source`` requantised to Q3_K_S by llama.cpp's own quantiser (seconds): a genuinely
    different model of the same family, for reference-model tests; kept at ``out``."""
    import ctypes

    import llama_cpp
    from llama_cpp._utils import suppress_stdout_stderr

    if not out.exists():
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q3_K_S
        params.allow_requantize = True
        params.nthread = threads
        tmp = out.with_suffix(".tmp")
        with suppress_stdout_stderr(disable=False):
            rc = llama_cpp.llama_model_quantize(
                str(source).encode(), str(tmp).encode(), ctypes.byref(params)
            )
        assert rc == 0, "llama_model_quantize failed"
        tmp.replace(out)
    return out
