"""SSRF and resource bounds of searchain.net.safe_http against a real local HTTP server.

The server counts requests, so "refused" means refused before any byte reached it.
"""

from __future__ import annotations

import asyncio
import gzip
import logging
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from searchain.net import FetchError, HttpPolicy, UnsafeURLError, afetch, check_url, fetch, redact
from servers import free_port

SECRET = "sk-live-93f1c0ffee"


class _Handler(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []
    port = 0

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        self.hits.append(self.path)
        path = self.path.split("?")[0]
        if path == "/ok":
            self._send(200, b"hello " + self.path.encode(), {"Content-Type": "text/plain"})
        elif path == "/latin1":
            body = "café".encode("latin-1")
            self._send(200, body, {"Content-Type": "text/plain; charset=ISO-8859-1"})
        elif path == "/echo-headers":
            self._send(200, str(dict(self.headers)).encode())
        elif path == "/to-ok":
            self._send(302, headers={"Location": "/ok"})
        elif path == "/to-other-host":  # same server, other spelling of the host
            self._send(302, headers={"Location": f"http://localhost:{self.port}/echo-headers"})
        elif path.startswith("/to-"):
            target = {
                "/to-private": "http://10.0.0.1/",
                "/to-metadata": "http://169.254.169.254/latest/meta-data/",
                "/to-decimal": f"http://2130706433:{self.port}/ok",
                "/to-file": "file:///etc/passwd",
                "/to-loop": "/to-loop",
            }[path]
            self._send(302, headers={"Location": target})
        elif path == "/big":
            self._send(200, b"x" * 3_000_000)
        elif path == "/bomb":  # 50 MB of zeros, ~50 KB on the wire
            self._send(200, gzip.compress(b"\0" * 50_000_000), {"Content-Encoding": "gzip"})
        elif path == "/slow":  # drips forever
            self.send_response(200)
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            try:
                for _ in range(1000):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                pass
        elif path == "/hang":
            time.sleep(5)
            self._send(200, b"late")
        elif path == "/flaky":
            n = sum(1 for h in self.hits if h.startswith("/flaky"))
            self._send(503 if n < 3 else 200, b"ok now", {"Retry-After": "0"})
        else:
            self._send(404, b"missing")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        pass  # clients hanging up on /slow and /bomb is the point of those routes


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, type[_Handler]]]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    _Handler.port = httpd.server_address[1]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{_Handler.port}", _Handler
    httpd.shutdown()


@pytest.fixture
def hits(server) -> list[str]:
    _Handler.hits.clear()
    return _Handler.hits


def allowed(server, **kw) -> HttpPolicy:
    return HttpPolicy(allow_private=(server[0],), **kw)


def test_opted_in_loopback_works_and_decodes_charset(server, hits) -> None:
    r = fetch(f"http://{server[0]}/ok", policy=allowed(server), params={"q": "a b"})
    assert r.status == 200 and r.text == "hello /ok?q=a+b" and not r.truncated
    assert fetch(f"http://{server[0]}/latin1", policy=allowed(server)).text == "café"
    assert fetch(f"http://{server[0]}/nope", policy=allowed(server)).status == 404


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/ok",  # loopback, not opted in
        "http://2130706433:{port}/ok",  # decimal
        "http://0x7f000001:{port}/ok",  # hex
        "http://0177.0.0.1:{port}/ok",  # octal
        "http://127.1:{port}/ok",  # short form
        "http://[::1]:{port}/ok",
        "http://[::ffff:127.0.0.1]:{port}/ok",  # IPv4-mapped IPv6
        "http://localhost:{port}/ok",
        "http://0.0.0.0:{port}/ok",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",  # carrier-grade NAT
        "http://en.wikipedia.org@127.0.0.1:{port}/ok",  # user-info trick
        "file:///etc/passwd",
        "gopher://127.0.0.1:{port}/",
        "ftp://example.org/",
        "javascript:alert(1)",
        "http:///ok",
        "http://exa mple.org/",
        "",
    ],
)
def test_hostile_urls_are_refused_before_any_request(server, hits, url) -> None:
    url = url.format(port=_Handler.port)
    policy = HttpPolicy()  # nothing opted in
    with pytest.raises(UnsafeURLError):
        fetch(url, policy=policy)
    with pytest.raises(UnsafeURLError):
        asyncio.run(afetch(url, policy=policy))
    assert hits == []


def test_opt_in_is_for_the_host_as_written(server, hits) -> None:
    # 127.0.0.1:PORT is allowed; other spellings of the same address are not.
    for url in (f"http://2130706433:{_Handler.port}/ok", f"http://localhost:{_Handler.port}/ok"):
        with pytest.raises(UnsafeURLError):
            fetch(url, policy=allowed(server))
    assert hits == []


def test_names_resolving_to_private_addresses_are_refused_at_connect(server, hits) -> None:
    # "localhost.": a name (not a literal) that DNS/hosts resolve to loopback; the pre-flight
    # check lets names through, the connection backend refuses the resolved address.
    with pytest.raises(UnsafeURLError, match=r"non-public|local"):
        fetch(f"http://localhost.:{_Handler.port}/ok", policy=HttpPolicy())
    assert hits == []


