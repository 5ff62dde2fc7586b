"""Search over HTTP: serve any :class:`Retriever` (usually a BM25 index) to other processes.

Two APIs on one server:

* ``POST /v1/search`` ``{"query", "k"}`` → ``{"passages": [Passage dicts]}`` and
  ``POST /v1/search_batch`` ``{"queries", "k"}`` → ``{"results": [[...], ...]}``, searchain's
  own, which round-trip :class:`Passage` exactly (ids, titles, texts, scores);
* ``GET /api/search?query=...&k=...`` (and ``POST`` with a JSON body, DSP's
  ``post_requests=True``), the ColBERTv2 server API that DSP/DSPy's ``ColBERTv2`` client and
  the SearChain code call: ``{"query", "topk": [{"text", "pid", "rank", "score", "prob"}]}``
  with ``text`` as ``"Title | text"``, as the ColBERT wiki17 collections store it. Each hit
  also carries ``id``, ``title`` and ``passage_text`` so our client can read it back exactly.

``GET /healthz`` says the server is up and names it as a searchain service along with its
limits; :class:`~searchain.retrieval.remote.RemoteRetriever` reads it to pick the API and to
size its batches.

The service has no authentication, so :func:`serve` binds to loopback unless told otherwise.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Iterator, Sequence
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from searchain.net.serving import BodyLimit, is_loopback, refuse_remote
from searchain.net.serving import running as run_app
from searchain.net.serving import serve as serve_app
from searchain.retrieval.base import Retriever
from searchain.types import Passage, finite_float

__all__ = ["SERVICE_NAME", "colbert_topk", "create_app", "is_loopback", "running", "serve"]

log = logging.getLogger(__name__)

SERVICE_NAME = "searchain"  # the /healthz marker RemoteRetriever looks for
COLBERT_DEFAULT_K = 10  # what ColBERT's server.py uses when ``k`` is left out


class ServiceError(Exception):
    """A request the service refuses, answered as ``{"detail": message}`` with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str
    # strict: JSON true/5.0/"5" are not a k; a typo should fail rather than be coerced.
    k: int = Field(default=5, strict=True)


class BatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    queries: list[str]
    k: int = Field(default=5, strict=True)


class ColbertPostRequest(BaseModel):
    """DSP's ``colbertv2_post_request`` body; extra keys are tolerated as a ColBERT server
    would (it reads only these two)."""

    query: str
    k: int = Field(default=COLBERT_DEFAULT_K, strict=True)


def create_app(
    retriever: Retriever,
    *,
    name: str = "",
    max_k: int = 100,
    max_query_chars: int = 2000,
    max_batch: int = 256,
) -> FastAPI:
    """An ASGI app serving ``retriever``; run it with :func:`serve` or any ASGI server.

    ``max_k`` (passages per query), ``max_query_chars`` and ``max_batch`` (queries per
    batch request) bound the work a single request can ask for.
    """
    if min(max_k, max_query_chars, max_batch) < 1:
        raise ValueError("max_k, max_query_chars and max_batch must be at least 1")
    app = FastAPI(
        title="searchain retrieval service",
        summary=f"Search over {name}" if name else None,
        # Interactive docs are handy on a loopback service and cost nothing per request.
        docs_url="/docs",
        redoc_url=None,
    )
    # Reject oversized bodies before reading them. The bound is loose (every character
    # JSON-escaped at 6 bytes) so no request within the limits trips it.
    max_bytes = 65_536 + max_batch * (6 * max_query_chars + 16)
    app.add_middleware(BodyLimit, max_bytes=max_bytes, field="detail")
    _install_error_handlers(app)
    searcher = _Searcher(retriever, max_k, max_query_chars, max_batch)
    _add_health(app, searcher, name)
    _add_search_routes(app, searcher)
    _add_colbert_routes(app, searcher)
    return app


