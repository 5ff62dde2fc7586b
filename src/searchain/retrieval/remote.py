"""A :class:`Retriever` that searches over HTTP: a searchain retrieval service or any
ColBERTv2-style server (the API of ColBERT's ``server.py``, DSP/DSPy's ``ColBERTv2`` and the
SearChain code: ``GET <endpoint>?query=...&k=...`` → ``{"topk": [{"text", "pid", "prob",
"score"}, ...]}``).

>>> retriever = from_spec("remote:http://127.0.0.1:8000")  # doctest: +SKIP
>>> retriever.search("Who portrayed Corliss Archer?", k=3)  # doctest: +SKIP

Transient failures (connection errors, timeouts, 408, 429, 5xx) are retried with exponential
backoff and jitter, honouring ``Retry-After``; anything else, or running out of attempts,
raises :class:`RetrievalError` naming the server.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from typing import Any
from urllib.parse import urlsplit

try:  # this project's environment ships the client as ``httpx2``; elsewhere it is ``httpx``
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

from searchain import __version__
from searchain.types import Passage

__all__ = ["RemoteRetriever", "RetrievalError", "from_spec", "passage_from_colbert"]

log = logging.getLogger(__name__)

APIS = ("auto", "searchain", "colbert")
RETRYABLE_STATUS = {408, 429}  # plus every 5xx
SERVICE_NAME = "searchain"  # the /healthz marker of searchain.retrieval.service
DEFAULT_MAX_BATCH = 256  # the service's default, used if its /healthz does not say


class RetrievalError(RuntimeError):
    """A remote search failed for good: the server rejected it or kept failing."""


class RemoteRetriever:
    """Search a retrieval server over HTTP; thread-safe (one pooled ``httpx`` client).

    ``url`` is the server's base URL (``http://host:port``). For ColBERT servers it may also
    be the search endpoint itself, as DSP's ``ColBERTv2(url=...)`` takes it
    (``http://host:2017/wiki17_abstracts``); a bare ``http://host:port`` means
    ``/api/search``, the path of ColBERT's own ``server.py``.

    ``api="auto"`` asks ``GET /healthz`` once, on first use: a searchain service names
    itself there (and its batch limit), anything else is spoken to as a ColBERTv2 server.
    ``timeout`` applies to each phase of a request (connect, read, write), ``attempts``
    counts the first try, ``backoff`` is the first retry's base delay (doubling after).
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        attempts: int = 3,
        api: str = "auto",
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        max_retry_after: float = 30.0,
        max_connections: int = 16,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"not an http(s) URL: {url!r}")
        if api not in APIS:
            raise ValueError(f"api must be one of {', '.join(APIS)}, got {api!r}")
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self.url = url.rstrip("/")
        self.attempts = attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self._api: str | None = None if api == "auto" else api
        self._requested_api = api
        self._max_batch: int | None = None
        self._probe_lock = threading.Lock()
        # DSP-style endpoint URLs carry a path; a bare host:port gets ColBERT's server.py path.
        has_path = parts.path.strip("/") != ""
        self._colbert_endpoint = self.url if has_path else f"{self.url}/api/search"
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout),
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
            headers={"user-agent": f"searchain/{__version__}"},
        )

    def __repr__(self) -> str:
        return f"RemoteRetriever({self.url!r}, api={self._api or self._requested_api!r})"

    # -- the Retriever protocol ----------------------------------------------------------

    @property
    def api(self) -> str:
        """``"searchain"`` or ``"colbert"``: the API spoken (asks the server if needed)."""
        self._probe()
        assert self._api is not None
        return self._api

    def search(self, query: str, k: int = 5) -> list[Passage]:
        """The ``k`` best passages for ``query``, best first, as the server ranks them."""
        if k <= 0:  # as BM25Index: nothing asked for, nothing to send
            return []
        if self.api == "searchain":
            data = self._json("POST", f"{self.url}/v1/search", json={"query": query, "k": k})
            return self._parse(data, lambda d: [Passage.from_dict(p) for p in d["passages"]])
        data = self._json("GET", self._colbert_endpoint, params={"query": query, "k": k})
        # Some ColBERT deployments return more than asked; DSP keeps the first k as well.
        return self._parse(data, lambda d: [passage_from_colbert(h) for h in d["topk"][:k]])

    def search_batch(self, queries: list[str], k: int = 5) -> list[list[Passage]]:
        """:meth:`search` for each query: batched requests from a searchain service, one
        request per query from a ColBERT server (which has no batch endpoint)."""
        if not queries or k <= 0:
            return [[] for _ in queries]
        if self.api == "colbert":
            return [self.search(q, k) for q in queries]
        step = self._max_batch or DEFAULT_MAX_BATCH
        results: list[list[Passage]] = []
        for start in range(0, len(queries), step):
            chunk = queries[start : start + step]
            data = self._json(
                "POST", f"{self.url}/v1/search_batch", json={"queries": chunk, "k": k}
            )
            part = self._parse(
                data, lambda d: [[Passage.from_dict(p) for p in r] for r in d["results"]]
            )
            if len(part) != len(chunk):
                raise RetrievalError(
                    f"{self.url} answered {len(part)} result lists for {len(chunk)} queries"
                )
            results.extend(part)
        return results

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> RemoteRetriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- API detection -------------------------------------------------------------------

    def _probe(self) -> None:
        """Ask ``/healthz`` once which API the server speaks and how big a batch may be.

        Only a definite answer is remembered: if the server cannot be reached, the error
        propagates and the next call asks again.
        """
        if self._api is not None and (self._api == "colbert" or self._max_batch is not None):
            return
        with self._probe_lock:
            if self._api is not None and (self._api == "colbert" or self._max_batch is not None):
                return
            response = self._send("GET", f"{self.url}/healthz")
            info: Any = None
            if response.status_code == 200:
                try:
                    info = response.json()
                except ValueError:
                    info = None
            is_service = isinstance(info, dict) and info.get("service") == SERVICE_NAME
            if is_service:
                batch = info.get("max_batch")
                self._max_batch = batch if isinstance(batch, int) and batch > 0 else None
            if self._api is None:
                self._api = "searchain" if is_service else "colbert"
                log.debug("%s speaks the %s API", self.url, self._api)
            if self._max_batch is None:
                self._max_batch = DEFAULT_MAX_BATCH  # forced "searchain" on an unknown server

    # -- HTTP with retries ---------------------------------------------------------------

    def _json(self, method: str, url: str, **kwargs: Any) -> Any:
        response = self._send(method, url, **kwargs)
        if response.status_code >= 400:
            raise RetrievalError(f"{url} rejected the request: {_describe_response(response)}")
        try:
            return response.json()
        except ValueError:
            raise RetrievalError(
                f"{url} did not answer JSON (HTTP {response.status_code}, "
                f"{response.headers.get('content-type', 'no content type')}): "
                f"{response.text[:200]!r}"
            ) from None

    def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send with retries; return the first response that is not a transient failure
        (the caller decides what a 4xx means), or raise :class:`RetrievalError`."""
        for attempt in range(1, self.attempts + 1):
            retry_after: float | None = None
            try:
                response = self._client.request(method, url, **kwargs)
            except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                problem = _describe_exception(exc)
                failure: BaseException = exc
            except httpx.HTTPError as exc:  # bad URL, unsupported protocol, proxy setup
                raise RetrievalError(f"{url}: {_describe_exception(exc)}") from exc
            else:
                status = response.status_code
                if status not in RETRYABLE_STATUS and status < 500:
                    return response
                problem = _describe_response(response)
                retry_after = _retry_after(response)
                failure = RetrievalError(problem)
            if attempt == self.attempts:
                raise RetrievalError(
                    f"{method} {url} failed after {attempt} attempt{'s' if attempt > 1 else ''}:"
                    f" {problem}"
                ) from failure
            wait = self._delay(attempt, retry_after)
            log.warning("%s %s: %s; retry %d in %.2fs", method, url, problem, attempt, wait)
            time.sleep(wait)
        raise AssertionError("unreachable")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        # The same policy as searchain.llm.retry: a server's Retry-After is obeyed (capped);
        # otherwise exponential backoff with "equal jitter", never zero, never in lockstep.
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        cap = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        return random.uniform(cap / 2, cap)

    def _parse(self, data: Any, read: Any) -> Any:
        try:
            return read(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise RetrievalError(
                f"{self.url} answered an unexpected response ({type(exc).__name__}: {exc}): "
                f"{str(data)[:200]}"
            ) from None


def passage_from_colbert(hit: dict[str, Any]) -> Passage:
    """A ColBERTv2 ``topk`` entry as a :class:`Passage`.

    Our service's own fields (``id``, ``title``, ``passage_text``) are used when present, so
    nothing is lost; from a ColBERT server the id is ``str(pid)`` and ``"Title | text"`` (how
    the ColBERT wiki collections store passages) is split into title and text.
    """
    score = hit.get("score", hit.get("prob"))
    score = float(score) if score is not None else None
    if "passage_text" in hit and "id" in hit:
        return Passage(str(hit["id"]), hit["passage_text"], hit.get("title") or "", score)
    text = hit.get("text")
    if text is None:
        text = hit["long_text"]
    title, sep, body = text.partition(" | ")
    if not sep:
        title, body = "", text
    return Passage(str(hit["pid"]), body, title, score)


def from_spec(spec: str, **options: Any) -> RemoteRetriever:
    """``"remote:http://host:port"`` → a :class:`RemoteRetriever` (``options`` go to it)."""
    prefix = "remote:"
    if not spec.startswith(prefix):
        raise ValueError(f"not a remote retriever spec (expected remote:URL): {spec!r}")
    url = spec[len(prefix) :]
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"remote retriever URL must start with http:// or https://: {url!r}")
    return RemoteRetriever(url, **options)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date; our own backoff will do


def _describe_response(response: httpx.Response) -> str:
    """``HTTP 413: <the server's detail>``, without echoing a long body."""
    detail: Any = None
    try:
        body = response.json()
        detail = body.get("detail") if isinstance(body, dict) else None
    except ValueError:
        pass
    if not isinstance(detail, str):
        detail = response.text[:300].strip()
    reason = response.reason_phrase or ""
    return f"HTTP {response.status_code} {reason}".rstrip() + (f": {detail}" if detail else "")


def _describe_exception(exc: BaseException) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({type(exc).__name__})"
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect ({exc})"
    return f"{type(exc).__name__}: {exc}"
