"""Calling a packaged prompt in the form a client takes (see ``prompts/`` and ``llm/base.py``)."""

from __future__ import annotations

from searchain import prompts
from searchain.llm.base import LLM, prompt_form
from searchain.types import CompletionResult


def is_chat(llm: LLM | None) -> bool:
    """Whether ``llm`` takes the chat form of prompts (messages) rather than the completion
    form (one text to continue); see ``llm/base.py``."""
    return prompt_form(llm) == "chat"


def call_template(
    llm: LLM,
    template: str,
    *,
    max_tokens: int,
    stop: tuple[str, ...] = (),
    chat_stop: tuple[str, ...] | None = None,
    logprobs: bool = False,
    **values: object,
) -> CompletionResult:
    """One call of a packaged prompt in the form ``llm`` takes: ``TEMPLATE.chat.txt`` as
    messages for chat models, ``TEMPLATE.txt`` as a completion prompt for base models.
    ``chat_stop`` (default: ``stop``) are the stop strings of the chat form; a chat reply is
    one turn, so it often needs none of the completion form's."""
    if is_chat(llm):
        return llm.chat(
            prompts.messages(template, **values),
            max_tokens=max_tokens,
            stop=stop if chat_stop is None else chat_stop,
            logprobs=logprobs,
        )
    return llm.complete(
        prompts.fill(template, **values), max_tokens=max_tokens, stop=stop, logprobs=logprobs
    )
