"""One LLM and one retriever per process, shared by every request; a bounded number of answers
at a time; a per-request timeout that really stops the work.

A method runs in a worker thread. Python cannot kill a thread, so a timed-out (or abandoned)
answer is *cancelled cooperatively*: the work's context carries a cancel event
(:mod:`searchain.net.deadline`) that the LLM wrapper checks before every call and the HTTP
client under remote models and tools checks while it waits for bytes, so a call to an endpoint
that never answers stops within a fraction of a second, and its connection is closed. The
concurrency slot stays taken until the work has stopped, so the bound counts real work, not
open requests. A retriever that prompts an LLM itself (LLM-URL) gets the wrapped LLM too, and
its retrieval reports go into ``trace.meta["retrieval"]`` as they do on the command line.

What names files, models or endpoints (Think&Cite's reward model pair and NLI judge, REBEL's
tools file, SearChain's template) is the operator's: ``method_options`` given when the
service starts, loaded once here. Clients choose only plain values (``server/models.py``).
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from searchain.events import listening
from searchain.llm import LLM, LLMError
from searchain.llm.base import GenerationParams, Message, find_tokenizer
from searchain.methods import registry
from searchain.methods.assembly import Abstention, Spec, abstention_for, answering, assemble
from searchain.methods.base import Method
from searchain.net.deadline import _CANCEL, Cancelled, cancel_scope  # noqa: F401 - _CANCEL: tests
from searchain.net.deadline import check_cancelled as _check_cancelled
from searchain.retrieval.base import Retriever
from searchain.scoring.confidence_checks import check_names
from searchain.types import CompletionResult, Trace

__all__ = ["CancellableLLM", "Cancelled", "Engine", "ServiceBusy"]

_PLAIN = (bool, int, float, str)


class ServiceBusy(Exception):
    """Every answer slot is taken."""


class CancellableLLM(LLM):
    """``inner`` with a cancellation check before every call (see the module docstring)."""

    def __init__(self, inner: LLM) -> None:
        super().__init__(inner.model, inner.defaults)
        self.inner = inner
        self.backend = inner.backend
        self.form = inner.form

    def __getattr__(self, name: str) -> Any:  # tokenize, cache_identity, ...
        return getattr(self.inner, name)

    def complete(
        self, prompt: str, params: GenerationParams | None = None, **overrides: Any
    ) -> CompletionResult:
        _check_cancelled()
        return self.inner.complete(prompt, params, **overrides)

    def chat(
        self, messages: list[Message], params: GenerationParams | None = None, **overrides: Any
    ) -> CompletionResult:
        _check_cancelled()
        return self.inner.chat(messages, params, **overrides)

    def score(self, prompt: str, continuation: str) -> Any:
        _check_cancelled()
        return self.inner.score(prompt, continuation)

    def score_chat(self, messages: list[Message], continuation: str) -> Any:
        _check_cancelled()
        return self.inner.score_chat(messages, continuation)

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        return self.complete(prompt, params)

    def close(self) -> None:
        self.inner.close()


class Engine:
    """What the service answers with: the LLM, the retriever and the answer slots."""

    def __init__(
        self,
        llm: LLM,
        retriever: Retriever | None,
        *,
        reader: str = "llm",
        max_concurrent: int = 2,
        max_question_tokens: int = 512,
        method_options: Mapping[str, Mapping[str, Any]] | None = None,
        confidence_checks: tuple[str, ...] = (),
        abstain_below: float | None = None,
        max_risk: float | None = None,
    ) -> None:
        if max_concurrent < 1:
            raise ValueError("max_concurrent must be at least 1")
        # What every answer gets unless its request says otherwise (the operator's choice,
        # and all a chat front-end or an MCP agent gets: they cannot send these).
        self.confidence_checks = check_names(confidence_checks)
        self.abstain_below, self.max_risk = abstain_below, max_risk
        self._abstentions: dict[tuple[str, float | None, float | None], Abstention | None] = {}
        self.llm = CancellableLLM(llm)
        self.retriever = retriever
        # A retriever that prompts an LLM itself (LLM-URL names its URLs with one) must stop
        # on a timeout too: its calls go through the cancellable wrapper as well.
        inner = getattr(retriever, "llm", None)
        if isinstance(inner, LLM) and not isinstance(inner, CancellableLLM):
            retriever.llm = self.llm if inner is llm else CancellableLLM(inner)  # type: ignore[union-attr]
        self.reader = reader
        self.max_concurrent = max_concurrent
        self.max_question_tokens = max_question_tokens
        self._tokenize = find_tokenizer(llm)
        self._busy = 0
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_concurrent, thread_name_prefix="answer")
        self._reward_llms: dict[tuple[str, str], Any] = {}  # Think&Cite's R_g pair, opened once
        self._reward_lock = threading.Lock()
        self.method_options = {
            name: self._load(name, dict(opts)) for name, opts in (method_options or {}).items()
        }

    @property
    def methods(self) -> tuple[str, ...]:
        return registry.method_names()

    @property
    def busy(self) -> int:
        return self._busy

    def describe(self) -> dict[str, str]:
        return {
            "llm": f"{self.llm.backend}:{self.llm.model}",
            "retriever": type(self.retriever).__name__,
        }

    # -- input checks and method building (ValueError: the client's fault) -----------------
    def check_question(self, question: str) -> None:
        """Refuse questions that would not fit the local model's context with the prompts."""
        if self._tokenize is None:
            return
        n = len(self._tokenize(question))
        if n > self.max_question_tokens:
            raise ValueError(
                f"the question is {n} tokens long; this service accepts at most "
                f"{self.max_question_tokens} (the prompts around it must fit the model's context)"
            )

    def _load(self, name: str, options: dict[str, Any]) -> dict[str, Any]:
        """The operator's options for ``name``, with what they name loaded once, now (a
        reward model pair, an NLI checkpoint, a tools file), not per request."""
        if name not in registry.method_names():
            raise ValueError(f"options for unknown method {name!r}")
        if registry.canonical(name) == "thinkcite":
            options.update(self._reward_pair(options))
        nli = options.get("nli")
        if nli == "none":  # R_a off
            options["nli"] = None
        elif isinstance(nli, str) and nli != "llm" and "judge" not in options:
            from searchain.readers.nli import make_judge

            options["judge"] = make_judge(options.pop("nli"), self.llm)
        tools = options.get("tools")
        if tools is not None and not isinstance(tools, list | tuple):
            from searchain.tools import load_tools

            options["tools"] = load_tools(tools, self.retriever)
        return options

    def _reward_pair(self, options: dict[str, Any]) -> dict[str, Any]:
        """Think&Cite's R_g models (its operator's specs, else the defaults), each opened once
        for the service's life, on first use, and cancellable with the request."""
        from searchain.methods.thinkcite.reward_models import pair_wanted, reward_llm

        reference = options.get("reward_reference", registry.REWARD_REFERENCE.default)
        if not pair_wanted(options.get("use_rg"), reference):
            return {}
        pair = {}
        for setting in (registry.REWARD_MODEL, registry.REWARD_REFERENCE):
            spec = options.get(setting.name, setting.default)
            if isinstance(spec, str) and spec != "policy":
                key = (setting.name, spec)
                with self._reward_lock:
                    if key not in self._reward_llms:
                        llm = reward_llm(spec, policy=self.llm, role=setting.name)
                        self._reward_llms[key] = CancellableLLM(llm)  # type: ignore[arg-type]
                    pair[setting.name] = self._reward_llms[key]
        return pair

    def options_for(self, name: str) -> dict[str, Any]:
        """The operator's options for a method (by its own name, else the one it stands
        for: an alias or an ablation of SearChain)."""
        canonical = registry.canonical(name)
        found = dict(self.method_options.get(name, self.method_options.get(canonical, {})))
        if isinstance(found.get("tools"), list | tuple):  # per request: `k` is set on them
            found["tools"] = [copy.copy(t) for t in found["tools"]]
        return found

    def build(self, name: str, options: dict[str, Any]) -> Method:
        """``name`` with the operator's options, overridden by the client's plain values,
        assembled over the service's one LLM and retriever."""
        options = {**self.options_for(name), **options}
        if registry.canonical(name) == "thinkcite":
            options.update(self._reward_pair(options))
        if registry.takes(name, "reader"):
            options.setdefault("reader", self.reader)  # the operator's --reader, if set
        plain = {k: v for k, v in options.items() if v is None or isinstance(v, _PLAIN)}
        objects = {k: v for k, v in options.items() if k not in plain}
        spec = Spec(method=name, options=plain)
        try:
            return assemble(spec, llm=self.llm, retriever=self.retriever, **objects).method
        except TypeError as e:  # an option the method does not take
            raise ValueError(f"invalid options for {name}: {e}") from None

    def abstention(
        self, name: str, abstain_below: float | None = None, max_risk: float | None = None
    ) -> Abstention | None:
        """The request's abstention threshold, else the operator's; a risk bound is certified
        once per method on its calibrator's items. ``ValueError`` when ``max_risk`` is asked
        of a method with no calibrator for this model (the client's to fix)."""
        if abstain_below is None and max_risk is None:
            abstain_below, max_risk = self.abstain_below, self.max_risk
        key = (registry.record_of(name).name, abstain_below, max_risk)
        if key not in self._abstentions:
            self._abstentions[key] = abstention_for(key[0], self.llm, abstain_below, max_risk)
        return self._abstentions[key]

    # -- running ---------------------------------------------------------------------------
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
        method: Method,
        question: str,
        timeout: float,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        checks: tuple[str, ...] | None = None,
        abstention: Abstention | None = None,
    ) -> Trace:
        """Run ``method`` in a worker thread; the caller has :meth:`acquire`\\ d a slot, which is
        released when the work ends (not when this returns). Raises ``TimeoutError``.
        ``checks``: the costly confidence checks (None: the operator's); ``abstention``: from
        :meth:`abstention`, applied to the answer."""
        cancel = threading.Event()

        # As the command line runs it: LLM-URL's reports (the URLs, their fates) in the trace,
        # the confidence checks asked for, then the abstention threshold.
        answer = answering(method, self.llm, self.confidence_checks if checks is None else checks)

        def run(question: str) -> Trace:
            trace = answer(question)
            return abstention.apply(trace) if abstention else trace

        def work() -> Trace:
            with cancel_scope(cancel):  # this thread's own context (copied below)
                if on_event is None:
                    return run(question)
                with listening(on_event):
                    return run(question)

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


def why_not_built(name: str, e: Exception) -> str:
    """What a client is told when ``name`` cannot be built: a summary, never the server's
    paths or an upstream body (those go to its log)."""
    if isinstance(e, ImportError):
        return f"{name} needs an optional extra not installed here"
    if isinstance(e, LLMError):  # a model it needs (Think&Cite's reward pair) cannot be opened
        return f"cannot build {name}: {e.public or 'a model it needs cannot be opened here'}"
    return f"cannot build {name} with these options"
