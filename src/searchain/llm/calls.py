"""What the model wrote, call by call: a per-question log that the trace keeps.

``with record_calls() as calls: method.run(q)`` collects one entry per LLM call made inside
(in this thread and in the threads ``asyncio.to_thread`` starts from it): the kind of call,
a content hash of the request, the raw output text before any parsing, the finish reason,
tokens, and whether the call cache served it. A parse failure can then be inspected in the
trace (``meta.llm_calls``) instead of guessed at. Only the outermost client of a wrapper
stack (cache → cancellation → backend) records, so each call appears once.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
from collections.abc import Iterator
from typing import Any

from searchain.types import CompletionResult

_LOG: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "searchain_llm_calls", default=None
)
_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("searchain_llm_depth", default=0)


def request_hash(payload: Any) -> str:
    """sha256 of a prompt (str) or of chat messages (list), as stable JSON."""
    blob = payload if isinstance(payload, str) else json.dumps(payload, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


@contextlib.contextmanager
def record_calls() -> Iterator[list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []
    token = _LOG.set(calls)
    try:
        yield calls
    finally:
        _LOG.reset(token)


@contextlib.contextmanager
def outermost_call() -> Iterator[bool]:
    """True for the outermost LLM call in progress (a wrapper's inner call yields False)."""
    depth = _DEPTH.get()
    token = _DEPTH.set(depth + 1)
    try:
        yield depth == 0
    finally:
        _DEPTH.reset(token)


def log_call(kind: str, payload: Any, result: CompletionResult, form: str) -> None:
    calls = _LOG.get()
    if calls is None:
        return
    for c in result.completions or [None]:
        calls.append(
            {
                "n": len(calls) + 1,
                "kind": kind,
                "form": form,
                "request": request_hash(payload),
                "output": c.text if c is not None else "",
                "finish_reason": c.finish_reason if c is not None else None,
                "logprobs": bool(c is not None and c.token_logprobs is not None),
                "prompt_tokens": result.usage.prompt_tokens,
                "completion_tokens": result.usage.completion_tokens,
                "cached": result.cached,
            }
        )
