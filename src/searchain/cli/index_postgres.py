"""``searchain index ... --out postgresql://...``: documents or a corpus file into a
PostgreSQL collection (a file, or a batch of a corpus, per transaction)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.markup import escape

from searchain.cli.common import console, err, fail
from searchain.retrieval.documents.build import ReadOptions


def index_postgres(
    paths: list[Path],
    corpus: Path | None,
    url: str,
    read: ReadOptions,
    options: dict[str, Any],
    json_out: bool,
) -> None:
    """Index ``paths`` (or the one ``corpus`` file) into the collection ``url`` names;
    ``options``: kind (bm25, or dense: vectors too), model, fmt, max_words."""
    from searchain.retrieval import CorpusError
    from searchain.retrieval.documents import DocumentIndexError
    from searchain.retrieval.postgres import index_corpus, index_folders, parse_target

    dense = options["kind"] == "dense"
    try:
        target = parse_target(url)
        if corpus is not None:
            stats = index_corpus(
                corpus,
                target,
                fmt=options["fmt"],
                max_words=options["max_words"],
                dense=dense,
                model_path=options["model"],
                show_progress=not json_out,
            )
            files: dict[str, Any] = {}
            passages, summary = stats["passages"], _batches(stats)
        else:
            if options["fmt"]:
                fail("--format names a corpus file's format; folders are detected by extension")
            report = index_folders(
                list(paths), target, dense=dense, model_path=options["model"], **asdict(read)
            )
            files, passages, summary = report.to_dict(), report.passages, report.summary()
            for name, why in sorted(report.skipped.items()):
                err.print(f"[yellow]skipped[/] {escape(name)}: {escape(why)}")
    except (
        CorpusError,
        DocumentIndexError,
        FileNotFoundError,
        ValueError,
        ConnectionError,
        ImportError,
    ) as e:
        fail(str(e))
    kind = "postgres" + ("+dense" if dense else "")
    if json_out:
        out = {"index": target.display, "kind": kind, "passages": passages, "files": files}
        print(json.dumps(out, ensure_ascii=False))
        return
    console.print(
        f"[green]Indexed into[/] {escape(target.display)} ({kind}): "
        f"{passages:,} passages in the collection; {escape(summary)}"
    )


def _batches(stats: dict[str, Any]) -> str:
    return (
        f"{stats['batches_written']} batches written, {stats['batches_kept']} unchanged, "
        f"{stats['batches_removed']} removed ({stats['seconds']:.1f} s)"
    )
