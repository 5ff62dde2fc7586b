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
from searchain.types import Passage


def index(
    corpus: Annotated[
        Path,
        typer.Argument(
            help="Corpus file: JSONL {id,title,text}, FlashRAG "
            "JSONL {id,contents}, DPR TSV, JSON (e.g. MuSiQue), HotpotQA; "
            "optionally .gz.",
            exists=True,
            dir_okay=False,
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory to write the index to.")],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="Corpus format (default: detect). "
            "One of jsonl, flashrag, tsv, json (MuSiQue's corpus is json), hotpotqa.",
        ),
    ] = None,
    max_words: Annotated[
        int,
        typer.Option(
            help="Split documents into passages of about this many words (0 keeps them whole)."
        ),
    ] = 100,
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            help="bm25 (sparse, seconds) or dense (MiniLM sentence embeddings + FAISS; needs "
            "the dense extra; minutes per 10k passages on a laptop CPU). An interrupted dense "
            "build resumes where it stopped when run again with the same --out.",
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
    """Build a search index of a corpus: BM25 (default) or dense. Malformed lines are reported
    with file and line, and nothing is written in that case.

    Examples:

      searchain index corpus.jsonl -o idx/bm25

      searchain index corpus.jsonl -o idx/dense --kind dense --index-type hnsw

    Then: searchain ask "..." --index idx/bm25 --dense-index idx/dense --retriever hybrid
    """
    from searchain.retrieval import BM25Index, CorpusError

    if kind not in ("bm25", "dense"):
        fail(f"--kind must be bm25 or dense, not {kind!r}")
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
