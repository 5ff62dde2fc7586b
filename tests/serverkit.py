"""Shared pieces of the service's tests: the real engine (embedded model + demo BM25 index),
a small evaluation run made by the real `searchain eval`, a started server, and a question
asked over MCP with the official SDK."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from searchain.cli import app as cli_app
from searchain.llm import make_llm
from searchain.retrieval.demo import default_index
from searchain.server import Engine, Settings, create_app, running

# Real HotpotQA question (dev_subsampled.jsonl, line 1) and small, fast SearChain options.
QUESTION = (
    "What government position was held by the woman who portrayed Corliss Archer in the film "
    "Kiss and Tell?"
)
FAST_SEARCHAIN = {"r_max": 2, "max_tokens": 64, "trace_max_tokens": 48}


def make_engine(cache_file: Path, max_concurrent: int = 1) -> Engine:
    """The embedded model (its calls cached in ``cache_file``, fresh per test session, so the
    first call of each prompt is real) and the demo BM25 index."""
    llm = make_llm("local", model="gemma-3-270m", cache=cache_file)
    return Engine(llm, default_index(), max_concurrent=max_concurrent)


def make_run(runs_dir: Path, name: str = "hp", limit: int = 3) -> Path:
    """A real evaluation run: `searchain eval` with retrieve-read on HotpotQA questions."""
    out = runs_dir / name
    result = CliRunner().invoke(
        cli_app,
        ["eval", "--dataset", "hotpotqa", "--methods", "retrieve-read", "--limit", str(limit),
         "--concurrency", "1", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, (result.output, repr(result.exception))
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == limit, lines
    assert all(json.loads(line)["status"] == "ok" for line in lines)
    return out


@contextlib.contextmanager
def serving(engine: Engine, **settings: object) -> Iterator[str]:
    with running(create_app(engine, Settings(**settings))) as url:  # type: ignore[arg-type]
        yield url


def mcp_ask(url: str, arguments: dict[str, Any]) -> Any:
    """The MCP ``ask`` tool's result for ``arguments``, called by the official client (the
    ``mcp`` SDK) over streamable HTTP at ``url``/mcp."""
    try:  # the client the mcp SDK itself uses (httpx2, else httpx)
        import httpx2 as httpx
    except ImportError:  # pragma: no cover
        import httpx  # type: ignore[no-redef]
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> Any:
        async with (
            httpx.AsyncClient(timeout=300) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as (r, w),
            ClientSession(r, w) as session,
        ):
            await session.initialize()
            return await session.call_tool("ask", arguments)

    return asyncio.run(main())
