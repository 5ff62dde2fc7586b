"""The one LLM interface every method uses.

A backend implements the primitives ``_complete`` (a completion prompt), ``_chat`` (chat
messages) and ``_score`` / ``_score_chat`` (log-probabilities of a given continuation), and
this base class adds what every backend needs the same way: usage accounting (per call and
cumulative), parameter defaults, async wrappers and the per-question call log
(``llm/calls.py``).

``form`` says which prompt form methods send a client: ``"completion"`` (base models: one
text to continue, the prompts' ``NAME.txt``) or ``"chat"`` (instruct models: messages, the
prompts' ``NAME.chat.txt``). Both are first-class; a backend decides from ``--api`` and, with
``auto``, from the model (a local GGUF that carries a chat template, a remote endpoint).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchain.llm.calls import log_call, outermost_call
from searchain.types import CompletionResult, Usage


class LLMError(RuntimeError):
    """An LLM call failed for good (after retries, or on a request the server rejects).
    ``public``: a summary for clients of the HTTP service (no endpoint, no upstream body)."""

    def __init__(self, message: str = "", *, public: str | None = None) -> None:
        super().__init__(message)
        self.public = public


class MalformedResponse(LLMError):
    """The endpoint answered, but not with a completion: an HTML page with status 200, ``{}``,
    truncated JSON, no choices. Retried like a 5xx (proxies send such pages when the model
    server behind them is restarting)."""


@dataclass(frozen=True, slots=True)
class GenerationParams:
    """Sampling parameters. ``temperature == 0`` is greedy decoding."""

    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    n: int = 1
    seed: int | None = None
    logprobs: bool = False  # return the log-probability of each generated token

    def replace(self, **changes: Any) -> GenerationParams:
        if "stop" in changes and changes["stop"] is not None:
            changes["stop"] = tuple(changes["stop"])
        return dataclasses.replace(self, **changes)

    @property
    def deterministic(self) -> bool:
        """Whether the same request always yields the same output (so it may be cached)."""
        return self.temperature == 0 or self.seed is not None

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["stop"] = list(self.stop)
        return d


@dataclass(slots=True)
class ContinuationScore:
    """Log-probabilities of a *given* continuation under the model (for DPO-style rewards)."""

    tokens: list[str]
    token_logprobs: list[float]
    usage: Usage = field(default_factory=Usage)

    @property
    def total(self) -> float:
        return float(sum(self.token_logprobs))

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "token_logprobs": self.token_logprobs,
            "usage": self.usage.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ContinuationScore:
        return cls(d["tokens"], d["token_logprobs"], Usage.from_dict(d.get("usage", {})))


Message = dict[str, str]
FORMS = ("completion", "chat")
API_CHOICES = ("auto", "chat", "completions")


def request_key(backend: str, model: str, kind: str, payload: Any, params: dict[str, Any]) -> str:
    """A stable hash of everything that determines an LLM call's output."""
    blob = json.dumps(
        {"backend": backend, "model": model, "kind": kind, "payload": payload, "params": params},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class LLM(ABC):
    """Base of all backends. Thread-safe usage counters; sync and async entry points."""

    backend: str = "abstract"
    form: str = "completion"  # the prompt form methods use with this client (see module doc)

    def __init__(self, model: str, defaults: GenerationParams | None = None) -> None:
        self.model = model
        self.defaults = defaults or GenerationParams()
        self.usage = Usage()  # cumulative over the life of this client
        self._usage_lock = threading.Lock()

    # -- what a backend implements ------------------------------------------------------
    @abstractmethod
    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult: ...

    def _chat(self, messages: list[Message], params: GenerationParams) -> CompletionResult:
        # Base models have no chat template: fall back to a plain transcript prompt.
        return self._complete(render_transcript(messages), params)

    def _score(self, prompt: str, continuation: str) -> ContinuationScore:
        raise LLMError(f"{self.backend} backend cannot score a given continuation")

    def _score_chat(self, messages: list[Message], continuation: str) -> ContinuationScore:
        raise LLMError(
            f"{self.backend} backend cannot score a given assistant reply to chat messages"
        )

    # -- public API -----------------------------------------------------------------------
    def params(self, params: GenerationParams | None = None, **overrides: Any) -> GenerationParams:
        p = params or self.defaults
        return p.replace(**overrides) if overrides else p

    def complete(
        self, prompt: str, params: GenerationParams | None = None, **overrides: Any
    ) -> CompletionResult:
        p = self.params(params, **overrides)
        return self._timed(lambda: self._complete(prompt, p), "completion", prompt)

    def chat(
        self, messages: list[Message], params: GenerationParams | None = None, **overrides: Any
    ) -> CompletionResult:
        p = self.params(params, **overrides)
        return self._timed(lambda: self._chat(messages, p), "chat", messages)

    def score(self, prompt: str, continuation: str) -> ContinuationScore:
        return self._timed_score(lambda: self._score(prompt, continuation))

    def score_chat(self, messages: list[Message], continuation: str) -> ContinuationScore:
        """Log-probabilities of ``continuation`` as the assistant's reply to ``messages``."""
        return self._timed_score(lambda: self._score_chat(messages, continuation))

    def _timed_score(self, call: Callable[[], ContinuationScore]) -> ContinuationScore:
        t0 = time.perf_counter()
        result = call()
        if not result.usage.llm_calls and not result.usage.cached_calls:
            result.usage.llm_calls = 1
            result.usage.llm_seconds = time.perf_counter() - t0
        self._record(result.usage)
        return result

    async def acomplete(
        self, prompt: str, params: GenerationParams | None = None, **overrides: Any
    ) -> CompletionResult:
        return await asyncio.to_thread(self.complete, prompt, params, **overrides)

    async def achat(
        self, messages: list[Message], params: GenerationParams | None = None, **overrides: Any
    ) -> CompletionResult:
        return await asyncio.to_thread(self.chat, messages, params, **overrides)

    def close(self) -> None:  # noqa: B027 - optional hook, most backends hold nothing
        """Release connections or model memory; the default holds nothing."""

    # -- helpers --------------------------------------------------------------------------
    def _timed(self, call: Any, kind: str = "completion", payload: Any = "") -> CompletionResult:
        t0 = time.perf_counter()
        with outermost_call() as outermost:
            result: CompletionResult = call()
        if outermost:  # wrappers (cache, cancellation) call inner clients: log once
            log_call(kind, payload, result, self.form)
        if not result.cached and result.usage.llm_calls == 0:
            # Backends report tokens; the base class owns the call count and the clock.
            result.usage.llm_calls = 1
            result.usage.llm_seconds = time.perf_counter() - t0
        self._record(result.usage)
        return result

    def _record(self, usage: Usage) -> None:
        with self._usage_lock:
            self.usage.add(usage)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"


def unwrapped(llm: LLM | None) -> Iterator[LLM]:
    """``llm`` and the clients it wraps (call cache, cancellation: their ``inner``), outermost
    first, so a capability of the real backend is found through any wrappers."""
    for _ in range(5):  # wrappers nest a few deep at most; never loop on a cycle
        if llm is None:
            return
        yield llm
        llm = getattr(llm, "inner", None)


def model_file(llm: LLM | None) -> str | None:
    """Which weights answered, through any wrappers: a local GGUF's file name (two
    quantisations of one model are two files), a served model's name with "(API)" (the
    server's weights are not known here); ``None`` when neither is known (a replay)."""
    for client in unwrapped(llm):
        path = vars(client).get("model_path")
        if path:
            return Path(path).name
        if vars(client).get("base_url") is not None or hasattr(type(client), "endpoint"):
            return f"{client.model} (API)"
    return None


def prompt_form(llm: LLM | None) -> str:
    """The prompt form (``"completion"`` or ``"chat"``) methods should use with ``llm``."""
    return getattr(llm, "form", "completion") if llm is not None else "completion"


def find_tokenizer(llm: LLM | None) -> Callable[[str], list[int]] | None:
    """The model's own tokenizer through any wrappers (cache, cancellation); ``None`` for
    backends that cannot tokenize locally (remote servers) or replay without a model."""
    for client in unwrapped(llm):
        if callable(getattr(type(client), "tokenize", None)):
            return client.tokenize  # type: ignore[attr-defined,no-any-return]
    return None


def context_window(llm: LLM | None) -> int | None:
    """Tokens the model attends to at once (prompt + generation), through any wrappers;
    ``None`` when the backend does not say."""
    for client in unwrapped(llm):
        if isinstance(getattr(type(client), "context_window", None), property):
            return int(client.context_window)  # type: ignore[attr-defined]
    return None


def prompt_fits(llm: LLM | None, prompt: str, max_tokens: int) -> bool | None:
    """Whether ``prompt`` plus ``max_tokens`` of generation fit the model's context;
    ``None`` when that cannot be known here (a remote backend: its server will say)."""
    tokenize, window = find_tokenizer(llm), context_window(llm)
    if tokenize is None or window is None:
        return None
    return len(tokenize(prompt)) + max_tokens <= window


def chat_fits(llm: LLM | None, messages: list[Message], max_tokens: int) -> bool | None:
    """``prompt_fits`` for chat messages: rendered with the model's own chat template when the
    backend can (a local GGUF); ``None`` when that cannot be known here."""
    window = context_window(llm)
    for client in unwrapped(llm):
        if window is not None and callable(getattr(type(client), "chat_tokens", None)):
            n = len(client.chat_tokens(messages))  # type: ignore[attr-defined]
            return n + max_tokens <= window
    return None


def render_transcript(messages: list[Message]) -> str:
    """Turn chat messages into a completion prompt for a base model."""
    lines = []
    for m in messages:
        role = m.get("role", "user")
        if role == "system":
            lines.append(m["content"])
        else:
            lines.append(f"{role.capitalize()}: {m['content']}")
    lines.append("Assistant:")
    return "\n\n".join(lines)
