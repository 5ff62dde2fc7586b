"""``searchain index`` (build a BM25 or dense index of a corpus) and ``searchain search``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from searchain.cli.common import (
    DenseIndexOpt,
    IndexOpt,
    JsonOpt,
    RetrieverOpt,
    console,
    fail,
    open_retriever,
)
from searchain.cli.index_documents import _dense_documents, _index_documents
from searchain.types import Passage

CORPUS_SUFFIXES = (".jsonl", ".json", ".tsv", ".gz")


def index(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Folders and files of documents (.md .rst .txt .html .pdf .docx, .csv/.parquet "
            "with --text-column), or one corpus file: JSONL {id,title,text}, FlashRAG JSONL "
            "{id,contents}, DPR TSV, JSON (e.g. MuSiQue), {title: \\[sentences]} JSON, HotpotQA; "
            "optionally .gz.",
            show_default=False,
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory to write the index to.")],
    include: Annotated[
        list[str] | None,
        typer.Option(
            "--include",
            help="Folders: index only files matching this glob (repeatable), e.g. '*.md' or "
            "'guides/*.pdf'; also admits files of other extensions, read as text.",
            show_default=False,
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude",
            help="Folders: skip files or folders matching this glob "
            "(repeatable). Hidden ones (.git) are always skipped.",
            show_default=False,
        ),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            help="Fail on the first file that cannot be read, instead of skipping and naming it."
        ),
    ] = False,
    text_column: Annotated[
        str, typer.Option(help="CSV/Parquet: the column holding each row's text.")
    ] = "text",
    title_column: Annotated[
        str | None,
        typer.Option(
            help="CSV/Parquet: a title column (default: 'title' if any).", show_default=False
        ),
    ] = None,
    id_column: Annotated[
        str | None,
        typer.Option(help="CSV/Parquet: an id column (default: 'id' if any).", show_default=False),
    ] = None,
    max_file_mb: Annotated[
        float, typer.Option(help="Documents: skip files larger than this (MB).")
    ] = 100,
    timeout: Annotated[
        float,
        typer.Option(
            help="Documents: seconds one file may take to parse, then it is "
            "skipped (parsers run in bounded worker processes)."
        ),
    ] = 60,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="Corpus file format (default: detect). "
            "One of jsonl, flashrag, tsv, json (MuSiQue's corpus is json), title-sentences, "
            "hotpotqa.",
        ),
    ] = None,
    max_words: Annotated[
        int,
        typer.Option(
            help="Split documents into passages of about this many words (0 keeps them whole). "
            "Documents are split along their structure first: headings, paragraphs, pages."
        ),
    ] = 100,
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            help="bm25 (sparse, seconds) or dense (MiniLM sentence embeddings + FAISS; needs "
            "the dense extra; minutes per 10k passages on a laptop CPU; folders are read afresh "
            "each time). An interrupted dense build resumes where it stopped when run again with "
            "the same --out.",
        ),
    ] = "bm25",
    index_type: Annotated[
        str,
        typer.Option(
            "--index-type",
            help="Dense only: flat (exact; fine up to ~1M passages), hnsw or ivf (approximate, "
            "for bigger corpora), or any FAISS index_factory string.",
        ),
    ] = "flat",
    model: Annotated[
        Path | None,
        typer.Option(
            "--model",
            help="Dense only: a local sentence-transformers model directory "
            "(default: the packaged all-MiniLM-L6-v2).",
        ),
    ] = None,
    batch_size: Annotated[int, typer.Option(help="Dense only: passages per encode batch.")] = 64,
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

    Then: searchain ask "..." --index my-index
    """
    from searchain.retrieval import BM25Index, CorpusError

    if kind not in ("bm25", "dense"):
        fail(f"--kind must be bm25 or dense, not {kind!r}")
    for p in paths:
        if not p.exists():
            fail(f"{p}: no such file or folder")
    corpus = paths[0] if len(paths) == 1 and paths[0].is_file() else None
    if corpus is not None and not (fmt or corpus.name.lower().endswith(CORPUS_SUFFIXES)):
        corpus = None  # a single document (.md, .pdf, ...): indexed as a document
    if corpus is None:
        if fmt:
            fail(
                "--format names a corpus file's format; folders and documents are detected "
                "by extension"
            )
        from searchain.retrieval.documents import ReadOptions

        read = ReadOptions(
            include=include, exclude=exclude, max_words=max_words or None, strict=strict,
            columns={"text": text_column, "title": title_column, "id": id_column},
            max_file_mb=max_file_mb, timeout_s=timeout,
        )  # fmt: skip
        if kind == "dense":
            _dense_documents(paths, out, read, index_type, model, batch_size, json_out)
        else:
            _index_documents(paths, out, read, json_out)
        return
    try:
        if kind == "dense":
            try:
                from searchain.retrieval import DenseIndex
            except ImportError as e:
                fail(f"dense indexing needs the dense extra (pip install 'searchain[dense]'): {e}")
            idx = DenseIndex.from_corpus(
                corpus,
                out,
                fmt=fmt,
                max_words=max_words or None,
                index_type=index_type,
                model_path=model,
                batch_size=batch_size,
                show_progress=not json_out,
            )
        else:
            idx = BM25Index.from_corpus(
                corpus, out, fmt=fmt, max_words=max_words or None, show_progress=not json_out
            )
    except (CorpusError, FileExistsError, ValueError) as e:
        fail(str(e))
    if json_out:
        print(json.dumps({"index": str(out), "kind": kind, "passages": len(idx)}))
    else:
        console.print(f"[green]Indexed {len(idx):,} passages ({kind}) into[/] {out}")


def search(
    query: Annotated[str, typer.Argument(help="What to search for.")],
    index: IndexOpt = None,
    retriever: RetrieverOpt = "bm25",
    dense_index: DenseIndexOpt = None,
    k: Annotated[int, typer.Option("-k", help="Number of passages.")] = 5,
    json_out: JsonOpt = False,
) -> None:
    """Search and show the top passages with their scores (BM25, cosine or fused)."""
    idx = open_retriever(retriever, index, dense_index)
    hits: list[Passage] = idx.search(query, k=k)  # type: ignore[attr-defined]
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
