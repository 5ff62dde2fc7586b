"""Which URLs and addresses :mod:`searchain.net.safe_http` may reach: parsing a URL the way
the connection will use it, and telling public addresses from loopback, private, link-local,
reserved and the IPv6 forms that embed them. No DNS lookups and no connections here."""

from __future__ import annotations

import ipaddress
import socket
import urllib.parse
from dataclasses import dataclass
from typing import Any

_IPV4ISH = frozenset("0123456789abcdefx.")


class UnsafeURLError(ValueError):
    """Refused before any byte was sent: scheme, host or address not allowed."""


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
class RequestTarget:
    """A checked URL as the connection uses it: scheme, IDNA host, port, path and query."""

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


def parse_url(url: str, policy: HttpPolicy) -> RequestTarget:
    """``url`` checked against ``policy`` (no DNS lookup), or :class:`UnsafeURLError`."""
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
    return RequestTarget(scheme, host, port, target)


def check_url(url: str, policy: HttpPolicy) -> str:
    """The normalised URL, or :class:`UnsafeURLError` (no DNS lookup, no connection)."""
    return parse_url(url, policy).url


def pick_address(policy: HttpPolicy, host: str, port: int, infos: list[Any]) -> str:
    """The address to connect to among what DNS returned (``getaddrinfo``'s ``infos``), or
    :class:`UnsafeURLError` when any is not public and the policy does not opt ``host`` in."""
    addresses = [info[4][0] for info in infos]
    if not addresses:
        raise UnsafeURLError(f"host {host!r} did not resolve")
    if not _opted_in(policy, host, port):
        for addr in addresses:
            ip = ipaddress.ip_address(addr.split("%")[0])
            if not is_public(ip):
                raise UnsafeURLError(f"host {host!r} resolves to non-public address {ip}")
    return addresses[0]
