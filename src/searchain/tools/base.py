"""What a tool is: a natural-language description and JSON-schema parameters that the LLM
sees, and whatever hidden configuration makes the call (endpoint, method, API keys).

The LLM's input is validated against the schema before any call (:meth:`Tool.invoke`); a
tool never receives a parameter its schema does not declare (unless the schema says
``additionalProperties: true``).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from searchain.tools.schema import ValidationError, check_schema, validate
from searchain.types import Passage

OUTPUT_CHARS = 15_000  # the paper truncates every tool response to 15,000 characters


class ToolError(RuntimeError):
    """A tool call failed. The message is safe to show: it never contains a secret."""


class ToolInputError(ToolError, ValueError):
    """The LLM's input does not fit the tool's parameters; no call was made."""


@dataclass
class ToolOutput:
    """A tool's raw answer as text (what the LLM reads) plus details for the trace."""

    text: str
    passages: list[Passage] = field(default_factory=list)  # evidence, for search-like tools
    meta: dict[str, Any] = field(default_factory=dict)


def truncate(text: str, limit: int = OUTPUT_CHARS) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit], True)


class Tool(ABC):
    """Subclass and implement :meth:`_call`, or wrap a function with :class:`FunctionTool`."""

    name: str
    description: str
    parameters: dict[str, Any]

    def __init__(self, name: str, description: str, parameters: dict[str, Any]) -> None:
        if not name or not description:
            raise ValueError("a tool needs a name and a description")
        params = dict(parameters or {"type": "object", "properties": {}})
        params.setdefault("type", "object")
        # Undeclared parameters are refused unless the schema explicitly allows them.
        params.setdefault("additionalProperties", False)
        if params["type"] != "object":
            raise ValueError(f"tool {name!r}: parameters must be a JSON schema of type object")
        check_schema(params, f"tool {name!r} parameters")
        self.name, self.description, self.parameters = name, description.strip(), params

    @property
    def param_names(self) -> list[str]:
        return list(self.parameters.get("properties") or {})

    def params_hint(self) -> str:
        """The dynamic parameters as the paper shows them: ``{"city": the city name}``."""
        parts = []
        for name, sub in (self.parameters.get("properties") or {}).items():
            what = sub.get("description") or sub.get("type") or "a value"
            parts.append(f"{json.dumps(name)}: {what}")
        return "{" + ", ".join(parts) + "}"

    def check_input(self, args: Any) -> dict[str, Any]:
        """The validated input, or :class:`ToolInputError` with a message that says why."""
        if not isinstance(args, dict):
            raise ToolInputError(
                f"tool {self.name!r} input rejected: expected a JSON object, got "
                f"{type(args).__name__}; no call was made"
            )
        try:
            return validate(self.parameters, args)
        except ValidationError as e:
            raise ToolInputError(
                f"tool {self.name!r} input rejected: {e}; no call was made"
            ) from None

    def invoke(self, args: Any) -> ToolOutput:
        """Validate, then call. Every failure is a :class:`ToolError`."""
        clean = self.check_input(args)
        return self._call(clean)

    @abstractmethod
    def _call(self, args: dict[str, Any]) -> ToolOutput: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class FunctionTool(Tool):
    """A Python function as a tool: ``FunctionTool("weather", "...", schema, fn)``; ``fn``
    receives the validated parameters as keywords and returns text (or a ToolOutput)."""

    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        fn: Callable[..., str | ToolOutput],
    ) -> None:
        super().__init__(name, description, parameters)
        self.fn = fn

    def _call(self, args: dict[str, Any]) -> ToolOutput:
        try:
            out = self.fn(**args)
        except ToolError:
            raise
        except Exception as e:  # the function's own failure, reported, never swallowed
            raise ToolError(f"tool {self.name!r} failed: {type(e).__name__}: {e}") from e
        return out if isinstance(out, ToolOutput) else ToolOutput(str(out))
