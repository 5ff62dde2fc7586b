"""The :class:`DenseIndex`: building (resumable), reindexing, loading and searching."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from searchain.readers.embedders import TextEmbedder, open_embedder
from searchain.retrieval._store import OFFSETS_FILE, PASSAGES_FILE, PassageStore
from searchain.retrieval.corpus import corpus_fingerprint
from searchain.retrieval.dense.earlier import EarlierVectors
from searchain.retrieval.dense.encoding import (
    dist_version,
    encode_corpus,
    model_fingerprint,
    model_info,
    resolve_model,
)
from searchain.retrieval.dense.vectors import (
    DENSE_FORMAT_VERSION,
    EMBEDDINGS_FILE,
    FAISS_FILE,
    check_index_type,
    load_faiss,
    open_embeddings,
    set_search_params,
    write_faiss_index,
)
from searchain.retrieval.dense.workdir import WorkDir
from searchain.retrieval.index_dir import (
    METADATA_FILE,
    Progress,
    StaleIndexError,
    check_fresh,
    check_replaceable,
    corpus_passages,
    publish,
)
from searchain.types import Passage


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
        self.load_faiss = faiss_index  # None for "flat": search the embeddings themselves
        self._embedder: TextEmbedder | None = None  # loaded on the first search

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
        keep_unchanged: bool = True,
    ) -> DenseIndex:
        """Encode ``passages`` into ``out_dir`` (resuming an interrupted build) and return it.

        ``model_path`` is a GGUF embedding model or a local sentence-transformers directory
        (default: the packaged GGUF, nomic-embed-text-v1.5). ``index_type`` is ``flat``
        (exact; fine up to about a million passages), ``ivf`` (``nlist`` lists, ``nprobe``
        searched), ``hnsw`` (``hnsw_m`` links, ``ef_search``) or a faiss ``index_factory``
        string. ``corpus_path`` is fingerprinted for stale detection; ``reader`` records how
        the passages were read from it. ``keep_unchanged``: where ``out_dir`` already holds an
        index encoded the same way, a passage whose text it encoded keeps that vector (a
        rebuild after some files changed encodes only their passages).
        """
        if batch_size < 1 or checkpoint_rows < 1:
            raise ValueError("batch_size and checkpoint_rows must be positive")
        out_dir = Path(out_dir)
        check_replaceable(out_dir)
        fingerprint = corpus_fingerprint(corpus_path) if corpus_path is not None else None
        log = Progress(show_progress)
        embedder = open_embedder(model_path)
        model = model_info(embedder)
        check_index_type(index_type, model["dim"])  # before hours of encoding, not after
        work = out_dir.parent / f".{out_dir.name}.partial"
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        with WorkDir(work, model, index_title, checkpoint_rows, log) as wd:
            t0 = time.perf_counter()
            earlier = EarlierVectors.at(out_dir, wd.identity) if keep_unchanged else None
            with embedder.threads(encode_threads):
                stats = encode_corpus(
                    passages, wd, embedder, batch_size, show_progress, log, earlier
                )
            del earlier  # its vectors are mapped from the index about to be replaced
            stats["encode_seconds"] = round(time.perf_counter() - t0, 3)
            if stats["rows"] == 0:
                wd.discard()
                raise ValueError("cannot build an index from an empty corpus")
            embeddings = open_embeddings(work, stats["rows"], model["dim"], mmap=True)
            if index_type != "flat":
                log.say(f"building the {index_type} index of {stats['rows']:,} vectors")
            index_meta = write_faiss_index(
                work, embeddings, index_type, nlist, nprobe, hnsw_m, ef_construction, ef_search
            )
            metadata = _metadata(stats["rows"], model, index_meta, index_title, fingerprint)
            metadata["reader"] = reader
            (work / METADATA_FILE).write_text(json.dumps(metadata, indent=2) + "\n")
            del embeddings
            wd.publish(out_dir)
        log.say(
            f"index written to {out_dir} ({stats['rows_encoded']:,} passages encoded, "
            f"{stats['rows_reused']:,} reused from an interrupted build, "
            f"{stats['rows_unchanged']:,} unchanged since the last build)"
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
        passages, reader = corpus_passages(corpus_path, fmt, max_words)
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
        check_replaceable(out_dir)
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
        try:
            for name in (PASSAGES_FILE, OFFSETS_FILE, EMBEDDINGS_FILE):
                _link_or_copy(self.path / name, tmp / name)
            rows, dim = self.metadata["n_passages"], self.metadata["dim"]
            embeddings = open_embeddings(tmp, rows, dim, mmap=True)
            index_meta = write_faiss_index(
                tmp, embeddings, index_type, nlist, nprobe, hnsw_m, ef_construction, ef_search
            )
            del embeddings
            metadata = {**self.metadata, "index": index_meta, "created": _now()}
            (tmp / METADATA_FILE).write_text(json.dumps(metadata, indent=2) + "\n")
            tmp.chmod(0o755)  # mkdtemp makes it private; the published index should not be
            publish(tmp, out_dir)
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
            check_fresh(path, metadata.get("corpus"), Path(corpus_path))
        resolved = resolve_model(metadata["model"], model_path)
        if model_fingerprint(Path(resolved)) != metadata["model"]["fingerprint"]:
            raise StaleIndexError(
                f"{path} was encoded with {metadata['model']['path']}, which differs from "
                f"the query model {resolved}; rebuild the index or pass its model_path"
            )
        embeddings = open_embeddings(path, metadata["n_passages"], metadata["dim"], mmap)
        overrides = {"nprobe": nprobe, "efSearch": ef_search}
        overrides = {name: value for name, value in overrides.items() if value is not None}
        faiss_index = None
        if metadata["index"]["type"] != "flat":
            faiss = load_faiss()
            flags = faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY if mmap else 0
            faiss_index = faiss.read_index(str(path / FAISS_FILE), flags)
            set_search_params(faiss_index, metadata["index"].get("search_params", {}))
            set_search_params(faiss_index, overrides)
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
            self._embedder = open_embedder(self.model_path)
        return self._embedder.encode_queries(queries)

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
        if self.load_faiss is None:
            faiss = load_faiss()
            scores, rows = faiss.knn(vectors, self._embeddings, k, faiss.METRIC_INNER_PRODUCT)
        else:
            scores, rows = self.load_faiss.search(vectors, k)
        for i, row, score in zip(todo, rows.tolist(), scores.tolist(), strict=True):
            hits = [(r, s) for r, s in zip(row, score, strict=True) if r >= 0]  # -1: no more
            passages = self._store.get([r for r, _ in hits])
            for p, (_, s) in zip(passages, hits, strict=True):
                p.score = s
            results[i] = passages
        return results


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system, or one without hard links
        shutil.copyfile(src, dst)


def _metadata(
    rows: int,
    model: dict[str, Any],
    index_meta: dict[str, Any],
    index_title: bool,
    corpus: Any,
) -> dict[str, Any]:
    """What a built index records of itself (``reader`` is added by the caller)."""
    return {
        "format_version": DENSE_FORMAT_VERSION,
        "kind": "dense",
        "n_passages": rows,
        "dim": model["dim"],
        "model": model,
        "index": index_meta,
        "index_title": index_title,
        "corpus": corpus,
        "reader": None,
        "faiss_version": load_faiss().__version__,
        "llama_cpp_version": dist_version("llama-cpp-python"),
        "created": _now(),
    }
