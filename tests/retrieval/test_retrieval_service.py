"""The retrieval service and its client: a real uvicorn server over the real demo BM25 index,
a stand-alone server speaking only the ColBERTv2 API, and fault-injecting servers for the
retry paths (the one place a stand-in is needed: a real server cannot fail on cue)."""

from __future__ import annotations

import itertools
import json
import math
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from searchain.retrieval.base import Retriever
from searchain.retrieval.bm25 import BM25Index
from searchain.retrieval.remote import (
    RemoteRetriever,
    RetrievalError,
    from_spec,
    passage_from_colbert,
)
from searchain.retrieval.service import is_loopback, running, serve
from searchain.types import Passage

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

MAX_BATCH = 16  # small, so a 40-query batch must be split into several requests
FAST = {"backoff": 0.01, "max_backoff": 0.02}  # retries without slowing the suite down


# -- fixtures -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def service(index: BM25Index) -> Iterator[str]:
    with running(index, name="demo", max_batch=MAX_BATCH) as url:
        yield url


@pytest.fixture(scope="module")
def queries(data_dir: Path) -> list[str]:
    path = data_dir / "hotpotqa" / "dev_subsampled.jsonl"
    with path.open() as f:
        questions = [json.loads(line)["question_text"] for line in itertools.islice(f, 36)]
    # Plus the awkward ones: no indexed term at all, URL metacharacters, non-ASCII, empty.
    return [*questions, "the of and", "a&b=c?d#e / 100%", "Zürich Łódź 東京", ""]


@pytest.fixture
def remote(service: str) -> Iterator[RemoteRetriever]:
    with RemoteRetriever(service) as r:
        yield r


def _rows(passages: list[Passage]) -> list[tuple[str, str, str, float | None]]:
    return [(p.id, p.title, p.text, p.score) for p in passages]


# -- the searchain API: exactly the in-process results ------------------------------------


def test_remote_search_is_exactly_in_process_search(
    remote: RemoteRetriever, index: BM25Index, queries: list[str]
) -> None:
    assert isinstance(remote, Retriever)
    assert remote.api == "searchain"
    assert any(index.search(q, 10) for q in queries)  # the comparison is not vacuous
    for q in queries:
        # Same ids, order, titles, texts and bit-identical float scores.
        assert _rows(remote.search(q, 10)) == _rows(index.search(q, 10)), q


def test_remote_batch_is_exactly_in_process_batch(
    remote: RemoteRetriever, index: BM25Index, queries: list[str]
) -> None:
    assert len(queries) > 2 * MAX_BATCH  # several requests, split at the server's limit
    expected = index.search_batch(queries, 7)
    got = remote.search_batch(queries, 7)
    assert [_rows(r) for r in got] == [_rows(r) for r in expected]
    assert remote.search_batch([], 7) == []
    assert remote.search(queries[0], 0) == [] == index.search(queries[0], 0)


def test_concurrent_clients_get_the_same_results(
    service: str, index: BM25Index, queries: list[str]
) -> None:
    # The service searches from its threadpool; concurrent searches must not interfere.
    expected = [_rows(index.search(q, 5)) for q in queries]

    def client(_: int) -> list[list[tuple[str, str, str, float | None]]]:
        with RemoteRetriever(service) as r:
            return [_rows(r.search(q, 5)) for q in queries]

    with ThreadPoolExecutor(4) as pool:
        for got in pool.map(client, range(4)):
            assert got == expected


# -- the ColBERTv2 API on our service -----------------------------------------------------


def test_colbert_get_endpoint_shape(service: str, index: BM25Index) -> None:
    query = "Who portrayed Corliss Archer in the film Kiss and Tell?"
    res = httpx.get(f"{service}/api/search", params={"query": query, "k": 5})
    assert res.status_code == 200
    body = res.json()
    assert body["query"] == query
    topk = body["topk"][:5]  # what DSP's colbertv2_get_request_v2 reads
    expected = index.search(query, 5)
    assert len(topk) == len(expected) == 5
    for rank, (hit, p) in enumerate(zip(topk, expected, strict=True), 1):
        assert {"text", "pid", "prob", "score", "rank"} <= hit.keys()
        assert hit["text"] == f"{p.title} | {p.text}"  # ColBERT's "Title | text"
        assert hit["rank"] == rank
        assert str(hit["pid"]) == p.id
        assert hit["score"] == p.score
        assert (hit["id"], hit["title"], hit["passage_text"]) == (p.id, p.title, p.text)
    probs = [h["prob"] for h in topk]
    assert math.isclose(sum(probs), 1.0)
    assert probs == sorted(probs, reverse=True)
    # The softmax ColBERT's server.py computes: exp(score) / sum(exp(scores)).
    exps = [math.exp(p.score or 0.0) for p in expected]
    assert probs == pytest.approx([e / sum(exps) for e in exps])
    # DSP's post_requests=True variant answers the same.
    post = httpx.post(f"{service}/api/search", json={"query": query, "k": 5})
    assert post.json() == body
    # k defaults to 10, as in ColBERT's server.py.
    assert len(httpx.get(f"{service}/api/search", params={"query": query}).json()["topk"]) == 10


