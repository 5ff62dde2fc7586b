"""The limits in front of every route of the service, as pure ASGI middleware, and the one
order they stand in (outermost first):

1. OpenAI's error shape (``openai_errors.py``): on the OpenAI paths, a refusal by any limit
   below arrives as OpenAI's error object;
2. the Host allow-list (``access.py``): 400 for a name the service does not answer for;
3. the bearer token (``access.py``) on ``/v1/*``, then on ``/mcp``: 401, before any body is
   read (``access.token_dependencies`` puts its scheme into the OpenAPI schema);
4. the per-client rate limit (``rate.py``) on every route that answers (``/v1/ask``,
   ``/v1/ask/stream``, chat completions, MCP): 429 with ``Retry-After``;
5. the body limit every searchain server shares (``searchain.net.serving.BodyLimit``): 413;

then the route, which answers through the one request pipeline (``server/pipeline.py``: an
answer slot, 429 when none is free).
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware

from searchain.net.serving import BodyLimit
from searchain.server.limits.access import (
    LOOPBACK_HOSTS,
    HostAllowList,
    TokenAuth,
    host_of,
    token_dependencies,
)
from searchain.server.limits.openai_errors import OpenAIErrorShape, openai_error
from searchain.server.limits.rate import Rate, RateLimit

__all__ = [
    "LOOPBACK_HOSTS",
    "HostAllowList",
    "OpenAIErrorShape",
    "Rate",
    "RateLimit",
    "TokenAuth",
    "host_of",
    "install_limits",
    "middleware",
    "openai_error",
    "token_dependencies",
]

OPENAI_PATHS = ("/v1/chat/", "/v1/models")
ASK_PATHS = ("/v1/ask",)  # and /v1/ask/stream
LIMITED_PATHS = (*ASK_PATHS, "/v1/chat/completions", "/mcp")


def middleware(settings: Any) -> list[Middleware]:
    """The service's middleware for ``settings`` (the service's ``Settings``: allowed hosts,
    token, rate limit, body limit), outermost first, in the order above; a limit that is
    off is left out. Raises ``ValueError`` for a rate that cannot be read."""
    rate = Rate.parse(settings.rate_limit) if settings.rate_limit else None
    stack = [Middleware(OpenAIErrorShape, prefixes=OPENAI_PATHS)]
    if settings.allowed_hosts is not None:
        stack.append(Middleware(HostAllowList, hosts=settings.allowed_hosts))
    if settings.token is not None:
        stack.append(Middleware(TokenAuth, token=settings.token, prefix="/v1/"))
        stack.append(Middleware(TokenAuth, token=settings.token, prefix="/mcp"))
    if rate is not None:
        stack.append(Middleware(RateLimit, rate=rate, prefixes=LIMITED_PATHS, plain=ASK_PATHS))
    stack.append(Middleware(BodyLimit, max_bytes=settings.max_body_bytes))
    return stack


def install_limits(app: Starlette, settings: Any) -> None:
    """Put :func:`middleware` on the FastAPI ``app`` in its order: each ``add_middleware``
    wraps the ones added before it, so they are added innermost first."""
    for m in reversed(middleware(settings)):
        app.add_middleware(m.cls, *m.args, **m.kwargs)
