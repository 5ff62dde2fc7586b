"""Terms made in Python exactly as ``retrieval/bm25.py`` makes them (bm25s's tokenizer:
lowercase, ``\\w\\w+`` words, English stop words dropped, Snowball stems), so a passage's
term frequencies and length, and a query's terms, are the in-process index's."""

from __future__ import annotations

import re
import threading
from collections import Counter
from typing import Any

import bm25s
import Stemmer

from searchain.retrieval._store import encoded_text
from searchain.retrieval.index_dir import TOKEN_PATTERN

BM25_SETTINGS = {"k1": 1.5, "b": 0.75, "method": "lucene"}


def tokenizer_settings(index_title: bool = True) -> dict[str, Any]:
    """The tokenizer a collection records (the defaults of ``BM25Index.build``)."""
    return {
        "lower": True,
        "pattern": TOKEN_PATTERN,
        "stopwords": "en",
        "stemmer": "english",
        "index_title": index_title,
    }


class Analyzer:
    """Text to terms under a collection's tokenizer settings (thread-safe)."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        self._split = re.compile(settings["pattern"]).findall
        words = bm25s.tokenization.Tokenizer(stopwords=settings["stopwords"] or []).stopwords
        self._stop = frozenset(words)
        self._stemmer = Stemmer.Stemmer(settings["stemmer"]) if settings["stemmer"] else None
        self._lock = threading.Lock()  # PyStemmer keeps a cache: not thread-safe

    def terms(self, text: str) -> list[str]:
        """The terms of ``text`` in order, repeats kept."""
        words = self._split(text.lower() if self.settings["lower"] else text)
        words = [w for w in words if w not in self._stop]
        if self._stemmer is not None and words:
            with self._lock:
                words = self._stemmer.stemWords(words)
        return words

    def passage_terms(self, title: str, text: str) -> tuple[Counter[str], int]:
        """A passage's term frequencies and its BM25 length. bm25s counts a text without
        any word as one empty token; it matches no query but weighs in the mean length."""
        indexed = encoded_text(title, text, self.settings["index_title"])
        words = self.terms(indexed)
        if not words and not self._split(indexed.lower()):
            return Counter(), 1
        return Counter(words), len(words)

    def query_terms(self, query: str) -> tuple[list[str], list[int]]:
        """A query's distinct terms and how often each occurs (bm25s sums a repeat twice)."""
        counts = Counter(self.terms(query))
        return list(counts), list(counts.values())
