"""What every method is: a named callable from question to trace, sync and async."""

from __future__ import annotations

import asyncio
from typing import Protocol, runtime_checkable

from searchain.types import Trace


@runtime_checkable
class Method(Protocol):
    name: str

    def run(self, question: str) -> Trace: ...


async def arun(method: Method, question: str) -> Trace:
    """Run a method off the event loop (methods may define their own ``arun``)."""
    native = getattr(method, "arun", None)
    if native is not None:
        return await native(question)
    return await asyncio.to_thread(method.run, question)
