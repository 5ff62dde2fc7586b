"""HTTP for URLs that a model wrote: treat every one as hostile.

Used by REBEL's HTTP tool and LLM-URL's page fetcher. The rules:

* only ``http``/``https``; no user-info (``http://good.org@10.0.0.1/``); an optional host allowlist;
* the address actually connected to must be public. The check runs inside the connection backend,
  on the addresses DNS returned, and the socket connects to the checked address -- so DNS
  rebinding, decimal/hex/octal IPv4 forms and IPv6-mapped addresses cannot slip through. Loopback
  or private hosts are reachable only when the policy names them (``allow_private``: tests, local
  mirrors, a company tool server);
* redirects are followed by hand, each target re-checked; headers the caller set are dropped when a
  redirect leaves the original host;
* the whole exchange has one deadline; the body is read in chunks up to ``max_bytes`` (compressed
  bodies are decoded with the same cap);
* secrets (API keys in static parameters) never reach error messages or returned URLs.

The transport is httpcore(2) with our own network backend: no proxies from the environment, no
cookies, no implicit decoding.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
import urllib.parse
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

try:  # this project's environment ships httpcore as ``httpcore2`` (pulled in by openai)
    import httpcore2 as httpcore
except ImportError:  # pragma: no cover - depends on the installed client
    import httpcore  # type: ignore[no-redef]

REDIRECTS = (301, 302, 303, 307, 308)
RETRY_STATUS = (429, 502, 503, 504)
IDEMPOTENT = ("GET", "HEAD", "OPTIONS")
_IPV4ISH = frozenset("0123456789abcdefx.")


class UnsafeURLError(ValueError):
    """Refused before any byte was sent: scheme, host or address not allowed."""


class FetchError(RuntimeError):
    """The request was allowed but failed: network error, timeout, redirect loop, oversize."""


@dataclass(frozen=True)
class HttpPolicy:
    allowed_domains: tuple[str, ...] | None = None  # exact hosts or "*.example.org"; None = any
    allow_private: tuple[str, ...] = ()  # "127.0.0.1", "localhost" or "127.0.0.1:8123"
    max_bytes: int = 2_000_000
    oversize: str = "truncate"  # or "error"
    timeout_s: float = 10.0
    max_redirects: int = 5
    retries: int = 0
    user_agent: str = "searchain/0.1"

    def __post_init__(self) -> None:
        if self.oversize not in ("truncate", "error"):
            raise ValueError("HttpPolicy.oversize must be 'truncate' or 'error'")


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
        ctype = self.headers.get("content-type", "")
        charset = "utf-8"
        for part in ctype.split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip("\"' ")
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace every secret (and its URL-encoded forms) by ``***``."""
    for secret in secrets:
        if not secret:
            continue
        for form in {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret)}:
            text = text.replace(form, "***")
    return text


# -- addresses ---------------------------------------------------------------------------
def _literal_ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host string denotes if it is an IP literal in any form libc accepts."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if host and set(host.lower()) <= _IPV4ISH:
        try:  # legacy forms: 2130706433, 0x7f000001, 0177.0.0.1, 127.1
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def is_public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address):
        for embedded in (ip.ipv4_mapped, ip.sixtofour, ip.teredo and ip.teredo[1]):
            if embedded is not None and not is_public(embedded):
                return False
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified)


def _opted_in(policy: HttpPolicy, host: str, port: int) -> bool:
    return host in policy.allow_private or f"{host}:{port}" in policy.allow_private


def _domain_allowed(policy: HttpPolicy, host: str, port: int) -> bool:
    if policy.allowed_domains is None or _opted_in(policy, host, port):
        return True
    for entry in policy.allowed_domains:
        entry = entry.lower()
        if host == entry or (entry.startswith("*.") and host.endswith(entry[1:])):
            return True
    return False


@dataclass(frozen=True)
class _Target:
    scheme: str
    host: str
    port: int
    target: str  # path + query

    @property
    def url(self) -> str:
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        netloc = host if self.port == default else f"{host}:{self.port}"
        return f"{self.scheme}://{netloc}{self.target}"


