"""What the commands share: the consoles, the error exit, the option types and opening a
retriever (the demo indexes are built on first use, so that shows a spinner)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from searchain.redaction import redact_text

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
ReuseOpt = Annotated[
    Path | None,
    typer.Option(
        help="Start this new run with another run's finished records of the methods whose "
        "settings did not change (same data, items, model, retriever, index): after changing "
        "one method's setting, only that method runs again.",
        show_default=False,
    ),
]
ToolsOpt = Annotated[
    Path | None,
    typer.Option(
        help="REBEL tools file (YAML/TOML/JSON): built-in search and calculator, HTTP APIs. "
        "Default: a search tool over the retriever.",
        show_default=False,
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


NliOpt = Annotated[
    str | None,
    typer.Option(
        help="NLI judge: [bold]llm[/] (the LLM answers Yes/No), the path of a local Hugging "
        "Face NLI model (TRUE T5, DeBERTa/RoBERTa MNLI), or [bold]none[/]. Think&Cite's R_a; "
        "in eval, also ALCE citation recall/precision and ELI5 claim recall (ALCE datasets: "
        "llm unless given)."
    ),
]
RewardModelOpt = Annotated[
    str | None,
    typer.Option(
        "--reward-model",
        help="Think&Cite's R_g reward model π: an embedded model name, a GGUF file, "
        "openai:MODEL@BASE_URL or policy (default: qwen2.5-coder-1.5b).",
    ),
]
RewardReferenceOpt = Annotated[
    str | None,
    typer.Option(
        "--reward-reference",
        "--reference",
        help="Think&Cite's R_g reference model π_ref: the same kinds, or none (R_g off: R_a "
        "only, said in the trace; default: qwen2.5-coder-0.5b).",
    ),
]


def fail(message: str, code: int = 1) -> None:
    """Print the error and exit with ``code`` (raises :class:`typer.Exit`, never returns)."""
    # soft_wrap: the terminal wraps a long message, Rich does not break it into lines of
    # its own (which split words of the message at the console width, e.g. in logs and tests)
    # An error may quote a postgresql:// URL or a key: masked like everything written out.
    err.print(f"[bold red]error:[/] {escape(redact_text(message))}", soft_wrap=True)
    raise typer.Exit(code)


def opening_status(spec: Any) -> Any:
    """A spinner while a demo index is built on first use (it takes a while once)."""
    base = spec.retriever.split("+")[0]  # "hybrid+parts": the indexes of "hybrid"
    demo = base in ("bm25", "hybrid") and spec.index is None
    demo = demo or (base in ("dense", "hybrid") and spec.dense_index is None)
    if demo and spec.needs_retriever():
        return err.status("Opening the index (demo indexes are built on first use)...")
    return contextlib.nullcontext()


def open_retriever(
    spec: str, index: str | Path | None, dense_index: str | Path | None, llm: object = None
) -> object:
    """The retriever ``--retriever spec`` names, or an error exit saying why it cannot open."""
    from searchain.retrieval import factory

    base = spec.split("+")[0]  # "hybrid+parts": the indexes of "hybrid"
    needs_bm25 = base in ("bm25", "hybrid") and index is None
    needs_dense = base in ("dense", "hybrid") and dense_index is None
    demo = needs_bm25 or needs_dense
    try:
        with (
            err.status("Opening the index (demo indexes are built on first use)...")
            if demo
            else contextlib.nullcontext()
        ):
            return factory.open_retriever(spec, index=index, dense_index=dense_index, llm=llm)
    except (FileNotFoundError, ValueError, RuntimeError, ImportError, ConnectionError) as e:
        fail(str(e))
    raise AssertionError("unreachable")
