"""The bundled demo corpus (pooled HotpotQA paragraphs) and its lazily built BM25 index.

The index is built on first use into the user cache directory and reused afterwards. Its
directory name carries a hash of the corpus file and the index format, so an upgraded corpus
or format gets a fresh directory instead of a stale index.
"""

from __future__ import annotations

import hashlib
import shutil
from importlib import resources
from pathlib import Path

from searchain.paths import cache_root
from searchain.retrieval.bm25 import FORMAT_VERSION, BM25Index, StaleIndexError

DEMO_CORPUS = "hotpotqa_demo_corpus.jsonl.gz"


def demo_corpus_path() -> Path:
    """Path of the bundled demo corpus (4,858 HotpotQA paragraphs, ``{id,title,text}``)."""
    resource = resources.files("searchain") / "data" / DEMO_CORPUS
    path = Path(str(resource))
    if not path.is_file():  # e.g. a zipped install; we never ship one, so say so plainly
        raise FileNotFoundError(f"demo corpus not found at {path}; is searchain installed fully?")
    return path


def default_index(cache_dir: str | Path | None = None, show_progress: bool = False) -> BM25Index:
    """The demo BM25 index, built on first use (about a second) and cached."""
    corpus = demo_corpus_path()
    digest = hashlib.sha256(corpus.read_bytes())
    digest.update(f"format={FORMAT_VERSION}".encode())
    index_dir = cache_root(cache_dir) / "indexes" / f"demo-{digest.hexdigest()[:12]}"
    if (index_dir / "metadata.json").is_file():
        try:
            return BM25Index.load(index_dir, mmap=True, corpus_path=corpus)
        except (StaleIndexError, OSError, ValueError, KeyError):
            # A damaged cache entry (half-deleted, edited) is rebuilt rather than fatal.
            shutil.rmtree(index_dir, ignore_errors=True)
    # Paragraphs are kept whole (max_words=None): they are HotpotQA's gold retrieval units.
    return BM25Index.from_corpus(
        corpus, index_dir, fmt="jsonl", max_words=None, show_progress=show_progress
    )
