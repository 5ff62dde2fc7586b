"""The per-client rate limit of every route that answers, as pure ASGI middleware: a token
bucket per client address on the answering paths — ``N`` requests at once, then ``N`` per
window, refilled evenly; over it, 429 with ``Retry-After`` (the seconds until the next request
would be taken). Keyed by the address the connection comes from: behind a reverse proxy every
client shares the proxy's bucket (docs/service.md).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from searchain.server.limits.openai_errors import openai_error

_UNITS = {"s": 1.0, "sec": 1.0, "min": 60.0, "m": 60.0, "h": 3600.0, "hour": 3600.0}


@dataclass(frozen=True, slots=True)
class Rate:
    count: int
    per: float  # seconds

    @classmethod
    def parse(cls, text: str) -> Rate | None:
        """``60/min``, ``5/s``, ``1000/h``; ``off`` (or ``0``): no limit."""
        text = text.strip().lower()
        if text in ("off", "0", "none"):
            return None
        found = re.fullmatch(r"(\d+)\s*/\s*([a-z]+)", text)
        if not found or found[2] not in _UNITS or int(found[1]) < 1:
            raise ValueError(f"rate {text!r}: write N/s, N/min or N/h (or off)")
        return cls(int(found[1]), _UNITS[found[2]])

    def __str__(self) -> str:
        unit = {1.0: "s", 60.0: "min", 3600.0: "h"}.get(self.per, f"{self.per:g} s")
        return f"{self.count}/{unit}"


class RateLimit:
    """Token bucket per client address on paths starting with one of ``prefixes``; a refusal
    on a path starting with one of ``plain`` is the service's ``{"error": "..."}``, elsewhere
    OpenAI's error object (the chat face's clients and MCP's read that)."""

    MAX_CLIENTS = 10_000  # buckets kept before the full ones are forgotten

    def __init__(
        self,
        app: ASGIApp,
        rate: Rate,
        prefixes: tuple[str, ...],
        clock: Callable[[], float] = time.monotonic,
        plain: tuple[str, ...] = (),
    ) -> None:
        self.app, self.rate, self.prefixes, self.clock = app, rate, prefixes, clock
        self.plain = plain
        self.refill = rate.count / rate.per  # tokens a second
        self.buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, when)

    def take(self, client: str) -> float:
        """Take a token for ``client``: 0.0, or the seconds until one is there."""
        now = self.clock()
        tokens, when = self.buckets.get(client, (float(self.rate.count), now))
        tokens = min(float(self.rate.count), tokens + (now - when) * self.refill)
        if tokens < 1.0:
            self.buckets[client] = (tokens, now)
            return (1.0 - tokens) / self.refill
        self.buckets[client] = (tokens - 1.0, now)
        if len(self.buckets) > self.MAX_CLIENTS:
            self._forget_full(now)
        return 0.0

    def _forget_full(self, now: float) -> None:
        full = [
            c
            for c, (t, w) in self.buckets.items()
            if t + (now - w) * self.refill >= self.rate.count
        ]
        for client in full:
            del self.buckets[client]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(self.prefixes):
            client = scope.get("client")
            wait = self.take(client[0] if client else "?")
            if wait > 0:
                retry = max(1, math.ceil(wait))
                said = f"rate limit of {self.rate} per client reached; retry in {retry} s"
                body: dict[str, object] = (
                    {"error": said}
                    if scope["path"].startswith(self.plain)
                    else openai_error(429, said, "rate_limit_exceeded")
                )
                response = JSONResponse(body, status_code=429, headers={"Retry-After": str(retry)})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
