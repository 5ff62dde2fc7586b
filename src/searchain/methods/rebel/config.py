"""REBEL's settings: the recursion's budgets and each call's token budget (defaults: the
paper's and its reference code's; ``docs/rebel.md``)."""

from __future__ import annotations

from dataclasses import dataclass

from searchain.methods.settings import check_settings, setting
from searchain.tools.base import OUTPUT_CHARS


@dataclass
class RebelConfig:
    max_depth: int = setting(
        3, "Deepest level of subquestions (root = 0).", ge=0, remote_le=10, flag="max-depth"
    )
    max_llm_calls: int = setting(
        40,
        "LLM calls per question, one kept for the final answer from the facts.",
        ge=1,
        remote_le=200,
        flag="max-llm-calls",
    )
    max_tool_calls: int = setting(
        12, "Tool calls per question.", ge=0, remote_le=50, flag="max-tool-calls"
    )
    max_subquestions: int = setting(
        4, "Subquestions kept per split (more are dropped, noted in the trace).", ge=1, remote_le=10
    )
    dedup_threshold: float = setting(
        0.98,
        "Cosine similarity to its parent at which a subquestion is a copy (the paper).",
        gt=0,
        le=1,
        flag="dedup-threshold",
    )
    memory_check: str = setting(
        "llm",
        "llm (the paper: ask whether memory suffices) or never (always use a tool).",
        choices=("llm", "never"),
        flag="memory-check",
    )
    output_chars: int = setting(
        OUTPUT_CHARS, "Tool output kept (the paper's cut).", ge=100, remote_le=100_000
    )
    context_chars: int = setting(
        6_000,
        "Of the tool output, what the answering prompt shows (4k-token models).",
        ge=100,
        remote_le=100_000,
    )
    split_prompt: str = setting(
        "self",
        "A question one tool use answers: self (the paper: the split returns it as "
        "its own subquestion, which the 0.98 rule removes) or empty (the split returns []).",
        choices=("self", "empty"),
    )
    split_tokens: int = setting(96, "Tokens of a split into subquestions.", ge=1, remote_le=1024)
    input_tokens: int = setting(48, "Tokens of a tool input.", ge=1, remote_le=1024)
    answer_tokens: int = setting(48, "Tokens of an answer.", ge=1, remote_le=1024)
    chat_tokens: int = setting(
        32, 'More tokens per call for a chat model ("Sure! ...", fences).', ge=0, remote_le=1024
    )

    def __post_init__(self) -> None:
        check_settings(self)
