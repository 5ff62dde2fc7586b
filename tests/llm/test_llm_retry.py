"""Retries, timeouts and error reporting of the OpenAI-compatible client, against a local
server that fails on cue."""

from __future__ import annotations

import logging
import time

import pytest

from searchain.llm import LLMError, RetryPolicy
from searchain.llm.openai_backend import OpenAILLM
from servers import FaultServer

FAST = RetryPolicy(attempts=3, base_delay=0.05, max_delay=0.2)


def client(url: str, **kw: object) -> OpenAILLM:
    return OpenAILLM("fault", base_url=url, api_key="sk-secret-123", retry=FAST, **kw)  # type: ignore[arg-type]


def test_two_500s_then_success_is_retried_to_success() -> None:
    with FaultServer([("status", 500), ("status", 500), ("ok", "fine")]) as srv:
        llm = client(srv.url)
        result = llm.complete("hello", max_tokens=4)
    assert result.text == "fine"
    assert len(srv.requests) == 3
    assert llm.usage.llm_calls == 1


async def test_async_path_retries_too() -> None:
    with FaultServer([("status", 503), ("ok", "async fine")]) as srv:
        result = await client(srv.url).acomplete("hello")
    assert result.text == "async fine"
    assert len(srv.requests) == 2


def test_always_failing_server_gives_clear_error_after_configured_attempts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    with FaultServer([("status", 500)]) as srv:
        llm = client(srv.url)
        with pytest.raises(LLMError) as e:
            llm.complete("hello")
    assert len(srv.requests) == FAST.attempts
    msg = str(e.value)
    assert "after 3 attempts" in msg and "HTTP 500" in msg and srv.url in msg
    # The API key never shows up in errors, logs or repr.
    assert "sk-secret-123" not in msg + caplog.text + repr(llm)


def test_client_error_is_not_retried() -> None:
    with (
        FaultServer([("status", 400), ("ok", "never")]) as srv,
        pytest.raises(LLMError, match="rejected: HTTP 400"),
    ):
        client(srv.url).complete("hello")
    assert len(srv.requests) == 1


def test_429_honours_retry_after() -> None:
    script = [("status", 429, {"Retry-After": "0.6"}), ("ok", "after wait")]
    with FaultServer(script) as srv:
        t0 = time.monotonic()
        result = client(srv.url).complete("hello")
        elapsed = time.monotonic() - t0
    assert result.text == "after wait"
    assert elapsed >= 0.6  # our own backoff would have waited at most 0.05 s


def test_hanging_server_times_out() -> None:
    with FaultServer([("hang", 5)]) as srv:
        llm = client(srv.url, timeout=0.5)
        t0 = time.monotonic()
        with pytest.raises(LLMError, match="timed out"):
            llm.complete("hello")
        elapsed = time.monotonic() - t0
    assert len(srv.requests) == FAST.attempts
    assert elapsed < 4.5  # 3 tries x 0.5 s + backoff, not 3 x 5 s


def test_backoff_grows_and_is_jittered() -> None:
    p = RetryPolicy(base_delay=1.0, max_delay=30.0)
    delays = [p.delay(a) for a in range(1, 6)]
    for a, d in enumerate(delays, 1):
        cap = min(30.0, 2 ** (a - 1))
        assert cap / 2 <= d <= cap
    assert p.delay(1, retry_after=7.0) == 7.0
    assert p.delay(1, retry_after=999.0) == p.max_retry_after
