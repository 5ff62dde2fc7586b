"""Run the service: ``serve`` (blocking, for the CLI) and ``running`` (a background server on
a free port, for tests and scripts), both from :mod:`searchain.net.serving`; ``check_bind``
is the service's own rule for exposed addresses."""

from __future__ import annotations

from searchain.net.serving import refuse_remote, running, serve

__all__ = ["check_bind", "running", "serve"]


def check_bind(host: str, token: str | None) -> None:
    """A non-loopback address is reachable by others: it needs a token."""
    refuse_remote(
        host,
        f"refusing to bind {host!r} without authentication: set SEARCHAIN_API_TOKEN to a "
        "secret (clients send 'Authorization: Bearer <token>'), or bind 127.0.0.1",
        allowed=bool(token),
    )
