"""Steps 3-4 of LLM-URL: split fetched pages into ~100-word passages and rank them.

Pages are split paragraph by paragraph: consecutive short paragraphs are packed into one
passage of at most ``max_words`` words, a long one is cut by :func:`split_text` (DPR-sized
pieces ending at sentence ends where possible). Passage ids are ``<title>#<n>`` (n counts
the page's passages from 0), stable for a given page. The pooled passages of all pages are
scored against the question with BM25 (bm25s, Lucene variant, English stop words and Snowball
stemming, title included, as ``searchain index`` does) or with the packaged embedder's cosine
similarity (``ranker="dense"``, needs the dense extra); ties keep page order then passage order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from searchain.retrieval.splitting import split_text
from searchain.types import Passage

RANKERS = ("bm25", "dense")


@dataclass(slots=True)
class Document:
    """A fetched page: what was asked for, where it came from and its clean text."""

    url: str
    title: str
    text: str


def split_document(doc: Document, max_words: int = 100) -> list[Passage]:
    pieces: list[str] = []
    buf: list[str] = []
    size = 0
    for para in (p.strip() for p in doc.text.split("\n")):
        if not para:
            continue
        words = len(para.split())
        if buf and size + words > max_words:
            pieces.append("\n".join(buf))
            buf, size = [], 0
        if words > max_words:
            pieces.extend(split_text(para, max_words))
            continue
        buf.append(para)
        size += words
    if buf:
        pieces.append("\n".join(buf))
    return [Passage(id=f"{doc.title}#{i}", text=t, title=doc.title) for i, t in enumerate(pieces)]


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


def _tokens(texts: list[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(
        texts, stopwords="en", stemmer=_stemmer(), return_ids=False, show_progress=False
    )


def bm25_scores(question: str, passages: Sequence[Passage]) -> list[float]:
    """BM25 score of each passage for ``question`` (0 where no term matches)."""
    import bm25s

    docs = _tokens([f"{p.title} {p.text}" for p in passages])
    query = _tokens([question])[0]
    if not query or not any(docs):
        return [0.0] * len(passages)
    bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    bm25.index(docs, show_progress=False)
    vocab = bm25.vocab_dict
    known = [t for t in query if t in vocab]
    if not known:
        return [0.0] * len(passages)
    return [float(s) for s in bm25.get_scores(known)]


def dense_scores(question: str, passages: Sequence[Passage], embedder: Any = None) -> list[float]:
    """Cosine similarity (the packaged embedder) of each passage to ``question``."""
    if embedder is None:
        from searchain.readers.embedders import open_embedder

        embedder = open_embedder()
    query = embedder.encode_queries([question])[0]
    docs = embedder.encode_documents([p.render() for p in passages])
    return [float(x) for x in docs @ query]


def rank_passages(
    question: str,
    passages: Sequence[Passage],
    n: int,
    *,
    ranker: str = "bm25",
    embedder: Any = None,
) -> list[Passage]:
    """The ``n`` best passages, best first, each a copy carrying its ``score``."""
    if ranker not in RANKERS:
        raise ValueError(f"unknown ranker {ranker!r}; one of {', '.join(RANKERS)}")
    if not passages or n <= 0:
        return []
    if ranker == "bm25":
        scores = bm25_scores(question, passages)
    else:
        scores = dense_scores(question, passages, embedder)
    # sorted() is stable: equal scores keep page order (the model's URL order) and position.
    order = sorted(range(len(passages)), key=lambda i: -scores[i])[:n]
    return [
        Passage(id=passages[i].id, text=passages[i].text, title=passages[i].title, score=scores[i])
        for i in order
    ]
