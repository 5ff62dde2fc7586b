"""``searchain mirror serve``: an offline Wikipedia mirror for LLM-URL."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from searchain.cli.common import err, fail

mirror_app = typer.Typer(
    help="An offline Wikipedia mirror, so LLM-URL runs for real without internet.",
    no_args_is_help=True,
)


@mirror_app.command("serve")
def mirror_serve(
    corpus: Annotated[
        list[Path] | None,
        typer.Option(
            "--corpus",
            "-c",
            help="Corpus file(s), any format `searchain index` reads (repeat the option). "
            "Documents are grouped into one article per title. Default: the bundled HotpotQA "
            "pool. Add e.g. ../shared/data/wikipedia/physics_articles_10.json for long pages.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8765,
    allow_remote: Annotated[
        bool, typer.Option(help="Allow binding a non-loopback address.")
    ] = False,
    latency: Annotated[
        float, typer.Option(help="Seconds to wait before every response (simulate a far host).")
    ] = 0.0,
) -> None:
    """Serve a corpus as Wikipedia-style HTML at /wiki/<Title> (301 redirects for other
    spellings of a title, 404 for missing ones). Point LLM-URL at it with
    [bold]--retriever llm-url:http://HOST:PORT[/]."""
    from searchain.retrieval import CorpusError
    from searchain.retrieval.demo import demo_corpus_path
    from searchain.retrieval.llm_url.mirror import MirrorCorpus, MirrorServer

    try:
        pages = MirrorCorpus.from_files(corpus or [demo_corpus_path()])
        server = MirrorServer(pages, host, port, allow_remote=allow_remote, latency_s=latency)
    except (CorpusError, ValueError, OSError) as e:
        fail(str(e))
    err.print(f"Serving {len(pages):,} articles at {server.url}/wiki/<Title> (Ctrl-C to stop)")
    try:
        server.serve_forever()
    finally:
        server.stop()
