"""Retry policy for remote LLM calls: exponential backoff with full jitter, honouring
``Retry-After``. Only transient failures are retried: connection errors, timeouts, 408, 409,
429, 5xx, and a 200 whose body is not a completion (an HTML error page from a proxy, ``{}``,
truncated JSON, no choices: :class:`MalformedResponse`). Any other 4xx is the caller's mistake
and fails at once with a clear message.

Each attempt has one deadline (``timeout``: connect, headers, body and decoding together;
:mod:`searchain.net.deadline`); a cancelled context (the HTTP service's request timed out)
stops the call at once, between attempts, during a backoff or in the middle of a read.

Error messages name the endpoint and the status (``HTTP 500 (Internal Server Error)``), never
the upstream body, which may quote internal services; the body goes to the log only, with
secrets masked. ``LLMError.public`` is the summary the HTTP service shows its clients.
"""

from __future__ import annotations

import asyncio
import http
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import openai

from searchain.llm.base import LLMError, MalformedResponse
from searchain.net import deadline as dl
from searchain.redaction import redact_text

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
    if isinstance(exc, MalformedResponse | TimeoutError):  # TimeoutError: our own deadline
        return True
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return False


def describe(exc: BaseException) -> str:
    """A one-line description without credentials, request headers or the response body."""
    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return "request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return f"connection error ({type(exc.__cause__).__name__ if exc.__cause__ else 'unknown'})"
    if isinstance(exc, openai.APIStatusError):
        try:
            phrase = http.HTTPStatus(exc.status_code).phrase
        except ValueError:
            phrase = "unknown status"
        return f"HTTP {exc.status_code} ({phrase})"
    if isinstance(exc, LLMError):
        return str(exc)
    return type(exc).__name__


def detail(exc: BaseException) -> str:
    """:func:`describe` plus the start of the upstream body, secrets masked: for the log."""
    response = getattr(exc, "response", None)
    try:
        body = response.text[:300] if response is not None else ""
    except Exception:  # a streamed or undecodable body: the status says enough
        body = ""
    return describe(exc) + (f"; body: {redact_text(body)!r}" if body else "")


def _cancellation(exc: BaseException) -> dl.Cancelled | None:
    """The :class:`Cancelled` behind ``exc`` (the SDK wraps it in a connection error)."""
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            return None
        if isinstance(seen, dl.Cancelled):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _give_up(exc: BaseException, attempt: int, what: str) -> LLMError:
    log.warning("%s failed for good: %s", what, detail(exc))
    reason = describe(exc)
    if is_retryable(exc):
        return LLMError(
            f"{what} failed after {attempt} attempts: {reason}",
            public=f"{reason} (after {attempt} attempts)",
        )
    return LLMError(f"{what} was rejected: {reason}", public=f"request rejected: {reason}")


def _settle(exc: Exception, attempt: int, policy: RetryPolicy, what: str) -> float:
    """Seconds to wait before the next attempt, or raise what the caller should see."""
    cancelled = _cancellation(exc)
    if cancelled is not None:
        raise cancelled from None
    if isinstance(exc, LLMError) and not isinstance(exc, MalformedResponse):
        raise exc  # already ours (e.g. a capability the endpoint lacks): as it is
    if not is_retryable(exc) or attempt == policy.attempts:
        raise _give_up(exc, attempt, what) from exc
    wait = policy.delay(attempt, _retry_after(exc))
    log.warning("%s: %s; retry %d in %.2fs", what, detail(exc), attempt, wait)
    return wait


def call_with_retry(
    fn: Callable[[], T], policy: RetryPolicy, what: str, timeout: float | None = None
) -> T:
    """``fn()`` until it succeeds or fails for good; each attempt within ``timeout`` s."""
    for attempt in range(1, policy.attempts + 1):
        dl.check_cancelled()
        try:
            with dl.deadline_scope(timeout):
                return fn()
        except Exception as exc:
            dl.sleep(_settle(exc, attempt, policy, what))  # wakes up if cancelled
    raise AssertionError("unreachable")


async def acall_with_retry(
    fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    what: str,
    timeout: float | None = None,
) -> T:
    for attempt in range(1, policy.attempts + 1):
        dl.check_cancelled()
        try:
            async with asyncio.timeout(timeout):  # raises TimeoutError: retried as a timeout
                return await fn()
        except Exception as exc:
            await asyncio.sleep(_settle(exc, attempt, policy, what))
    raise AssertionError("unreachable")
