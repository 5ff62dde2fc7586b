"""The life of an index directory, the same for a BM25 and a dense index.

A build writes into a temporary sibling and :func:`publish` swaps it in whole, so a failed
build leaves the previous index as it was; :func:`check_replaceable` refuses to replace a
directory that holds something else; ``metadata.json`` records the corpus an index was built
from, and :func:`check_fresh` compares a corpus file with it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchain.retrieval.corpus import corpus_fingerprint, detect_format, read_corpus
from searchain.types import Passage

METADATA_FILE = "metadata.json"
TOKEN_PATTERN = r"(?u)\b\w\w+\b"  # bm25s's default, same as scikit-learn's CountVectorizer


class StaleIndexError(RuntimeError):
    """The index no longer matches its corpus (or this version of searchain): rebuild it."""


def corpus_passages(
    corpus_path: str | Path, fmt: str | None, max_words: int | None
) -> tuple[Iterator[Passage], dict[str, Any]]:
    """The passages of a corpus file (see :func:`read_corpus`), and the ``reader`` an index
    of them records: how they were read (format, max_words)."""
    fmt = fmt or detect_format(corpus_path)
    passages = read_corpus(corpus_path, fmt, max_words=max_words)
    reader = {"fmt": fmt, "max_words": None if fmt == "hotpotqa" else max_words}
    return passages, reader


def check_fresh(path: Path, recorded: dict[str, Any] | None, corpus_path: Path) -> None:
    """Raise :class:`StaleIndexError` unless ``corpus_path`` is the corpus the index at
    ``path`` recorded (``recorded``: its metadata's fingerprint)."""
    if recorded is None:
        raise StaleIndexError(
            f"{path} records no corpus fingerprint, so {corpus_path} "
            "cannot be checked against it; rebuild the index from that file"
        )
    size = corpus_path.stat().st_size
    if size != recorded["size"]:
        raise StaleIndexError(
            f"{path} is stale: {corpus_path} is {size:,} bytes but the index was built from "
            f"{recorded['size']:,} bytes ({recorded['path']}); rebuild the index"
        )
    # Same size: only the content hash can tell (a corrected typo keeps the size).
    if corpus_fingerprint(corpus_path)["sha256"] != recorded["sha256"]:
        raise StaleIndexError(
            f"{path} is stale: {corpus_path} has changed since the index was built "
            "(sha256 differs); rebuild the index"
        )


def check_replaceable(out_dir: Path) -> None:
    """Refuse to replace a directory that holds something other than an index."""
    if not out_dir.exists() or (out_dir / METADATA_FILE).is_file():
        return
    if not out_dir.is_dir() or any(out_dir.iterdir()):
        raise FileExistsError(f"{out_dir} exists and is not a searchain index; not replacing it")


def publish(tmp: Path, out_dir: Path) -> None:
    """Move the finished index into place, swapping out any previous one."""
    if not out_dir.exists():
        os.rename(tmp, out_dir)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
    os.rename(out_dir, old / "index")
    try:
        os.rename(tmp, out_dir)
    except BaseException:
        os.rename(old / "index", out_dir)
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)


class Progress:
    """Minimal progress lines on stderr (bm25s adds bars of its own when tqdm is installed)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.t0 = time.perf_counter()

    def say(self, message: str) -> None:
        if self.enabled:
            print(f"[{time.perf_counter() - self.t0:7.1f}s] {message}", file=sys.stderr)

    def count(self, items: Iterator[str], what: str, every: int = 100_000) -> Iterator[str]:
        if not self.enabled:
            return items
        return self._counted(items, what, every)

    def _counted(self, items: Iterator[str], what: str, every: int) -> Iterator[str]:
        n = 0
        for item in items:
            n += 1
            if n % every == 0:
                self.say(f"{n:,} {what}")
            yield item
        if n % every:
            self.say(f"{n:,} {what}")
