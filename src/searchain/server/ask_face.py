"""The native face of the service: answers and what the viewer looks up about the engine.

POST /v1/ask               {question, method, options} → the trace
POST /v1/ask/stream        the same as server-sent events: ``progress`` events, then ``trace``
GET  /v1/passages/context  a document passage with its neighbours in the same file
GET  /v1/methods           the registered methods and their settings

Errors are :class:`~searchain.server.errors.FaceError`, rendered as ``{"error": ...}`` with
their status (``server/errors.py``).
"""

# No "from __future__ import annotations": FastAPI must see the local AskRequest model.

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import FastAPI, Query

from searchain.server import models as m
from searchain.server.engine import Engine
from searchain.server.errors import ASK_ERRORS, ERRORS, NOT_FOUND, STREAM_ERRORS, FaceError
from searchain.server.pipeline import Answering, start_answer
from searchain.server.public import public
from searchain.server.request_options import ask_model
from searchain.server.streaming import KEEP_ALIVE, EventStream, sse

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


def add_ask_face(app: FastAPI, engine: Engine, settings: Any, auth: list[Any]) -> None:
    """Add the native face's routes to ``app`` (``settings``: the service's ``Settings``;
    ``auth``: the token's dependencies), in the order of the OpenAPI schema's paths."""
    _add_ask_routes(app, engine, settings, auth)
    _add_lookup_routes(app, engine, settings, auth)


def _add_ask_routes(app: FastAPI, engine: Engine, s: Any, auth: list[Any]) -> None:
    """POST /v1/ask and /v1/ask/stream, through the one request pipeline."""
    AskRequest = ask_model(engine.methods, s.default_method, s.max_question_chars)

    async def start(req: Any) -> Answering:
        """The pipeline's checks (422 for what the client must fix, 429 when every answer
        slot is busy), then the answer under way."""
        checks = None if req.confidence_checks is None else tuple(req.confidence_checks)
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
        return Answering(engine, runner, req.question, s.timeout)

    @app.post("/v1/ask", response_model=m.TraceOut, responses=ASK_ERRORS, dependencies=auth)
    async def ask(req: AskRequest) -> Any:  # type: ignore[valid-type]
        """Answer a question; the full trace (reasoning nodes, references, citations)."""
        answering = await start(req)
        trace = await answering.trace()
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


def _add_lookup_routes(app: FastAPI, engine: Engine, s: Any, auth: list[Any]) -> None:
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
        found = engine.document_context(id, around)
        if found is None:
            why = "no document passage with that id in this server's index"
            raise FaceError(404, why, "not_found")
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


async def _stream(answering: Answering, heartbeat: float) -> AsyncIterator[str]:
    async for event in answering.events(heartbeat):
        yield KEEP_ALIVE if event is None else sse(event="progress", data=event)
    try:
        trace = await answering.trace()
    except FaceError as e:
        yield sse(event="error", data={"error": e.message, "status": e.status})
        return
    yield sse(event="trace", data=trace.to_dict())
