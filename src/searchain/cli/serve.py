"""``searchain serve`` (the HTTP API and web viewer) and ``searchain serve-index`` (an index
over HTTP). FastAPI is imported only when ``serve`` runs, so the CLI works without the
``server`` extra."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from searchain.cli.common import (
    DenseIndexOpt,
    IndexOpt,
    MethodOpt,
    RetrieverOpt,
    err,
    fail,
    open_retriever,
)
from searchain.cli.method_flags import operator_flags, with_method_flags
from searchain.llm.models import ANSWER_MODEL_HELP, API_HELP, MODEL_PATH_HELP, answer_model


@with_method_flags(operator_only=True)
def serve(
    host: Annotated[
        str, typer.Option(help="Address to bind. Non-loopback needs $SEARCHAIN_API_TOKEN.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8000,
    runs_dir: Annotated[
        Path, typer.Option(help="Directory of `searchain eval` runs to browse.")
    ] = Path("runs"),
    index: Annotated[
        Path | None, typer.Option("--index", "-i", help="BM25 index (default: the demo corpus).")
    ] = None,
    retriever: Annotated[
        str,
        typer.Option(
            "--retriever",
            "-r",
            help="bm25, dense, hybrid, remote:URL or llm-url[:OPTS] (the LLM names Wikipedia "
            "URLs; e.g. llm-url:http://127.0.0.1:8765 for `searchain mirror serve`; OPTS as "
            "in `searchain ask --help`).",
        ),
    ] = "bm25",
    dense_index: Annotated[Path | None, typer.Option(help="A dense index directory.")] = None,
    llm: Annotated[
        str, typer.Option("--llm", "--backend", help="local (embedded GGUF model) or openai.")
    ] = "local",
    model: Annotated[str | None, typer.Option(help=ANSWER_MODEL_HELP)] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Endpoint for --llm openai (default: $OPENAI_BASE_URL).")
    ] = None,
    api: Annotated[str, typer.Option(help=API_HELP)] = "auto",
    model_path: Annotated[Path | None, typer.Option(help=MODEL_PATH_HELP)] = None,
    method: Annotated[str, typer.Option(help="The viewer's default method.")] = "searchain",
    max_concurrent: Annotated[
        int, typer.Option(help="Answers computed at once; more get HTTP 429.")
    ] = 2,
    timeout: Annotated[float, typer.Option(help="Seconds per answer before HTTP 504.")] = 300.0,
    max_question_chars: Annotated[int, typer.Option(help="Longest question accepted.")] = 2000,
    max_body_bytes: Annotated[int, typer.Option(help="Largest request body accepted.")] = 65536,
    cache: Annotated[bool, typer.Option(help="Use the on-disk LLM call cache.")] = True,
    threads: Annotated[int | None, typer.Option(help="CPU threads for --llm local.")] = None,
    option: MethodOpt = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            help="A Host header name the service answers besides the loopback names "
            "(repeatable; '*' for any, e.g. behind a proxy that checks it). A specific "
            "--host is added by itself.",
            show_default=False,
        ),
    ] = None,
    method_flags: dict[str, Any] | None = None,
) -> None:
    """Serve the HTTP API and the web viewer: POST /v1/ask (and /v1/ask/stream, server-sent
    progress events), GET /v1/methods, GET /v1/runs..., GET /healthz, the OpenAPI schema at
    /docs, and the viewer at /. Set [bold]SEARCHAIN_API_TOKEN[/] to require
    `Authorization: Bearer <token>` on /v1/* (required when binding a non-loopback address).

    Clients choose only plain per-request options (numbers, switches, enum names): paths,
    URLs and models — the method settings below (--reader, --tools, --nli, --reward-model,
    --reward-reference, --template) and -O METHOD.KEY=VALUE — are set here by the operator,
    once, for every request."""
    token = os.environ.get("SEARCHAIN_API_TOKEN") or None
    try:
        from searchain.llm import LLMError, make_llm
        from searchain.server import Engine, Settings, check_bind, create_app
        from searchain.server import serve as run_server

        check_bind(host, token)
    except ImportError as e:
        fail(f"{e}: install the server extra (scripts/install.sh server)")
    except ValueError as e:
        fail(str(e))
    logging.basicConfig(level=logging.WARNING)
    try:
        client = make_llm(
            llm,
            model=answer_model(model) if llm == "local" and model_path is None else model,
            base_url=base_url,
            api=api,
            model_path=str(model_path) if model_path else None,
            n_threads=threads,
            cache=cache,
        )
    except (LLMError, ValueError, ImportError) as e:
        fail(str(e))
    if retriever.startswith("llm-url"):
        r = open_retriever(retriever, index, dense_index, llm=client)  # type: ignore[call-arg]
    else:
        r = open_retriever(retriever, index, dense_index)
    try:
        engine = Engine(
            client,
            r,  # type: ignore[arg-type]
            max_concurrent=max_concurrent,
            method_options=operator_options(method_flags or {}, option),
        )
    except (LLMError, ValueError, FileNotFoundError, ImportError) as e:
        fail(str(e))
    settings = Settings(
        token=token,
        runs_dir=runs_dir,
        default_method=method,
        timeout=timeout,
        max_question_chars=max_question_chars,
        max_body_bytes=max_body_bytes,
        allowed_hosts=allowed_hosts(host, allowed_host),
    )
    try:
        app = create_app(engine, settings)
    except ValueError as e:
        fail(str(e))
    auth = "token required" if token else "no authentication"
    err.print(f"Serving http://{host}:{port}/ ({auth}; Ctrl-C to stop)")
    run_server(app, host=host, port=port, log_level="warning")


def operator_options(
    flags: dict[str, object], option: list[str] | None
) -> dict[str, dict[str, object]]:
    """The method options the operator fixes for every request: the named settings (each
    reaches every method that takes it), then ``-O``, which must name its method
    (METHOD.KEY=VALUE): a plain key would reach every method, which the service refuses."""
    from searchain.methods import registry
    from searchain.methods.options import parse_method_options

    plain = [s for s in option or [] if "." not in s.partition("=")[0]]
    if plain:
        raise typer.BadParameter(f"write METHOD.KEY=VALUE in serve: {', '.join(plain)}")
    opts = operator_flags(flags)
    for m, o in parse_method_options(option, list(registry.METHODS)).items():
        if o:
            opts[m] = {**opts.get(m, {}), **o}
    return opts


def allowed_hosts(host: str, extra: list[str] | None) -> tuple[str, ...] | None:
    """The Host names the service answers: loopback, the bound name when it is a specific
    one, and the operator's; ``*`` turns the check off (None)."""
    from searchain.server.limits import LOOPBACK_HOSTS

    names = list(extra or [])
    if "*" in names:
        return None
    if host not in ("0.0.0.0", "::", "") and host not in LOOPBACK_HOSTS:
        names.append(host)
    return tuple(dict.fromkeys([*LOOPBACK_HOSTS, *names]))


def serve_index(
    index: IndexOpt = None,
    retriever: RetrieverOpt = "bm25",
    dense_index: DenseIndexOpt = None,
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8001,
    allow_remote: Annotated[
        bool,
        typer.Option(
            help="Allow binding a non-loopback address (the service has no authentication)."
        ),
    ] = False,
) -> None:
    """Serve an index over HTTP so many workers share one copy: POST /v1/search,
    POST /v1/search_batch, and the ColBERTv2 API (GET /api/search?query=&k=) that DSP and the
    SearChain code speak. Use it with [bold]--retriever remote:http://HOST:PORT[/]."""
    from searchain.retrieval.service import serve as serve_retriever

    if retriever.startswith("remote:"):
        fail("serve-index serves a local index, not a remote one")
    r = open_retriever(retriever, index, dense_index)
    err.print(f"Serving {retriever} on http://{host}:{port} (Ctrl-C to stop)")
    try:
        serve_retriever(r, host=host, port=port, allow_remote=allow_remote)  # type: ignore[arg-type]
    except ValueError as e:
        fail(str(e))
