"""The arguments and options of ``searchain index``, declared once: what to read, how to
read documents (folders), how to read a corpus file, and which index to build."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# What to read and where to write.
PathsArg = Annotated[
    list[Path],
    typer.Argument(
        help="Folders and files of documents (.md .rst .txt .html .pdf .docx, .csv/.parquet "
        "with --text-column), or one corpus file: JSONL {id,title,text}, FlashRAG JSONL "
        "{id,contents}, DPR TSV, JSON (e.g. MuSiQue), {title: \\[sentences]} JSON, HotpotQA; "
        "optionally .gz.",
        show_default=False,
    ),
]
OutOpt = Annotated[
    str,
    typer.Option(
        "--out",
        "-o",
        help="Directory to write the index to, or postgresql://USER@HOST/DB?collection=NAME.",
    ),
]

# Folders of documents: which files, and how they are read.
IncludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--include",
        help="Folders: index only files matching this glob (repeatable), e.g. '*.md' or "
        "'guides/*.pdf'; also admits files of other extensions, read as text.",
        show_default=False,
    ),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        help="Folders: skip files or folders matching this glob "
        "(repeatable). Hidden ones (.git) are always skipped.",
        show_default=False,
    ),
]
StrictOpt = Annotated[
    bool,
    typer.Option(
        help="Fail on the first file that cannot be read, instead of skipping and naming it."
    ),
]
TextColumnOpt = Annotated[
    str, typer.Option(help="CSV/Parquet: the column holding each row's text.")
]
TitleColumnOpt = Annotated[
    str | None,
    typer.Option(help="CSV/Parquet: a title column (default: 'title' if any).", show_default=False),
]
IdColumnOpt = Annotated[
    str | None,
    typer.Option(help="CSV/Parquet: an id column (default: 'id' if any).", show_default=False),
]
MaxFileMbOpt = Annotated[float, typer.Option(help="Documents: skip files larger than this (MB).")]
TimeoutOpt = Annotated[
    float,
    typer.Option(
        help="Documents: seconds one file may take to parse, then it is "
        "skipped (parsers run in bounded worker processes)."
    ),
]

# A corpus file, and how documents of either kind are split into passages.
FormatOpt = Annotated[
    str | None,
    typer.Option(
        "--format",
        help="Corpus file format (default: detect). "
        "One of jsonl, flashrag, tsv, json (MuSiQue's corpus is json), title-sentences, "
        "hotpotqa.",
    ),
]
MaxWordsOpt = Annotated[
    int,
    typer.Option(
        help="Split documents into passages of about this many words (0 keeps them whole). "
        "Documents are split along their structure first: headings, paragraphs, pages."
    ),
]

# The index built: BM25 or dense, and the dense index's settings.
KindOpt = Annotated[
    str,
    typer.Option(
        "--kind",
        help="bm25 (sparse, seconds) or dense (nomic-embed-text-v1.5 embeddings by llama.cpp "
        "+ FAISS; needs the dense extra; a few passages a second on a 2-core CPU, with a "
        "progress bar; folders are read afresh each time). An interrupted dense build resumes "
        "where it stopped when run again with the same --out.",
    ),
]
IndexTypeOpt = Annotated[
    str,
    typer.Option(
        "--index-type",
        help="Dense only: flat (exact; fine up to ~1M passages), hnsw or ivf (approximate, "
        "for bigger corpora), or any FAISS index_factory string.",
    ),
]
ModelOpt = Annotated[
    Path | None,
    typer.Option(
        "--model",
        help="Dense only: a GGUF embedding model file, or a sentence-transformers model "
        "directory (needs scripts/install.sh hf) (default: the packaged nomic-embed-text-v1.5).",
    ),
]
BatchSizeOpt = Annotated[int, typer.Option(help="Dense only: passages per encode batch.")]
