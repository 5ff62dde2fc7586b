"""One LLM and one retriever per process, shared by every request; the runners built from
them, cached by their whole spec; a bounded number of answers at a time; a per-request
timeout that really stops the work.

What answers is what ``assemble(spec)`` returns, as on every other surface, built from the
spec the service was started with (its model, retriever and index, its abstention and
confidence checks), taken whole: a request changes only the method, its plain options and,
on ``/v1/ask``, its own abstention and checks. The engine adds only what serving needs —
the answer slots and worker threads (``server/slots.py``) and an LLM that stops when its
request is cancelled (``server/cancellable.py``), which a retriever that prompts an LLM
itself (LLM-URL) gets too.

What names files, models or endpoints (Think&Cite's reward model pair and NLI judge, REBEL's
tools file) is the operator's: ``method_options`` given when the service starts; what they
name is opened once, by the method record's resources hook. Clients choose only plain values
(``server/request_options.py``).
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from searchain.llm import LLM
from searchain.llm.base import find_tokenizer
from searchain.methods import catalog
from searchain.methods.assembly import Runner, Spec, assemble
from searchain.net.deadline import _CANCEL, Cancelled  # noqa: F401 - _CANCEL: tests
from searchain.retrieval.base import Retriever
from searchain.scoring.confidence.checks import check_names
from searchain.server.cancellable import CancellableLLM, cancellable
from searchain.server.cited import CitedPassages
from searchain.server.slots import AnswerSlots, ServiceBusy

__all__ = ["AnswerSlots", "CancellableLLM", "Cancelled", "Engine", "ServiceBusy"]

_PLAIN = (bool, int, float, str)
RUNNERS_KEPT = 64  # runners cached (each distinct spec clients ask for builds one)


class Engine(AnswerSlots):
    """What the service answers with: the LLM, the retriever, the runners (and the answer
    slots it inherits)."""

    def __init__(
        self,
        llm: LLM,
        retriever: Retriever | None,
        *,
        spec: Spec | None = None,
        reader: str = "llm",
        max_concurrent: int = 2,
        max_question_tokens: int = 512,
        method_options: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """``spec``: what the service was started with, the one ``llm`` and ``retriever``
        were opened from (None: ``Spec()``, the default model); every runner's spec is it,
        with the request's method and options. Its own ``options`` are the operator's for
        its method, as ``method_options`` are."""
        super().__init__(max_concurrent)
        spec = spec or Spec()
        # What every answer gets unless its request says otherwise (the operator's choice,
        # and all a chat front-end or an MCP agent gets: they cannot send these).
        self.spec = dataclasses.replace(
            spec, options={}, confidence_checks=check_names(spec.confidence_checks)
        )
        self.llm = CancellableLLM(llm)
        self.retriever = retriever
        inner = getattr(retriever, "llm", None)
        if isinstance(inner, LLM) and not isinstance(inner, CancellableLLM):
            retriever.llm = self.llm if inner is llm else CancellableLLM(inner)  # type: ignore[union-attr]
        self.reader = reader
        self.max_question_tokens = max_question_tokens
        self._tokenize = find_tokenizer(llm)
        self.cited = CitedPassages()  # what answers read, for their citation pages
        self._runners: OrderedDict[str, Runner] = OrderedDict()
        self._resources: dict[str, dict[str, Any]] = {}
        self.method_options = {n: dict(o) for n, o in (method_options or {}).items()}
        if spec.options:
            own = self.method_options.get(spec.method, {})
            self.method_options[spec.method] = {**spec.options, **own}
        unknown = sorted(set(self.method_options) - set(catalog.method_names()))
        if unknown:
            raise ValueError(f"options for unknown method {', '.join(map(repr, unknown))}")
        for name in self.method_options:  # what they name is opened now, not per request
            self.resources_for(name)

    @property
    def methods(self) -> tuple[str, ...]:
        return catalog.method_names()

    def describe(self) -> dict[str, str]:
        return {
            "llm": f"{self.llm.backend}:{self.llm.model}",
            "retriever": type(self.retriever).__name__,
        }

    # -- the served document index ----------------------------------------------------------
    def document_index(self) -> Any:
        """The served index when it is one of documents (a BM25 index, whose passages know
        their file and page), else None."""
        from searchain.retrieval import BM25Index

        return self.retriever if isinstance(self.retriever, BM25Index) else None

    def document_context(self, pid: str, around: int) -> Any:
        """A passage of the served document index with ``around`` neighbours each side in its
        file (``retrieval.documents.context``); None when the index is not one of documents or
        holds no such passage (``/v1/passages/context``, MCP's ``read``, citation pages)."""
        from searchain.retrieval.documents.context import passage_context

        index = self.document_index()
        return None if index is None else passage_context(index, pid, around)

    # -- input checks and runners (ValueError: the client's fault) -------------------------
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

    def _operator_key(self, name: str) -> str:
        """Whose operator options ``name`` gets: its own, else its record's (an alias, an
        ablation of SearChain)."""
        return name if name in self.method_options else catalog.resolve(name)[0].name

    def resources_for(self, name: str) -> dict[str, Any]:
        """What the operator's options for ``name`` name, opened once by its record's hook
        (models made cancellable with the request)."""
        key = self._operator_key(name)
        with self._lock:
            found = self._resources.get(key)
        if found is None:
            record = catalog.resolve(name)[0]
            opened = record.open_resources(self.llm, self.retriever, self.options_for(name))
            found = {k: cancellable(v) for k, v in opened.items()}
            with self._lock:
                found = self._resources.setdefault(key, found)
        return found

    def options_for(self, name: str) -> dict[str, Any]:
        """The operator's options for a method, with its --reader where it takes one. Options
        a variant inherits from its record's (``-O searchain.k=3`` for ``searchain-paper``)
        leave out the settings the variant fixes: they are what the variant is, and the
        operator set them for the record, not for it (options named for the variant itself
        are checked, and a clash refused, as a client's are)."""
        key = self._operator_key(name)
        found = dict(self.method_options.get(key, {}))
        if key != name:
            fixed = catalog.resolve(name)[1]
            found = {k: v for k, v in found.items() if k not in fixed}
        if catalog.takes(name, "reader"):
            found.setdefault("reader", self.reader)
        return found

    def runner(
        self,
        name: str,
        options: Mapping[str, Any] | None = None,
        *,
        checks: tuple[str, ...] | None = None,
        abstain_below: float | None = None,
        max_risk: float | None = None,
    ) -> Runner:
        """``name`` with the operator's options, overridden by the client's plain values, and
        the request's abstention and checks (else the operator's): assembled over the
        service's one LLM and retriever once per distinct spec."""
        merged = {**self.options_for(name), **(options or {})}
        plain = {k: v for k, v in merged.items() if v is None or isinstance(v, _PLAIN)}
        asked = abstain_below is not None or max_risk is not None
        spec = dataclasses.replace(
            self.spec,
            method=name,
            options=plain,
            **({"abstain_below": abstain_below, "max_risk": max_risk} if asked else {}),
            **({"confidence_checks": check_names(checks)} if checks is not None else {}),
        )
        key = json.dumps(spec.to_dict(), sort_keys=True, default=str)
        with self._lock:
            if key in self._runners:
                self._runners.move_to_end(key)
                return self._runners[key]
        objects = self.resources_for(name)
        try:
            built = assemble(spec, llm=self.llm, retriever=self.retriever, **objects)
        except TypeError as e:  # an option the method does not take
            raise ValueError(f"invalid options for {name}: {e}") from None
        with self._lock:
            self._runners[key] = built
            while len(self._runners) > RUNNERS_KEPT:
                self._runners.popitem(last=False)
        return built
