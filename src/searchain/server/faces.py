"""What the service's other faces share — the OpenAI-compatible chat endpoint
(``server/openai_face.py``) and the MCP server (``server/mcp_face.py``): starting an answer
under the same checks and slots as ``/v1/ask``, following its progress, and turning its trace
into what a chat window or an agent shows (the answer with its ``[n]`` marks, a "Sources"
list of locators, the confidence where the method reports one).

Errors are :class:`FaceError`: a status, one readable line and a short code; each face puts
them in its own shape (OpenAI's error object, an MCP tool error). What the client is told is
a summary; the details go to the server log, secrets masked.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from searchain import redaction
from searchain.llm import LLMError
from searchain.methods.assembly import Abstention
from searchain.methods.base import Method
from searchain.server.engine import Engine, ServiceBusy, why_not_built
from searchain.types import Passage, Trace

log = logging.getLogger(__name__)
RETRY_AFTER = 5  # seconds a busy client is told to wait for an answer slot


class FaceError(Exception):
    """A refusal or failure as a client of a face sees it."""

    def __init__(self, status: int, message: str, code: str, retry_after: int | None = None):
        super().__init__(message)
        self.status, self.message, self.code, self.retry_after = status, message, code, retry_after


def one_line(text: str, limit: int = 300) -> str:
    line = redaction.redact_text(text).strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass(frozen=True)
class Started:
    """A method built for one answer, and the server's abstention for it."""

    method: Method
    abstention: Abstention | None


async def start_answer(
    engine: Engine, name: str, options: dict[str, Any], question: str
) -> Started:
    """``/v1/ask``'s checks, in the same order: the question's length in tokens, the method
    built with the client's (already allow-listed) options and the server's abstention for
    it, then an answer slot (429 when none is free). The caller must hand the result to
    :class:`Answering` at once: the slot is released when that answer ends."""
    try:
        engine.check_question(question)
        # Off the event loop: a first build may load a model (the query embedder).
        method = await asyncio.to_thread(engine.build, name, options)
        abstention = engine.abstention(name)
    except ValueError as e:  # the method refusing an option value: our own message
        raise FaceError(400, one_line(str(e)), "invalid_request") from None
    except Exception as e:  # the server's business: logged, not echoed (but for a summary)
        log.warning("building %s failed", name, exc_info=e)
        raise FaceError(400, why_not_built(name, e), "method_unavailable") from None
    try:
        engine.acquire()
    except ServiceBusy as e:
        raise FaceError(429, f"{e}; retry later", "busy", RETRY_AFTER) from None
    return Started(method, abstention)


def answer_error(e: BaseException, timeout: float) -> FaceError:
    """A failed answer as the client sees it (``/v1/ask``'s mapping)."""
    if isinstance(e, TimeoutError):
        return FaceError(
            504, f"the answer took longer than {timeout:g} s and was stopped", "timeout"
        )
    if isinstance(e, LLMError):
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

    def __init__(self, engine: Engine, started: Started, question: str, timeout: float) -> None:
        self.engine, self.timeout = engine, timeout
        self.abstention = started.abstention
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.started = False
        self.task = asyncio.ensure_future(self._run(started.method, question))
        self.task.add_done_callback(self._settle)

    async def _run(self, method: Method, question: str) -> Trace:
        self.started = True  # from here on engine.answer releases the slot itself
        return await self.engine.answer(
            method, question, self.timeout, self._on_event, abstention=self.abstention
        )

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


def describe(event: dict[str, Any]) -> str | None:
    """A progress event as one line a person reads while waiting (``None``: not worth one)."""
    kind = event.get("event")
    if kind == "round":
        return f"Round {event.get('n')}"
    if kind == "chain":
        queries = event.get("queries") or []
        return "Chain of queries:\n" + "\n".join(f"  {i}. {q}" for i, q in enumerate(queries, 1))
    if kind == "node":
        return f"  checked {event.get('id')}: {event.get('status')} (from {event.get('source')})"
    if kind == "retrieve":
        return f"Searching: {event.get('query')}"
    if kind == "subquestion":
        return f"Sub-question: {event.get('text')}"
    if kind == "tool":
        return f"Tool: {event.get('name')}"
    if kind == "mcts_iteration":
        best = event.get("best_value")
        value = f" (best value {best:.2f})" if isinstance(best, int | float) else ""
        return f"Search iteration {event.get('i')}{value}"
    if kind == "note":
        return f"Note: {event.get('text')}"
    return None


@dataclass(slots=True)
class Source:
    """A passage the answer cites: its mark and where a person finds it."""

    mark: int
    passage: Passage

    @property
    def locator(self) -> str:
        return self.passage.locator() or self.passage.title or self.passage.id

    def to_dict(self) -> dict[str, Any]:
        p = self.passage
        return {
            "mark": self.mark,
            "id": p.id,
            "locator": self.locator,
            "title": p.title,
            "text": p.text,
            "source": p.source,
        }


def sources(trace: Trace) -> list[Source]:
    return [Source(mark, p) for mark, p in trace.cited().items()]


def answer_text(trace: Trace) -> str:
    """The answer as written, with its ``[n]`` marks (the short answer when there is none)."""
    return (trace.final_content or trace.answer).strip()


def confidence(trace: Trace) -> dict[str, Any] | None:
    """The answer's confidence as the trace records it: its value, whether it is a calibrated
    probability (else an uncalibrated score, said so), what lowered it, and whether the answer
    was withheld."""
    conf = trace.confidence
    if conf is None or not math.isfinite(conf.value):
        return None
    return {
        "value": conf.value,
        "calibrated": conf.calibrated,
        "lowered_by": list(conf.lowered_by),
        "raised_by": list(conf.raised_by),
        "abstained": conf.abstained,
        # as the CLI and /v1/ask give them: the threshold (None: none asked, or none
        # certified), its terms, the calibrator's provenance, and what an uncalibrated says
        "threshold": conf.threshold,
        "terms": conf.terms,
        "calibrator": conf.calibrator,
        "note": conf.note,
    }


def footer(srcs: list[Source], conf: dict[str, Any] | None) -> str:
    """The "Sources" list (and the confidence) a chat window shows under the answer."""
    lines = ["**Sources**", *(f"- [{s.mark}] {s.locator}" for s in srcs)] if srcs else []
    if not srcs:
        lines.append("_No passage is cited._")
    if conf is not None:
        kind = "probability that it is right" if conf["calibrated"] else "uncalibrated score"
        lines.append(f"\nConfidence: {conf['value']:.2f} ({kind})")
        if conf["lowered_by"]:
            lines.append(f"Lowered by: {'; '.join(conf['lowered_by'])}")
        if conf["raised_by"]:
            lines.append(f"Raised by: {'; '.join(conf['raised_by'])}")
        if not conf["calibrated"] and conf["note"]:
            lines.append(conf["note"])
        if conf["terms"]:
            lines.append(f"Threshold: {conf['terms']}")
    return "\n".join(lines)
