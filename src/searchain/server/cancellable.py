"""An LLM that stops when its request is cancelled.

A method runs in a worker thread, and Python cannot kill a thread, so a timed-out (or
abandoned) answer is *cancelled cooperatively*: the work's context carries a cancel event
(:mod:`searchain.net.deadline`) that this wrapper checks before every call and the HTTP client
under remote models and tools checks while it waits for bytes, so a call to an endpoint that
never answers stops within a fraction of a second, and its connection is closed.
"""

from __future__ import annotations

from typing import Any

from searchain.llm import LLM
from searchain.llm.base import GenerationParams, Message
from searchain.net.deadline import check_cancelled
from searchain.types import CompletionResult


class CancellableLLM(LLM):
    """``inner`` with a cancellation check before every call."""

    def __init__(self, inner: LLM) -> None:
        super().__init__(inner.model, inner.defaults)
        self.inner = inner
        self.backend = inner.backend
        self.form = inner.form

    def __getattr__(self, name: str) -> Any:  # tokenize, cache_identity, ...
        return getattr(self.inner, name)

    def complete(
        self, prompt: str, params: GenerationParams | None = None, **overrides: Any
    ) -> CompletionResult:
        check_cancelled()
        return self.inner.complete(prompt, params, **overrides)

    def chat(
        self, messages: list[Message], params: GenerationParams | None = None, **overrides: Any
    ) -> CompletionResult:
        check_cancelled()
        return self.inner.chat(messages, params, **overrides)

    def score(self, prompt: str, continuation: str) -> Any:
        check_cancelled()
        return self.inner.score(prompt, continuation)

    def score_chat(self, messages: list[Message], continuation: str) -> Any:
        check_cancelled()
        return self.inner.score_chat(messages, continuation)

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        return self.complete(prompt, params)

    def close(self) -> None:
        self.inner.close()


def cancellable(value: Any) -> Any:
    """``value``, wrapped when it is an LLM that is not already cancellable."""
    if isinstance(value, LLM) and not isinstance(value, CancellableLLM):
        return CancellableLLM(value)
    return value
