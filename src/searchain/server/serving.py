"""Run the service: ``serve`` (blocking, for the CLI) and ``running`` (a background server on
a free port, for tests and scripts)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

from fastapi import FastAPI

from searchain.retrieval.service import is_loopback


def check_bind(host: str, token: str | None) -> None:
    """A non-loopback address is reachable by others: it needs a token."""
    if not is_loopback(host) and not token:
        raise ValueError(
            f"refusing to bind {host!r} without authentication: set SEARCHAIN_API_TOKEN to a "
            "secret (clients send 'Authorization: Bearer <token>'), or bind 127.0.0.1"
        )


def serve(app: FastAPI, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info") -> None:
    import uvicorn

    # The access log is off: it would record every question, which may be private.
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False)


@contextlib.contextmanager
def running(app: FastAPI, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``app`` from a thread; yield its base URL; stop on exit. The socket is bound
    here, so ``port=0`` picks a free port with no race."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        config = uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=2
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="searchain-server", daemon=True
        )
        thread.start()
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the server failed to start; see the log")
            thread.join(0.01)
        try:
            yield f"http://{host}:{sock.getsockname()[1]}"
        finally:
            server.should_exit = True
            thread.join(10)
    finally:
        sock.close()
