"""The options of ``searchain serve`` and ``mcp`` that no other command has, declared once
each, and the service's limits as the group both take."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from searchain.cli.option_groups import OptionGroup

HostOpt = Annotated[
    str, typer.Option(help="Address to bind. Non-loopback needs $SEARCHAIN_API_TOKEN.")
]
PortOpt = Annotated[int, typer.Option(help="Port.")]
RunsDirOpt = Annotated[Path, typer.Option(help="Directory of `searchain eval` runs to browse.")]
ServeIndexOpt = Annotated[
    str | None,
    typer.Option(
        "--index", "-i", help="BM25 index or postgresql:// URL (default: the demo corpus)."
    ),
]
ServeRetrieverOpt = Annotated[
    str,
    typer.Option(
        "--retriever",
        "-r",
        help="bm25, dense, hybrid (each with +parts and/or +bridge: a query per part of the "
        "question, a hop from what its top passage adds), remote:URL or llm-url[:OPTS] (the "
        "LLM names Wikipedia "
        "URLs; e.g. llm-url:http://127.0.0.1:8765 for `searchain mirror serve`; OPTS as "
        "in `searchain ask --help`).",
    ),
]
ServeDenseIndexOpt = Annotated[str | None, typer.Option(help="A dense index directory.")]
BackendOpt = Annotated[
    str,
    typer.Option(
        "--llm",
        "--backend",
        help="local (embedded GGUF model) or openai. --model openai:NAME@URL says both.",
    ),
]
DefaultMethodOpt = Annotated[str, typer.Option(help="The viewer's default method.")]
MaxConcurrentOpt = Annotated[int, typer.Option(help="Answers computed at once; more get HTTP 429.")]
TimeoutOpt = Annotated[float, typer.Option(help="Seconds per answer before HTTP 504.")]
MaxQuestionCharsOpt = Annotated[int, typer.Option(help="Longest question accepted.")]
MaxBodyBytesOpt = Annotated[int, typer.Option(help="Largest request body accepted.")]
AllowedHostOpt = Annotated[
    list[str] | None,
    typer.Option(
        help="A Host header name the service answers besides the loopback names "
        "(repeatable; '*' for any, e.g. behind a proxy that checks it). A specific "
        "--host is added by itself.",
        show_default=False,
    ),
]
RateLimitOpt = Annotated[
    str,
    typer.Option(
        help="Requests per client address on /v1/ask, chat completions and /mcp, as N/s, N/min "
        "or N/h (a burst of N, then N per window; more get HTTP 429 with Retry-After); off: "
        "no limit. Behind a reverse proxy every client shares the proxy's address.",
    ),
]


@dataclass(frozen=True)
class AnswerLimits(OptionGroup):
    """How much the service answers at once, and how long and large a question may be."""

    max_concurrent: MaxConcurrentOpt = 2
    timeout: TimeoutOpt = 300.0
    max_question_chars: MaxQuestionCharsOpt = 2000

    def settings_fields(self) -> dict[str, Any]:
        """What the limits fill of the service's ``Settings`` (``max_concurrent`` is the
        engine's)."""
        return {"timeout": self.timeout, "max_question_chars": self.max_question_chars}


@dataclass(frozen=True)
class HttpLimits(AnswerLimits):
    """``serve``'s: a request's body is bounded too."""

    max_body_bytes: MaxBodyBytesOpt = 65536

    def settings_fields(self) -> dict[str, Any]:
        return {**super().settings_fields(), "max_body_bytes": self.max_body_bytes}


@dataclass(frozen=True)
class McpLimits(AnswerLimits):
    """``mcp``'s: one client over stdio, one answer at a time."""

    max_concurrent: MaxConcurrentOpt = 1
