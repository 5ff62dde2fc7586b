"""Backend for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

Uses the official SDK with its own retries switched off so that our policy (backoff with
jitter, ``Retry-After``, clear 4xx errors) applies the same way to sync and async calls. The
sync client's HTTP transport waits in slices (:mod:`searchain.net.deadline`): ``timeout`` is
one deadline per attempt for connect, headers, body and decoding, and a cancelled request of
the HTTP service stops its call mid-read. A body that is not a completion (HTML, ``{}``,
truncated JSON, no choices) is a :class:`MalformedResponse`, retried like a 5xx. The key is
registered with the redaction helper; the endpoint is shown without user-info.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

import openai

from searchain.llm.base import (
    API_CHOICES,
    LLM,
    ContinuationScore,
    GenerationParams,
    LLMError,
    MalformedResponse,
    Message,
)
from searchain.llm.calls import log_call
from searchain.llm.retry import RetryPolicy, acall_with_retry, call_with_retry
from searchain.net.deadline import http_client
from searchain.redaction import clean_url, install_log_redaction, register
from searchain.types import Completion, CompletionResult, Usage

# What a response that is not a completion raises while it is read (``None.choices``, a
# string's ``.choices``, a missing field, a wrong type).
_GARBAGE = (AttributeError, TypeError, KeyError, IndexError, ValueError)


class OpenAILLM(LLM):
    """``api="chat"`` (and ``"auto"``: today's endpoints serve chat models) makes methods send
    chat messages (``form == "chat"``); ``api="completions"`` sends completion prompts as-is,
    for base models. A completion prompt sent to a chat client is wrapped in one user message.

    Log-probabilities are asked for with ``top_logprobs`` too: ``llama_cpp.server`` returns
    chat log-probs only then. A backend that still returns none leaves ``token_logprobs``
    ``None`` and the caller (the LLM reader) says so; nothing invents a number."""

    backend = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api: str = "completions",
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        defaults: GenerationParams | None = None,
    ) -> None:
        super().__init__(model, defaults)
        if api not in API_CHOICES:
            raise ValueError(f"api must be one of {', '.join(API_CHOICES)}, not {api!r}")
        self.api = "completions" if api == "completions" else "chat"
        self.form = "chat" if self.api == "chat" else "completion"
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        # Local servers ignore the key, but the SDK insists on one being set.
        key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        install_log_redaction()
        register(key)  # never written to a log, manifest, result or HTTP body
        if self.base_url:  # a password in the URL's user-info is as secret as the key
            from urllib.parse import urlsplit

            with contextlib.suppress(ValueError):
                register(urlsplit(self.base_url).password)
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        common: dict[str, Any] = dict(
            base_url=self.base_url, api_key=key, timeout=timeout, max_retries=0
        )
        self._client = openai.OpenAI(**common, http_client=http_client(timeout))
        self._aclient = openai.AsyncOpenAI(**common)

    @property
    def endpoint(self) -> str:
        """The base URL as it may be shown: no user-info, no secret query values."""
        return clean_url(self.base_url) or "api.openai.com"

    @property
    def cache_identity(self) -> str:
        return f"{self.model}@{self.endpoint}"

    def __repr__(self) -> str:  # never show the key
        return f"OpenAILLM(model={self.model!r}, base_url={self.endpoint!r}, api={self.api!r})"

    # -- request building -----------------------------------------------------------------
    def _sampling(self, p: GenerationParams) -> dict[str, Any]:
        kw: dict[str, Any] = dict(
            model=self.model, max_tokens=p.max_tokens, temperature=p.temperature, top_p=p.top_p
        )
        if p.stop:
            kw["stop"] = list(p.stop)
        if p.n != 1:
            kw["n"] = p.n
        if p.seed is not None:
            kw["seed"] = p.seed
        return kw

    def _completion_kwargs(self, prompt: str, p: GenerationParams) -> dict[str, Any]:
        kw = self._sampling(p)
        kw["prompt"] = prompt
        if p.logprobs:
            kw["logprobs"] = 1
        return kw

    def _chat_kwargs(self, messages: list[Message], p: GenerationParams) -> dict[str, Any]:
        kw = self._sampling(p)
        kw["messages"] = messages
        if p.logprobs:
            kw["logprobs"] = True
            kw["top_logprobs"] = 1  # llama_cpp.server returns none without it
        return kw

    # -- response parsing -----------------------------------------------------------------
    @staticmethod
    def _usage(resp: Any) -> Usage:
        u = getattr(resp, "usage", None)
        return Usage(
            prompt_tokens=getattr(u, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(u, "completion_tokens", 0) or 0,
        )

    def _call(self, create: Callable[..., Any], kw: dict[str, Any], parse: Callable) -> Any:
        """``parse(create(**kw))`` with retries: a malformed body is retried like a 5xx."""

        def attempt() -> Any:
            try:
                resp = create(**kw)
            except ValueError as e:  # truncated or invalid JSON with status 200
                raise MalformedResponse("the body is not JSON (truncated or not an API)") from e
            return _checked(parse, resp)

        return call_with_retry(attempt, self.retry, self._what(), timeout=self.timeout)

    def _parse_completion(self, resp: Any) -> CompletionResult:
        out = []
        for ch in sorted(resp.choices, key=lambda c: c.index):
            lp = getattr(ch, "logprobs", None)
            out.append(
                Completion(
                    text=_text(ch.text),
                    finish_reason=ch.finish_reason or "stop",
                    tokens=list(lp.tokens) if lp and lp.tokens else None,
                    token_logprobs=[float(x) for x in lp.token_logprobs]
                    if lp and lp.token_logprobs
                    else None,
                )
            )
        return CompletionResult(out, self._usage(resp))

    def _parse_chat(self, resp: Any) -> CompletionResult:
        out = []
        for ch in sorted(resp.choices, key=lambda c: c.index):
            content = getattr(getattr(ch, "logprobs", None), "content", None)
            out.append(
                Completion(
                    text=ch.message.content or "",
                    finish_reason=ch.finish_reason or "stop",
                    tokens=[t.token for t in content] if content else None,
                    token_logprobs=[float(t.logprob) for t in content] if content else None,
                )
            )
        return CompletionResult(out, self._usage(resp))

    # -- sync -----------------------------------------------------------------------------
    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        if self.api == "chat":
            return self._chat([{"role": "user", "content": prompt}], params)
        kw = self._completion_kwargs(prompt, params)
        return self._call(self._client.completions.create, kw, self._parse_completion)  # type: ignore[no-any-return]

    def _chat(self, messages: list[Message], params: GenerationParams) -> CompletionResult:
        kw = self._chat_kwargs(messages, params)
        return self._call(self._client.chat.completions.create, kw, self._parse_chat)  # type: ignore[no-any-return]

    def _score(self, prompt: str, continuation: str) -> ContinuationScore:
        # The legacy completions API scores a prompt with echo=True; vLLM and llama.cpp keep it.
        kw = dict(
            model=self.model, prompt=prompt + continuation, max_tokens=1, echo=True, logprobs=0
        )

        def parse(resp: Any) -> ContinuationScore:
            lp = resp.choices[0].logprobs
            if lp is None or lp.text_offset is None or lp.token_logprobs is None:
                raise LLMError(f"{self._what()} does not return prompt log-probabilities (echo)")
            tokens, logprobs = [], []
            end = len(prompt) + len(continuation)
            for tok, off, lpv in zip(lp.tokens, lp.text_offset, lp.token_logprobs, strict=False):
                if len(prompt) <= off < end and lpv is not None:
                    tokens.append(tok)
                    logprobs.append(float(lpv))
            return ContinuationScore(tokens, logprobs, self._usage(resp))

        return self._call(self._client.completions.create, kw, parse)  # type: ignore[no-any-return]

    # -- async ----------------------------------------------------------------------------
    async def acomplete(
        self, prompt: str, params: GenerationParams | None = None, **overrides: Any
    ) -> CompletionResult:
        p = self.params(params, **overrides)
        if self.api == "chat":
            return await self.achat([{"role": "user", "content": prompt}], p)
        kw = self._completion_kwargs(prompt, p)
        return await self._atimed(
            lambda: self._aclient.completions.create(**kw), self._parse_completion, prompt
        )

    async def achat(
        self, messages: list[Message], params: GenerationParams | None = None, **overrides: Any
    ) -> CompletionResult:
        kw = self._chat_kwargs(messages, self.params(params, **overrides))
        return await self._atimed(
            lambda: self._aclient.chat.completions.create(**kw), self._parse_chat, messages
        )

    async def _atimed(self, call: Any, parse: Any, payload: Any) -> CompletionResult:
        import time

        t0 = time.perf_counter()

        async def attempt() -> CompletionResult:
            try:
                resp = await call()
            except ValueError as e:
                raise MalformedResponse("the body is not JSON (truncated or not an API)") from e
            return _checked(parse, resp)  # type: ignore[no-any-return]

        result = await acall_with_retry(attempt, self.retry, self._what(), timeout=self.timeout)
        log_call("chat" if isinstance(payload, list) else "completion", payload, result, self.form)
        result.usage.llm_calls = 1
        result.usage.llm_seconds = time.perf_counter() - t0
        self._record(result.usage)
        return result

    def _what(self) -> str:
        return f"LLM call to {self.endpoint} ({self.model})"

    def close(self) -> None:
        self._client.close()


def _checked(parse: Callable[[Any], Any], resp: Any) -> Any:
    """``parse(resp)``, or :class:`MalformedResponse` when ``resp`` is not a completion."""
    choices = getattr(resp, "choices", None)
    if isinstance(resp, str | bytes):
        raise MalformedResponse("the endpoint answered with text (an HTML page?), not JSON")
    if not isinstance(choices, list):
        raise MalformedResponse("the endpoint answered with JSON that is not a completion")
    if not choices:
        raise MalformedResponse("the endpoint answered with no choices")
    try:
        return parse(resp)
    except LLMError:
        raise
    except _GARBAGE as e:
        raise MalformedResponse(f"malformed completion ({type(e).__name__})") from e


def _text(value: Any) -> str:
    if not isinstance(value, str):  # a choice without its text: not a completion
        raise TypeError("choice without text")
    return value
