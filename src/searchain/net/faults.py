"""Real local servers that misbehave on cue, for the reliability bench (``python -m
bench.reliability``) and the tests that attack searchain's own clients and service.

* :class:`Listener` -- a bare TCP listener that accepts, records every byte it receives and
  never answers: an attacker's listener, or a model endpoint that accepts and then hangs;
* :class:`HostileServer` -- HTTP routes a careless or hostile web server has: headers or body
  a byte at a time, a huge body in a slow charset, redirects anywhere, an echo of the request
  headers;
* :class:`LLMFaultServer` -- an OpenAI-compatible endpoint whose answers follow a mode: real
  completions, 500s, 429s, an HTML page with 200, ``{}``, truncated JSON, no choices, a hang.

All bind 127.0.0.1 on a free port and run in daemon threads. They are stand-ins only where a
real server cannot be made to fail on purpose.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit


class Listener:
    """Accepts connections, keeps what arrives, answers nothing."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = int(self.sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.connections = 0
        self.received = bytearray()
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                self._open.append(conn)
            threading.Thread(target=self._drain, args=(conn,), daemon=True).start()

    def _drain(self, conn: socket.socket) -> None:
        try:
            while data := conn.recv(65536):
                with self._lock:
                    self.received += data
        except OSError:
            pass

    def close(self) -> None:
        self._stop = True
        self.sock.close()
        with self._lock:
            for conn in self._open:
                conn.close()

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up on slow routes is the point of those routes


class _Server:
    handler: ClassVar[type[BaseHTTPRequestHandler]]

    def __init__(self) -> None:
        outer = self
        self.requests: list[dict[str, Any]] = []

        class Handler(self.handler):  # type: ignore[misc,name-defined]
            server_state = outer

        self.httpd = _Quiet(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _HostileHandler(BaseHTTPRequestHandler):
    server_state: HostileServer

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.server_state.requests.append({"path": self.path, "headers": dict(self.headers)})
        route = getattr(self, "r_" + parts.path.strip("/").replace("-", "_"), None)
        if route is None:
            return self._send(404, b"missing")
        return route(query)  # type: ignore[no-any-return]

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def r_ok(self, q: dict[str, str]) -> None:
        self._send(200, b"ok", {"Content-Type": "text/plain"})

    def r_echo(self, q: dict[str, str]) -> None:  # a careless API: its query, echoed
        self._send(200, json.dumps(q).encode(), {"Content-Type": "application/json"})

    def r_echo_headers(self, q: dict[str, str]) -> None:
        self._send(200, json.dumps(dict(self.headers)).encode(), {"Content-Type": "text/plain"})

    def r_redirect(self, q: dict[str, str]) -> None:
        self._send(int(q.get("status", 302)), b"", {"Location": q["to"]})

    def r_slow_body(self, q: dict[str, str]) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "100000")
        self.end_headers()
        self._drip(b"x")

    def r_slow_headers(self, q: dict[str, str]) -> None:
        self.wfile.write(b"HTTP/1.1 200 OK\r\n")
        self._drip(b"X-Slow: 1\r\n")

    def r_charset(self, q: dict[str, str]) -> None:
        # Punycode's decoder is quadratic in the run of non-ASCII digits it must place.
        body = b"a" * 10 + b"-" + b"9" * int(q.get("size", 1_000_000))
        self._send(200, body, {"Content-Type": f"text/html; charset={q.get('cs', 'punycode')}"})

    def _drip(self, piece: bytes) -> None:
        try:
            for _ in range(10_000):
                self.wfile.write(piece)
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass


class HostileServer(_Server):
    handler = _HostileHandler

    def url(self, route: str, **query: Any) -> str:
        from urllib.parse import urlencode

        tail = f"?{urlencode(query)}" if query else ""
        return f"http://127.0.0.1:{self.port}/{route.lstrip('/')}{tail}"


def completion(text: str = "An answer [1].", chat: bool = False) -> dict[str, Any]:
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    if chat:
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
            "logprobs": None,
        }
        return {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "fault",
            "choices": [choice],
            "usage": usage,
        }
    choice = {"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}
    return {
        "id": "c",
        "object": "text_completion",
        "created": 0,
        "model": "fault",
        "choices": [choice],
        "usage": usage,
    }


# What each fault mode sends: (status, content type, body); None: a special behaviour.
FAULTS: dict[str, tuple[int, str, bytes] | None] = {
    "ok": None,
    "http_500": (500, "application/json", b'{"error": {"message": "internal: db=10.0.0.7"}}'),
    "http_429": None,  # with Retry-After: 0
    "html_200": (200, "text/html", b"<html><body>Bad gateway: upstream 10.0.0.7</body></html>"),
    "empty_json": (200, "application/json", b"{}"),
    "truncated_json": (200, "application/json", b'{"id": "c", "choices": [{"index": 0, "te'),
    "no_choices": (200, "application/json", b'{"id": "c", "object": "x", "choices": []}'),
    "hang": None,  # accept, read the request, never answer
    "trickle_headers": None,  # a 200 whose headers never end
    "echo_500": None,  # a 500 that quotes the request's Authorization header
}


class _LLMHandler(BaseHTTPRequestHandler):
    server_state: LLMFaultServer

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        state = self.server_state
        state.requests.append({"path": self.path, "headers": dict(self.headers), "body": raw})
        mode = state.mode
        if state.latency:
            time.sleep(state.latency)
        if mode == "hang":
            time.sleep(600)
            return
        if mode == "trickle_headers":  # a header line every 0.1 s, forever
            try:
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                for _ in range(6000):
                    self.wfile.write(b"X-Slow: 1\r\n")
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass
            return
        extra = {}
        if mode == "ok":
            fault = (
                200,
                "application/json",
                json.dumps(completion(chat="chat" in self.path)).encode(),
            )
        elif mode == "echo_500":  # "invalid key": the request's credentials quoted back
            quoted = json.dumps(
                {"error": {"message": f"bad key {self.headers.get('authorization')}"}}
            )
            fault = (500, "application/json", quoted.encode())
        elif mode == "http_429":
            fault, extra = (429, "application/json", b'{"error": {}}'), {"Retry-After": "0"}
        else:
            fault = FAULTS[mode]  # type: ignore[assignment]
        status, ctype, body = fault  # type: ignore[misc]
        self.send_response(status)
        for k, v in {"Content-Type": ctype, "Content-Length": str(len(body)), **extra}.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)


class LLMFaultServer(_Server):
    """``mode``: a key of :data:`FAULTS`; may be changed while it runs."""

    handler = _LLMHandler

    def __init__(self, mode: str = "ok", latency: float = 0.0) -> None:
        self.mode, self.latency = mode, latency
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}/v1"
