"""LLM backends behind one interface (:class:`LLM`), plus the call cache and replay.

``make_llm("local")`` runs the embedded Gemma 3 270M; ``make_llm("openai", model=...,
base_url=...)`` talks to any OpenAI-compatible server. Both are wrapped in the on-disk
cache unless ``cache=False``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from searchain.llm.base import LLM, ContinuationScore, GenerationParams, LLMError, Message
from searchain.llm.cache import CachedLLM, JsonlStore, ReplayMiss, SqliteStore
from searchain.llm.retry import RetryPolicy
from searchain.paths import cache_root

__all__ = [
    "LLM",
    "CachedLLM",
    "ContinuationScore",
    "GenerationParams",
    "JsonlStore",
    "LLMError",
    "Message",
    "ReplayMiss",
    "RetryPolicy",
    "SqliteStore",
    "cache_dir",
    "make_llm",
]


def cache_dir() -> Path:
    """Root of searchain's caches (``SEARCHAIN_CACHE_DIR`` overrides the user cache dir)."""
    return cache_root()


def make_llm(
    kind: str = "local",
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    api: str = "completions",
    timeout: float = 120.0,
    retries: int = 4,
    model_path: str | None = None,
    n_ctx: int = 4096,
    n_threads: int | None = None,
    cache: bool | str | Path = True,
    **defaults: Any,
) -> LLM:
    """Build a backend. ``cache=True`` uses ``<cache_dir>/llm-calls.sqlite``; a path picks
    another file; ``False`` disables it. Extra keywords become default ``GenerationParams``."""
    params = GenerationParams().replace(**defaults) if defaults else None
    inner: LLM
    if kind == "local":
        from searchain.llm.local import LocalLLM

        inner = LocalLLM(model_path, n_ctx=n_ctx, n_threads=n_threads, defaults=params)
    elif kind == "openai":
        from searchain.llm.openai_backend import OpenAILLM

        name = model or os.environ.get("SEARCHAIN_OPENAI_MODEL")
        if not name:
            raise LLMError("the openai backend needs a model name (--model)")
        inner = OpenAILLM(
            name,
            base_url=base_url,
            api_key=api_key,
            api=api,
            timeout=timeout,
            retry=RetryPolicy(attempts=retries),
            defaults=params,
        )
    else:
        raise LLMError(f"unknown LLM backend {kind!r} (choose 'local' or 'openai')")
    if cache is False:
        return inner
    path = cache_dir() / "llm-calls.sqlite" if cache is True else Path(cache)
    return CachedLLM(inner, SqliteStore(path))
