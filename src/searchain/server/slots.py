"""A bounded number of answers at a time, each in a worker thread, with a timeout that
really stops the work.

Python cannot kill a thread, so a timed-out (or abandoned) answer is cancelled cooperatively:
its context carries a cancel event (:mod:`searchain.net.deadline`) that the cancellable LLM
(``server/cancellable.py``) and the HTTP client under remote models and tools check. The slot
stays taken until the work has stopped, so the bound counts real work, not open requests.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from searchain.events import listening
from searchain.net.deadline import cancel_scope
from searchain.types import Trace


class ServiceBusy(Exception):
    """Every answer slot is taken."""


class AnswerSlots:
    """``max_concurrent`` answers at a time."""

    def __init__(self, max_concurrent: int) -> None:
        if max_concurrent < 1:
            raise ValueError("max_concurrent must be at least 1")
        self.max_concurrent = max_concurrent
        self._busy = 0
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_concurrent, thread_name_prefix="answer")

    @property
    def busy(self) -> int:
        return self._busy

    def acquire(self) -> None:
        with self._lock:
            if self._busy >= self.max_concurrent:
                raise ServiceBusy(f"all {self.max_concurrent} answer slot(s) are busy")
            self._busy += 1

    def release(self) -> None:
        with self._lock:
            self._busy -= 1

    async def answer(
        self,
        runner: Callable[[str], Trace],
        question: str,
        timeout: float,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> Trace:
        """Run ``runner`` in a worker thread; the caller has :meth:`acquire`\\ d a slot, which
        is released when the work ends (not when this returns). Raises ``TimeoutError``."""
        cancel = threading.Event()

        def work() -> Trace:
            with cancel_scope(cancel):  # this thread's own context (copied below)
                if on_event is None:
                    return runner(question)
                with listening(on_event):
                    return runner(question)

        loop = asyncio.get_running_loop()
        ctx = contextvars.copy_context()
        try:
            fut = loop.run_in_executor(self._pool, ctx.run, work)
        except BaseException:
            self.release()
            raise
        fut.add_done_callback(lambda _: self.release())
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout)
        except BaseException:  # timeout, or the client went away: stop the work
            cancel.set()
            fut.add_done_callback(_consume)
            raise

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _consume(fut: asyncio.Future[Any]) -> None:
    # Retrieve the abandoned work's exception so asyncio does not log it as never retrieved.
    if not fut.cancelled():
        fut.exception()
