"""``searchain index FOLDER...``: the document half of the index command, with its progress
bar and its report of what changed."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from searchain.cli.common import console, err, fail
from searchain.retrieval.documents.build import ReadOptions

if TYPE_CHECKING:
    from searchain.retrieval import DenseIndex


def _index_documents(paths: list[Path], out: Path, read: ReadOptions, json_out: bool) -> None:
    from searchain.retrieval.documents import DocumentIndexError, index_documents
    from searchain.retrieval.documents import Progress as Callbacks

    bar = Progress(
        TextColumn("[bold]Indexing[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files · {task.fields[passages]:,} passages"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=json_out,
    )
    task = bar.add_task("files", total=None, passages=0)
    counted = {"passages": 0}

    def file_done(rel: str, n: int) -> None:
        counted["passages"] += n
        bar.update(task, advance=1, passages=counted["passages"])

    callbacks = Callbacks(total=lambda n: bar.update(task, total=n), file_done=file_done)
    try:
        with bar:
            idx, report = index_documents(paths, out, progress=callbacks, **asdict(read))
    except (DocumentIndexError, FileExistsError, FileNotFoundError) as e:
        fail(str(e))
    if json_out:
        print(
            json.dumps(
                {
                    "index": str(out),
                    "kind": "bm25",
                    "passages": len(idx),
                    "files": report.to_dict(),
                },
                ensure_ascii=False,
            )
        )
        return
    for name, why in sorted(report.skipped.items()):
        err.print(f"[yellow]skipped[/] {escape(name)}: {escape(why)}")
    console.print(
        f"[green]Indexed {len(idx):,} passages into[/] {escape(str(out))}: "
        f"{report.summary()} ({report.seconds:.1f} s)"
    )


def dense_index_class() -> type[DenseIndex]:
    """``DenseIndex``, or a clear failure when the dense extra is not installed."""
    try:
        from searchain.retrieval import DenseIndex
    except ImportError as e:
        fail(f"dense indexing needs the dense extra (pip install 'searchain[dense]'): {e}")
    return DenseIndex


def _dense_documents(
    paths: list[Path],
    out: Path,
    read: ReadOptions,
    index_type: str,
    model: Path | None,
    batch_size: int,
    json_out: bool,
) -> None:
    """``--kind dense`` over folders: every file read afresh (seconds), and only passages
    whose text the index being replaced did not encode are encoded (the hours)."""
    from searchain.retrieval.documents import DocumentIndexError, read_document_passages

    dense_index = dense_index_class()
    try:
        passages, report = read_document_passages(paths, **asdict(read))
        # Read first (seconds), so the encoding bar knows its total and shows the time left.
        idx = dense_index.build(
            list(passages),
            out,
            index_type=index_type,
            model_path=model,
            batch_size=batch_size,
            show_progress=not json_out,
            reader={"fmt": "documents", "max_words": read.max_words},
        )
    except (DocumentIndexError, FileExistsError, FileNotFoundError, ValueError) as e:
        fail(str(e))
    if json_out:
        print(
            json.dumps(
                {
                    "index": str(out),
                    "kind": "dense",
                    "passages": len(idx),
                    "files": report.to_dict(),
                },
                ensure_ascii=False,
            )
        )
        return
    for name, why in sorted(report.skipped.items()):
        err.print(f"[yellow]skipped[/] {escape(name)}: {escape(why)}")
    console.print(
        f"[green]Indexed {len(idx):,} passages (dense) into[/] {escape(str(out))}: "
        f"{len(report.read)} files read, {len(report.skipped)} skipped; "
        f"{idx.build_stats.get('rows_encoded', 0):,} passages encoded, "
        f"{idx.build_stats.get('rows_unchanged', 0):,} unchanged since the last build"
    )
