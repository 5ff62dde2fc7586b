"""``searchain mcp``: the MCP server over stdio, for an MCP client that starts it (Claude
Desktop, an IDE). The same tools as ``/mcp`` on ``searchain serve`` (search, ask, read), the
same engine options, the same operator-only method settings and answer slots. Nothing is
written to stdout but the protocol: messages and the model's loading go to stderr."""

from __future__ import annotations

import logging

from searchain.cli.common import MethodOpt, err, fail
from searchain.cli.method_flags import OperatorFlags, ServedMethod
from searchain.cli.model_options import (
    AbstentionOptions,
    ConfidenceChecks,
    RuntimeOptions,
    ServedModel,
    ServedRetrieval,
)
from searchain.cli.option_groups import spec_of
from searchain.cli.serve import open_engine, operator_options
from searchain.cli.serve_options import McpLimits


def mcp(
    *,
    retrieval: ServedRetrieval,
    backend: ServedModel,
    choice: ServedMethod,
    limits: McpLimits,
    runtime: RuntimeOptions,
    option: MethodOpt = None,
    abstention: AbstentionOptions,
    checks: ConfidenceChecks,
    flags: OperatorFlags,
) -> None:
    """Serve the MCP tools over stdio: [bold]search[/](query, k) → passages with locators,
    [bold]ask[/](question, method, options) → the cited answer and its sources,
    [bold]read[/](id, or path and page) → a passage in its document's context. An MCP
    client starts it: e.g. Claude Desktop's config, `"command": "searchain", "args": ["mcp",
    "--index", "my-docs"]` (docs/service.md). Paths, URLs and models are set here, as for
    `serve`; clients choose only plain per-request options."""
    try:
        from searchain.server.app import Settings
        from searchain.server.mcp_face import make_mcp_server
    except ImportError as e:
        fail(f"{e}: install the server extra (scripts/install.sh server)")
    logging.basicConfig(level=logging.WARNING)  # stderr: stdout carries the protocol only
    spec = spec_of(retrieval, backend, choice, runtime, abstention, checks)
    engine = open_engine(spec, limits.max_concurrent, operator_options(flags, option))
    if choice.method not in engine.methods:
        fail(f"unknown default method {choice.method!r}")
    settings = Settings(runs_dir=None, default_method=choice.method, **limits.settings_fields())
    err.print("searchain MCP server on stdio (the client ends it)")
    make_mcp_server(engine, settings).run("stdio")
