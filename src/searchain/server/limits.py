"""Request body size limit as pure ASGI middleware.

A declared ``Content-Length`` over the limit is answered 413 before anything is read; a
chunked body is read up to the limit (bodies here are small JSON) and refused as soon as it
goes over, so no request can make the server buffer more than ``max_bytes``.
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _too_big(self) -> JSONResponse:
        return JSONResponse(
            {"error": f"request body over {self.max_bytes:,} bytes"}, status_code=413
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        for key, value in scope["headers"]:
            if key == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0  # h11 has already rejected malformed lengths
                if declared > self.max_bytes:
                    await self._too_big()(scope, receive, send)
                    return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # disconnect: let the app see it
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._too_big()(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # afterwards: wait for the disconnect, as Starlette expects

        await self.app(scope, replay, send)
