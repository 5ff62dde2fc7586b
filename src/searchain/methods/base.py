"""What every method is: a named callable from question to trace, sync and async."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from searchain.llm import LLM, prompt_form, record_calls
from searchain.llm.prompting import call_template, is_chat
from searchain.scoring.confidence import assess
from searchain.types import Trace

__all__ = ["Method", "arun", "call_template", "is_chat", "run_traced", "traced"]


@runtime_checkable
class Method(Protocol):
    name: str

    def run(self, question: str) -> Trace: ...


async def arun(method: Method, question: str) -> Trace:
    """Run a method off the event loop (methods may define their own ``arun``)."""
    native = getattr(method, "arun", None)
    if native is not None:
        with record_calls() as calls:
            trace: Trace = await native(question)
        trace.meta["llm_calls"] = calls
        return trace
    return await asyncio.to_thread(run_traced, method, question)


def run_traced(
    method: Method, question: str, llm: LLM | None = None, *, assess_confidence: bool = True
) -> Trace:
    """``method.run(question)`` with what the model wrote kept in the trace: every LLM call's
    raw output (``meta.llm_calls``, see ``llm/calls.py``) and the prompt form used; and its
    confidence, unless the caller assesses it once it knows more (``assembly.answering``)."""
    with record_calls() as calls:
        trace = method.run(question)
    trace.meta["llm_calls"] = calls
    if llm is not None:
        trace.meta.setdefault("prompt_form", prompt_form(llm))
    if assess_confidence and trace.confidence is None:  # from what the trace holds
        trace.confidence = assess(trace, getattr(llm, "model", None))
    return trace


def traced(
    method: Method, llm: LLM | None = None, *, assess_confidence: bool = True
) -> Callable[[str], Trace]:
    """``method.run`` as ``run_traced`` does it (what the CLI, evaluation and service call)."""
    return functools.partial(run_traced, method, llm=llm, assess_confidence=assess_confidence)
