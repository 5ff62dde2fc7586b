"""The error shape of the OpenAI-compatible face: :func:`openai_error` (OpenAI's error object,
which OpenAI's SDKs and chat front ends read), and :class:`OpenAIErrorShape`, the middleware
that puts what the service's own limits refuse on the OpenAI paths (401 token, 413 body,
400 Host) into it rather than the service's ``{"error": "..."}``.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "invalid_request_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
}


def openai_error(status: int, message: str, code: str | None = None) -> dict[str, object]:
    return {
        "error": {
            "message": message,
            "type": ERROR_TYPES.get(status, "api_error"),
            "param": None,
            "code": code,
        }
    }


class OpenAIErrorShape:
    """Rewrite ``{"error": "text"}`` error bodies on ``prefixes`` into OpenAI's error object
    (small JSON bodies only: they are buffered to be rewritten)."""

    def __init__(self, app: ASGIApp, prefixes: tuple[str, ...]) -> None:
        self.app, self.prefixes = app, prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.prefixes):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        chunks: list[bytes] = []

        async def reshape(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and message["status"] >= 400:
                start = message  # held until the body is complete
                return
            if start is None:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                await self._send_reshaped(start, b"".join(chunks), send)

        await self.app(scope, receive, reshape)

    @staticmethod
    async def _send_reshaped(start: Message, body: bytes, send: Send) -> None:
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            status = start["status"]
            body = json.dumps(openai_error(status, data["error"])).encode()
            headers = [(k, v) for k, v in start.get("headers", []) if k != b"content-length"]
            start = {**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        await send(start)
        await send({"type": "http.response.body", "body": body, "more_body": False})
