"""Index a corpus file (JSONL, DPR TSV, HotpotQA, ...) into a collection, in batches.

Each batch of ``batch_rows`` passages is a unit named ``<file name>#<batch number>`` whose
entry holds its content digest: a re-run (after a change, or after the indexer was killed)
skips the batches already committed with the same content, replaces the others and removes
batches past the corpus's new end. Other corpora in the same collection are left alone.
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path
from typing import Any

from searchain.retrieval.corpus import detect_format, read_corpus
from searchain.retrieval.postgres.store import read_units
from searchain.retrieval.postgres.target import Target
from searchain.retrieval.postgres.writer import CollectionWriter, batch_digest

BATCH_ROWS = 2000


def index_corpus(
    corpus_path: str | Path,
    target: Target,
    *,
    fmt: str | None = None,
    max_words: int | None = 100,
    dense: bool = False,
    model_path: str | Path | None = None,
    batch_rows: int = BATCH_ROWS,
    show_progress: bool = False,
) -> dict[str, Any]:
    """Index ``corpus_path`` into ``target``: counts of passages and batches written/kept."""
    corpus_path = Path(corpus_path)
    fmt = fmt or detect_format(corpus_path)
    passages = read_corpus(corpus_path, fmt, max_words=max_words)
    t0 = time.perf_counter()
    stats = {"passages": 0, "batches_written": 0, "batches_kept": 0, "batches_removed": 0}
    with CollectionWriter(target, dense=dense, model_path=model_path) as writer:
        old = {
            u: e
            for u, e in read_units(writer.conn, writer.collection).items()
            if u.startswith(f"{corpus_path.name}#")
        }
        seen = set()
        for number in itertools.count():
            batch = list(itertools.islice(passages, batch_rows))
            if not batch:
                break
            unit = f"{corpus_path.name}#{number:06d}"
            seen.add(unit)
            entry = {"sha256": batch_digest(batch), "passages": len(batch)}
            stats["passages"] += len(batch)
            if old.get(unit, {}).get("sha256") == entry["sha256"]:
                stats["batches_kept"] += 1
                continue
            writer.put(unit, entry, batch)
            stats["batches_written"] += 1
            if show_progress:
                print(
                    f"[{time.perf_counter() - t0:7.1f}s] {stats['passages']:,} passages",
                    file=sys.stderr,
                )
        for unit in sorted(set(old) - seen):
            writer.put(unit, None, [])
            stats["batches_removed"] += 1
    if not stats["passages"]:
        raise ValueError("cannot build an index from an empty corpus")
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    return stats