@pytest.mark.parametrize("route", ["/to-private", "/to-metadata", "/to-decimal", "/to-file"])
def test_redirects_from_an_allowed_host_are_rechecked(server, hits, route) -> None:
    with pytest.raises(UnsafeURLError):
        fetch(f"http://{server[0]}{route}", policy=allowed(server))
    assert hits == [route]  # only the first hop reached the server


def test_redirects_are_followed_and_bounded(server, hits) -> None:
    r = fetch(f"http://{server[0]}/to-ok", policy=allowed(server))
    assert r.status == 200 and r.url.endswith("/ok") and r.redirects == [r.url]
    with pytest.raises(FetchError, match="redirects"):
        fetch(f"http://{server[0]}/to-loop", policy=allowed(server, max_redirects=3))
    assert hits.count("/to-loop") == 4


def test_caller_headers_are_not_carried_to_another_host(server, hits) -> None:
    policy = HttpPolicy(allow_private=(server[0], f"localhost:{_Handler.port}"))
    r = fetch(f"http://{server[0]}/to-other-host", policy=policy, headers={"X-Api-Key": SECRET})
    assert r.status == 200 and SECRET not in r.text
    direct = fetch(f"http://{server[0]}/echo-headers", policy=policy, headers={"X-Api-Key": "v"})
    assert "'x-api-key': 'v'" in direct.text


def test_allowed_domains(server) -> None:
    policy = HttpPolicy(allowed_domains=("en.wikipedia.org", "*.example.org"))
    assert check_url("https://en.wikipedia.org/wiki/Paris#x", policy).startswith("https://en.")
    assert check_url("https://api.example.org/v1", policy)
    for url in ("https://evil.org/", "https://en.wikipedia.org.evil.org/", "https://example.org"):
        with pytest.raises(UnsafeURLError, match="allowed domains"):
            check_url(url, policy)


def test_oversized_bodies_are_cut_or_refused(server) -> None:
    r = fetch(f"http://{server[0]}/big", policy=allowed(server, max_bytes=100_000))
    assert r.truncated and len(r.content) == 100_000
    with pytest.raises(FetchError, match="larger than"):
        fetch(f"http://{server[0]}/big", policy=allowed(server, max_bytes=1000, oversize="error"))


def test_compression_bombs_are_capped(server) -> None:
    r = fetch(f"http://{server[0]}/bomb", policy=allowed(server, max_bytes=1_000_000))
    assert r.truncated and len(r.content) == 1_000_000 and set(r.content) == {0}


@pytest.mark.parametrize("route", ["/slow", "/hang"])
def test_slow_and_hanging_servers_hit_the_deadline(server, route) -> None:
    t0 = time.monotonic()
    with pytest.raises(FetchError, match="timed out"):
        fetch(f"http://{server[0]}{route}", policy=allowed(server, timeout_s=1.0))
    with pytest.raises(FetchError, match="timed out"):
        asyncio.run(afetch(f"http://{server[0]}{route}", policy=allowed(server, timeout_s=1.0)))
    assert time.monotonic() - t0 < 4.5  # two 1-second deadlines, not the server's pace


def test_retries_on_503_then_succeeds(server, hits) -> None:
    r = fetch(f"http://{server[0]}/flaky", policy=allowed(server, retries=3))
    assert r.status == 200 and hits.count("/flaky") == 3


def test_connection_refused_is_a_fetch_error(server) -> None:
    port = free_port()  # bound, then closed: nothing listens there
    with pytest.raises(FetchError):
        fetch(f"http://127.0.0.1:{port}/", policy=HttpPolicy(allow_private=("127.0.0.1",)))


def test_concurrent_async_fetches(server, hits) -> None:
    async def many() -> list[int]:
        rs = await asyncio.gather(
            *(afetch(f"http://{server[0]}/ok?i={i}", policy=allowed(server)) for i in range(16))
        )
        return sorted(int(r.text.split("=")[1]) for r in rs)

    assert asyncio.run(many()) == list(range(16))


def test_secrets_never_appear_in_urls_errors_or_logs(server, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    r = fetch(
        f"http://{server[0]}/ok",
        policy=allowed(server),
        params={"api_key": SECRET},
        secrets=[SECRET],
    )
    assert SECRET in r.text  # it was sent ...
    assert SECRET not in r.url  # ... but the returned URL is redacted
    failures = [
        lambda: fetch(f"http://{server[0]}/to-private?k={SECRET}", policy=allowed(server)),
        lambda: fetch(
            f"http://{server[0]}/hang", policy=allowed(server, timeout_s=0.3), secrets=[SECRET]
        ),
        lambda: fetch(f"http://10.0.0.1/?key={SECRET}", policy=HttpPolicy(), secrets=[SECRET]),
    ]
    for call in failures:
        with pytest.raises((FetchError, UnsafeURLError)) as info:
            call()
        assert SECRET not in str(info.value) and SECRET not in repr(info.value)
        assert info.value.__cause__ is None and info.value.__context__ is None
    assert SECRET not in caplog.text
    assert redact(f"a {SECRET} b sk-live-93f1c0ffee%21", [SECRET]) == "a *** b ***%21"
