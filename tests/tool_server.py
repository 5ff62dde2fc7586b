"""A real HTTP tool server for REBEL tests, on 127.0.0.1: a small fact-search API over the
sub-question facts of the Compositional Celebrities data in ``../shared/data`` (what the
paper's search tool found on the web). It needs an API key, counts every request, and has
a few hostile endpoints (a huge body, a slow body, a redirect to a private address).

GET /search?q=...&api_key=KEY  -> top 3 facts as text lines
GET /all?api_key=KEY           -> every fact, whatever the query (about 300,000 characters)
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

_STOP = set(
    "a an the of in on at to is was what who which when where how for by and or born".split()
)


def _tokens(text: str) -> set[str]:
    return {t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in _STOP}


def load_facts(data_dir: Path) -> list[str]:
    """One sentence per distinct sub-question of the dataset: "Q? A." (both hops)."""
    path = data_dir / "compositional_celebrities" / "compositional_celebrities.json"
    facts: dict[str, str] = {}
    for rec in json.loads(path.read_text())["data"]:
        for q, a in (("Q1", "A1"), ("Q2", "A2")):
            answers = rec[a] if isinstance(rec[a], list) else [rec[a]]
            facts.setdefault(rec[q], f"{rec[q]} {', '.join(str(x) for x in answers)}.")
    return list(facts.values())


class FactServer:
    def __init__(self, facts: list[str], api_key: str) -> None:
        self.facts = [(f, _tokens(f)) for f in facts]
        self.api_key = api_key
        self.requests: list[str] = []  # request paths (with query), in order
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server.requests.append(self.path)
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                if parts.path == "/big":
                    return self._send(200, "x" * 5_000_000)
                if parts.path == "/slow":
                    return self._slow()
                if parts.path == "/redirect":
                    self.send_response(302)
                    self.send_header("location", "http://10.0.0.1/")
                    self.end_headers()
                    return None
                if query.get("api_key") != server.api_key:
                    return self._send(401, "missing or wrong api_key")
                if parts.path == "/echo":  # a careless API that echoes its parameters
                    return self._send(200, json.dumps(query))
                if parts.path == "/all":  # a careless API that sends everything it has
                    return self._send(200, server.everything())
                if parts.path != "/search":
                    return self._send(404, "not found")
                return self._send(200, server.search(query.get("q", "")))

            def _send(self, status: int, text: str) -> None:
                body = text.encode()
                self.send_response(status)
                self.send_header("content-type", "text/plain; charset=utf-8")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _slow(self) -> None:
                self.send_response(200)
                self.send_header("content-length", "1000")
                self.end_headers()
                for _ in range(100):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.1)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def search(self, q: str, k: int = 3) -> str:
        want = _tokens(q)
        scored = sorted(
            (
                (len(want & toks) / (1 + 0.05 * len(toks)), i)
                for i, (_, toks) in enumerate(self.facts)
            ),
            key=lambda x: (-x[0], x[1]),
        )
        hits = [self.facts[i][0] for score, i in scored[:k] if score > 0]
        return "\n".join(hits) if hits else "no results"

    def everything(self) -> str:
        return "\n".join(f for f, _ in self.facts)

    def __enter__(self) -> FactServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
