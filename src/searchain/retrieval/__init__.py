"""Retrieval: corpus readers, BM25 and dense indexes, hybrid fusion and the demo corpus.

>>> from searchain.retrieval import default_index
>>> default_index().search("Who portrayed Corliss Archer?", k=3)  # doctest: +SKIP
"""

from searchain.retrieval.base import Retriever
from searchain.retrieval.bm25 import FORMAT_VERSION, BM25Index, StaleIndexError
from searchain.retrieval.corpus import (
    FORMATS,
    CorpusError,
    corpus_fingerprint,
    detect_format,
    hotpotqa_supporting_ids,
    read_corpus,
    read_documents,
    read_hotpotqa_pool,
)
from searchain.retrieval.demo import default_index, demo_corpus_path
from searchain.retrieval.dense import DENSE_FORMAT_VERSION, INDEX_TYPES, DenseIndex
from searchain.retrieval.hybrid import HybridRetriever, rrf
from searchain.retrieval.splitting import split_passage, split_passages, split_text

__all__ = [
    "DENSE_FORMAT_VERSION",
    "FORMATS",
    "FORMAT_VERSION",
    "INDEX_TYPES",
    "BM25Index",
    "CorpusError",
    "DenseIndex",
    "HybridRetriever",
    "Retriever",
    "StaleIndexError",
    "corpus_fingerprint",
    "default_index",
    "demo_corpus_path",
    "detect_format",
    "hotpotqa_supporting_ids",
    "read_corpus",
    "read_documents",
    "read_hotpotqa_pool",
    "rrf",
    "split_passage",
    "split_passages",
    "split_text",
]
