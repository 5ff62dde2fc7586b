"""What the commands share: the consoles, the error exit, the option types and opening a
retriever (the demo indexes are built on first use, so that shows a spinner)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from searchain.redaction import redact_text

if TYPE_CHECKING:
    from searchain.llm import LLM
    from searchain.methods.assembly import Spec
    from searchain.retrieval.base import Retriever

console = Console()
err = Console(stderr=True)

# A str, not a Path: a Path would fold postgresql://host into postgresql:/host.
IndexOpt = Annotated[
    str | None,
    typer.Option(
        "--index",
        "-i",
        help="A BM25 index directory made by [bold]searchain index[/], or a "
        "postgresql://USER@HOST/DB?collection=NAME URL. Default: the demo corpus.",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON to stdout.")]
RetrieverOpt = Annotated[
    str,
    typer.Option(
        "--retriever",
        "-r",
        help="[bold]bm25[/], [bold]dense[/] (embeddings), [bold]hybrid[/] (rank fusion of both), "
        "each with [bold]+parts[/] (a question that asks two things searched part by part) "
        "and/or [bold]+bridge[/] (a second search with what the top passage adds; the default "
        "is bm25+parts+bridge, `eval`'s plain bm25), "
        "[bold]remote:URL[/] (a `searchain serve-index` or ColBERTv2 server) or "
        "[bold]llm-url[:OPTS][/] (the LLM names Wikipedia URLs; pages are fetched and ranked). "
        "OPTS: a mirror URL (`searchain mirror serve`) or key=value,... with base, m (1-10 URLs), "
        "shots (0-10 demos), ranker (bm25/dense), timeout, retries, cache=off; e.g. "
        "llm-url:base=http://127.0.0.1:8765,m=5,shots=0",
    ),
]
MethodOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-O",
        help="A method setting as KEY=VALUE, or METHOD.KEY=VALUE for one method; repeatable. "
        "Any setting `searchain settings METHOD` lists, e.g. -O thinkcite.n_children=2 "
        "-O max_reflections=3 -O seed=1 (Think&Cite), -O theta=-1.0 (SearChain), "
        "-O max_depth=2 (REBEL). Unknown names are errors.",
        show_default=False,
    ),
]
DenseIndexOpt = Annotated[
    str | None,
    typer.Option(help="A dense index directory (default: the demo corpus).", show_default=False),
]


def fail(message: str, code: int = 1) -> None:
    """Print the error and exit with ``code`` (raises :class:`typer.Exit`, never returns)."""
    # soft_wrap: the terminal wraps a long message, Rich does not break it into lines of
    # its own (which split words of the message at the console width, e.g. in logs and tests)
    # An error may quote a postgresql:// URL or a key: masked like everything written out.
    err.print(f"[bold red]error:[/] {escape(redact_text(message))}", soft_wrap=True)
    raise typer.Exit(code)


def opening_status(spec: Spec) -> contextlib.AbstractContextManager[object]:
    """A spinner while a demo index is built on first use (it takes a while once)."""
    base = spec.retriever.split("+")[0]  # "hybrid+parts": the indexes of "hybrid"
    demo = base in ("bm25", "hybrid") and spec.index is None
    demo = demo or (base in ("dense", "hybrid") and spec.dense_index is None)
    if demo and spec.needs_retriever():
        return err.status("Opening the index (demo indexes are built on first use)...")
    return contextlib.nullcontext()


def open_retriever_or_fail(spec: Spec, llm: LLM | None = None) -> Retriever:
    """The retriever the spec names (LLM-URL asks ``llm`` for its URLs), or an error exit
    saying why it cannot open."""
    from searchain.methods.assembly import open_retriever

    try:
        with opening_status(spec):
            return open_retriever(spec, llm)
    except (FileNotFoundError, ValueError, RuntimeError, ImportError, ConnectionError) as e:
        fail(str(e))
    raise AssertionError("unreachable")
