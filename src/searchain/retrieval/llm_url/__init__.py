"""LLM-URL (Ziems et al., 2023): the LLM names the Wikipedia URLs that would have the answer;
the pages are fetched safely, split into ~100-word passages and ranked against the question.

>>> from searchain.retrieval.llm_url import LLMURLRetriever, LLMURLConfig, FetchConfig
>>> r = LLMURLRetriever(llm, LLMURLConfig(m=5, fetch=FetchConfig(base_url=mirror_url)))
>>> r.search("Who portrayed Corliss Archer?", k=3)  # doctest: +SKIP
"""

from searchain.retrieval.llm_url.fetcher import FetchConfig, PageFetcher, PageResult
from searchain.retrieval.llm_url.generate import (
    build_messages,
    build_prompt,
    generate_urls,
    load_demos,
)
from searchain.retrieval.llm_url.html_text import html_to_text
from searchain.retrieval.llm_url.mirror import MirrorCorpus, MirrorServer, render_page
from searchain.retrieval.llm_url.ranking import Document, rank_passages, split_document
from searchain.retrieval.llm_url.retriever import (
    LLMURLConfig,
    LLMURLRetriever,
    Retrieval,
    collect,
    with_retrieval_reports,
)
from searchain.retrieval.llm_url.spec import is_llm_url_spec, open_llm_url, parse_spec
from searchain.retrieval.llm_url.urls import (
    ExtractedURL,
    Extraction,
    extract_chat_urls,
    extract_urls,
)

__all__ = [
    "Document",
    "ExtractedURL",
    "Extraction",
    "FetchConfig",
    "LLMURLConfig",
    "LLMURLRetriever",
    "MirrorCorpus",
    "MirrorServer",
    "PageFetcher",
    "PageResult",
    "Retrieval",
    "build_messages",
    "build_prompt",
    "collect",
    "extract_chat_urls",
    "extract_urls",
    "generate_urls",
    "html_to_text",
    "is_llm_url_spec",
    "load_demos",
    "open_llm_url",
    "parse_spec",
    "rank_passages",
    "render_page",
    "split_document",
    "with_retrieval_reports",
]
