"""The plumbing every searchain HTTP server shares: which addresses may be bound, the request
body limit, and starting a server on a thread.

Three servers use it: the FastAPI service and viewer (``searchain.server``), the retrieval
service (``searchain.retrieval.service``) and the offline Wikipedia mirror (a stdlib
``ThreadingHTTPServer``, ``searchain.retrieval.llm_url.mirror``). uvicorn is imported only
when an ASGI app is started, so this module loads without the ``server`` extra.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

# The ASGI callables, spelled out so this module needs no Starlette.
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

__all__ = ["BodyLimit", "base_url", "is_loopback", "refuse_remote", "running", "serve", "thread"]


# -- binding ------------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps a server reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # another host name could resolve to any interface


def refuse_remote(host: str, message: str, *, allowed: bool = False) -> None:
    """Raise ``ValueError(message)`` for a non-loopback ``host`` unless ``allowed``: each
    server says in its own words what makes an exposed address acceptable (a token, an
    explicit ``allow_remote``)."""
    if not allowed and not is_loopback(host):
        raise ValueError(message)


def base_url(host: str, port: int) -> str:
    """``http://HOST:PORT``, an IPv6 address in brackets."""
    bare = host.strip("[]")
    return f"http://[{bare}]:{port}" if ":" in bare else f"http://{host}:{port}"


# -- the request body limit -----------------------------------------------------------------


class BodyLimit:
    """Pure ASGI middleware refusing request bodies over ``max_bytes`` with a 413, the message
    under ``field`` (each API keeps its own error shape: ``error`` or ``detail``).

    A declared ``Content-Length`` over the limit is answered before anything is read; within
    it, the body passes through untouched (the HTTP parser delivers no more than declared). A
    chunked body is read up to the limit and refused as soon as it goes over, so no request
    can make the server buffer more than ``max_bytes``. (Starlette's ``BaseHTTPMiddleware``
    would cost every request a task and a copy.)
    """

    def __init__(self, app: ASGIApp, max_bytes: int, field: str = "error") -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.field = field

    async def _too_big(self, send: Send) -> None:
        body = json.dumps({self.field: f"request body over {self.max_bytes:,} bytes"}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope["headers"]:
            if key == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0  # h11 has already rejected malformed lengths
                if declared > self.max_bytes:
                    await self._too_big(send)
                else:
                    await self.app(scope, receive, send)
                return
        if scope["method"] in ("GET", "HEAD", "OPTIONS"):  # their routes read no body
            await self.app(scope, receive, send)
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
                await self._too_big(send)
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


# -- starting a server ----------------------------------------------------------------------


def serve(
    app: ASGIApp,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "info",
    access_log: bool = False,
) -> None:
    """Serve ``app`` with uvicorn until interrupted. The access log is off by default: it
    would record every question or query, which may be private."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=access_log)


@contextlib.contextmanager
def running(
    app: ASGIApp,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    what: str = "server",
    name: str = "searchain-server",
    lifespan: str = "off",
) -> Iterator[str]:
    """Serve ``app`` with uvicorn from a thread called ``name``; yield its base URL; stop on
    exit. The socket is bound here, before the thread starts, so ``port=0`` picks a free port
    with no window in which another process could take it. ``what`` names the server in the
    error raised when it does not start; ``lifespan="on"`` runs the app's start-up and
    shut-down (the MCP face's session manager lives in them)."""
    import uvicorn

    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    # proto must say TCP explicitly: asyncio only sets TCP_NODELAY on accepted sockets whose
    # proto is IPPROTO_TCP, and with Nagle on, every keep-alive response body waits ~40 ms
    # for the client's delayed ACK of the headers (measured: 45 ms vs 1 ms per request).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((bare, port))
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan=lifespan,  # type: ignore[arg-type]
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        worker = thread(lambda: server.run(sockets=[sock]), name)
        while not server.started:
            if not worker.is_alive():
                raise RuntimeError(f"the {what} failed to start; see the log")
            worker.join(0.01)
        try:
            yield base_url(host, sock.getsockname()[1])
        finally:
            server.should_exit = True
            worker.join(10)
    finally:
        sock.close()


def thread(target: Callable[[], object], name: str) -> threading.Thread:
    """``target`` started on a daemon thread (a server must not keep the process alive)."""
    worker = threading.Thread(target=target, name=name, daemon=True)
    worker.start()
    return worker
