"""Step 3 of LLM-URL: fetch the pages a model named, safely, concurrently, with a cache.

Every request goes through :mod:`searchain.net.safe_http` (scheme/host allowlist, connect-time
address checks, re-checked redirects, one deadline, byte cap, retries on 429/5xx/connection
errors). Only the *title* of a model-written URL reaches the network: the request URL is
rebuilt as ``{base}/wiki/{Title}``, where ``base`` is ``https://<allowed host>`` or, for
en.wikipedia.org, a mirror the user configured. A loopback or private mirror is reachable
only because the user named it: exactly that host and port are opted in, nothing else.

Concurrency is bounded overall and per host; parsed pages (200s and 404s, as clean text) are
cached on disk under ``<cache root>/llm_url/pages``, keyed by the request URL, so a mirror and
the real site never share entries.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Coroutine, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from searchain.net.safe_http import FetchError, HttpPolicy, UnsafeURLError, afetch
from searchain.retrieval.llm_url.html_text import html_to_text
from searchain.retrieval.llm_url.urls import title_to_path

WIKIPEDIA_HOST = "en.wikipedia.org"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class FetchConfig:
    base_url: str | None = None  # a mirror of en.wikipedia.org, e.g. http://127.0.0.1:8765
    # Hosts a model-written URL may name (exact names); other Wikipedias are fetched live.
    allowed_hosts: tuple[str, ...] = (WIKIPEDIA_HOST,)
    concurrency: int = 16
    per_host: int = 4
    timeout_s: float = 15.0
    max_bytes: int = 5_000_000  # the largest Wikipedia pages are ~2-3 MB of HTML
    oversize: str = "truncate"  # "truncate" keeps the first max_bytes; "error" rejects the page
    retries: int = 2
    cache: bool = True
    cache_dir: str | None = None  # default: searchain.paths.cache_root() / "llm_url" / "pages"
    user_agent: str = "searchain/0.1 (LLM-URL retrieval; offline research use)"

    def __post_init__(self) -> None:
        if self.concurrency < 1 or self.per_host < 1:
            raise ValueError("concurrency and per_host must be >= 1")
        if self.base_url is not None:
            parts = urlsplit(self.base_url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"base URL must be http(s)://host[:port], got {self.base_url!r}")


@dataclass(slots=True)
class PageResult:
    """One fetch. ``status``: ``fetched``, ``not_found``, ``error`` or ``refused``."""

    title: str  # the title asked for
    request_url: str
    status: str
    http_status: int | None = None
    final_url: str | None = None
    page_title: str = ""  # the title the page itself shows (after redirects)
    text: str = ""
    truncated: bool = False
    cached: bool = False
    seconds: float = 0.0
    error: str = ""

    def to_dict(self, with_text: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_text:
            d.pop("text")
            d["words"] = len(self.text.split())
        return d


@dataclass
class FetchStats:
    requests: int = 0
    cache_hits: int = 0
    seconds: float = 0.0
    by_status: dict[str, int] = field(default_factory=dict)


class PageFetcher:
    """Fetch article pages by title from Wikipedia or a configured mirror."""

    def __init__(self, config: FetchConfig | None = None) -> None:
        self.config = config or FetchConfig()
        hosts = {h: f"https://{h}" for h in self.config.allowed_hosts}
        opt_in: tuple[str, ...] = ()
        if self.config.base_url is not None:
            parts = urlsplit(self.config.base_url)
            hosts[WIKIPEDIA_HOST] = self.config.base_url.rstrip("/")
            port = parts.port or (443 if parts.scheme == "https" else 80)
            opt_in = (f"{parts.hostname}:{port}",)
        self.bases = hosts  # allowed host -> where its pages are fetched from
        self.policy = HttpPolicy(
            allowed_domains=tuple(urlsplit(b).hostname or "" for b in hosts.values()),
            allow_private=opt_in,
            max_bytes=self.config.max_bytes,
            oversize=self.config.oversize,
            timeout_s=self.config.timeout_s,
            retries=self.config.retries,
            user_agent=self.config.user_agent,
        )
        root = self.config.cache_dir
        if root is None:
            from searchain.paths import cache_root

            root = str(cache_root() / "llm_url" / "pages")
        self.cache_dir = Path(root)
        self.stats = FetchStats()
        self._stats_lock = threading.Lock()

    def url_for(self, title: str, host: str = WIKIPEDIA_HOST) -> str:
        if host not in self.bases:
            raise ValueError(f"host {host!r} is not in allowed_hosts {self.config.allowed_hosts}")
        return f"{self.bases[host]}/wiki/{title_to_path(title)}"

    # -- cache -----------------------------------------------------------------------------
    def _cache_path(self, url: str) -> Path:
        key = hashlib.sha256(url.encode("utf-8")).hexdigest()
        return self.cache_dir / key[:2] / f"{key}.json"

    def _cache_get(self, title: str, url: str) -> PageResult | None:
        if not self.config.cache:
            return None
        try:
            d = json.loads(self._cache_path(url).read_text(encoding="utf-8"))
            return PageResult(**{**d, "title": title, "cached": True, "seconds": 0.0})
        except (OSError, ValueError, TypeError):
            return None  # missing or damaged entry: fetch again

    def _cache_put(self, result: PageResult) -> None:
        if not self.config.cache or result.status not in ("fetched", "not_found"):
            return
        path = self._cache_path(result.request_url)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(result.to_dict(with_text=True), f, ensure_ascii=False)
        os.replace(tmp, path)  # atomic: concurrent readers see the old entry or the new one

    # -- fetching --------------------------------------------------------------------------
    async def afetch_title(
        self, title: str, limits: _Limits | None = None, host: str = WIKIPEDIA_HOST
    ) -> PageResult:
        url = self.url_for(title, host)
        t0 = time.perf_counter()
        cached = self._cache_get(title, url)
        if cached is not None:
            self._count(cached, 0.0)
            return cached
        limits = limits or _Limits(self.config)
        async with limits.slot(urlsplit(url).netloc):
            result = await self._get(title, url)
        result.seconds = time.perf_counter() - t0
        self._cache_put(result)
        self._count(result, result.seconds)
        return result

    async def _get(self, title: str, url: str) -> PageResult:
        try:
            resp = await afetch(url, policy=self.policy)
        except UnsafeURLError as e:
            return PageResult(title, url, "refused", error=str(e))
        except FetchError as e:
            return PageResult(title, url, "error", error=str(e))
        result = PageResult(title, url, "error", resp.status, resp.url, truncated=resp.truncated)
        if resp.status == 404:
            result.status = "not_found"
        elif 200 <= resp.status < 300:
            ctype = resp.headers.get("content-type", "")
            if "html" in ctype or not ctype:
                page = await asyncio.to_thread(html_to_text, resp.text)
                result.page_title, result.text = page.title, page.text
            else:
                result.text = resp.text
            result.status = "fetched"
        else:
            result.error = f"HTTP {resp.status}"
        return result

    async def afetch_titles(
        self, titles: Sequence[str], hosts: Sequence[str] | None = None
    ) -> list[PageResult]:
        """Fetch many titles at once (``hosts[i]``: the Wikipedia host of ``titles[i]``)."""
        limits = _Limits(self.config)
        hosts = hosts or [WIKIPEDIA_HOST] * len(titles)
        jobs = (self.afetch_title(t, limits, h) for t, h in zip(titles, hosts, strict=True))
        return list(await asyncio.gather(*jobs))

    def fetch_titles(
        self, titles: Sequence[str], hosts: Sequence[str] | None = None
    ) -> list[PageResult]:
        """Synchronous :meth:`afetch_titles` (works inside or outside an event loop)."""
        return run_sync(self.afetch_titles(titles, hosts))

    def _count(self, result: PageResult, seconds: float) -> None:
        with self._stats_lock:
            s = self.stats
            s.requests += 1
            s.cache_hits += result.cached
            s.seconds += seconds
            s.by_status[result.status] = s.by_status.get(result.status, 0) + 1


class _Limits:
    """Semaphores of one batch (asyncio primitives belong to the loop that made them)."""

    def __init__(self, config: FetchConfig) -> None:
        self.total = asyncio.Semaphore(config.concurrency)
        self.per_host = config.per_host
        self.hosts: dict[str, asyncio.Semaphore] = {}

    def slot(self, host: str) -> _Slot:
        sem = self.hosts.setdefault(host, asyncio.Semaphore(self.per_host))
        return _Slot(sem, self.total)  # host first: never hold a global slot while queued


class _Slot:
    def __init__(self, *sems: asyncio.Semaphore) -> None:
        self.sems = sems

    async def __aenter__(self) -> None:
        for s in self.sems:
            await s.acquire()

    async def __aexit__(self, *exc: object) -> None:
        for s in reversed(self.sems):
            s.release()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even when this thread runs a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as e:  # re-raised in the caller's thread
            box["error"] = e

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
