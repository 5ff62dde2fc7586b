"""The HTTP API and the web viewer (``searchain serve``).

POST /v1/ask            {question, method, options} → the trace
POST /v1/ask/stream     the same as server-sent events: ``progress`` events, then ``trace``
GET  /v1/methods        the registered methods
GET  /v1/runs[/NAME[/items/ID]]   evaluation runs written by ``searchain eval``
GET  /healthz           liveness, load and limits (no token needed)
GET  /passages/{id}     a cited passage as a page a person reads (signed link; citation_pages.py)
GET  /                  the viewer (static files in this package)

Every error is ``{"error": "<one readable line>"}`` with its status (``server/errors.py``).
What the service sends (traces, run records, manifests) passes through the redaction helper
(``searchain.redaction``): keys, tokens and URL user-info never leave it.
"""

# No "from __future__ import annotations": FastAPI must see the local AskRequest model.

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Query
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.routing import Route

from searchain import redaction
from searchain.server import models as m
from searchain.server.citation_pages import add_citation_pages
from searchain.server.engine import Engine
from searchain.server.errors import (
    ASK_ERRORS,
    ERRORS,
    NOT_FOUND,
    STREAM_ERRORS,
    ApiError,
    install_error_handlers,
)
from searchain.server.limits import LOOPBACK_HOSTS, install_limits
from searchain.server.openai_face import register_openai_routes
from searchain.server.pipeline import Answering, FaceError, start_answer
from searchain.server.public import public
from searchain.server.runs import RunNotFound, RunStore
from searchain.server.streaming import (
    KEEP_ALIVE,
    EventStream,
    document_context,
    sse,
    token_dependencies,
)

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"
# The viewer's own files only: model output is shown with textContent, and nothing loads
# from elsewhere (the page works offline).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


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


# One server-sent event of /v1/ask/stream, as OpenAPI 3.0/3.1 tools read a text/event-stream
# schema (per event, as schemathesis checks it): its name and its JSON data.
STREAM_EVENT: dict[str, Any] = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"type": "string", "enum": ["progress", "trace", "error"]},
        "data": {"type": "string", "contentMediaType": "application/json"},
        "id": {"type": "string"},
        "retry": {"type": "integer"},
    },
}


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
    _add_ask_routes(app, engine, s, auth)
    _add_lookup_routes(app, engine, s, auth)
    _add_run_routes(app, RunStore(s.runs_dir), auth)
    _add_health_and_viewer(app, engine, s)
    add_citation_pages(app, engine, s.token)  # /passages/{id}: what a citation links to
    _add_chat_faces(app, engine, s)  # /v1/chat/completions, /v1/models, /mcp
    return app


def _add_ask_routes(app: FastAPI, engine: Engine, s: Settings, auth: list[Any]) -> None:
    """POST /v1/ask and /v1/ask/stream, through the one request pipeline."""
    AskRequest = m.ask_model(engine.methods, s.default_method, s.max_question_chars)

    async def start(req: Any) -> Answering:
        """The pipeline's checks (422 for what the client must fix, 429 when every answer
        slot is busy), then the answer under way."""
        checks = None if req.confidence_checks is None else tuple(req.confidence_checks)
        try:
            runner = await start_answer(
                engine,
                req.method,
                req.options.given(),
                req.question,
                invalid_status=422,
                checks=checks,
                abstain_below=req.abstain_below,
                max_risk=req.max_risk,
            )
        except FaceError as e:
            raise ApiError(e.status, e.message, e.headers()) from None
        return Answering(engine, runner, req.question, s.timeout)

    @app.post("/v1/ask", response_model=m.TraceOut, responses=ASK_ERRORS, dependencies=auth)
    async def ask(req: AskRequest) -> Any:  # type: ignore[valid-type]
        """Answer a question; the full trace (reasoning nodes, references, citations)."""
        answering = await start(req)
        try:
            trace = await answering.trace()
        except FaceError as e:
            raise ApiError(e.status, e.message) from None
        return public(trace.to_dict())

    @app.post(
        "/v1/ask/stream",
        response_class=EventStream,
        responses={
            200: {
                "description": "`progress` events, then one `trace` or `error`",
                "content": {"text/event-stream": {"schema": STREAM_EVENT}},
            },
            **STREAM_ERRORS,
        },
        dependencies=auth,
    )
    async def ask_stream(req: AskRequest) -> EventStream:  # type: ignore[valid-type]
        """Server-sent events: ``event: progress`` (``data``: round, chain, node, ... see
        ``searchain.events``), then ``event: trace`` with the trace, or ``event: error``
        with ``{"error", "status"}``."""
        return EventStream(_stream(await start(req), s.heartbeat))


