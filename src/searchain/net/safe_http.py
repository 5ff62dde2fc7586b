"""HTTP for URLs that a model wrote: treat every one as hostile.

Used by REBEL's HTTP tool and LLM-URL's page fetcher. The rules:

* only ``http``/``https``; no user-info (``http://good.org@10.0.0.1/``); an optional host allowlist;
* the address actually connected to must be public. The check runs inside the connection backend,
  on the addresses DNS returned, and the socket connects to the checked address -- so DNS
  rebinding, decimal/hex/octal IPv4 forms and IPv6-mapped addresses cannot slip through. Loopback
  or private hosts are reachable only when the policy names them (``allow_private``: tests, local
  mirrors, a company tool server);
* redirects are followed by hand, each target re-checked; headers the caller set (Authorization,
  cookies, keys) are dropped when a redirect changes the origin (scheme, host or port);
* the whole exchange has one deadline, enforced on every socket wait (DNS, connect, headers,
  body: :mod:`searchain.net.deadline`); the body is read in chunks up to ``max_bytes``
  (compressed bodies are decoded with the same cap) and decoded only in allowed charsets;
* secrets (API keys in static parameters) never reach error messages or returned URLs.

The transport is httpcore(2) with our own network backend: no proxies from the environment, no
cookies, no implicit decoding.
"""

from __future__ import annotations

import asyncio
import socket
import time
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from searchain import redaction
from searchain.net import deadline as dl
from searchain.net.body import Body as _Body
from searchain.net.body import BodyError, decode
from searchain.net.urls import (
    HttpPolicy,
    RequestTarget,
    UnsafeURLError,
    check_url,
    is_public,
    parse_url,
    pick_address,
)
from searchain.redaction import mask_secrets as redact

try:  # this project's environment ships httpcore as ``httpcore2`` (pulled in by openai)
    import httpcore2 as httpcore
except ImportError:  # pragma: no cover - depends on the installed client
    import httpcore  # type: ignore[no-redef]

__all__ = [
    "FetchError",
    "FetchResponse",
    "HttpPolicy",
    "UnsafeURLError",
    "afetch",
    "check_url",
    "decode",
    "fetch",
    "is_public",
    "redact",
]

REDIRECTS = (301, 302, 303, 307, 308)
RETRY_STATUS = (429, 502, 503, 504)
IDEMPOTENT = ("GET", "HEAD", "OPTIONS")


class FetchError(RuntimeError):
    """The request was allowed but failed: network error, timeout, redirect loop, oversize."""


@dataclass
class FetchResponse:
    url: str
    status: int
    headers: dict[str, str]
    content: bytes
    truncated: bool = False
    elapsed_s: float = 0.0
    redirects: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return decode(self.content, self.headers.get("content-type", ""))


class _GuardedBackend(dl.DeadlineBackend):
    """Resolve, check every address, then connect to the checked one (DNS-rebinding safe);
    every wait bounded by the fetch's deadline (see :mod:`searchain.net.deadline`)."""

    def __init__(self, policy: HttpPolicy, resolver: dl.Resolver | None = None) -> None:
        super().__init__(resolver)
        self.policy = policy

    def choose(self, host: str, port: int, infos: list[Any]) -> str:
        return pick_address(self.policy, host, port, infos)


class _AsyncGuardedBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, policy: HttpPolicy) -> None:
        self.policy = policy
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, **kw: Any
    ) -> Any:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror:
            raise FetchError(f"cannot resolve host {host!r}") from None
        address = pick_address(self.policy, host, port, infos)
        return await self.inner.connect_tcp(address, port, timeout=timeout, **kw)

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


# -- one exchange ------------------------------------------------------------------------
@dataclass
class _Request:
    method: str
    target: RequestTarget
    headers: list[tuple[str, str]]
    body: bytes | None


def _build(
    url: str,
    policy: HttpPolicy,
    method: str,
    params: Mapping[str, Any] | None,
    headers: Mapping[str, str] | None,
    json_body: Any,
    data: bytes | str | Mapping[str, Any] | None,
) -> _Request:
    target = parse_url(url, policy)
    if params:
        sep = "&" if "?" in target.target else "?"
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        target = RequestTarget(target.scheme, target.host, target.port, target.target + sep + query)
    hdrs = {"user-agent": policy.user_agent, "accept-encoding": "gzip, deflate"}
    body: bytes | None = None
    if json_body is not None:
        import json

        body = json.dumps(json_body).encode()
        hdrs["content-type"] = "application/json"
    elif isinstance(data, Mapping):
        body = urllib.parse.urlencode(data).encode()
        hdrs["content-type"] = "application/x-www-form-urlencoded"
    elif data is not None:
        body = data.encode() if isinstance(data, str) else data
    hdrs.update({k.lower(): v for k, v in (headers or {}).items()})
    return _Request(method.upper(), target, list(hdrs.items()), body)


