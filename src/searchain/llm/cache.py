"""Persistent call cache and record/replay, one mechanism for both.

``CachedLLM`` wraps any backend and keys each call by (backend, model, kind, prompt or
messages, parameters). Two stores:

* ``SqliteStore`` — the on-disk cache (WAL mode, so several processes of an evaluation can
  read and write it at once);
* ``JsonlStore`` — an append-only, human-readable file of recorded *real* model calls,
  committed as test data; ``CachedLLM(None, JsonlStore(path))`` replays it and fails loudly
  on any call that was not recorded.

Only deterministic calls (greedy, or sampled with a fixed seed) are cached: caching a
seedless sample would silently turn n independent samples into one.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Protocol

from searchain.llm.base import (
    LLM,
    ContinuationScore,
    GenerationParams,
    LLMError,
    Message,
    request_key,
)
from searchain.types import CompletionResult, Usage


class CallStore(Protocol):
    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, request: dict[str, Any], result: dict[str, Any]) -> None: ...


class SqliteStore:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()  # sqlite connections must not cross threads
        with self._conn() as c:
            c.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, result TEXT)")

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._conn().execute("SELECT result FROM calls WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, request: dict[str, Any], result: dict[str, Any]) -> None:
        with self._conn() as c:  # one short transaction per write
            c.execute(
                "INSERT OR REPLACE INTO calls (key, result) VALUES (?, ?)",
                (key, json.dumps(result, ensure_ascii=False)),
            )


class JsonlStore:
    """Recorded calls, one JSON object per line: ``{key, request, result}``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._items: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            with self.path.open(encoding="utf-8") as f:
                for line in f:
                    if line.strip():
                        rec = json.loads(line)
                        self._items[rec["key"]] = rec["result"]

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str) -> dict[str, Any] | None:
        return self._items.get(key)

    def put(self, key: str, request: dict[str, Any], result: dict[str, Any]) -> None:
        with self._lock:
            if key in self._items:
                return
            self._items[key] = result
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                rec = {"key": key, "request": request, "result": result}
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")


class ReplayMiss(LLMError):
    """A replay-only client was asked for a call that was never recorded."""


class CachedLLM(LLM):
    """Serve calls from ``store``; on a miss call ``inner`` (or fail, when replaying only)."""

    def __init__(
        self,
        inner: LLM | None,
        store: CallStore,
        *,
        backend: str | None = None,
        model: str | None = None,
        form: str | None = None,
    ) -> None:
        if inner is None and (backend is None or model is None):
            raise ValueError("a replay-only CachedLLM needs the recorded backend and model")
        super().__init__(model or inner.model, inner.defaults if inner else None)  # type: ignore[union-attr]
        self.inner = inner
        self.store = store
        self.backend = backend or inner.backend  # type: ignore[union-attr]
        self.form = form or (inner.form if inner is not None else "completion")
        # Two servers may serve different weights under one model name: key on the endpoint.
        self.identity = getattr(inner, "cache_identity", self.model)

    def _key(self, kind: str, payload: Any, params: dict[str, Any]) -> str:
        return request_key(self.backend, self.identity, kind, payload, params)

    def _lookup(self, key: str, what: str) -> dict[str, Any] | None:
        hit = self.store.get(key)
        if hit is None and self.inner is None:
            raise ReplayMiss(f"no recorded call for {what} (key {key[:12]}); re-record")
        return hit

    @staticmethod
    def _as_cached(d: dict[str, Any]) -> CompletionResult:
        r = CompletionResult.from_dict(d, cached=True)
        # A cache hit costs no model call and no model time; token counts stay, so
        # efficiency tables (input/output size) do not depend on cache state.
        r.usage = Usage(
            cached_calls=1,
            prompt_tokens=r.usage.prompt_tokens,
            completion_tokens=r.usage.completion_tokens,
        )
        return r

    def _cached_call(self, kind: str, payload: Any, p: GenerationParams, run: Any) -> Any:
        if not p.deterministic:
            return run()
        key = self._key(kind, payload, p.to_dict())
        hit = self._lookup(key, f"{kind} {str(payload)[:80]!r}")
        if hit is not None:
            return self._as_cached(hit)
        result: CompletionResult = run()
        self.store.put(
            key, {"kind": kind, "payload": payload, "params": p.to_dict()}, result.to_dict()
        )
        return result

    # Calls go through the inner client's public methods so its own usage counters stay
    # truthful; the wrapper's counters then count every call, cached or not.
    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        return self._cached_call(
            "completion",
            prompt,
            params,
            lambda: self.inner.complete(prompt, params),  # type: ignore[union-attr]
        )

    def _chat(self, messages: list[Message], params: GenerationParams) -> CompletionResult:
        return self._cached_call(
            "chat",
            messages,
            params,
            lambda: self.inner.chat(messages, params),  # type: ignore[union-attr]
        )

    def _score(self, prompt: str, continuation: str) -> ContinuationScore:
        return self._cached_score(
            "score",
            [prompt, continuation],
            lambda: self.inner.score(prompt, continuation),  # type: ignore[union-attr]
        )

    def _score_chat(self, messages: list[Message], continuation: str) -> ContinuationScore:
        return self._cached_score(
            "score_chat",
            [messages, continuation],
            lambda: self.inner.score_chat(messages, continuation),  # type: ignore[union-attr]
        )

    def _cached_score(self, kind: str, payload: list[Any], run: Any) -> ContinuationScore:
        key = self._key(kind, payload, {})
        hit = self._lookup(key, f"{kind} {str(payload[-1])[:60]!r}")
        if hit is not None:
            s = ContinuationScore.from_dict(hit)
            s.usage = Usage(cached_calls=1)
            return s
        s: ContinuationScore = run()
        self.store.put(key, {"kind": kind, "payload": payload}, s.to_dict())
        return s

    async def acomplete(
        self, prompt: str, params: GenerationParams | None = None, **overrides: Any
    ) -> CompletionResult:
        p = self.params(params, **overrides)
        key = self._key("completion", prompt, p.to_dict())
        if p.deterministic:
            hit = self._lookup(key, f"completion {prompt[:80]!r}")
            if hit is not None:
                r = self._as_cached(hit)
                self._record(r.usage)
                return r
        result = await self.inner.acomplete(prompt, p)  # type: ignore[union-attr]
        if p.deterministic:
            self.store.put(
                key,
                {"kind": "completion", "payload": prompt, "params": p.to_dict()},
                result.to_dict(),
            )
        self._record(result.usage)
        return result

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()
