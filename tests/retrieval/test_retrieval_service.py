"""The retrieval service and its client: a real uvicorn server over the real demo BM25 index
(the client against a server that speaks only the ColBERTv2 API, and its retries:
test_remote_colbert_server.py)."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from searchain.retrieval.base import Retriever
from searchain.retrieval.bm25 import BM25Index
from searchain.retrieval.remote import (
    RemoteRetriever,
    RetrievalError,
    from_spec,
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
