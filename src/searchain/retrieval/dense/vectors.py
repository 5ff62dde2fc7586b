"""The vectors on disk: ``embeddings.f32`` (one unit-length float32 row per passage) and the
faiss index built from it for the approximate index types."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from searchain.retrieval.index_dir import StaleIndexError

DENSE_FORMAT_VERSION = 1
INDEX_TYPES = ("flat", "ivf", "hnsw")  # or any faiss index_factory string, e.g. "IVF4096,PQ48"
EMBEDDINGS_FILE = "embeddings.f32"
FAISS_FILE = "faiss.index"
_ADD_ROWS = 65_536  # rows handed to faiss per add(): bounds the RAM a build needs
_TRAIN_ROWS = 100_000  # k-means sample cap; faiss wants 39-256 points per IVF list


def load_faiss() -> Any:
    # Same reason as Embedder: faiss's OpenMP/OpenBLAS workers must not spin after a search.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import faiss
    except ImportError as e:  # the [dense] extra
        raise ImportError("dense retrieval needs faiss-cpu: scripts/install.sh dense") from e
    return faiss


def open_embeddings(directory: Path, rows: int, dim: int, mmap: bool) -> np.ndarray:
    path = directory / EMBEDDINGS_FILE
    expected = rows * dim * 4
    if path.stat().st_size != expected:
        raise StaleIndexError(
            f"{path} holds {path.stat().st_size:,} bytes, expected {expected:,} "
            f"({rows:,} x {dim} float32); the index is damaged, rebuild it"
        )
    if mmap:
        return np.memmap(path, dtype=np.float32, mode="r", shape=(rows, dim))
    return np.fromfile(path, dtype=np.float32).reshape(rows, dim)


def write_faiss_index(
    directory: Path,
    embeddings: np.ndarray,
    index_type: str,
    nlist: int | None,
    nprobe: int | None,
    hnsw_m: int,
    ef_construction: int,
    ef_search: int,
) -> dict[str, Any]:
    """Build the faiss index ``index_type`` asks for from the memmapped embeddings."""
    if index_type == "flat":
        return {"type": "flat"}
    faiss = load_faiss()
    n, dim = embeddings.shape
    ip = faiss.METRIC_INNER_PRODUCT  # on unit vectors, inner product is cosine
    meta: dict[str, Any]
    if index_type == "ivf":
        # ~4 sqrt(n) lists, but at least 39 training points per list (faiss's minimum).
        nlist = nlist or max(1, min(int(4 * n**0.5), n // 39))
        # MiniLM vectors cluster loosely: on HotpotQA (124 lists) nprobe 8 / 16 / 32 / 64
        # kept Recall@10 at 0.79 / 0.82 / 0.85 / 0.86 of flat's 0.864. Tune with load(nprobe=).
        nprobe = min(nprobe or max(32, nlist // 32), nlist)
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, ip)
        meta = {"type": "ivf", "nlist": nlist, "search_params": {"nprobe": nprobe}}
    elif index_type == "hnsw":
        index = faiss.IndexHNSWFlat(dim, hnsw_m, ip)
        index.hnsw.efConstruction = ef_construction
        meta = {
            "type": "hnsw",
            "m": hnsw_m,
            "ef_construction": ef_construction,
            "search_params": {"efSearch": ef_search},
        }
    else:
        index = faiss.index_factory(dim, index_type, ip)
        meta = {"type": "factory", "factory": index_type, "search_params": {}}
        if nprobe is not None:
            meta["search_params"]["nprobe"] = nprobe
    if not index.is_trained:
        # An evenly spaced sample: deterministic, and spread over the whole corpus.
        sample = np.linspace(0, n - 1, num=min(n, _TRAIN_ROWS)).astype(np.int64)
        index.train(np.ascontiguousarray(embeddings[np.unique(sample)]))
    for start in range(0, n, _ADD_ROWS):
        index.add(np.ascontiguousarray(embeddings[start : start + _ADD_ROWS]))
    faiss.write_index(index, str(directory / FAISS_FILE))
    return meta


def check_index_type(index_type: str, dim: int) -> None:
    if index_type in INDEX_TYPES:
        return
    try:
        load_faiss().index_factory(dim, index_type, load_faiss().METRIC_INNER_PRODUCT)
    except RuntimeError:
        raise ValueError(
            f"unknown index type {index_type!r}: use one of {', '.join(INDEX_TYPES)} "
            "or a faiss index_factory string"
        ) from None


def set_search_params(index: Any, params: dict[str, Any]) -> None:
    space = load_faiss().ParameterSpace()
    for name, value in params.items():
        try:
            space.set_index_parameter(index, name, value)
        except RuntimeError:  # faiss's message names its own source file; ours is plainer
            kind = type(index).__name__
            raise ValueError(f"search parameter {name} does not apply to a {kind}") from None