def _wire(req: _Request) -> dict[str, Any]:
    headers = [("host", req.target.url.split("/")[2]), *req.headers]
    if req.body is not None:
        headers.append(("content-length", str(len(req.body))))
    return {
        "method": req.method.encode(),
        "url": httpcore.URL(
            scheme=req.target.scheme.encode(),
            host=req.target.host.encode(),
            port=req.target.port,
            target=req.target.target.encode(),
        ),
        "headers": [(k.encode(), v.encode()) for k, v in headers],
        "content": req.body,
    }


def _timeouts(deadline: float) -> dict[str, Any]:
    left = max(0.01, deadline - time.monotonic())
    return {"timeout": {"connect": left, "read": left, "write": left, "pool": left}}


def _next_request(req: _Request, status: int, location: str, policy: HttpPolicy) -> _Request:
    base = req.target.url
    target = parse_url(urllib.parse.urljoin(base, location), policy)
    method, body, headers = req.method, req.body, req.headers
    if status == 303 or (status in (301, 302) and method == "POST"):
        method, body = "GET", None
        headers = [(k, v) for k, v in headers if k != "content-type"]
    # Another origin (scheme, host or port) gets none of the caller's headers: no
    # Authorization, cookies or API keys for a server the caller did not name.
    if _origin(target) != _origin(req.target):
        headers = [(k, v) for k, v in headers if k in ("user-agent", "accept-encoding")]
    return _Request(method, target, headers, body)


def _origin(t: RequestTarget) -> tuple[str, str, int]:
    return t.scheme, t.host, t.port


def _retry_wait(attempt: int, headers: dict[str, str], deadline: float) -> float | None:
    wait = 0.5 * 2**attempt
    after = headers.get("retry-after", "")
    if after.isdigit():
        wait = float(after)
    if time.monotonic() + wait >= deadline:
        return None
    return wait


def _clean(exc: Exception, secrets: tuple[str, ...]) -> Exception:
    """A fresh exception of the same type: redacted message, no chained causes (whose messages
    or tracebacks could hold a secret)."""
    return type(exc)(redact(str(exc), secrets))


def fetch(
    url: str,
    *,
    policy: HttpPolicy,
    method: str = "GET",
    params: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    json: Any = None,
    data: bytes | str | Mapping[str, Any] | None = None,
    secrets: Iterable[str] = (),
) -> FetchResponse:
    """One request (with checked redirects and retries) under ``policy``; see the module doc."""
    secrets = tuple(secrets)
    redaction.register(*secrets)  # kept out of logs, manifests and results from now on
    try:
        return _fetch_sync(url, policy, method, params, headers, json, data, secrets)
    except (UnsafeURLError, FetchError) as exc:
        failure = exc
    raise _clean(failure, secrets)


@dataclass
class _Exchange:
    """State of one logical request across redirects and retries."""

    req: _Request
    policy: HttpPolicy
    secrets: tuple[str, ...]
    t0: float = field(default_factory=time.monotonic)
    attempt: int = 0
    redirects: list[str] = field(default_factory=list)

    @property
    def deadline(self) -> float:
        return self.t0 + self.policy.timeout_s

    def on_network_error(self, exc: BaseException) -> float:
        """Seconds to wait before retrying, or raise the error as a :class:`FetchError`."""
        if isinstance(exc, httpcore.TimeoutException):
            raise FetchError(f"timed out after {self.policy.timeout_s:g} s")
        wait = _retry_wait(self.attempt, {}, self.deadline)
        if self.attempt >= self.policy.retries or wait is None or self.req.method not in IDEMPOTENT:
            raise FetchError(f"{type(exc).__name__}: {exc}")
        self.attempt += 1
        return wait

    def on_response(
        self, status: int, hdrs: dict[str, str], body: _Body
    ) -> FetchResponse | float | None:
        """The final response; or seconds to wait before a retry; or None: follow a redirect."""
        if status in REDIRECTS and "location" in hdrs:
            if len(self.redirects) >= self.policy.max_redirects:
                raise FetchError(f"more than {self.policy.max_redirects} redirects")
            self.req = _next_request(self.req, status, hdrs["location"], self.policy)
            self.redirects.append(redact(self.req.target.url, self.secrets))
            return None
        retryable = status in RETRY_STATUS and self.req.method in IDEMPOTENT
        if retryable and self.attempt < self.policy.retries:
            wait = _retry_wait(self.attempt, hdrs, self.deadline)
            if wait is not None:
                self.attempt += 1
                return wait
        if body.truncated and self.policy.oversize == "error":
            host = self.req.target.host
            raise FetchError(f"response from {host} is larger than {self.policy.max_bytes} bytes")
        return FetchResponse(
            url=redact(self.req.target.url, self.secrets),
            status=status,
            headers=hdrs,
            content=body.content(),
            truncated=body.truncated,
            elapsed_s=time.monotonic() - self.t0,
            redirects=self.redirects,
        )

    def start(self, status: int, raw_headers: list[tuple[bytes, bytes]]) -> tuple[dict, _Body]:
        hdrs = {k.decode().lower(): v.decode("latin-1") for k, v in raw_headers}
        return hdrs, _Body(hdrs.get("content-encoding", ""), self.policy.max_bytes)

    def read_more(self, body: _Body, chunk: bytes) -> bool:
        if time.monotonic() > self.deadline:
            raise FetchError(f"timed out after {self.policy.timeout_s:g} s")
        try:
            return body.feed(chunk)
        except BodyError as exc:
            raise FetchError(str(exc)) from None


