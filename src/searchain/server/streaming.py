"""What every face of the service shares on the wire: the server-sent-event response and its
lines (what they carry made :func:`~searchain.server.public.public`), the bearer-token
dependency that puts the scheme into the OpenAPI schema, and the served document index behind
``/v1/passages/context`` and MCP's ``read`` tool."""

# No `from __future__ import annotations`: FastAPI reads check_token's Annotated parameter,
# whose Depends(bearer) names a local, at run time.

import json
from typing import Annotated, Any

from fastapi import Depends
from fastapi.responses import StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from searchain.server.engine import Engine
from searchain.server.public import public

KEEP_ALIVE = ": keep-alive\n\n"  # an SSE comment: the connection is alive, nothing new


class EventStream(StreamingResponse):
    media_type = "text/event-stream"


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event: its name (none: an unnamed ``data:`` line, as OpenAI streams)
    and its JSON data, as everything that leaves the service (:func:`public`)."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(public(data), ensure_ascii=False)}\n\n"


def token_dependencies(token: str | None) -> list[Any]:
    """The dependencies of a route behind the token. TokenAuth (middleware) enforces it; this
    dependency puts the bearer scheme into the OpenAPI schema."""
    if token is None:
        return []
    bearer = HTTPBearer(auto_error=False, description="SEARCHAIN_API_TOKEN")

    async def check_token(
        cred: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> None:
        return None

    return [Depends(check_token)]


def document_index(engine: Engine) -> Any:
    """The served index when it is one of documents (a BM25 index, whose passages know their
    file and page), else None."""
    from searchain.retrieval import BM25Index

    return engine.retriever if isinstance(engine.retriever, BM25Index) else None


def document_context(engine: Engine, pid: str, around: int) -> Any:
    """A passage of the served document index with ``around`` neighbours each side in its
    file (``retrieval.documents.context``); None when the index is not one of documents or
    holds no such passage."""
    from searchain.retrieval.documents.context import passage_context

    index = document_index(engine)
    return None if index is None else passage_context(index, pid, around)
