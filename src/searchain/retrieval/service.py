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
import ipaddress
import logging
import math
import socket
import threading
from collections.abc import Iterator, Sequence
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from searchain.retrieval.base import Retriever
from searchain.types import Passage

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
    # Reject oversized bodies from Content-Length before reading them. The bound is loose
    # (every character JSON-escaped at 6 bytes) so no request within the limits trips it.
    app.add_middleware(_BodyLimit, max_bytes=65_536 + max_batch * (6 * max_query_chars + 16))
    _install_error_handlers(app)

    def check_k(k: int) -> None:
        if not 1 <= k <= max_k:
            raise ServiceError(422, f"k must be between 1 and {max_k}, got {k}")

    def check_query(query: str, where: str = "query") -> None:
        if len(query) > max_query_chars:
            raise ServiceError(
                413,
                f"{where} is {len(query):,} characters long; this service accepts at most "
                f"{max_query_chars:,}",
            )

    def run_search(queries: list[str], k: int) -> list[list[Passage]]:
        # Path functions are plain ``def``s, so FastAPI runs them (and this) in its
        # threadpool: a CPU-bound bm25s search never blocks the event loop.
        try:
            if len(queries) == 1:
                return [retriever.search(queries[0], k)]
            return retriever.search_batch(queries, k)
        except Exception:
            log.exception("search failed for %d queries (k=%d)", len(queries), k)
            # The client gets no traceback (it may show paths or data); the log has it.
            raise ServiceError(500, "search failed (internal error); see the server log") from None

    # async: answered on the event loop, so health checks work while searches fill the pool
    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        info: dict[str, Any] = {
            "status": "ok",
            "service": SERVICE_NAME,
            "name": name,
            "api": ["v1/search", "v1/search_batch", "api/search"],
            "max_k": max_k,
            "max_query_chars": max_query_chars,
            "max_batch": max_batch,
        }
        with contextlib.suppress(TypeError):  # not every retriever knows its size
            info["passages"] = len(retriever)  # type: ignore[arg-type]
        return JSONResponse(info)

    @app.post("/v1/search")
    def search(req: SearchRequest) -> JSONResponse:
        check_k(req.k)
        check_query(req.query)
        hits = run_search([req.query], req.k)[0]
        return JSONResponse({"passages": [_passage_dict(p) for p in hits]})

    @app.post("/v1/search_batch")
    def search_batch(req: BatchRequest) -> JSONResponse:
        check_k(req.k)
        if len(req.queries) > max_batch:
            raise ServiceError(
                413,
                f"batch of {len(req.queries):,} queries; this service accepts at most "
                f"{max_batch:,} per request (split the batch)",
            )
        for i, q in enumerate(req.queries):
            check_query(q, where=f"queries[{i}]")
        results = run_search(req.queries, req.k) if req.queries else []
        return JSONResponse({"results": [[_passage_dict(p) for p in r] for r in results]})

    def colbert(query: str, k: int) -> JSONResponse:
        check_k(k)
        check_query(query)
        hits = run_search([query], k)[0]
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

    return app


def colbert_topk(hits: Sequence[Passage]) -> list[dict[str, Any]]:
    """``hits`` as a ColBERTv2 server's ``topk`` list, plus our exact fields.

    ``prob`` is a softmax over the returned scores, as ColBERT's server computes it (there
    ``exp(score) / sum``; here shifted by the maximum first, which gives the same numbers
    without overflowing on large BM25 scores). Hits without scores get equal ``prob``.
    """
    scores = [_finite(p.score) for p in hits]
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


def _finite(score: float | None) -> float | None:
    # JSON has no NaN/inf (Starlette refuses to encode them); a broken score becomes null.
    if score is None:
        return None
    score = float(score)  # numpy scalars from other retrievers
    return score if math.isfinite(score) else None


def _passage_dict(p: Passage) -> dict[str, Any]:
    return {"id": p.id, "text": p.text, "title": p.title, "score": _finite(p.score)}


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


class _BodyLimit:
    """Pure ASGI middleware answering 413 to a declared Content-Length over ``max_bytes``
    (Starlette's ``BaseHTTPMiddleware`` would cost every request a task and a copy)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for key, value in scope["headers"]:
                if key == b"content-length":
                    try:
                        too_big = int(value) > self.max_bytes
                    except ValueError:
                        too_big = False  # h11 has already rejected malformed lengths
                    if too_big:
                        response = JSONResponse(
                            {"detail": f"request body over {self.max_bytes:,} bytes"},
                            status_code=413,
                        )
                        await response(scope, receive, send)
                        return
                    break
        await self.app(scope, receive, send)


# -- running ------------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the service reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # another host name could resolve to any interface


def _check_host(host: str, allow_remote: bool) -> None:
    if not allow_remote and not is_loopback(host):
        raise ValueError(
            f"refusing to bind {host!r}: the retrieval service has no authentication, so "
            "anyone who can reach the port can query (and load) it. Bind 127.0.0.1 and put "
            "an authenticating proxy in front, or pass allow_remote=True to expose it anyway."
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
    import uvicorn

    app = create_app(retriever, name=name, **limits)
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=access_log)


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
    import uvicorn

    app = create_app(retriever, name=name, **limits)
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    # proto must say TCP explicitly: asyncio only sets TCP_NODELAY on accepted sockets whose
    # proto is IPPROTO_TCP, and with Nagle on, every keep-alive response body waits ~40 ms
    # for the client's delayed ACK of the headers (measured: 45 ms vs 1 ms per request).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        bound = sock.getsockname()[1]
        config = uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=2
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="searchain-service", daemon=True
        )
        thread.start()
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the retrieval service failed to start; see the log")
            thread.join(0.01)
        url_host = f"[{host.strip('[]')}]" if family == socket.AF_INET6 else host
        try:
            yield f"http://{url_host}:{bound}"
        finally:
            server.should_exit = True
            thread.join(10)
    finally:
        sock.close()