def _add_lookup_routes(app: FastAPI, engine: Engine, s: Settings, auth: list[Any]) -> None:
    """GET /v1/passages/context and /v1/methods: what the viewer looks up about the engine."""

    @app.get(
        "/v1/passages/context",
        response_model=m.ContextOut,
        responses=NOT_FOUND,
        dependencies=auth,
    )
    def passage_context(
        id: Annotated[str, Query(min_length=1, max_length=2000, description="A passage id")],
        around: Annotated[int, Query(ge=0, le=5)] = 1,
    ) -> Any:
        """A passage of a document index with its neighbours in the same file (the viewer
        shows a citation in its document's context); 404 for other indexes."""
        found = document_context(engine, id, around)
        if found is None:
            raise ApiError(404, "no document passage with that id in this server's index")
        return found.to_dict()

    @app.get("/v1/methods", response_model=m.MethodsOut, responses=ERRORS, dependencies=auth)
    async def methods() -> Any:
        from searchain.methods import catalog

        listed = [
            {
                "name": n,
                "description": catalog.description(n),
                "settings": [x.to_dict() for x in catalog.method_settings(n)],
            }
            for n in engine.methods
        ]
        return {"methods": listed, "default": s.default_method}


def _add_run_routes(app: FastAPI, runs: RunStore, auth: list[Any]) -> None:
    """GET /v1/runs[/NAME[/items/ID]]: evaluation runs written by ``searchain eval``."""

    @app.get("/v1/runs", response_model=m.RunsOut, responses=ERRORS, dependencies=auth)
    def list_runs() -> Any:
        return public({"runs": runs.list()})

    @app.get(
        "/v1/runs/{name}", response_model=m.RunDetailOut, responses=NOT_FOUND, dependencies=auth
    )
    def run_detail(
        name: str,
        failures: Annotated[
            bool, Query(description="Only failed items (error or 0 score)")
        ] = False,
        method: Annotated[str | None, Query(max_length=100)] = None,
        offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> Any:
        try:
            d = runs.detail(name, failures=failures, method=method, offset=offset, limit=limit)
        except RunNotFound:
            raise ApiError(404, f"no run named {name!r}") from None
        return public(d)

    @app.get(
        "/v1/runs/{name}/items/{item_id:path}",
        response_model=m.ItemOut,
        responses=NOT_FOUND,
        dependencies=auth,
    )
    def run_item(
        name: str, item_id: str, method: Annotated[str | None, Query(max_length=100)] = None
    ) -> Any:
        try:
            return public(runs.item(name, item_id, method))
        except RunNotFound:
            raise ApiError(404, f"no item {item_id!r} in run {name!r}") from None


def _add_health_and_viewer(app: FastAPI, engine: Engine, s: Settings) -> None:
    """GET /healthz (no token needed), the viewer's page at / and its files under /static."""

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

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers=_page_headers())

    app.mount("/static", StaticFiles(directory=STATIC), name="static")


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


async def _stream(answering: Answering, heartbeat: float) -> AsyncIterator[str]:
    async for event in answering.events(heartbeat):
        yield KEEP_ALIVE if event is None else sse(event="progress", data=event)
    try:
        trace = await answering.trace()
    except FaceError as e:
        yield sse(event="error", data={"error": e.message, "status": e.status})
        return
    yield sse(event="trace", data=trace.to_dict())


def _page_headers() -> dict[str, str]:
    return {
        "Content-Security-Policy": CSP,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }


def _version() -> str:
    from searchain import __version__

    return __version__
