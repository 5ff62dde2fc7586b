"""``searchain index`` (a BM25 or dense index of folders, documents or a corpus file, with
its progress bar and its report of what changed) and ``searchain search``."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from searchain.cli.common import (
    DenseIndexOpt,
    IndexOpt,
    JsonOpt,
    RetrieverOpt,
    console,
    err,
    fail,
    open_retriever_or_fail,
)
from searchain.cli.index_options import (
    BatchSizeOpt,
    ExcludeOpt,
    FormatOpt,
    IdColumnOpt,
    IncludeOpt,
    IndexTypeOpt,
    KindOpt,
    MaxFileMbOpt,
    MaxWordsOpt,
    ModelOpt,
    OutOpt,
    PathsArg,
    StrictOpt,
    TextColumnOpt,
    TimeoutOpt,
    TitleColumnOpt,
)
from searchain.cli.index_postgres import index_postgres
from searchain.methods.assembly import Spec
from searchain.retrieval.documents.build import ReadOptions
from searchain.retrieval.factory import DEFAULT_RETRIEVER
from searchain.retrieval.postgres.target import is_postgres_url
from searchain.types import Passage

if TYPE_CHECKING:
    from searchain.retrieval import DenseIndex
    from searchain.retrieval.documents import IndexReport

CORPUS_SUFFIXES = (".jsonl", ".json", ".tsv", ".gz")


def index(
    paths: PathsArg,
    out: OutOpt,
    include: IncludeOpt = None,
    exclude: ExcludeOpt = None,
    strict: StrictOpt = False,
    text_column: TextColumnOpt = "text",
    title_column: TitleColumnOpt = None,
    id_column: IdColumnOpt = None,
    max_file_mb: MaxFileMbOpt = 100,
    timeout: TimeoutOpt = 60,
    fmt: FormatOpt = None,
    max_words: MaxWordsOpt = 100,
    kind: KindOpt = "bm25",
    index_type: IndexTypeOpt = "flat",
    model: ModelOpt = None,
    batch_size: BatchSizeOpt = 64,
    json_out: JsonOpt = False,
) -> None:
    """Build a search index of your documents or of a corpus file.

    Folders are read recursively; each passage keeps its file, page, heading path and
    offsets, so answers cite [1] guide.pdf p. 12 · Installation. Indexing the same folders
    again into the same --out re-reads only added and changed files. Unreadable, encrypted,
    binary or oversized files are skipped and named (--strict: an error). A corpus file's
    malformed line is reported with file and line, and nothing is written in that case.

    Examples:

      searchain index ~/notes docs/ --out my-index --exclude 'drafts/*'

      searchain index corpus.jsonl -o idx/bm25

      searchain index corpus.jsonl -o idx/dense --kind dense --index-type hnsw

      searchain index docs/ -o 'postgresql://me@db/rag?collection=docs' --kind dense

    Then: searchain ask "..." --index my-index
    """
    _check_kind_and_paths(kind, paths)
    corpus = _corpus_file(paths, fmt)
    if is_postgres_url(out):
        options = {"max_words": max_words or None, "kind": kind, "model": model, "fmt": fmt}
        read = _read_options(include, exclude, strict, text_column, title_column, id_column)
        read.max_file_mb, read.timeout_s, read.max_words = max_file_mb, timeout, max_words or None
        index_postgres(paths, corpus, out, read, options, json_out)
        return
    if corpus is None:
        if fmt:
            fail(
                "--format names a corpus file's format; folders and documents are detected "
                "by extension"
            )
        read = _read_options(include, exclude, strict, text_column, title_column, id_column)
        read.max_file_mb, read.timeout_s, read.max_words = max_file_mb, timeout, max_words or None
        if kind == "dense":
            _dense_documents(paths, Path(out), read, index_type, model, batch_size, json_out)
        else:
            _index_documents(paths, Path(out), read, json_out)
        return
    passages = _index_corpus(
        corpus, Path(out), fmt, max_words or None, kind, index_type, model, batch_size, json_out
    )
    if json_out:
        print(json.dumps({"index": str(out), "kind": kind, "passages": passages}))
    else:
        console.print(f"[green]Indexed {passages:,} passages ({kind}) into[/] {out}")


def _read_options(
    include: list[str] | None,
    exclude: list[str] | None,
    strict: bool,
    text_column: str,
    title_column: str | None,
    id_column: str | None,
) -> ReadOptions:
    from searchain.retrieval.documents import ReadOptions

    return ReadOptions(
        include=include,
        exclude=exclude,
        strict=strict,
        columns={"text": text_column, "title": title_column, "id": id_column},
    )


def _check_kind_and_paths(kind: str, paths: list[Path]) -> None:
    """Fail on an unknown ``--kind`` or on a path that does not exist."""
    if kind not in ("bm25", "dense"):
        fail(f"--kind must be bm25 or dense, not {kind!r}")
    for p in paths:
        if not p.exists():
            fail(f"{p}: no such file or folder")


def _corpus_file(paths: list[Path], fmt: str | None) -> Path | None:
    """The one corpus file named (by ``--format`` or its suffix); ``None`` for folders and
    documents (a single .md, .pdf, ... is indexed as a document)."""
    corpus = paths[0] if len(paths) == 1 and paths[0].is_file() else None
    if corpus is not None and not (fmt or corpus.name.lower().endswith(CORPUS_SUFFIXES)):
        return None
    return corpus


def _index_documents(paths: list[Path], out: Path, read: ReadOptions, json_out: bool) -> None:
    """Folders and documents into a BM25 index: only added and changed files are read."""
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
    done = f"{report.summary()} ({report.seconds:.1f} s)"
    _report(out, "bm25", len(idx), report, done, json_out)


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
    done = (
        f"{len(report.read)} files read, {len(report.skipped)} skipped; "
        f"{idx.build_stats.get('rows_encoded', 0):,} passages encoded, "
        f"{idx.build_stats.get('rows_unchanged', 0):,} unchanged since the last build"
    )
    _report(out, "dense", len(idx), report, done, json_out)


def _report(
    out: Path, kind: str, passages: int, report: IndexReport, done: str, json_out: bool
) -> None:
    """What an index of folders holds and which files it read: JSON on stdout, or the
    skipped files and ``done`` (what the build did) after the passages it holds."""
    if json_out:
        summary = {"index": str(out), "kind": kind, "passages": passages}
        print(json.dumps({**summary, "files": report.to_dict()}, ensure_ascii=False))
        return
    for name, why in sorted(report.skipped.items()):
        err.print(f"[yellow]skipped[/] {escape(name)}: {escape(why)}")
    what = "passages" if kind == "bm25" else f"passages ({kind})"
    console.print(f"[green]Indexed {passages:,} {what} into[/] {escape(str(out))}: {done}")


def _index_corpus(
    corpus: Path,
    out: Path,
    fmt: str | None,
    max_words: int | None,
    kind: str,
    index_type: str,
    model: Path | None,
    batch_size: int,
    json_out: bool,
) -> int:
    """Index a corpus file (BM25 or dense) into ``out``: the number of passages."""
    from searchain.retrieval import BM25Index, CorpusError

    try:
        if kind == "dense":
            idx = dense_index_class().from_corpus(
                corpus,
                out,
                fmt=fmt,
                max_words=max_words,
                index_type=index_type,
                model_path=model,
                batch_size=batch_size,
                show_progress=not json_out,
            )
        else:
            idx = BM25Index.from_corpus(
                corpus, out, fmt=fmt, max_words=max_words, show_progress=not json_out
            )
    except (CorpusError, FileExistsError, ValueError) as e:
        fail(str(e))
    return len(idx)


def search(
    query: Annotated[str, typer.Argument(help="What to search for.")],
    index: IndexOpt = None,
    retriever: RetrieverOpt = DEFAULT_RETRIEVER,
    dense_index: DenseIndexOpt = None,
    k: Annotated[int, typer.Option("-k", help="Number of passages.")] = 5,
    json_out: JsonOpt = False,
) -> None:
    """Search and show the top passages with their scores (BM25, cosine or fused)."""
    idx = open_retriever_or_fail(Spec(retriever=retriever, index=index, dense_index=dense_index))
    hits: list[Passage] = idx.search(query, k=k)
    if json_out:
        print(json.dumps([p.to_dict() for p in hits], ensure_ascii=False, indent=2))
        return
    table = Table(show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("id / title")
    table.add_column("text")
    for i, p in enumerate(hits, 1):
        table.add_row(
            str(i), f"{p.score:.2f}", f"{p.id}\n[bold]{escape(p.title)}[/]", escape(p.text[:300])
        )
    console.print(table)
