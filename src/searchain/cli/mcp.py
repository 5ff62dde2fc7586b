"""``searchain mcp``: the MCP server over stdio, for an MCP client that starts it (Claude
Desktop, an IDE). The same tools as ``/mcp`` on ``searchain serve`` (search, ask, read), the
same engine options, the same operator-only method settings and answer slots. Nothing is
written to stdout but the protocol: messages and the model's loading go to stderr."""

from __future__ import annotations

import logging
from typing import Any

from searchain.cli.common import MethodOpt, err, fail
from searchain.cli.model_options import (
    AbstainOpt,
    ApiOpt,
    BaseUrlOpt,
    CacheOpt,
    ConfidenceCheckOpt,
    MaxRiskOpt,
    ModelOpt,
    ModelPathOpt,
    RiskDeltaOpt,
    ThreadsOpt,
    cli_spec,
    shared,
)
from searchain.cli.serve import open_engine, operator_options
from searchain.cli.serve_options import (
    BackendOpt,
    DefaultMethodOpt,
    MaxConcurrentOpt,
    MaxQuestionCharsOpt,
    ServeDenseIndexOpt,
    ServeIndexOpt,
    ServeRetrieverOpt,
    TimeoutOpt,
)
from searchain.retrieval.factory import DEFAULT_RETRIEVER


def mcp(
    index: ServeIndexOpt = None,
    retriever: ServeRetrieverOpt = DEFAULT_RETRIEVER,
    dense_index: ServeDenseIndexOpt = None,
    llm: BackendOpt = "local",
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api: ApiOpt = "auto",
    model_path: ModelPathOpt = None,
    method: DefaultMethodOpt = "searchain",
    max_concurrent: MaxConcurrentOpt = 1,
    timeout: TimeoutOpt = 300.0,
    max_question_chars: MaxQuestionCharsOpt = 2000,
    cache: CacheOpt = True,
    threads: ThreadsOpt = None,
    option: MethodOpt = None,
    abstain_below: AbstainOpt = None,
    max_risk: MaxRiskOpt = None,
    risk_delta: RiskDeltaOpt = 0.1,
    confidence_check: ConfidenceCheckOpt = None,
    method_flags: dict[str, Any] | None = None,
) -> None:
    """Serve the MCP tools over stdio: [bold]search[/](query, k) → passages with locators,
    [bold]ask[/](question, method, options) → the cited answer and its sources,
    [bold]read[/](id, or path and page) → a passage in its document's context. An MCP
    client starts it: e.g. Claude Desktop's config, `"command": "searchain", "args": ["mcp",
    "--index", "my-docs"]` (docs/service.md). Paths, URLs and models are set here, as for
    `serve`; clients choose only plain per-request options."""
    given = dict(locals())  # the options as typer passed them, before any other name
    try:
        from searchain.server.app import Settings
        from searchain.server.mcp_face import make_mcp_server
    except ImportError as e:
        fail(f"{e}: install the server extra (scripts/install.sh server)")
    logging.basicConfig(level=logging.WARNING)  # stderr: stdout carries the protocol only
    spec = cli_spec(**shared(given), method=method)
    engine = open_engine(spec, max_concurrent, operator_options(method_flags or {}, option))
    if method not in engine.methods:
        fail(f"unknown default method {method!r}")
    settings = Settings(
        runs_dir=None,
        default_method=method,
        timeout=timeout,
        max_question_chars=max_question_chars,
    )
    err.print("searchain MCP server on stdio (the client ends it)")
    make_mcp_server(engine, settings).run("stdio")
