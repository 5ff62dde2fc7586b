"""Retry policy for remote LLM calls: exponential backoff with full jitter, honouring
``Retry-After``. Only transient failures are retried (connection errors, timeouts, 408, 409,
429, 5xx); any other 4xx is the caller's mistake and fails at once with a clear message."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import openai

from searchain.llm.base import LLMError

log = logging.getLogger(__name__)
T = TypeVar("T")

RETRYABLE_STATUS = {408, 409, 429}


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = 4  # total tries, first one included
    base_delay: float = 0.5
    max_delay: float = 30.0
    # A server's Retry-After is obeyed as given (it knows its own limits), up to this cap.
    max_retry_after: float = 120.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before try number ``attempt + 1`` (attempt counts from 1)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        cap = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return random.uniform(cap / 2, cap)  # "equal jitter": never zero, never a stampede


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return float(value) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date; fall back to our own backoff


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return False


def describe(exc: BaseException) -> str:
    """A one-line description that never includes credentials or request headers."""
    if isinstance(exc, openai.APITimeoutError):
        return "request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return f"connection error ({type(exc.__cause__).__name__ if exc.__cause__ else 'unknown'})"
    if isinstance(exc, openai.APIStatusError):
        body = exc.response.text[:300] if exc.response is not None else ""
        return f"HTTP {exc.status_code}: {body}"
    return f"{type(exc).__name__}: {exc}"


def _give_up(exc: BaseException, attempt: int, what: str) -> LLMError:
    if is_retryable(exc):
        return LLMError(f"{what} failed after {attempt} attempts: {describe(exc)}")
    return LLMError(f"{what} was rejected: {describe(exc)}")


def call_with_retry(fn: Callable[[], T], policy: RetryPolicy, what: str) -> T:
    for attempt in range(1, policy.attempts + 1):
        try:
            return fn()
        except Exception as exc:
            if not is_retryable(exc) or attempt == policy.attempts:
                raise _give_up(exc, attempt, what) from exc
            wait = policy.delay(attempt, _retry_after(exc))
            log.warning("%s: %s; retry %d in %.2fs", what, describe(exc), attempt, wait)
            time.sleep(wait)
    raise AssertionError("unreachable")


async def acall_with_retry(fn: Callable[[], Awaitable[T]], policy: RetryPolicy, what: str) -> T:
    for attempt in range(1, policy.attempts + 1):
        try:
            return await fn()
        except Exception as exc:
            if not is_retryable(exc) or attempt == policy.attempts:
                raise _give_up(exc, attempt, what) from exc
            wait = policy.delay(attempt, _retry_after(exc))
            log.warning("%s: %s; retry %d in %.2fs", what, describe(exc), attempt, wait)
            await asyncio.sleep(wait)
    raise AssertionError("unreachable")
