"""The HTTP API and the web viewer (``searchain serve``): the app, its limits and error
handlers in their one order, and its faces, each a module of its own.

POST /v1/ask[/stream]       the native face, with /v1/passages/context, /v1/methods (ask_face.py)
GET  /v1/runs[/NAME[/...]]  evaluation runs, the viewer's page at / and /static (viewer_face.py)
GET  /healthz               liveness, load and limits (no token needed)
GET  /passages/{id}         a cited passage as a page a person reads (citation_pages.py)
POST /v1/chat/completions   OpenAI's chat, with GET /v1/models (openai_face.py)
     /mcp                   the MCP face (mcp_face.py; without the ``mcp`` package, a 501)

Every error is ``{"error": "<one readable line>"}`` with its status (``server/errors.py``).
What the service sends (traces, run records, manifests) passes through the redaction helper
(``searchain.redaction``): keys, tokens and URL user-info never leave it.
"""

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from starlette.routing import Route

from searchain import redaction
from searchain.server import models as m
from searchain.server.ask_face import add_ask_face
from searchain.server.citation_pages import add_citation_pages
from searchain.server.engine import Engine
from searchain.server.errors import install_error_handlers
from searchain.server.limits import LOOPBACK_HOSTS, install_limits, token_dependencies
from searchain.server.openai_face import register_openai_routes
from searchain.server.runs import RunStore
from searchain.server.viewer_face import add_run_routes, add_viewer_page

log = logging.getLogger(__name__)


@dataclass
class Settings:
    token: str | None = None  # bearer token for /v1/*; None: no authentication
    runs_dir: str | Path | None = "runs"
    default_method: str = "searchain"
    timeout: float = 300.0  # seconds per answer
    max_question_chars: int = 2000
    max_body_bytes: int = 65_536
    heartbeat: float = 15.0  # seconds between SSE keep-alive comments
    # Host headers answered (any port; "*.example.org" for subdomains). Loopback names by
    # default, so a page on another site cannot reach the service by DNS rebinding; a
    # service bound to another address lists the names clients use. None: any host.
    allowed_hosts: tuple[str, ...] | None = LOOPBACK_HOSTS
    rate_limit: str | None = "60/min"  # per client on every route that answers; None: off


def create_app(engine: Engine, settings: Settings | None = None) -> FastAPI:
    s = settings or Settings()
    if s.default_method not in engine.methods:
        raise ValueError(f"unknown default method {s.default_method!r}")
    redaction.install_log_redaction()
    redaction.register(s.token)
    app = FastAPI(
        title="searchain",
        summary="Answer questions with an LLM and a search engine; every step traced.",
        version=_version(),
        docs_url="/docs",
        redoc_url=None,
    )
    install_limits(app, s)  # Host, token, rate and body limits, in their one order
    install_error_handlers(app)
    # Routes in this order, which is the order of the OpenAPI schema's paths.
    auth = token_dependencies(s.token)  # the token's scheme in the OpenAPI schema
    add_ask_face(app, engine, s, auth)  # /v1/ask[/stream], /v1/passages/context, /v1/methods
    add_run_routes(app, RunStore(s.runs_dir), auth)
    _add_health(app, engine, s)
    add_viewer_page(app)  # / and /static
    add_citation_pages(app, engine, s.token)  # /passages/{id}: what a citation links to
    _add_chat_faces(app, engine, s)  # /v1/chat/completions, /v1/models, /mcp
    return app


def _add_health(app: FastAPI, engine: Engine, s: Settings) -> None:
    """GET /healthz (no token needed)."""

    @app.get("/healthz", response_model=m.HealthOut)
    async def healthz() -> Any:
        return {
            "status": "ok",
            "service": "searchain",
            "methods": list(engine.methods),
            "busy": engine.busy,
            "max_concurrent": engine.max_concurrent,
            "auth": s.token is not None,
            **engine.describe(),
        }


def _add_chat_faces(app: FastAPI, engine: Engine, s: Settings) -> None:
    """The OpenAI-compatible chat face (``server/openai_face.py``) and the MCP face at
    ``/mcp`` (``server/mcp_face.py``; without the ``mcp`` package, a 501 that says so)."""
    register_openai_routes(app, engine, s)
    try:
        from searchain.server.mcp_face import make_mcp_server, mount_mcp
    except ImportError as e:  # the `mcp` package is missing: say so on the route and in the log
        log.warning("no /mcp endpoint: %s (install the server extra)", e)

        missing = JSONResponse({"error": "MCP is not installed here (the server extra)"}, 501)
        app.router.routes.append(Route("/mcp", endpoint=_Asgi(missing), include_in_schema=False))
        return
    mount_mcp(app, make_mcp_server(engine, s), s.max_body_bytes)


class _Asgi:
    """An ASGI app (not a request handler, as Starlette takes a bare function for)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def _version() -> str:
    from searchain import __version__

    return __version__
