"""One deadline per outbound call, and cancellation that reaches into a blocking read.

httpx/httpcore timeouts apply per socket operation: a server that sends one byte of its
headers every few seconds never times out, and a thread blocked in ``recv`` cannot be told
to stop. This module's network backend (for httpcore, under both the OpenAI client and
:mod:`searchain.net.safe_http`) makes every wait -- DNS, connect, TLS, each read -- a loop of
short slices that checks, between slices,

* the *deadline* of the current call (:func:`deadline_scope`: one wall-clock limit for
  resolve + connect + headers + body), raising httpcore's timeout errors when it passes;
* the *cancel event* of the current context (:func:`cancel_scope`: the HTTP service sets it
  when an answer times out or its client goes away), raising :class:`Cancelled`.

Both live in context variables, so a shared client (one OpenAI client for every request of
the service) still stops exactly the call whose request was cancelled. The connection a
cancelled read was on is closed by httpcore (it is mid-response), so the far end sees the
client go away.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import ipaddress
import select
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

try:  # this project's environment ships httpcore as ``httpcore2`` (pulled in by openai)
    import httpcore2 as httpcore
    from httpcore2._backends.sync import SyncStream
except ImportError:  # pragma: no cover - depends on the installed client
    import httpcore  # type: ignore[no-redef]
    from httpcore._backends.sync import SyncStream  # type: ignore[no-redef]

SLICE = 0.2  # seconds between checks of the deadline and the cancel event
Resolver = Callable[..., list[Any]]


class Cancelled(Exception):
    """The request this work belongs to timed out or went away."""


_CANCEL: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "searchain_cancel", default=None
)
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "searchain_deadline", default=None
)


@contextlib.contextmanager
def cancel_scope(event: threading.Event) -> Iterator[threading.Event]:
    """Work in this context stops (raises :class:`Cancelled`) once ``event`` is set."""
    token = _CANCEL.set(event)
    try:
        yield event
    finally:
        _CANCEL.reset(token)


def check_cancelled() -> None:
    event = _CANCEL.get()
    if event is not None and event.is_set():
        raise Cancelled("request cancelled")


def sleep(seconds: float) -> None:
    """``time.sleep`` that ends early, with :class:`Cancelled`, when the context is cancelled."""
    event = _CANCEL.get()
    if event is None:
        time.sleep(max(0.0, seconds))
    elif event.wait(max(0.0, seconds)):
        raise Cancelled("request cancelled")


@contextlib.contextmanager
def deadline_scope(seconds: float | None) -> Iterator[float | None]:
    """Every network wait inside ends by ``now + seconds`` (an enclosing, earlier deadline
    still holds). ``None``: no deadline of its own."""
    outer = _DEADLINE.get()
    mine = None if seconds is None else time.monotonic() + max(0.0, seconds)
    end = mine if outer is None else (outer if mine is None else min(outer, mine))
    token = _DEADLINE.set(end)
    try:
        yield end
    finally:
        _DEADLINE.reset(token)


def _end(timeout: float | None) -> float | None:
    """The earlier of ``now + timeout`` (httpcore's per-operation limit) and the deadline."""
    end = _DEADLINE.get()
    if timeout is not None:
        own = time.monotonic() + timeout
        end = own if end is None else min(end, own)
    return end


def _slice(end: float | None, timeout_error: type[Exception], what: str) -> float:
    """Seconds to wait next; raises on cancellation or once ``end`` has passed."""
    check_cancelled()
    if end is None:
        return SLICE
    left = end - time.monotonic()
    if left <= 0:
        raise timeout_error(f"{what} timed out")
    return min(SLICE, left)


class DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose reads wait in slices (see the module docstring)."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self.inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        end = _end(timeout)
        while True:
            wait = _slice(end, httpcore.ReadTimeout, "read")
            try:
                return self.inner.read(max_bytes, wait)
            except httpcore.ReadTimeout:
                continue  # a slice passed with no data: check the deadline and cancel again

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        # Not sliced: a write that times out part-way cannot be resumed. Requests here are
        # small, so the remaining time bounds it.
        end = _end(timeout)
        check_cancelled()
        left = None if end is None else end - time.monotonic()
        if left is not None and left <= 0:
            raise httpcore.WriteTimeout("write timed out")
        self.inner.write(buffer, left)

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        end = _end(timeout)
        left = None if end is None else max(0.01, end - time.monotonic())
        return DeadlineStream(self.inner.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sync backend with sliced waits. ``choose`` picks the address to connect to
    among those DNS returned (:mod:`safe_http` checks them there); ``resolver`` is
    ``socket.getaddrinfo`` unless a test injects a slow one."""

    def __init__(self, resolver: Resolver | None = None) -> None:
        self.resolver = resolver or socket.getaddrinfo

    def choose(self, host: str, port: int, infos: list[Any]) -> str:
        if not infos:
            raise httpcore.ConnectError(f"host {host!r} did not resolve")
        return str(infos[0][4][0])

    def resolve(self, host: str, port: int, end: float | None) -> list[Any]:
        """``getaddrinfo`` in a helper thread, so a stalled DNS server cannot outlast the
        deadline (the thread ends on its own when the lookup returns)."""
        try:
            ip = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            pass
        else:  # a literal needs no lookup
            family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
            return [(family, socket.SOCK_STREAM, 6, "", (str(ip), port))]
        box: dict[str, Any] = {}
        done = threading.Event()

        def lookup() -> None:
            try:
                box["infos"] = self.resolver(host, port, type=socket.SOCK_STREAM)
            except Exception as exc:  # handed to the caller below
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=lookup, name="resolve", daemon=True).start()
        while not done.wait(_slice(end, httpcore.ConnectTimeout, f"resolving {host!r}")):
            pass
        if "error" in box:
            raise httpcore.ConnectError(f"cannot resolve host {host!r}")
        return list(box["infos"])

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        end = _end(timeout)
        address = self.choose(host, port, self.resolve(host, port, end))
        sock = _connect(address, port, end, local_address)
        try:
            for option in socket_options or ():
                sock.setsockopt(*option)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            sock.close()
            raise httpcore.ConnectError(str(exc)) from None
        return DeadlineStream(SyncStream(sock))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not used here")

    def sleep(self, seconds: float) -> None:
        sleep(seconds)


def _connect(address: str, port: int, end: float | None, local: str | None) -> socket.socket:
    """A non-blocking connect, waited for in slices (a black-holed address cannot hold the
    caller past its deadline, and a cancelled request stops waiting at once)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if local is not None:
            sock.bind((local, 0))
        sock.setblocking(False)
        code = sock.connect_ex((address, port))
        if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EALREADY):
            raise _connect_error(address, port, code)
        while code != 0:
            wait = _slice(end, httpcore.ConnectTimeout, "connect")
            if select.select([], [sock], [], wait)[1]:
                code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if code:
                    raise _connect_error(address, port, code)
                break
        sock.setblocking(True)
        return sock
    except BaseException:
        sock.close()
        raise


def _connect_error(address: str, port: int, code: int) -> Exception:
    return httpcore.ConnectError(
        f"connect to {address}:{port} failed: {errno.errorcode.get(code, code)}"
    )


def http_client(timeout: float) -> Any:
    """An ``httpx`` client (the one under the OpenAI SDK) over :class:`DeadlineBackend`:
    ``timeout`` bounds each network operation, an enclosing :func:`deadline_scope` the whole
    call, and a cancelled context stops it. No proxies from the environment."""
    try:
        import httpx2 as httpx
    except ImportError:  # pragma: no cover - depends on the installed client
        import httpx  # type: ignore[no-redef]

    transport = httpx.HTTPTransport(trust_env=False)
    # httpx offers no way to pass httpcore a network backend: set it on the pool it built.
    pool = transport._pool
    if not hasattr(pool, "_network_backend"):  # pragma: no cover - another httpcore
        raise RuntimeError("this httpcore has no pluggable network backend")
    pool._network_backend = DeadlineBackend()
    return httpx.Client(transport=transport, timeout=timeout, trust_env=False)
