"""BM25 retrieval over a corpus of passages, on top of ``bm25s``.

An index directory holds the bm25s matrices (``*.index.npy``, ``vocab.index.json``,
``params.index.json``), the passage store (``passages.jsonl`` + offsets) and
``metadata.json``, which records what the index was built from so a changed corpus is
detected instead of silently serving stale results.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import json
import logging
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import bm25s
import Stemmer

from searchain.retrieval._store import PassageStore, StoreWriter
from searchain.retrieval.corpus import corpus_fingerprint
from searchain.retrieval.index_dir import (
    METADATA_FILE,
    TOKEN_PATTERN,
    Progress,
    StaleIndexError,
    check_fresh,
    check_replaceable,
    corpus_passages,
    publish,
)
from searchain.types import Passage

# bm25s sets its own logger to DEBUG on import, so once a CLI configures logging its
# "Building index from IDs" lines reach the user's terminal: keep them at warnings.
logging.getLogger("bm25s").setLevel(logging.WARNING)

__all__ = ["FORMAT_VERSION", "BM25Index", "StaleIndexError"]

FORMAT_VERSION = 1
TIE_MARGIN = 16  # rows fetched past k so that equal scores at the k-th place sort by position


class BM25Index:
    """A BM25 index over passages. Build with :meth:`build`, reopen with :meth:`load`."""

    def __init__(
        self,
        path: Path,
        retriever: bm25s.BM25,
        store: PassageStore,
        metadata: dict[str, Any],
        n_threads: int = 0,
    ) -> None:
        self.path = path
        self.metadata = metadata
        self.n_threads = n_threads  # passed to bm25s for batches; 0 = sequential
        self._bm25 = retriever
        self._store = store
        self._tokenize = _query_tokenizer(metadata["tokenizer"], retriever.vocab_dict)

    # -- building ------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        passages: Iterable[Passage],
        out_dir: str | Path,
        *,
        corpus_path: str | Path | None = None,
        show_progress: bool = True,
        stopwords: str | None = "en",
        stemmer: str | None = "english",
        index_title: bool = True,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
        reader: dict[str, Any] | None = None,
        extra_files: Callable[[], dict[str, str]] | None = None,
    ) -> BM25Index:
        """Index ``passages`` into ``out_dir`` and return the ready index.

        The index is written to a temporary sibling directory and renamed into place only
        once complete, so a failure (say a ``CorpusError`` on line 7) leaves ``out_dir`` as
        it was. ``corpus_path`` is fingerprinted into the metadata for stale detection;
        ``reader`` records how the passages were read from it (format, max_words).
        ``extra_files`` is called once the passages are consumed, for files to publish with
        the index (a document folder's manifest), so they appear with it atomically.
        """
        out_dir = Path(out_dir)
        check_replaceable(out_dir)
        fingerprint = corpus_fingerprint(corpus_path) if corpus_path is not None else None
        settings = {
            "tokenizer": {
                "lower": True,
                "pattern": TOKEN_PATTERN,
                "stopwords": stopwords,
                "stemmer": stemmer,
                "index_title": index_title,
            },
            "bm25": {"k1": k1, "b": b, "method": method},
        }
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
        tmp.chmod(0o755)  # mkdtemp makes it private; the published index should not be
        log = Progress(show_progress)
        try:
            with _gc_paused():
                retriever = _write_index(tmp, passages, settings, log)
            metadata = {
                "format_version": FORMAT_VERSION,
                "kind": "bm25",
                "n_passages": int(retriever.scores["num_docs"]),
                "corpus": fingerprint,
                "reader": reader,
                **settings,
                "bm25s_version": bm25s.__version__,
                "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            }
            (tmp / METADATA_FILE).write_text(json.dumps(metadata, indent=2) + "\n")
            for name, content in (extra_files() if extra_files else {}).items():
                (tmp / name).write_text(content)
            publish(tmp, out_dir)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        log.say(f"index written to {out_dir}")
        return cls(out_dir, retriever, PassageStore(out_dir, lazy=True), metadata)

    @classmethod
    def from_corpus(
        cls,
        corpus_path: str | Path,
        out_dir: str | Path,
        *,
        fmt: str | None = None,
        max_words: int | None = 100,
        **options: Any,
    ) -> BM25Index:
        """Read a corpus file (see :func:`read_corpus`) and :meth:`build` an index of it."""
        passages, reader = corpus_passages(corpus_path, fmt, max_words)
        return cls.build(passages, out_dir, corpus_path=corpus_path, reader=reader, **options)

    # -- loading -------------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        path: str | Path,
        mmap: bool = True,
        corpus_path: str | Path | None = None,
        n_threads: int = 0,
    ) -> BM25Index:
        """Open an index. With ``mmap=True`` the matrices and texts stay on disk.

        If ``corpus_path`` is given, its size and sha256 are checked against the ones the
        index was built from, and :class:`StaleIndexError` is raised when they differ.
        """
        path = Path(path)
        meta_file = path / METADATA_FILE
        if not meta_file.is_file():
            raise FileNotFoundError(f"{path} is not a searchain BM25 index (no {METADATA_FILE})")
        metadata = json.loads(meta_file.read_text())
        if metadata.get("format_version") != FORMAT_VERSION:
            raise StaleIndexError(
                f"{path} has index format {metadata.get('format_version')!r}, this version of "
                f"searchain reads format {FORMAT_VERSION}; rebuild the index"
            )
        if corpus_path is not None:
            check_fresh(path, metadata.get("corpus"), Path(corpus_path))
        retriever = bm25s.BM25.load(path, mmap=mmap, load_corpus=False, show_progress=False)
        return cls(path, retriever, PassageStore(path, lazy=mmap), metadata, n_threads)

    # -- searching -----------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._store)

    def close(self) -> None:
        """Release the passage file (the index stays usable through a new :meth:`load`)."""
        self._store.close()

    def rows(self, start: int, end: int) -> list[Passage]:
        """The stored passages at rows ``start`` to ``end - 1``, in index order."""
        return self._store.get(range(max(0, start), min(end, len(self))))

    def search(self, query: str, k: int = 5) -> list[Passage]:
        """The ``k`` best passages for ``query``, best first, with their BM25 ``score``."""
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: list[str], k: int = 5) -> list[list[Passage]]:
        """:meth:`search` for many queries in one bm25s call (faster than a loop)."""
        results: list[list[Passage]] = [[] for _ in queries]
        k = min(k, len(self))
        token_ids = [self._tokenize(q) for q in queries]
        # Queries with no indexed term match nothing; bm25s would return arbitrary rows.
        todo = [i for i, ids in enumerate(token_ids) if ids]
        if k <= 0 or not todo:
            return results
        # Equal scores are ordered by corpus position, not by how numpy's partial sort
        # happens to leave them (which changed between numpy releases): a few rows past k
        # are fetched so that a tie across the k-th place is decided the same way.
        fetched = min(k + TIE_MARGIN, len(self))
        rows, scores = self._bm25.retrieve(
            [token_ids[i] for i in todo],
            k=fetched,
            show_progress=False,
            n_threads=self.n_threads,
        )
        ranked = [
            sorted(zip(row, score_row, strict=True), key=lambda rs: (-rs[1], rs[0]))[:k]
            for row, score_row in zip(rows.tolist(), scores.tolist(), strict=True)
        ]
        passages = iter(self._store.get([r for best in ranked for r, _ in best]))
        for i, best in zip(todo, ranked, strict=True):
            hits = results[i]
            for _, score in best:
                p = next(passages)
                if score > 0:  # rows past the last matching document score 0
                    p.score = score
                    hits.append(p)
        return results


def _write_index(
    directory: Path, passages: Iterable[Passage], settings: dict[str, Any], log: Progress
) -> bm25s.BM25:
    """Tokenize, store and index ``passages`` into ``directory`` in a single pass."""
    tok, bm25 = settings["tokenizer"], settings["bm25"]
    tokenizer = bm25s.tokenization.Tokenizer(
        lower=tok["lower"],
        splitter=tok["pattern"],
        stopwords=tok["stopwords"] or [],
        stemmer=Stemmer.Stemmer(tok["stemmer"]) if tok["stemmer"] else None,
    )
    writer = StoreWriter(directory)
    try:
        texts = log.count(writer.tee_texts(passages, tok["index_title"]), "passages read")
        # bm25s's streaming tokenizer caches word -> id, so each distinct word is stemmed
        # once; only the id lists are kept, never the texts.
        token_ids = list(tokenizer.streaming_tokenize(texts, update_vocab=True))
    finally:
        writer.close()
    if not token_ids:
        raise ValueError("cannot build an index from an empty corpus")
    vocab = tokenizer.get_vocab_dict()
    del tokenizer  # its word-level dictionaries are not needed at query time
    log.say(f"{len(token_ids):,} passages, {len(vocab):,} terms; building BM25 matrix")
    retriever = bm25s.BM25(**bm25)
    # bm25s's own tqdm bars would print into a CLI's output: our progress lines suffice.
    retriever.index((token_ids, vocab), show_progress=False)
    del token_ids
    retriever.save(directory, show_progress=False)
    return retriever


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building.

    Indexing allocates millions of small, acyclic, long-lived objects (one list of term ids
    per passage); each full collection rescans all of them, which costs ~10-15% of the build
    time for nothing, since nothing here forms reference cycles.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _query_tokenizer(settings: dict[str, Any], vocab: dict[str, int]) -> Callable[[str], list[int]]:
    """Tokenize a query exactly as the corpus was (split, stopwords, stem) into term ids."""
    split = re.compile(settings["pattern"]).findall
    lower = settings["lower"]
    stop = set(bm25s.tokenization.Tokenizer(stopwords=settings["stopwords"] or []).stopwords)
    stem = Stemmer.Stemmer(settings["stemmer"]).stemWords if settings["stemmer"] else None
    # PyStemmer objects are not thread-safe (they keep a cache), and a server may search
    # from several threads; the lock costs well under a microsecond per query.
    lock = threading.Lock()

    def tokenize(query: str) -> list[int]:
        words = [w for w in split(query.lower() if lower else query) if w not in stop]
        if stem:
            with lock:
                words = stem(words)
        return [vocab[t] for t in words if t in vocab]

    return tokenize
