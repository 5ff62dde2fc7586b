"""Who may call the service: the Host allow-list (a page on another site cannot reach a
loopback service by DNS rebinding) and the bearer token, as pure ASGI middleware, and the
token's dependency that puts its scheme into the OpenAPI schema."""

# No `from __future__ import annotations`: FastAPI reads check_token's Annotated parameter,
# whose Depends(bearer) names a local, at run time.

import hmac
from typing import Annotated, Any

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send


class TokenAuth:
    """``Authorization: Bearer <token>`` on every path under ``prefix``, checked before the
    body is read (an unauthenticated client learns nothing, not even a validation error)."""

    def __init__(self, app: ASGIApp, token: str, prefix: str = "/v1/") -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(self.prefix):
            given = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
            if not hmac.compare_digest(given, self.expected):
                response = JSONResponse(
                    {"error": "missing or wrong bearer token"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


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


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def host_of(header: str) -> str:
    """The host part of a ``Host`` header (``[::1]:8000`` → ``::1``), lower-case."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    name, sep, port = header.rpartition(":")
    if sep and port.isdigit() and ":" not in name:
        header = name
    return header.rstrip(".")


class HostAllowList:
    """Answer only requests whose ``Host`` header names an allowed host (any port). A page on
    another site that rebinds its own name to 127.0.0.1 sends its own name here: refused,
    so a browser cannot be used to reach a loopback-only service."""

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...] | list[str]) -> None:
        self.app = app
        self.exact = {h.lower().strip("[]").rstrip(".") for h in hosts if not h.startswith("*.")}
        self.suffixes = tuple(h.lower()[1:] for h in hosts if h.startswith("*."))

    def allowed(self, host: str) -> bool:
        return host in self.exact or (bool(self.suffixes) and host.endswith(self.suffixes))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            given = next((v for k, v in scope["headers"] if k == b"host"), b"")
            if not self.allowed(host_of(given.decode("latin-1"))):
                # The header is not echoed: it is the client's text.
                response = JSONResponse(
                    {"error": "this service does not answer for the host in the Host header"},
                    status_code=400,
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
