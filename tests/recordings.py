"""Replay of recorded real model calls (``tests/data/recordings/NAME.jsonl``).

``SEARCHAIN_RECORD=1`` records instead: calls go to the real embedded model and are appended.
"""

from __future__ import annotations

import os
from pathlib import Path

from searchain.llm import CachedLLM, JsonlStore
from searchain.llm.base import LLM, GenerationParams, Message
from searchain.llm.local import DEFAULT_MODEL_NAME, LocalLLM
from searchain.types import CompletionResult

DIR = Path(__file__).parent / "data" / "recordings"
RECORD = os.environ.get("SEARCHAIN_RECORD") == "1"


def recorded_llm(name: str, model: str | None = None) -> CachedLLM:
    """Replay of ``NAME.jsonl``; ``model``: an offline model's name (the 1.5B chat model's
    recordings), else the embedded default."""
    store = JsonlStore(DIR / f"{name}.jsonl")
    if model is not None:  # replay needs no weights: the recorded name is the file's
        from searchain.llm.models import CHUNKED, model_path

        if RECORD:
            return CachedLLM(LocalLLM(model_path(model), api="chat"), store)
        return CachedLLM(None, store, backend="local", model=CHUNKED[model].file, form="chat")
    if RECORD:
        return CachedLLM(LocalLLM(), store)
    return CachedLLM(None, store, backend="local", model=DEFAULT_MODEL_NAME)


class Observed(LLM):
    """Passes calls through to the replayed model and keeps the prompts it was sent."""

    backend = "observed"

    def __init__(self, inner: LLM) -> None:
        super().__init__(inner.model)
        self.inner, self.prompts = inner, []  # type: ignore[var-annotated]
        self.form = inner.form

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        self.prompts.append(prompt)
        return self.inner.complete(prompt, params)

    def _chat(self, messages: list[Message], params: GenerationParams) -> CompletionResult:
        self.prompts.append(messages)
        return self.inner.chat(messages, params)


class Replayed(LLM):
    """The recorded model as the replay sees it: a replay has no tokenizer, so the evidence
    cap counts tokens by its estimate; recording through this wrapper does the same, so the
    recorded prompts are the replayed ones."""

    backend = "replayed"

    def __init__(self, recorded: LLM) -> None:
        super().__init__(recorded.model)
        self.recorded, self.form = recorded, recorded.form

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        return self.recorded.complete(prompt, params)

    def _chat(self, messages: list[Message], params: GenerationParams) -> CompletionResult:
        return self.recorded.chat(messages, params)


def reader_calls(trace: object) -> int:
    """The LLM reader's call that read the short answer out of a reply naming none (1 or 0:
    methods/short_answer_reading.py), beside a method's own calls."""
    from searchain.trace_extras import AnswerExtras

    return int(AnswerExtras.of(trace).short_answer_read is not None)  # type: ignore[arg-type]
