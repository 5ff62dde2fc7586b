"""LLM backends behind one interface (:class:`LLM`), plus the call cache and replay.

``make_llm("local")`` runs the one default model of every surface (``$SEARCHAIN_MODEL``, else
Qwen2.5-Coder-1.5B-Instruct: ``llm.models.answer_model``); ``make_llm("openai", model=...,
base_url=...)`` talks to any OpenAI-compatible server. Both are wrapped in the on-disk
cache unless ``cache=False``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from searchain.llm.base import (
    LLM,
    ContinuationScore,
    GenerationParams,
    LLMError,
    Message,
    prompt_form,
)
from searchain.llm.cache import CachedLLM, JsonlStore, ReplayMiss, SqliteStore
from searchain.llm.calls import record_calls
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
    "prompt_form",
    "record_calls",
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
    api: str = "auto",
    timeout: float = 120.0,
    retries: int = 4,
    model_path: str | None = None,
    n_ctx: int = 4096,
    n_threads: int | None = None,
    cache: bool | str | Path = True,
    **defaults: Any,
) -> LLM:
    """Build a backend. ``cache=True`` uses ``<cache_dir>/llm-calls.sqlite``; a path picks
    another file; ``False`` disables it. Extra keywords become default ``GenerationParams``.

    ``api``: ``auto`` (chat form for remote endpoints and for local GGUFs that carry a chat
    template and are not base models), ``chat`` or ``completions``. For ``kind="local"``,
    ``model`` names an offline model (``llm.models.MODEL_NAMES``) and ``model_path`` any GGUF."""
    params = GenerationParams().replace(**defaults) if defaults else None
    inner: LLM
    if kind == "local":
        from searchain.llm.local import LocalLLM
        from searchain.llm.models import DEFAULT_MODEL, answer_model
        from searchain.llm.models import model_path as named_model_path

        if model_path is None:
            model = answer_model(model)  # the one default model, not LocalLLM's bundled one
        if model_path is None and model != DEFAULT_MODEL:
            model_path = str(named_model_path(model))  # type: ignore[arg-type]
        inner = LocalLLM(model_path, n_ctx=n_ctx, n_threads=n_threads, api=api, defaults=params)
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
