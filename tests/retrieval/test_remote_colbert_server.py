"""The remote retriever against a stand-alone server speaking only the ColBERTv2 API (as
ColBERT's server.py and DSP-style endpoints answer), and its retries, timeouts and
unreachable servers, from fault-injecting servers (the one place a stand-in is needed: a
real server cannot fail on cue)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from searchain.retrieval.remote import (
    RemoteRetriever,
    RetrievalError,
    from_spec,
    passage_from_colbert,
)
from searchain.types import Passage

FAST = {"backoff": 0.01, "max_backoff": 0.02}  # retries without slowing the suite down


# -- a server that speaks only the ColBERTv2 API ------------------------------------------

# What ColBERT's server.py answers over the wiki17 abstracts collection (trimmed texts):
# rows are "Title | abstract", pids are collection row numbers, prob is a softmax of score.
COLBERT_TOPK = [
    {
        "text": "Kiss and Tell (1945 film) | Kiss and Tell is a 1945 American comedy film "
        "starring then 17-year-old Shirley Temple as Corliss Archer.",
        "pid": 2811372,
        "rank": 1,
        "score": 27.46875,
        "prob": 0.6223,
    },
    {
        "text": "Meet Corliss Archer | Meet Corliss Archer, a program from radio's Golden Age, "
        "ran from January 7, 1943 to September 30, 1956.",
        "pid": 1034512,
        "rank": 2,
        "score": 26.96875,
        "prob": 0.3775,
    },
    {
        # Some collections have rows without a title separator.
        "text": "Corliss Archer is a fictional teenage girl created by F. Hugh Herbert.",
        "pid": 33,
        "rank": 3,
        "score": 18.5,
        "prob": 0.0002,
    },
]


class ColbertServer:
    """A ColBERTv2-only server (``GET <endpoint>?query=&k=``; everything else 404 HTML, as
    Flask answers) that follows a script per search request: ``("ok",)``,
    ``("status", code[, headers])`` or ``("hang",)``; the last step repeats."""

    def __init__(self, script: list[tuple[Any, ...]], endpoint: str = "/api/search") -> None:
        self.script = list(script)
        self.requests: list[tuple[str, dict[str, list[str]]]] = []
        self.searches = 0
        self.release = threading.Event()  # set on exit, so hanging handlers end promptly
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                params = parse_qs(url.query, keep_blank_values=True)
                server.requests.append((url.path, params))
                if url.path != endpoint:
                    return self._send(404, b"<h1>Not Found</h1>", "text/html")
                server.searches += 1
                step = server.script[min(server.searches, len(server.script)) - 1]
                if step[0] == "hang":
                    server.release.wait(10)
                    return None
                if step[0] == "status":
                    body = json.dumps({"error": f"injected {step[1]}"}).encode()
                    return self._send(step[1], body, headers=step[2] if len(step) > 2 else {})
                k = int(params.get("k", ["10"])[0])
                query = params["query"][0]
                body = json.dumps({"query": query, "topk": COLBERT_TOPK[:k]}).encode()
                return self._send(200, body)

            def _send(
                self,
                status: int,
                body: bytes,
                ctype: str = "application/json",
                headers: dict[str, str] | None = None,
            ) -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        # A short poll interval: shutdown() waits for it (the default 0.5 s, on every test).
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self) -> ColbertServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def test_auto_detection_falls_back_to_a_colbert_server() -> None:
    query = "What government position was held by the woman who portrayed Corliss Archer?"
    with ColbertServer([("ok",)]) as server, RemoteRetriever(server.url) as r:
        hits = r.search(query, k=3)
        assert r.api == "colbert"
        assert hits == [
            Passage(
                "2811372",
                "Kiss and Tell is a 1945 American comedy film starring then 17-year-old "
                "Shirley Temple as Corliss Archer.",
                "Kiss and Tell (1945 film)",
                27.46875,
            ),
            Passage(
                "1034512",
                "Meet Corliss Archer, a program from radio's Golden Age, ran from January 7, "
                "1943 to September 30, 1956.",
                "Meet Corliss Archer",
                26.96875,
            ),
            Passage(
                "33",
                "Corliss Archer is a fictional teenage girl created by F. Hugh Herbert.",
                "",
                18.5,
            ),
        ]
        # One probe of /healthz (404), then DSP's request: query and k as URL parameters.
        assert server.requests[0][0] == "/healthz"
        assert server.requests[1] == ("/api/search", {"query": [query], "k": ["3"]})
        # No batch endpoint on a ColBERT server: one request per query, results in order.
        batch = r.search_batch(["a&b", "c", "d"], k=2)
        assert [[p.id for p in hits] for hits in batch] == [["2811372", "1034512"]] * 3
        assert [params["query"][0] for _, params in server.requests[2:]] == ["a&b", "c", "d"]
        assert sum(path == "/healthz" for path, _ in server.requests) == 1  # probed once


def test_colbert_server_at_a_dsp_style_endpoint_url() -> None:
    with (
        ColbertServer([("ok",)], endpoint="/wiki17_abstracts") as server,
        from_spec(f"remote:{server.url}/wiki17_abstracts") as r,
    ):
        assert [p.id for p in r.search("Corliss Archer", k=2)] == ["2811372", "1034512"]
        assert server.requests[-1][0] == "/wiki17_abstracts"


def test_passage_from_colbert_variants() -> None:
    assert passage_from_colbert({"long_text": "T | body", "pid": 7, "prob": 0.5}) == Passage(
        "7", "body", "T", 0.5
    )
    # Only the first separator splits: texts may contain " | " themselves.
    assert passage_from_colbert({"text": "T | a | b", "pid": 1}) == Passage("1", "a | b", "T")


# -- retries, timeouts --------------------------------------------------------------------


def test_retries_transient_failures_then_succeeds() -> None:
    script = [("status", 503), ("status", 429, {"retry-after": "0"}), ("ok",)]
    with ColbertServer(script) as server:
        with RemoteRetriever(server.url, api="colbert", attempts=3, **FAST) as r:
            assert [p.id for p in r.search("Corliss Archer", k=1)] == ["2811372"]
        assert server.searches == 3


def test_gives_up_after_attempts_naming_the_url() -> None:
    with ColbertServer([("status", 502)]) as server:
        with (
            RemoteRetriever(server.url, api="colbert", attempts=4, **FAST) as r,
            pytest.raises(RetrievalError) as e,
        ):
            r.search("Corliss Archer")
        assert server.searches == 4
    message = str(e.value)
    assert f"{server.url}/api/search" in message
    assert "failed after 4 attempts: HTTP 502" in message


def test_client_errors_are_not_retried() -> None:
    with ColbertServer([("status", 400)]) as server:
        with (
            RemoteRetriever(server.url, api="colbert", attempts=5, **FAST) as r,
            pytest.raises(RetrievalError, match="rejected the request: HTTP 400"),
        ):
            r.search("q")
        assert server.searches == 1


def test_a_hanging_server_times_out() -> None:
    with ColbertServer([("hang",)]) as server:
        t0 = time.monotonic()
        with (
            RemoteRetriever(server.url, api="colbert", timeout=0.3, attempts=2, **FAST) as r,
            pytest.raises(RetrievalError, match="failed after 2 attempts: timed out"),
        ):
            r.search("q")
        assert time.monotonic() - t0 < 3
        assert server.searches == 2


def test_unreachable_server() -> None:
    with ColbertServer([("ok",)]) as server:
        url = server.url
    # Closed: nothing listens there any more. Auto-detection fails and is not remembered.
    with RemoteRetriever(url, attempts=2, **FAST) as r:
        with pytest.raises(RetrievalError, match=r"failed after 2 attempts: cannot connect"):
            r.search("q")
        assert r._api is None
