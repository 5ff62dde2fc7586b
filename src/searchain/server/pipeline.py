"""The one request pipeline of every route that answers — ``/v1/ask``, ``/v1/ask/stream``,
the OpenAI-compatible chat completions and MCP's ``ask`` tool: the question's length checked,
the runner taken from the engine (built once per spec), an answer slot taken (429 when none is
free), then the answer under way, its progress events as they come and its trace.

The limits in front of it are the same for every route too (``server/limits/``, in one
order): the Host allow-list, the bearer token, the per-client rate limit and the body limit.

Errors are :class:`~searchain.server.errors.FaceError`: a status, one readable line and a
short code; each route puts them in its own shape (``{"error": ...}``, OpenAI's error object,
an MCP tool error). What the client is told is a summary; the details go to the server log,
secrets masked.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

from searchain.llm import LLMError
from searchain.methods.assembly import Runner
from searchain.server.engine import Engine, ServiceBusy
from searchain.server.errors import FaceError, one_line
from searchain.types import Trace

log = logging.getLogger(__name__)
RETRY_AFTER = 5  # seconds a busy client is told to wait for an answer slot


async def start_answer(
    engine: Engine,
    name: str,
    options: Mapping[str, Any],
    question: str,
    *,
    invalid_status: int = 400,
    **asked: Any,
) -> Runner:
    """Every route's checks, in this order: the question's length in tokens, the runner for
    the method with the client's (already allow-listed) options and ``asked`` (the request's
    checks and abstention: ``Engine.runner``), then an answer slot (429 when none is free).
    The caller must hand the runner to :class:`Answering` at once: the slot is released when
    that answer ends."""
    try:
        engine.check_question(question)
        # Off the event loop: a first build may load a model (the query embedder).
        runner = await asyncio.to_thread(engine.runner, name, options, **asked)
    except ValueError as e:  # the method refusing an option value: our own message
        raise FaceError(invalid_status, one_line(str(e)), "invalid_request") from None
    except Exception as e:  # the server's business: logged, not echoed (but for a summary)
        log.warning("building %s failed", name, exc_info=e)
        raise FaceError(invalid_status, why_not_built(name, e), "method_unavailable") from None
    try:
        engine.acquire()
    except ServiceBusy as e:
        raise FaceError(429, f"{e}; retry later", "busy", RETRY_AFTER) from None
    return runner


def why_not_built(name: str, e: Exception) -> str:
    """What a client is told when ``name`` cannot be built: a summary, never the server's
    paths or an upstream body (those go to its log)."""
    if isinstance(e, ImportError):
        return f"{name} needs an optional extra not installed here"
    if isinstance(e, LLMError):  # a model it needs (Think&Cite's reward pair) cannot be opened
        return f"cannot build {name}: {e.public or 'a model it needs cannot be opened here'}"
    return f"cannot build {name} with these options"


def answer_error(e: BaseException, timeout: float) -> FaceError:
    """A failed answer as the client sees it."""
    if isinstance(e, TimeoutError):
        return FaceError(
            504, f"the answer took longer than {timeout:g} s and was stopped", "timeout"
        )
    if isinstance(e, LLMError):  # NoLogprobsError and malformed responses included
        log.warning("answer failed: %s", e)
        summary = getattr(e, "public", None) or one_line(str(e))
        return FaceError(502, f"the language model failed: {summary}", "llm_failed")
    if isinstance(e, RuntimeError) and type(e).__name__ == "RetrievalError":
        log.warning("answer failed: %s", e)  # its message may quote the server's body
        return FaceError(502, "retrieval failed; see the server log", "retrieval_failed")
    log.error("answer failed", exc_info=e)
    return FaceError(500, "internal error while answering; see the server log", "internal_error")


class Answering:
    """One answer under way, started at once (so its slot is released even if nobody ever
    reads it): its progress events as they come, then its trace."""

    def __init__(self, engine: Engine, runner: Runner, question: str, timeout: float) -> None:
        self.engine, self.timeout = engine, timeout
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.started = False
        self.task = asyncio.ensure_future(self._run(runner, question))
        self.task.add_done_callback(self._settle)

    async def _run(self, runner: Runner, question: str) -> Trace:
        self.started = True  # from here on engine.answer releases the slot itself
        trace = await self.engine.answer(runner, question, self.timeout, self._on_event)
        self.engine.cited.remember(trace)  # its citations open as pages (citation_pages.py)
        return trace

    def _on_event(self, event: dict[str, Any]) -> None:  # called from the worker thread
        if not self.loop.is_closed():  # a server shutting down: nobody is reading any more
            self.loop.call_soon_threadsafe(self.queue.put_nowait, event)

    def _settle(self, task: asyncio.Future[Trace]) -> None:
        if task.cancelled():
            if not self.started:  # cancelled before it ran: the slot is still ours to free
                self.engine.release()
            return
        task.exception()  # retrieved, so asyncio does not log it as never retrieved

    async def events(self, heartbeat: float) -> AsyncIterator[dict[str, Any] | None]:
        """Progress events; ``None`` after ``heartbeat`` seconds without one (a keep-alive).
        Leaving the loop early (the client went away) stops the work."""
        try:
            while not self.task.done() or not self.queue.empty():
                getter = asyncio.ensure_future(self.queue.get())
                done, _ = await asyncio.wait(
                    {getter, self.task}, timeout=heartbeat, return_when=asyncio.FIRST_COMPLETED
                )
                if getter in done:
                    yield getter.result()
                    continue
                getter.cancel()
                if not done:
                    yield None
        finally:
            if not self.task.done():
                self.task.cancel()

    async def trace(self) -> Trace:
        try:
            return await self.task
        except asyncio.CancelledError:
            raise
        except Exception as e:
            raise answer_error(e, self.timeout) from None

    def cancel(self) -> None:
        if not self.task.done():
            self.task.cancel()
