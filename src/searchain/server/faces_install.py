"""Put the OpenAI-compatible chat face and the MCP face on the service's app, and the limits
every answering route shares, in this order (outermost first):

Host allow-list → bearer token (``/v1/*``, and ``/mcp``) → per-client rate limit (every route
that answers: ``/v1/ask``, ``/v1/ask/stream``, chat completions, MCP) → body limit → the route,
which answers through the one request pipeline (``server/pipeline.py``: an answer slot, 429
when none is free). OpenAI-path refusals from any of them come in OpenAI's error object.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.routing import Route

from searchain.server.engine import Engine
from searchain.server.face_limits import OpenAIErrorShape, Rate, RateLimit
from searchain.server.limits import HostAllowList, TokenAuth
from searchain.server.openai_face import register_openai_routes

log = logging.getLogger(__name__)
OPENAI_PATHS = ("/v1/chat/", "/v1/models")
ASK_PATHS = ("/v1/ask",)  # and /v1/ask/stream
LIMITED_PATHS = (*ASK_PATHS, "/v1/chat/completions", "/mcp")


def install_faces(app: FastAPI, engine: Engine, settings: Any) -> None:
    """Routes, MCP endpoint and middleware; call it last in ``create_app``. Raises
    ``ValueError`` for a rate that cannot be read."""
    rate = Rate.parse(settings.rate_limit) if settings.rate_limit else None
    register_openai_routes(app, engine, settings)
    _mount_mcp(app, engine, settings)
    inner: list[Middleware] = []
    if settings.token is not None:
        inner.append(Middleware(TokenAuth, token=settings.token, prefix="/mcp"))
    if rate is not None:
        inner.append(Middleware(RateLimit, rate=rate, prefixes=LIMITED_PATHS, plain=ASK_PATHS))
    at = _after(app.user_middleware, (TokenAuth, HostAllowList))
    app.user_middleware[at:at] = inner
    app.add_middleware(OpenAIErrorShape, prefixes=OPENAI_PATHS)  # outermost


def _after(stack: list[Middleware], kinds: tuple[type, ...]) -> int:
    """The position just inside the innermost middleware of ``kinds`` (0: outermost)."""
    found = [i for i, m in enumerate(stack) if m.cls in kinds]
    return found[-1] + 1 if found else 0


def _mount_mcp(app: FastAPI, engine: Engine, settings: Any) -> None:
    try:
        from searchain.server.mcp_face import make_mcp_server, mount_mcp
    except ImportError as e:  # the `mcp` package is missing: say so on the route and in the log
        log.warning("no /mcp endpoint: %s (install the server extra)", e)

        missing = JSONResponse({"error": "MCP is not installed here (the server extra)"}, 501)
        app.router.routes.append(Route("/mcp", endpoint=_Asgi(missing), include_in_schema=False))
        return
    mount_mcp(app, make_mcp_server(engine, settings), settings.max_body_bytes)


class _Asgi:
    """An ASGI app (not a request handler, as Starlette takes a bare function for)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)
