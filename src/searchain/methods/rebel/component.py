"""REBEL's component: what every surface knows of it (its settings, its tools file, how its
trace is drawn) and how it is built."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from searchain.llm import LLM
from searchain.methods import builder_options as bo
from searchain.methods.base import Method
from searchain.methods.component import MethodComponent
from searchain.methods.rebel.config import RebelConfig
from searchain.methods.rebel.method import Rebel
from searchain.retrieval.base import Retriever


class RebelComponent(MethodComponent):
    name = "rebel"
    summary = "recursive subquestions answered with tools, see --tools"
    config = RebelConfig
    options = (bo.K, bo.TOOLS, bo.DEDUP)
    group = "REBEL"
    tree = "searchain.methods.rebel.render:recursion_tree"
    rank = 30

    @classmethod
    def build(cls, llm: LLM, retriever: Retriever | None, options: dict[str, Any]) -> Method:
        """REBEL with ``tools=`` a tools file (YAML/TOML/JSON), a list of Tool objects, or
        None: the paper's benchmark setting, a search tool over ``retriever``. Other options
        go to RebelConfig (max_depth, max_llm_calls, max_tool_calls, memory_check, ...)."""
        from searchain.tools import SearchTool, default_tools, load_tools

        options = dict(options)
        spec = options.pop("tools", None)
        k = options.pop("k", None)
        dedup = options.pop("dedup", bo.DEDUP.default)
        if spec is None:
            tools = default_tools(retriever)
        elif isinstance(spec, list | tuple):  # copies: `k` is set on them per method
            tools = [copy.copy(t) for t in spec]
        else:
            tools = load_tools(spec, retriever)
        if k:
            for t in tools:
                if isinstance(t, SearchTool):
                    t.k = k
        embedder = bo.make_embedder(dedup)
        method = Rebel(llm, tools, RebelConfig(**options), embedder=embedder)
        method.dedup_note = bo.dedup_note(dedup, embedder)
        return method

    @classmethod
    def open_resources(
        cls, llm: LLM, retriever: Retriever | None, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """REBEL's tools file, read once (its tools are copied per method built)."""
        from searchain.tools import load_tools

        tools = options.get("tools")
        if tools is None or isinstance(tools, list | tuple):
            return {}
        return {"tools": load_tools(tools, retriever)}
