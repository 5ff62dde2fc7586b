"""The service's errors: every one is ``{"error": "<one readable line>"}`` with its status,
never a traceback, a file's contents or an upstream server's body (those go to the server
log, secrets masked); and the error responses each route documents in the OpenAPI schema.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from searchain import redaction
from searchain.llm import LLMError
from searchain.server import models as m

log = logging.getLogger(__name__)


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


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


def answer_error(e: BaseException, timeout: float) -> ApiError:
    """The client's view of a failed answer: a status and a short summary. The details
    (endpoints, upstream bodies) go to the log only, secrets masked."""
    if isinstance(e, TimeoutError):
        return ApiError(504, f"the answer took longer than {timeout:g} s and was stopped")
    if isinstance(e, LLMError):  # NoLogprobsError and malformed responses included
        log.warning("answer failed: %s", e)
        summary = getattr(e, "public", None) or one_line(str(e))
        return ApiError(502, f"the language model failed: {summary}")
    if isinstance(e, RuntimeError) and type(e).__name__ == "RetrievalError":
        log.warning("answer failed: %s", e)  # its message may quote the server's body
        return ApiError(502, "retrieval failed; see the server log")
    log.error("answer failed", exc_info=e)
    return ApiError(500, "internal error while answering; see the server log")


def one_line(text: str, limit: int = 300) -> str:
    line = redaction.redact_text(text).strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=exc.headers)

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