_NETWORK_ERRORS = (
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    OSError,
)


def _fetch_sync(url, policy, method, params, headers, json_body, data, secrets) -> FetchResponse:
    ex = _Exchange(_build(url, policy, method, params, headers, json_body, data), policy, secrets)
    backend = _GuardedBackend(policy)
    # The deadline reaches every socket wait (DNS, connect, each read), so headers that
    # trickle in cannot hold the caller past it; a cancelled request stops at once.
    with (
        dl.deadline_scope(policy.timeout_s),
        httpcore.ConnectionPool(network_backend=backend, retries=0) as pool,
    ):
        while True:
            try:
                with pool.stream(**_wire(ex.req), extensions=_timeouts(ex.deadline)) as resp:
                    hdrs, body = ex.start(resp.status, resp.headers)
                    if resp.status not in REDIRECTS:
                        for chunk in resp.iter_stream():
                            if not ex.read_more(body, chunk):
                                break
            except (UnsafeURLError, FetchError):
                raise
            except _NETWORK_ERRORS as exc:
                dl.sleep(ex.on_network_error(exc))
                continue
            outcome = ex.on_response(resp.status, hdrs, body)
            if isinstance(outcome, FetchResponse):
                return outcome
            if outcome is not None:
                dl.sleep(outcome)


async def afetch(
    url: str,
    *,
    policy: HttpPolicy,
    method: str = "GET",
    params: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    json: Any = None,
    data: bytes | str | Mapping[str, Any] | None = None,
    secrets: Iterable[str] = (),
) -> FetchResponse:
    """The async twin of :func:`fetch` (safe to run many at once)."""
    secrets = tuple(secrets)
    redaction.register(*secrets)
    try:
        # One deadline for DNS, connect, headers and body (httpcore's own timeouts are per
        # socket operation: headers sent a byte at a time would never trip them).
        async with asyncio.timeout(policy.timeout_s):
            return await _fetch_async(url, policy, method, params, headers, json, data, secrets)
    except TimeoutError:
        failure = FetchError(f"timed out after {policy.timeout_s:g} s")
    except (UnsafeURLError, FetchError) as exc:
        failure = exc
    raise _clean(failure, secrets)


async def _fetch_async(
    url, policy, method, params, headers, json_body, data, secrets
) -> FetchResponse:
    ex = _Exchange(_build(url, policy, method, params, headers, json_body, data), policy, secrets)
    backend = _AsyncGuardedBackend(policy)
    async with httpcore.AsyncConnectionPool(network_backend=backend, retries=0) as pool:
        while True:
            try:
                async with pool.stream(**_wire(ex.req), extensions=_timeouts(ex.deadline)) as resp:
                    hdrs, body = ex.start(resp.status, resp.headers)
                    if resp.status not in REDIRECTS:
                        async for chunk in resp.aiter_stream():
                            if not ex.read_more(body, chunk):
                                break
            except (UnsafeURLError, FetchError):
                raise
            except _NETWORK_ERRORS as exc:
                await asyncio.sleep(ex.on_network_error(exc))
                continue
            outcome = ex.on_response(resp.status, hdrs, body)
            if isinstance(outcome, FetchResponse):
                return outcome
            if outcome is not None:
                await asyncio.sleep(outcome)