class _Searcher:
    """The retriever behind the routes, with the limits every request is checked against."""

    def __init__(
        self, retriever: Retriever, max_k: int, max_query_chars: int, max_batch: int
    ) -> None:
        self.retriever = retriever
        self.max_k, self.max_query_chars, self.max_batch = max_k, max_query_chars, max_batch

    def check_k(self, k: int) -> None:
        if not 1 <= k <= self.max_k:
            raise ServiceError(422, f"k must be between 1 and {self.max_k}, got {k}")

    def check_query(self, query: str, where: str = "query") -> None:
        if len(query) > self.max_query_chars:
            raise ServiceError(
                413,
                f"{where} is {len(query):,} characters long; this service accepts at most "
                f"{self.max_query_chars:,}",
            )

    def check_batch(self, queries: list[str]) -> None:
        if len(queries) > self.max_batch:
            raise ServiceError(
                413,
                f"batch of {len(queries):,} queries; this service accepts at most "
                f"{self.max_batch:,} per request (split the batch)",
            )
        for i, q in enumerate(queries):
            self.check_query(q, where=f"queries[{i}]")

    def search(self, queries: list[str], k: int) -> list[list[Passage]]:
        # Path functions are plain ``def``s, so FastAPI runs them (and this) in its
        # threadpool: a CPU-bound bm25s search never blocks the event loop.
        try:
            if len(queries) == 1:
                return [self.retriever.search(queries[0], k)]
            return self.retriever.search_batch(queries, k)
        except Exception:
            log.exception("search failed for %d queries (k=%d)", len(queries), k)
            # The client gets no traceback (it may show paths or data); the log has it.
            raise ServiceError(500, "search failed (internal error); see the server log") from None


def _add_health(app: FastAPI, searcher: _Searcher, name: str) -> None:
    """GET /healthz: up, named as a searchain service, with its limits."""

    # async: answered on the event loop, so health checks work while searches fill the pool
    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        info: dict[str, Any] = {
            "status": "ok",
            "service": SERVICE_NAME,
            "name": name,
            "api": ["v1/search", "v1/search_batch", "api/search"],
            "max_k": searcher.max_k,
            "max_query_chars": searcher.max_query_chars,
            "max_batch": searcher.max_batch,
        }
        with contextlib.suppress(TypeError):  # not every retriever knows its size
            info["passages"] = len(searcher.retriever)  # type: ignore[arg-type]
        return JSONResponse(info)


def _add_search_routes(app: FastAPI, searcher: _Searcher) -> None:
    """searchain's own API: POST /v1/search and /v1/search_batch."""

    @app.post("/v1/search")
    def search(req: SearchRequest) -> JSONResponse:
        searcher.check_k(req.k)
        searcher.check_query(req.query)
        hits = searcher.search([req.query], req.k)[0]
        return JSONResponse({"passages": [_passage_dict(p) for p in hits]})

    @app.post("/v1/search_batch")
    def search_batch(req: BatchRequest) -> JSONResponse:
        searcher.check_k(req.k)
        searcher.check_batch(req.queries)
        results = searcher.search(req.queries, req.k) if req.queries else []
        return JSONResponse({"results": [[_passage_dict(p) for p in r] for r in results]})


def _add_colbert_routes(app: FastAPI, searcher: _Searcher) -> None:
    """The ColBERTv2 server API: GET /api/search, and POST with a JSON body."""

    def colbert(query: str, k: int) -> JSONResponse:
        searcher.check_k(k)
        searcher.check_query(query)
        hits = searcher.search([query], k)[0]
        return JSONResponse({"query": query, "topk": colbert_topk(hits)})

    @app.get("/api/search")
    def colbert_get(
        query: Annotated[str, Query()],
        k: Annotated[int, Query()] = COLBERT_DEFAULT_K,
    ) -> JSONResponse:
        return colbert(query, k)

    @app.post("/api/search")
    def colbert_post(req: ColbertPostRequest) -> JSONResponse:
        return colbert(req.query, req.k)


