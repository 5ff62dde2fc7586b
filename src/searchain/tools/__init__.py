"""Tools for REBEL: described to the LLM in natural language plus a JSON schema of their
dynamic parameters; their hidden configuration (endpoint, method, API keys) never reaches a
prompt or a trace. Built-ins: ``search`` (the configured retriever), ``calculator`` (safe
arithmetic) and :class:`HttpTool` (any HTTP API, through the SSRF-safe client)."""

from searchain.tools.base import (
    OUTPUT_CHARS,
    FunctionTool,
    Tool,
    ToolError,
    ToolInputError,
    ToolOutput,
    truncate,
)
from searchain.tools.calculator import Calculator, calculate
from searchain.tools.config import ToolConfigError, build_tools, default_tools, load_tools
from searchain.tools.http import HttpTool, ToolRefusedError
from searchain.tools.search import SearchTool

__all__ = [
    "OUTPUT_CHARS",
    "Calculator",
    "FunctionTool",
    "HttpTool",
    "SearchTool",
    "Tool",
    "ToolConfigError",
    "ToolError",
    "ToolInputError",
    "ToolOutput",
    "ToolRefusedError",
    "build_tools",
    "calculate",
    "default_tools",
    "load_tools",
    "truncate",
]
