"""The HTTP plumbing the three servers share (searchain.net.serving): the loopback rule, the
body limit on a real uvicorn server, and the URL a server on IPv6 loopback gives."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from searchain.net.serving import (
    BodyLimit,
    Receive,
    Scope,
    Send,
    base_url,
    is_loopback,
    refuse_remote,
    running,
)

try:  # this project's environment ships httpx as ``httpx2`` (pulled in by openai)
    import httpx2 as httpx
except ImportError:  # pragma: no cover - depends on the installed client
    import httpx  # type: ignore[no-redef]


async def echo_size(scope: Scope, receive: Receive, send: Send) -> None:
    """A bare ASGI app answering with the number of body bytes it read."""
    size, more = 0, True
    while more:
        message = await receive()
        size += len(message.get("body", b""))
        more = message.get("more_body", False)
    body = str(size).encode()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


def test_loopback_rule() -> None:
    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"):
        assert is_loopback(host)
        refuse_remote(host, "never raised")
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.org", "localhost.example.org"):
        assert not is_loopback(host)
        with pytest.raises(ValueError, match=r"^each server's own words$"):
            refuse_remote(host, "each server's own words")
        refuse_remote(host, "not raised", allowed=True)


def test_base_url_brackets_ipv6() -> None:
    assert base_url("127.0.0.1", 80) == "http://127.0.0.1:80"
    assert base_url("::1", 8000) == "http://[::1]:8000"
    assert base_url("[::1]", 8000) == "http://[::1]:8000"


@pytest.fixture(scope="module")
def limited() -> Iterator[str]:
    with running(BodyLimit(echo_size, max_bytes=1000, field="detail")) as url:
        yield url


def test_body_limit_declared_and_chunked(limited: str) -> None:
    ok = httpx.post(limited, content=b"x" * 1000)
    assert ok.status_code == 200 and ok.text == "1000"
    over = httpx.post(limited, content=b"x" * 1001)
    assert over.status_code == 413
    assert over.headers["content-type"] == "application/json"
    assert over.json() == {"detail": "request body over 1,000 bytes"}
    # No Content-Length: read up to the limit, refused as soon as it goes over.
    chunked = httpx.post(limited, content=iter([b"x" * 600, b"x" * 600]))
    assert chunked.status_code == 413 and "over 1,000" in chunked.json()["detail"]
    small = httpx.post(limited, content=iter([b"x" * 300, b"x" * 300]))
    assert small.status_code == 200 and small.text == "600"
    assert httpx.get(limited).text == "0"


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback here")
def test_running_on_ipv6_loopback() -> None:
    with running(echo_size, "::1") as url:
        assert url.startswith("http://[::1]:")
        assert httpx.post(url, content=b"abc").text == "3"
