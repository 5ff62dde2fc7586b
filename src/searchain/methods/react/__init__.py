"""ReAct (Yao et al., 2023): the method and how model replies are read (:mod:`.method`), and
its component (what every surface knows of it)."""

from __future__ import annotations

from typing import Any

from searchain.llm import LLM
from searchain.methods.base import Method
from searchain.methods.component import TakesTaskKind, needs_retriever, without_unset_k
from searchain.methods.react.method import (
    CHAT_INVALID,
    INVALID,
    ReAct,
    ReActConfig,
    parse_action,
    parse_chat_action,
    split_reply,
)
from searchain.retrieval.base import Retriever

__all__ = [
    "CHAT_INVALID",
    "INVALID",
    "ReAct",
    "ReActComponent",
    "ReActConfig",
    "parse_action",
    "parse_chat_action",
    "split_reply",
]


class ReActComponent(TakesTaskKind):
    name = "react"
    summary = "a Search[...]/Finish[...] loop"
    config = ReActConfig
    rank = 90

    @classmethod
    def build(cls, llm: LLM, retriever: Retriever | None, options: dict[str, Any]) -> Method:
        return ReAct(llm, needs_retriever(cls.name, retriever), **without_unset_k(options))
