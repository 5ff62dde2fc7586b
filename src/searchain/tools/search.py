"""The ``search`` tool: the configured retriever (BM25, dense, hybrid or remote) as a tool."""

from __future__ import annotations

from typing import Any

from searchain.citations import numbered_documents
from searchain.retrieval.base import Retriever
from searchain.tools.base import Tool, ToolError, ToolOutput


class SearchTool(Tool):
    def __init__(self, retriever: Retriever, *, k: int = 3, name: str = "search") -> None:
        super().__init__(
            name,
            "Search: finds encyclopedia passages about a person, place or thing. Useful for "
            "facts such as where or when someone was born.",
            {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "the search query",
                        "minLength": 1,
                        "maxLength": 500,
                    }
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        )
        if k < 1:
            raise ValueError("search tool: k must be at least 1")
        self.retriever, self.k = retriever, k

    def _call(self, args: dict[str, Any]) -> ToolOutput:
        try:
            hits = self.retriever.search(args["query"], k=self.k)
        except (RuntimeError, OSError) as e:  # a remote index that is down, ...
            raise ToolError(f"tool {self.name!r} failed: {e}") from e
        text = numbered_documents(list(hits))
        return ToolOutput(text or "(no results)", passages=list(hits))
