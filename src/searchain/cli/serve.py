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
    open_retriever_or_fail,
)
from searchain.cli.method_flags import OperatorFlags, ServedMethod
from searchain.cli.model_options import (
    AbstentionOptions,
    ConfidenceChecks,
    RuntimeOptions,
    ServedModel,
    ServedRetrieval,
)
from searchain.cli.option_groups import spec_of
from searchain.cli.serve_options import (
    AllowedHostOpt,
    HostOpt,
    HttpLimits,
    PortOpt,
    RateLimitOpt,
    RunsDirOpt,
)
from searchain.methods.assembly import Spec


def serve(
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8000,
    runs_dir: RunsDirOpt = Path("runs"),
    *,
    retrieval: ServedRetrieval,
    backend: ServedModel,
    choice: ServedMethod,
    limits: HttpLimits,
    runtime: RuntimeOptions,
    option: MethodOpt = None,
    abstention: AbstentionOptions,
    checks: ConfidenceChecks,
    allowed_host: AllowedHostOpt = None,
    rate_limit: RateLimitOpt = "60/min",
    flags: OperatorFlags,
) -> None:
    """Serve the HTTP API and the web viewer: POST /v1/ask (and /v1/ask/stream, server-sent
    progress events), GET /v1/methods, GET /v1/runs..., GET /healthz, the OpenAPI schema at
    /docs, and the viewer at /; an OpenAI-compatible chat endpoint (GET /v1/models, POST
    /v1/chat/completions) and an MCP server (/mcp, streamable HTTP). Set
    [bold]SEARCHAIN_API_TOKEN[/] to require `Authorization: Bearer <token>` on /v1/* and /mcp
    (required when binding a non-loopback address).

    Clients choose only plain per-request options (numbers, switches, enum names): paths,
    URLs and models — the method settings below (--reader, --tools, --nli, --reward-model,
    --reward-reference, --template) and -O METHOD.KEY=VALUE — are set here by the operator,
    once, for every request. --abstain-below/--max-risk and --confidence-check hold for every
    answer on every face (a /v1/ask request may set its own)."""
    token = os.environ.get("SEARCHAIN_API_TOKEN") or None
    try:
        from searchain.server import Settings, check_bind, create_app
        from searchain.server import serve as run_server

        check_bind(host, token)
    except ImportError as e:
        fail(f"{e}: install the server extra (scripts/install.sh server)")
    except ValueError as e:
        fail(str(e))
    logging.basicConfig(level=logging.WARNING)
    spec = spec_of(retrieval, backend, choice, runtime, abstention, checks)
    engine = open_engine(spec, limits.max_concurrent, operator_options(flags, option))
    settings = Settings(
        token=token,
        runs_dir=runs_dir,
        default_method=choice.method,
        **limits.settings_fields(),
        allowed_hosts=allowed_hosts(host, allowed_host),
        rate_limit=rate_limit,
    )
    try:
        app = create_app(engine, settings)
    except ValueError as e:
        fail(str(e))
    auth = "token required" if token else "no authentication"
    err.print(f"Serving http://{host}:{port}/ ({auth}; Ctrl-C to stop)")
    run_server(app, host=host, port=port, log_level="warning")


def open_engine(
    spec: Spec, max_concurrent: int, method_options: dict[str, dict[str, object]]
) -> Any:
    """The service's engine: the spec's one LLM and one retriever, shared by every request,
    the spec itself (every runner's, so a runner names the model served), and the operator's
    method options, loaded once."""
    from searchain.llm import LLMError
    from searchain.methods.assembly import open_llm
    from searchain.server import Engine

    try:
        client = open_llm(spec)
    except (LLMError, ValueError, ImportError) as e:
        fail(str(e))
    r = open_retriever_or_fail(spec, client)
    try:
        engine = Engine(
            client, r, spec=spec, max_concurrent=max_concurrent, method_options=method_options
        )
        engine.runner(spec.method)  # a risk bound the default method cannot keep: now
    except (LLMError, ValueError, FileNotFoundError, ImportError) as e:
        fail(str(e))
    return engine


def operator_options(
    flags: OperatorFlags, option: list[str] | None
) -> dict[str, dict[str, object]]:
    """The method options the operator fixes for every request: the named settings (each
    reaches every method that takes it), then ``-O``, which must name its method
    (METHOD.KEY=VALUE): a plain key would reach every method, which the service refuses."""
    from searchain.methods import catalog
    from searchain.methods.options import parse_method_options

    plain = [s for s in option or [] if "." not in s.partition("=")[0]]
    if plain:
        raise typer.BadParameter(f"write METHOD.KEY=VALUE in serve: {', '.join(plain)}")
    opts = flags.per_method()
    for m, o in parse_method_options(option, list(catalog.method_names())).items():
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
    # The index as it ranks one query (a client that plans, as `ask` does, sends each query).
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
    r = open_retriever_or_fail(Spec(retriever=retriever, index=index, dense_index=dense_index))
    err.print(f"Serving {retriever} on http://{host}:{port} (Ctrl-C to stop)")
    try:
        serve_retriever(r, host=host, port=port, allow_remote=allow_remote)
    except ValueError as e:
        fail(str(e))
