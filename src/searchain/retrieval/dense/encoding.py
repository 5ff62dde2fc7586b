"""Encoding a corpus chunk by chunk into the work directory (chunks already there, by
content digest, are reused), and the embedding model's identity."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Sized
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

import numpy as np

from searchain.readers.embedder_package import embedder_path
from searchain.readers.embedders import TextEmbedder, is_packaged
from searchain.readers.gguf_embedder import gguf_fingerprint
from searchain.readers.st_embedder import HF_HINT, default_embedder_path, directory_fingerprint
from searchain.retrieval._store import StoreWriter
from searchain.retrieval.dense.earlier import EarlierVectors
from searchain.retrieval.dense.vectors import EMBEDDINGS_FILE
from searchain.retrieval.dense.workdir import WorkDir
from searchain.retrieval.index_dir import Progress, StaleIndexError
from searchain.types import Passage


def encode_corpus(
    passages: Iterable[Passage],
    wd: WorkDir,
    embedder: TextEmbedder,
    batch_size: int,
    show_progress: bool,
    log: Progress,
    earlier: EarlierVectors | None = None,
) -> dict[str, Any]:
    """Store every passage and encode each chunk the work dir does not hold yet, taking the
    vector of a passage whose text the index being replaced (``earlier``) encoded already."""
    from tqdm.auto import tqdm

    dim = int(wd.identity["dim"])
    row_bytes = dim * 4
    total = len(passages) if isinstance(passages, Sized) else None
    stats = {"rows": 0, "rows_encoded": 0, "rows_reused": 0, "rows_unchanged": 0}
    writer = StoreWriter(wd.path)  # the texts are cheap to rewrite, so always rewritten
    emb_path = wd.path / EMBEDDINGS_FILE
    # tqdm shows the rate and, with a known total, the time left.
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
                vectors, unchanged = _vectors_of(chunk, earlier, embedder, batch_size, bar)
                stats["rows_unchanged"] += unchanged
                emb.seek(stats["rows"] * row_bytes)
                emb.write(vectors.tobytes())
                emb.flush()
                os.fsync(emb.fileno())  # the rows first, then the progress naming them
                wd.digests.append(digest)
                wd.save_progress()
                stats["rows_encoded"] += len(chunk) - unchanged
            stats["rows"] += len(chunk)
        writer.close()
        # A previous attempt over a longer corpus may have left rows past the end.
        emb.truncate(stats["rows"] * row_bytes)
    if stats["rows_reused"]:
        log.say(f"reused {stats['rows_reused']:,} passages encoded by an earlier run")
    if stats["rows_unchanged"]:
        log.say(
            f"kept the vectors of {stats['rows_unchanged']:,} passages unchanged since the "
            f"last build; encoded {stats['rows_encoded']:,}"
        )
    return stats


def _vectors_of(
    chunk: list[str],
    earlier: EarlierVectors | None,
    embedder: TextEmbedder,
    batch_size: int,
    bar: Any,
) -> tuple[np.ndarray, int]:
    """The chunk's vectors: the earlier index's where it encoded the same text, the model's
    for the rest; and how many were taken from the earlier index."""
    if earlier is None:
        return encode_texts(embedder, chunk, batch_size, bar), 0
    found = [earlier.vector(text) for text in chunk]
    missing = [i for i, v in enumerate(found) if v is None]
    bar.update(len(chunk) - len(missing))
    encoded = (
        encode_texts(embedder, [chunk[i] for i in missing], batch_size, bar) if missing else None
    )
    dim = (encoded if encoded is not None else next(v for v in found if v is not None)).shape[-1]
    out = np.empty((len(chunk), dim), np.float32)
    for i, v in enumerate(found):
        if v is not None:
            out[i] = v
    if encoded is not None:
        out[missing] = encoded
    return out, len(chunk) - len(missing)


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


def encode_texts(
    embedder: TextEmbedder, texts: list[str], batch_size: int, bar: Any = None
) -> np.ndarray:
    """Encode in batches of similar length (less padding); ``bar`` (a tqdm bar, if any)
    moves one step per batch."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    out: np.ndarray | None = None
    for start in range(0, len(texts), batch_size):
        rows = order[start : start + batch_size]
        vectors = embedder.encode_documents([texts[i] for i in rows])
        if out is None:
            out = np.empty((len(texts), vectors.shape[1]), np.float32)
        out[rows] = vectors
        if bar is not None:
            bar.update(len(rows))
    assert out is not None  # chunks are never empty
    return out


# -- the model ---------------------------------------------------------------------------


def model_info(embedder: TextEmbedder) -> dict[str, Any]:
    info = embedder.describe()
    if info["kind"] == "gguf":
        info["packaged"] = is_packaged(info["path"])
    return info


def model_fingerprint(path: Path) -> str:
    """How an index tells the model that encoded it from another (see ``describe``)."""
    if path.is_file():
        return gguf_fingerprint(path)
    return directory_fingerprint(path)


def resolve_model(recorded: dict[str, Any], model_path: str | Path | None) -> str:
    """The query model: as given, else as recorded; a packaged model is found anew, since a
    reinstalled environment moves it. An index whose packaged model is not installed here
    (MiniLM, before the GGUF) says how to rebuild it."""
    if model_path is not None:
        return str(model_path)
    if not recorded.get("packaged"):
        return str(recorded["path"])
    if recorded.get("kind", "sentence-transformers") == "gguf":
        return str(embedder_path())
    try:
        return str(default_embedder_path())
    except ImportError:
        raise StaleIndexError(
            f"this index was encoded with {recorded.get('name', 'all-MiniLM-L6-v2')} "
            f"({recorded.get('dim', 384)}-d), which searchain no longer installs by default: "
            "rebuild it with the packaged embedder (run the same `searchain index` command "
            f"again), or `{HF_HINT.split(': ')[-1]}` to search it with its own model"
        ) from None


def dist_version(dist: str) -> str | None:
    try:
        return importlib_metadata.version(dist)
    except importlib_metadata.PackageNotFoundError:
        return None