def _parse(url: str, policy: HttpPolicy) -> _Target:
    if not isinstance(url, str) or not url.strip():
        raise UnsafeURLError("empty URL")
    if any(ord(c) < 33 for c in url.strip()):
        raise UnsafeURLError("URL contains whitespace or control characters")
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise UnsafeURLError(f"malformed URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise UnsafeURLError(f"scheme {scheme or '(none)'!r} not allowed: only http and https")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise UnsafeURLError("URLs with user-info (user@host) are not allowed")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise UnsafeURLError("URL has no host")
    try:
        host = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise UnsafeURLError("host is not a valid domain name") from None
    port = port or (443 if scheme == "https" else 80)
    if not _domain_allowed(policy, host, port):
        raise UnsafeURLError(f"host {host!r} is not in the allowed domains")
    if not _opted_in(policy, host, port):
        ip = _literal_ip(host)
        if ip is not None and not is_public(ip):
            raise UnsafeURLError(f"address {ip} is private, loopback or reserved")
        if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
            raise UnsafeURLError(f"host {host!r} is local")
    target = urllib.parse.quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
    if parts.query:
        target += "?" + parts.query
    return _Target(scheme, host, port, target)


def check_url(url: str, policy: HttpPolicy) -> str:
    """The normalised URL, or :class:`UnsafeURLError` (no DNS lookup, no connection)."""
    return _parse(url, policy).url


def _pick_address(policy: HttpPolicy, host: str, port: int, infos: list[Any]) -> str:
    addresses = [info[4][0] for info in infos]
    if not addresses:
        raise UnsafeURLError(f"host {host!r} did not resolve")
    if not _opted_in(policy, host, port):
        for addr in addresses:
            ip = ipaddress.ip_address(addr.split("%")[0])
            if not is_public(ip):
                raise UnsafeURLError(f"host {host!r} resolves to non-public address {ip}")
    return addresses[0]


class _GuardedBackend(httpcore.NetworkBackend):
    """Resolve, check every address, then connect to the checked one (DNS-rebinding safe)."""

    def __init__(self, policy: HttpPolicy) -> None:
        self.policy = policy
        self.inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, **kw: Any) -> Any:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror:
            raise FetchError(f"cannot resolve host {host!r}") from None
        address = _pick_address(self.policy, host, port, infos)
        return self.inner.connect_tcp(address, port, timeout=timeout, **kw)


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
        address = _pick_address(self.policy, host, port, infos)
        return await self.inner.connect_tcp(address, port, timeout=timeout, **kw)

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


# -- one exchange ------------------------------------------------------------------------
@dataclass
class _Request:
    method: str
    target: _Target
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
    target = _parse(url, policy)
    if params:
        sep = "&" if "?" in target.target else "?"
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        target = _Target(target.scheme, target.host, target.port, target.target + sep + query)
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


class _Body:
    """Accumulates (and decodes) a body up to the byte cap."""

    def __init__(self, encoding: str, cap: int) -> None:
        self.cap, self.size, self.truncated = cap, 0, False
        self.parts: list[bytes] = []
        self.decoder = None
        if encoding in ("gzip", "x-gzip", "deflate"):
            self.decoder = zlib.decompressobj(zlib.MAX_WBITS | 32)  # auto-detect gzip/zlib

    def feed(self, chunk: bytes) -> bool:
        """Add a chunk; False once the cap is reached (stop reading)."""
        room = self.cap - self.size
        if self.decoder is not None:
            try:
                chunk = self.decoder.decompress(chunk, room + 1)
            except zlib.error:
                raise FetchError("response body is not valid compressed data") from None
        if len(chunk) > room:
            chunk, self.truncated = chunk[:room], True
        self.parts.append(chunk)
        self.size += len(chunk)
        return not self.truncated

    def content(self) -> bytes:
        return b"".join(self.parts)


def _timeouts(deadline: float) -> dict[str, Any]:
    left = max(0.01, deadline - time.monotonic())
    return {"timeout": {"connect": left, "read": left, "write": left, "pool": left}}


def _next_request(req: _Request, status: int, location: str, policy: HttpPolicy) -> _Request:
    base = req.target.url
    target = _parse(urllib.parse.urljoin(base, location), policy)
    method, body, headers = req.method, req.body, req.headers
    if status == 303 or (status in (301, 302) and method == "POST"):
        method, body = "GET", None
        headers = [(k, v) for k, v in headers if k != "content-type"]
    if target.host != req.target.host:  # never carry the caller's headers to another host
        headers = [(k, v) for k, v in headers if k in ("user-agent", "accept-encoding")]
    return _Request(method, target, headers, body)


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
        return body.feed(chunk)


_NETWORK_ERRORS = (
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    OSError,
)


def _fetch_sync(url, policy, method, params, headers, json_body, data, secrets) -> FetchResponse:
    ex = _Exchange(_build(url, policy, method, params, headers, json_body, data), policy, secrets)
    with httpcore.ConnectionPool(network_backend=_GuardedBackend(policy), retries=0) as pool:
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
                time.sleep(ex.on_network_error(exc))
                continue
            outcome = ex.on_response(resp.status, hdrs, body)
            if isinstance(outcome, FetchResponse):
                return outcome
            if outcome is not None:
                time.sleep(outcome)


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
    try:
        return await _fetch_async(url, policy, method, params, headers, json, data, secrets)
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
