"""The service's errors: :class:`FaceError`, the one refusal or failure every face raises, and
the native face's rendering of every error as ``{"error": "<one readable line>"}`` with its
status, never a traceback, a file's contents or an upstream server's body (those go to the
server log, secrets masked); and the error responses each route documents in the OpenAPI
schema.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from searchain import redaction
from searchain.server import models as m

log = logging.getLogger(__name__)


class FaceError(Exception):
    """A refusal or failure as a client sees it: a status, one readable line and a short
    code; each face puts it in its own shape (``{"error": ...}`` here, OpenAI's error object,
    an MCP tool error)."""

    def __init__(self, status: int, message: str, code: str, retry_after: int | None = None):
        super().__init__(message)
        self.status, self.message, self.code, self.retry_after = status, message, code, retry_after

    def headers(self) -> dict[str, str] | None:
        return {"Retry-After": str(self.retry_after)} if self.retry_after else None


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": m.ErrorOut, "description": text}
    for code, text in {
        401: "Missing or wrong bearer token",
        413: "Request body too large",
        422: "Invalid request",
    }.items()
}
ASK_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    429: {"model": m.ErrorOut, "description": "Every answer slot is busy; retry later"},
    502: {"model": m.ErrorOut, "description": "The LLM or the retriever failed"},
    504: {"model": m.ErrorOut, "description": "The answer took longer than the timeout"},
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    404: {"model": m.ErrorOut, "description": "No such run or item"},
}


# The stream's errors come before the stream starts, as JSON (not as events).
STREAM_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {
        "description": spec["description"],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}},
    }
    for code, spec in ASK_ERRORS.items()
}


def one_line(text: str, limit: int = 300) -> str:
    line = redaction.redact_text(text).strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(FaceError)
    async def face_error(_: Request, exc: FaceError) -> JSONResponse:
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=exc.headers())

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        # The offending input is not echoed back (it may be huge).
        parts = [
            f"{'.'.join(str(p) for p in e.get('loc', ())) or 'request'}: {e.get('msg', '')}"
            for e in exc.errors()
        ]
        return JSONResponse({"error": "invalid request: " + "; ".join(parts)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:  # FastAPI's answer to a body it cannot decode (not UTF-8)
            return JSONResponse(
                {"error": "invalid request: the body is not valid JSON (UTF-8)"}, status_code=422
            )
        return JSONResponse(
            {"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(Exception)
    async def crashed(_: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error", exc_info=exc)
        return JSONResponse({"error": "internal error; see the server log"}, status_code=500)