def colbert_topk(hits: Sequence[Passage]) -> list[dict[str, Any]]:
    """``hits`` as a ColBERTv2 server's ``topk`` list, plus our exact fields.

    ``prob`` is a softmax over the returned scores, as ColBERT's server computes it (there
    ``exp(score) / sum``; here shifted by the maximum first, which gives the same numbers
    without overflowing on large BM25 scores). Hits without scores get equal ``prob``.
    """
    scores = [finite_float(p.score) for p in hits]
    if hits and all(s is not None for s in scores):
        top = max(s for s in scores if s is not None)
        weights = [math.exp(s - top) for s in scores if s is not None]
    else:
        weights = [1.0] * len(hits)
    total = sum(weights)
    return [
        {
            "text": f"{p.title} | {p.text}" if p.title else p.text,
            "pid": _pid(p.id),
            "rank": rank,
            "score": score,
            "prob": w / total,
            "id": p.id,
            "title": p.title,
            "passage_text": p.text,
        }
        for rank, (p, score, w) in enumerate(zip(hits, scores, weights, strict=True), 1)
    ]


def _pid(passage_id: str) -> int | str:
    """ColBERT pids are integer row numbers; ids that are canonical integers stay integers
    (so ``str(pid)`` gives the id back), any other id is passed through as a string."""
    if passage_id.isascii() and passage_id.isdigit() and str(int(passage_id)) == passage_id:
        return int(passage_id)
    return passage_id


def _passage_dict(p: Passage) -> dict[str, Any]:
    # JSON has no NaN/inf (Starlette refuses to encode them); a broken score becomes null.
    return {"id": p.id, "text": p.text, "title": p.title, "score": finite_float(p.score)}


# -- errors -------------------------------------------------------------------------------


def _install_error_handlers(app: FastAPI) -> None:
    """Every error is ``{"detail": "<one readable line>"}`` JSON, never a traceback."""

    @app.exception_handler(ServiceError)
    async def service_error(_: Request, exc: ServiceError) -> JSONResponse:
        return JSONResponse({"detail": exc.message}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            # ``input`` is left out: it echoes the (possibly huge) offending value back.
            {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
            for e in exc.errors()
        ]
        message = "; ".join(f"{_where(e['loc'])}: {e['msg']}" for e in errors)
        return JSONResponse(
            {"detail": f"invalid request: {message}", "errors": errors}, status_code=422
        )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            {"detail": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(Exception)
    async def crashed(_: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error", exc_info=exc)
        return JSONResponse({"detail": "internal error; see the server log"}, status_code=500)


def _where(loc: list[Any]) -> str:
    """``["query", "k"]`` → ``parameter k``; ``["body", "queries", 3]`` → ``body.queries.3``."""
    rest = ".".join(str(part) for part in loc[1:])
    if loc and loc[0] == "query":
        return f"parameter {rest}"
    return ".".join(str(part) for part in loc) or "request"


# -- running ------------------------------------------------------------------------------


def _check_host(host: str, allow_remote: bool) -> None:
    refuse_remote(
        host,
        f"refusing to bind {host!r}: the retrieval service has no authentication, so "
        "anyone who can reach the port can query (and load) it. Bind 127.0.0.1 and put "
        "an authenticating proxy in front, or pass allow_remote=True to expose it anyway.",
        allowed=allow_remote,
    )


def serve(
    retriever: Retriever,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    allow_remote: bool = False,
    name: str = "",
    log_level: str = "info",
    access_log: bool = False,
    **limits: int,
) -> None:
    """Serve ``retriever`` with uvicorn until interrupted (Ctrl-C).

    Only loopback hosts are accepted unless ``allow_remote=True``: there is no
    authentication, and ``0.0.0.0`` would let anyone on the network use the server.
    ``limits`` are :func:`create_app`'s ``max_k``, ``max_query_chars`` and ``max_batch``.
    The access log is off by default: it would log every query, which may be private.
    """
    _check_host(host, allow_remote)
    app = create_app(retriever, name=name, **limits)
    serve_app(app, host, port, log_level=log_level, access_log=access_log)


@contextlib.contextmanager
def running(
    retriever: Retriever,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    allow_remote: bool = False,
    name: str = "",
    **limits: int,
) -> Iterator[str]:
    """Serve ``retriever`` from a background thread; yield the base URL, stop on exit.

    ``port=0`` picks a free port. The socket is bound here, before the thread starts, so
    there is no window in which another process could take the port.
    """
    _check_host(host, allow_remote)
    app = create_app(retriever, name=name, **limits)
    with run_app(app, host, port, what="retrieval service", name="searchain-service") as url:
        yield url
