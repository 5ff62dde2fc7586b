"""Which embedding model a dense index, a PostgreSQL collection or a query memory uses.

* nothing named: the packaged GGUF (nomic-embed-text-v1.5, run by llama.cpp; no torch);
* a ``.gguf`` file: that GGUF embedding model, run by llama.cpp;
* a folder: a sentence-transformers model (a user's own Hugging Face model; needs torch,
  ``scripts/install.sh hf``).

Every embedder has ``encode_queries``, ``encode_documents`` (unit-length float32 rows),
``encode`` (queries), ``threads(n)`` (a bulk job's thread count, inside a block) and
``describe()`` (what an index records of it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from searchain.readers.embedder_package import NOMIC_EMBED, embedder_path


class TextEmbedder(Protocol):
    path: str

    def encode(self, texts: list[str]) -> np.ndarray: ...
    def encode_queries(self, texts: list[str]) -> np.ndarray: ...
    def encode_documents(self, texts: list[str]) -> np.ndarray: ...
    def threads(self, n: int | None) -> Any: ...
    def describe(self) -> dict[str, Any]: ...


_SHARED: dict[str, TextEmbedder] = {}


def open_embedder(path: str | os.PathLike[str] | None = None) -> TextEmbedder:
    """The embedder of ``path`` (default: the packaged GGUF), one per model in a process."""
    resolved = str(embedder_path() if path is None else Path(path))
    embedder = _SHARED.get(resolved)
    if embedder is None:
        embedder = _open(Path(resolved))
        _SHARED[resolved] = embedder
    return embedder


def _open(path: Path) -> TextEmbedder:
    if path.is_file() and path.suffix == ".gguf":
        from searchain.readers.gguf_embedder import GGUFEmbedder

        return GGUFEmbedder(path)
    if path.is_dir():
        from searchain.readers.st_embedder import Embedder

        return Embedder(path)
    raise FileNotFoundError(
        f"no embedding model at {path}: give a GGUF embedding model file or a "
        "sentence-transformers folder"
    )


def is_packaged(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is the packaged GGUF's installed file (found anew on another machine)."""
    return Path(path).name == NOMIC_EMBED.file