def test_colbert_client_against_our_service_is_exact(
    service: str, index: BM25Index, queries: list[str]
) -> None:
    with RemoteRetriever(service, api="colbert") as r:
        for q in queries[:10]:
            assert _rows(r.search(q, 8)) == _rows(index.search(q, 8))
    # DSP-style endpoint URL, as DSP's ColBERTv2(url=...) takes it.
    with RemoteRetriever(f"{service}/api/search") as r:
        assert r.api == "colbert"
        assert _rows(r.search(queries[0], 3)) == _rows(index.search(queries[0], 3))


# -- limits and errors --------------------------------------------------------------------

LONG = "x" * 2001


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "detail"),
    [
        ("POST", "/v1/search", {"json": {"query": "q", "k": 0}}, 422, "k must be between 1 and"),
        ("POST", "/v1/search", {"json": {"query": "q", "k": 101}}, 422, "got 101"),
        ("POST", "/v1/search", {"json": {"query": "q", "k": "5"}}, 422, "body.k"),
        ("POST", "/v1/search", {"json": {"k": 5}}, 422, "body.query: Field required"),
        ("POST", "/v1/search", {"json": {"query": LONG}}, 413, "at most 2,000"),
        ("POST", "/v1/search", {"json": [1, 2]}, 422, "invalid request"),
        (
            "POST",
            "/v1/search",
            {"content": b"{oops", "headers": {"content-type": "application/json"}},
            422,
            "JSON",
        ),
        ("POST", "/v1/search_batch", {"json": {"queries": ["q"] * 17}}, 413, "at most 16"),
        ("POST", "/v1/search_batch", {"json": {"queries": ["q", LONG]}}, 413, "queries[1]"),
        ("POST", "/v1/search_batch", {"json": {"queries": "q"}}, 422, "body.queries"),
        ("GET", "/api/search", {"params": {"query": "q", "k": "ten"}}, 422, "parameter k"),
        ("GET", "/api/search", {"params": {"k": 3}}, 422, "parameter query"),
        ("GET", "/api/search", {"params": {"query": "q", "k": 500}}, 422, "between 1 and 100"),
        ("POST", "/v1/search", {"content": b"x" * 5_000_000}, 413, "request body over"),
        ("GET", "/nowhere", {}, 404, "Not Found"),
    ],
)
def test_limits_and_validation(
    service: str, method: str, path: str, kwargs: dict[str, Any], status: int, detail: str
) -> None:
    res = httpx.request(method, f"{service}{path}", **kwargs)
    assert res.status_code == status, res.text
    assert res.headers["content-type"] == "application/json"
    assert detail in res.json()["detail"]
    assert "Traceback" not in res.text
    assert "input" not in json.dumps(res.json().get("errors", []))  # no echo of the input


def test_empty_batch_and_healthz(service: str) -> None:
    assert httpx.post(f"{service}/v1/search_batch", json={"queries": []}).json() == {"results": []}
    info = httpx.get(f"{service}/healthz").json()
    assert info["status"] == "ok" and info["service"] == "searchain"
    assert (info["name"], info["max_batch"], info["passages"]) == ("demo", MAX_BATCH, 4858)


def test_client_reports_rejections_without_retrying(remote: RemoteRetriever) -> None:
    with pytest.raises(RetrievalError, match=r"/v1/search rejected the request: HTTP 413.*2,000"):
        remote.search(LONG)


class _Broken:
    def search(self, query: str, k: int = 5) -> list[Passage]:
        raise OSError("disk on fire at /secret/path")

    def search_batch(self, queries: list[str], k: int = 5) -> list[list[Passage]]:
        raise OSError("disk on fire at /secret/path")


def test_internal_errors_are_clean_and_retried(caplog: pytest.LogCaptureFixture) -> None:
    with running(_Broken()) as url:
        res = httpx.post(f"{url}/v1/search", json={"query": "q"})
        assert res.status_code == 500
        assert res.json() == {"detail": "search failed (internal error); see the server log"}
        assert "/secret/path" in caplog.text  # the log has the details, the client does not
        with RemoteRetriever(url, attempts=2, **FAST) as r, pytest.raises(RetrievalError) as e:
            r.search_batch(["a", "b"])
    assert "failed after 2 attempts: HTTP 500" in str(e.value)
    assert url in str(e.value)


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


# -- configuration ------------------------------------------------------------------------


def test_from_spec_and_bad_arguments() -> None:
    r = from_spec("remote:http://127.0.0.1:9/", timeout=1.0)
    assert r.url == "http://127.0.0.1:9"
    r.close()
    for spec in ("bm25:/x", "remote:127.0.0.1:8000", "remote:ftp://x"):
        with pytest.raises(ValueError):
            from_spec(spec)
    with pytest.raises(ValueError, match="api must be"):
        RemoteRetriever("http://127.0.0.1:9", api="grpc")


def test_serve_refuses_non_loopback_hosts(index: BM25Index) -> None:
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.org"):
        assert not is_loopback(host)
        with pytest.raises(ValueError, match=r"no authentication.*allow_remote"):
            serve(index, host=host, port=1)
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"))
