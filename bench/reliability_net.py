"""Figures of bench/reliability.py about the network: SSRF refusals (direct, via redirect,
via DNS) with the connects that reached a disallowed address, and the wall time of slow
servers against the deadline (slow body, slow headers, stalled DNS, charset decoding) for
``safe_http`` (sync and async) and the OpenAI client."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from bench.kit import Figure, part_of
from searchain.llm import LLMError, RetryPolicy
from searchain.llm.openai_backend import OpenAILLM
from searchain.net import deadline as dl
from searchain.net.faults import HostileServer, Listener, LLMFaultServer
from searchain.net.safe_http import FetchError, HttpPolicy, UnsafeURLError, afetch, fetch

# Hostile URLs a model or a page could write; {port} is a live listener on 127.0.0.1.
DIRECT = [
    "http://127.0.0.1:{port}/", "http://127.1:{port}/", "http://2130706433:{port}/",
    "http://0x7f000001:{port}/", "http://0177.0.0.1:{port}/", "http://017700000001:{port}/",
    "http://0x7f.1:{port}/", "http://0:{port}/", "http://0.0.0.0:{port}/",
    "http://localhost:{port}/", "http://LOCALHOST.:{port}/", "http://a.localhost:{port}/",
    "http://[::1]:{port}/", "http://[::ffff:127.0.0.1]:{port}/", "http://[::127.0.0.1]:{port}/",
    "http://[64:ff9b::7f00:1]:{port}/", "http://[2002:7f00:1::]:{port}/",
    "http://[::ffff:7f00:1]:{port}/", "http://[fe80::1]/", "http://[fc00::1]/",
    "http://[fd00:ec2::254]/", "http://169.254.169.254/latest/meta-data/",
    "http://metadata.google.internal/", "http://10.0.0.1/", "http://172.16.0.1/",
    "http://192.168.1.1/", "http://100.64.0.1/", "http://198.18.0.1/", "http://224.0.0.1/",
    "http://255.255.255.255/", "http://en.wikipedia.org@127.0.0.1:{port}/",
    "http://user:pw@example.org/", "file:///etc/passwd", "gopher://127.0.0.1:{port}/",
    "ftp://example.org/", "dict://127.0.0.1:{port}/", "javascript:alert(1)", "http:///x",
    "http://exa mple.org/", "",
]  # fmt: skip
REDIRECT_TARGETS = [
    "http://127.0.0.1:{port}/", "http://2130706433:{port}/", "http://[::1]:{port}/",
    "http://localhost:{port}/", "http://169.254.169.254/", "http://10.0.0.1/",
    "file:///etc/passwd", "gopher://127.0.0.1:{port}/",
]  # fmt: skip
# Names and what a hostile (or rebinding) DNS answers for them.
DNS = {
    "rebind.example": ["127.0.0.1"],
    "private.example": ["10.0.0.1"],
    "mapped.example": ["::ffff:127.0.0.1"],
    "mixed.example": ["93.184.216.34", "127.0.0.1"],
    "metadata.example": ["169.254.169.254"],
    "v6.example": ["::1"],
}


@contextlib.contextmanager
def fake_dns(answers: dict[str, list[str]], stall: threading.Event | None = None) -> Iterator[None]:
    """Fault injection: ``socket.getaddrinfo`` answers ``answers`` (and ``stall.example``
    hangs until ``stall`` is set); other names resolve as usual."""
    real = socket.getaddrinfo

    def resolver(host: Any, port: Any, *args: Any, **kw: Any) -> list[Any]:
        if host == "stall.example" and stall is not None:
            stall.wait(120)
        if host in answers:
            out = []
            for a in answers[host]:
                fam = socket.AF_INET6 if ":" in a else socket.AF_INET
                out.append((fam, socket.SOCK_STREAM, 6, "", (a, port)))
            return out
        return real(host, port, *args, **kw)

    socket.getaddrinfo = resolver  # type: ignore[assignment]
    try:
        yield
    finally:
        socket.getaddrinfo = real  # type: ignore[assignment]


@contextlib.contextmanager
def connect_log() -> Iterator[list[tuple[str, int]]]:
    """Every address the sync backend connects a socket to (async connects to the listener
    show in its own count)."""
    seen: list[tuple[str, int]] = []
    real = dl._connect

    def spy(address: str, port: int, *args: Any) -> socket.socket:
        seen.append((address, port))
        return real(address, port, *args)

    dl._connect = spy  # type: ignore[assignment]
    try:
        yield seen
    finally:
        dl._connect = real  # type: ignore[assignment]


def _refused(url: str, policy: HttpPolicy) -> tuple[int, int]:
    """(refusals, tries) for ``url`` through fetch and afetch."""
    n = 0
    for call in (lambda: fetch(url, policy=policy),
                 lambda: asyncio.run(afetch(url, policy=policy))):  # fmt: skip
        try:
            call()
        except UnsafeURLError:
            n += 1
        except FetchError:
            pass
    return n, 2


def ssrf() -> list[Figure]:
    out = []
    with Listener() as target, HostileServer() as web, fake_dns(DNS), connect_log() as connects:
        fmt = {"port": target.port}
        allowed = f"127.0.0.1:{web.port}"
        groups = {
            "direct": [(u.format(**fmt), HttpPolicy()) for u in DIRECT],
            "via redirect": [
                (web.url("redirect", to=t.format(**fmt)), HttpPolicy(allow_private=(allowed,)))
                for t in REDIRECT_TARGETS
            ],
            "via DNS": [(f"http://{name}:{target.port}/", HttpPolicy()) for name in DNS],
        }
        for group, cases in groups.items():
            refused = tries = 0
            for url, policy in cases:
                r, t = _refused(url, policy)
                refused, tries = refused + r, tries + t
            out.append(
                Figure(f"SSRF refused {group}", f"{refused}/{tries}", "all", refused == tries)
            )
        bad = [c for c in connects if c != ("127.0.0.1", web.port)] + [
            ("listener", target.port)
        ] * target.connections
    out.append(Figure("connects to disallowed addresses", str(len(bad)), "0", not bad))
    return out


def _ratio(call: Callable[[], Any], timeout: float) -> float:
    t0 = time.monotonic()
    with contextlib.suppress(FetchError, LLMError, UnsafeURLError):
        call()
    return (time.monotonic() - t0) / timeout


def deadlines(timeout: float = 1.0) -> list[Figure]:
    """Worst wall time ÷ timeout of each kind of slowness (sync and async fetch; the LLM
    client for slow headers and a hang)."""
    stall = threading.Event()
    out = []
    with HostileServer() as web, fake_dns({}, stall), LLMFaultServer("hang") as llm_srv:
        policy = HttpPolicy(allow_private=(f"127.0.0.1:{web.port}", "stall.example"),
                            timeout_s=timeout, max_bytes=2_000_000)  # fmt: skip
        urls = {
            "slow body": web.url("slow-body"),
            "slow headers": web.url("slow-headers"),
            "stalled DNS": "http://stall.example/",
            "charset decode": web.url("charset", size=1_900_000),
        }
        loop = asyncio.new_event_loop()  # one loop for all: its DNS threads outlive a call
        for what, url in urls.items():

            def sync(u: str = url) -> None:
                fetch(u, policy=policy).text  # noqa: B018 - decoding is part of the wait

            async def one(u: str = url) -> None:
                (await afetch(u, policy=policy)).text  # noqa: B018

            worst = max(
                _ratio(sync, timeout), _ratio(lambda: loop.run_until_complete(one()), timeout)
            )
            out.append(Figure(f"wall/timeout, {what}", f"{worst:.2f}", "≤ 1.2", worst <= 1.2))
        for mode in ("trickle_headers", "hang"):
            llm_srv.mode = mode
            llm = OpenAILLM(
                "m", base_url=llm_srv.url, retry=RetryPolicy(attempts=1), timeout=timeout
            )
            worst = _ratio(lambda llm=llm: llm.complete("hi"), timeout)
            name = f"wall/timeout, LLM call, {mode.replace('_', ' ')}"
            out.append(Figure(name, f"{worst:.2f}", "≤ 1.2", worst <= 1.2))
        stall.set()
        loop.close()
    return out


if __name__ == "__main__":
    part_of(__doc__, "python -m bench.reliability --only ssrf,deadlines")
