"""Sentence embeddings from a GGUF embedding model, run by llama.cpp (already installed to
answer): no torch, no second runtime.

The packaged model is nomic-embed-text-v1.5 (:mod:`searchain.readers.embedder_package`): a
BERT-family encoder trained with task prefixes, so queries are embedded as
``"search_query: …"`` and passages as ``"search_document: …"``; mean-pooled and L2-normalised,
as its model card says. Any other GGUF embedding model can be given by path (no prefixes
unless named).

Threads: one llama.cpp thread by default, because query encoding runs in the same process as
the answering model and two busy runtimes on 2 cores slow each other; a bulk job (indexing)
raises it for its duration with :meth:`GGUFEmbedder.threads`.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

# Tokens per passage at most: longer texts are cut (a passage of searchain's default 100 words
# is ~150 tokens; nomic-embed was trained at 2048).
MAX_TOKENS = 2048
_NOMIC_PREFIXES = ("search_query: ", "search_document: ")


def known_prefixes(path: str | os.PathLike[str]) -> tuple[str, str]:
    """The (query, document) prefixes a model file of a known family was trained with."""
    return _NOMIC_PREFIXES if "nomic-embed-text" in Path(path).name else ("", "")


class GGUFEmbedder:
    """Unit-length embeddings of texts from a GGUF embedding model.

    ``encode_queries`` / ``encode_documents`` add the model's task prefixes; ``encode``
    embeds queries (what a query memory compares)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        prefixes: tuple[str, str] | None = None,
        n_threads: int = 1,
        batch_tokens: int = MAX_TOKENS,
    ) -> None:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"embedding model file not found: {path}")
        self.path = str(path)
        self.query_prefix, self.document_prefix = prefixes or known_prefixes(path)
        self._lock = threading.Lock()  # one llama.cpp context: one call at a time
        self._n_threads = n_threads
        self._batch_tokens = batch_tokens
        self._llama: Any = None

    @property
    def llama(self) -> Any:
        if self._llama is None:
            from llama_cpp import LLAMA_POOLING_TYPE_MEAN, Llama

            self._llama = Llama(
                model_path=self.path,
                embedding=True,
                pooling_type=LLAMA_POOLING_TYPE_MEAN,
                n_ctx=self._batch_tokens,
                n_batch=self._batch_tokens,
                n_ubatch=self._batch_tokens,
                n_threads=self._n_threads,
                n_threads_batch=self._n_threads,
                verbose=False,
            )
            # Freed before the interpreter tears llama_cpp's module down: a Llama left to
            # __del__ at exit prints a TypeError from its own cleanup.
            atexit.register(self.close)
        return self._llama

    def close(self) -> None:
        with self._lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None

    @property
    def dim(self) -> int:
        return int(self.llama.n_embd())

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._embed([self.query_prefix + t for t in texts])

    def encode_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed([self.document_prefix + t for t in texts])

    encode = encode_queries

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._lock:
            # One sequence a call: llama.cpp's multi-sequence batches of a non-causal model
            # need n_seq_max set per context, and one at a time costs little at these lengths.
            rows = [self.llama.embed(t, normalize=False, truncate=True) for t in texts]
        vectors = np.asarray(rows, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    @contextlib.contextmanager
    def threads(self, n: int | None) -> Iterator[None]:
        """Use ``n`` llama.cpp threads (default: all usable cores) inside the block only."""
        import llama_cpp

        n = n or usable_cores()
        ctx = self.llama.ctx
        with self._lock:
            llama_cpp.llama_set_n_threads(ctx, n, n)
        try:
            yield
        finally:
            with self._lock:
                llama_cpp.llama_set_n_threads(ctx, self._n_threads, self._n_threads)

    def describe(self) -> dict[str, Any]:
        """What a dense index records of the model that encoded it."""
        path = Path(self.path)
        return {
            "kind": "gguf",
            "path": self.path,
            "name": path.name,
            "fingerprint": gguf_fingerprint(path),
            "dim": self.dim,
            "max_seq_length": self._batch_tokens,
            "query_prefix": self.query_prefix,
            "document_prefix": self.document_prefix,
        }


def gguf_fingerprint(path: Path) -> str:
    """The file's name and size: tells models apart without hashing 274 MB at every load."""
    return f"{path.name}:{path.stat().st_size}"


def usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):  # Linux: honours taskset / container CPU sets
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
