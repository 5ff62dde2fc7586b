"""One spec, one assembler: what every surface (``searchain ask``, ``eval`` locally and on Ray,
``serve``, the Python API) builds its runner from.

A :class:`Spec` names the model as one string, the retriever, the method and its settings;
:func:`assemble` opens what it names and returns a :class:`Runner` that answers questions.
The model string takes the form the reward models already use:

* ``qwen2.5-coder-1.5b`` or ``local:qwen2.5-coder-1.5b`` — an embedded model by name,
* ``local:/path/to/model.gguf`` (or a path ending in ``.gguf``) — any GGUF file,
* ``openai:gpt-4o-mini`` or ``openai:gpt-4o-mini@http://127.0.0.1:8000/v1`` — an
  OpenAI-compatible endpoint (without ``@URL``: ``$OPENAI_BASE_URL`` or OpenAI's),
* nothing — the one default of every surface: ``$SEARCHAIN_MODEL``, else
  Qwen2.5-Coder-1.5B-Instruct (:data:`searchain.llm.models.ANSWER_MODEL`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchain.llm import LLM, LLMError, make_llm
from searchain.llm.models import answer_model
from searchain.methods.base import Method, traced
from searchain.methods.catalog import build_as, check_options, resolve
from searchain.retrieval.base import Retriever
from searchain.retrieval.factory import DEFAULT_RETRIEVER
from searchain.scoring.confidence.checks import check_names
from searchain.scoring.confidence.risk_bound import RiskBound, check_risk_bound
from searchain.types import Trace

BACKENDS = ("local", "openai")


@dataclass(frozen=True)
class ModelRef:
    """A model string taken apart: which backend, which model, where."""

    backend: str = "local"
    name: str | None = None  # an embedded model's name, or the endpoint's model id
    path: str | None = None  # a GGUF file (local)
    base_url: str | None = None  # the endpoint (openai)

    @classmethod
    def parse(cls, text: str | None) -> ModelRef:
        """``local:NAME``, ``NAME``, a ``.gguf`` path, ``openai:NAME[@URL]``; None: default."""
        if not text:
            return cls("local", answer_model(None))
        backend, sep, rest = text.partition(":")
        if not sep or backend not in BACKENDS or rest.startswith("//"):
            backend, rest = "local", text  # a bare name or a path (C:\... included)
        if backend == "openai":
            name, _, url = rest.partition("@")
            if not name:  # the openai backend's own message: the model is named nowhere
                raise LLMError("the openai backend needs a model name (--model)")
            return cls("openai", name, None, url or None)
        if rest.endswith(".gguf") or "/" in rest:
            return cls("local", None, rest)
        return cls("local", answer_model(rest or None))

    def __str__(self) -> str:
        if self.backend == "openai":
            return f"openai:{self.name}" + (f"@{self.base_url}" if self.base_url else "")
        return f"local:{self.path or self.name}"


def model_string(
    llm: str = "local",
    model: str | None = None,
    base_url: str | None = None,
    model_path: str | Path | None = None,
) -> str | None:
    """The model string of the older separate options (``--llm``, ``--model``,
    ``--base-url``, ``--model-path``); a ``--model`` that is already a string with a backend
    is taken as it is. None: the default model."""
    if model and model.partition(":")[0] in BACKENDS and ":" in model:
        return model
    if llm not in BACKENDS:
        raise ValueError(f"unknown LLM backend {llm!r} (choose 'local' or 'openai')")
    if llm == "openai":
        model = model or os.environ.get("SEARCHAIN_OPENAI_MODEL", "")
        return f"openai:{model}" + (f"@{base_url}" if base_url else "")
    if model_path is not None:  # a file, even one named without a folder or .gguf
        path = str(model_path)
        return f"local:{path if '/' in path or path.endswith('.gguf') else './' + path}"
    return f"local:{model}" if model else None


@dataclass(frozen=True)
class Spec:
    """What a runner is built from. ``options`` are the method's settings (``k`` included)
    by name, checked when the runner is assembled."""

    method: str = "searchain"
    model: str | None = None
    api: str = "auto"
    retriever: str = DEFAULT_RETRIEVER
    index: str | None = None
    dense_index: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    cache: bool = True
    threads: int | None = None
    # Withhold an answer whose confidence is below this (the guess stays in the trace) ...
    abstain_below: float | None = None
    # ... or below the threshold that keeps the error rate among answered questions at most
    # this, with probability 1 - risk_delta (needs a calibrated confidence).
    max_risk: float | None = None
    risk_delta: float = 0.1
    # Confidence signals that cost model calls, by name (scoring/confidence/checks.py).
    confidence_checks: tuple[str, ...] = ()

    def model_ref(self) -> ModelRef:
        return ModelRef.parse(self.model)

    def needs_retriever(self) -> bool:
        """Whether the method searches (SearChain without IR does not)."""
        return searches({**self.options, **resolve(self.method)[1]})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"options": dict(self.options)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Spec:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"a spec has no field {', '.join(unknown)}")
        return cls(**dict(data))


def searches(settings: Mapping[str, Any]) -> bool:
    """Whether a method with these settings searches (SearChain without IR does not)."""
    return settings.get("use_ir", True) is not False


def open_llm(spec: Spec) -> LLM:
    """The LLM the spec's model string names (wrapped in the call cache unless ``cache``
    is off)."""
    ref = spec.model_ref()
    return make_llm(
        ref.backend,
        model=ref.name,
        base_url=ref.base_url,
        api=spec.api,
        model_path=ref.path,
        n_threads=spec.threads,
        cache=spec.cache,
    )


def open_retriever(spec: Spec, llm: LLM | None = None) -> Retriever:
    """The retriever the spec names (LLM-URL asks ``llm`` for its URLs)."""
    from searchain.retrieval import factory

    return factory.open_retriever(
        spec.retriever, index=spec.index, dense_index=spec.dense_index, llm=llm
    )


@dataclass(frozen=True)
class Abstention:
    """A threshold below which an answer is withheld (its guess kept in the trace): a plain
    one (``--abstain-below``), or, for a maximum risk (``--max-risk``), the one certified for
    the calibrator that mapped each answer (``scoring/confidence/risk_bound.py``)."""

    threshold: float | None = None
    risk_bound: RiskBound | None = field(default=None, compare=False)

    def apply(self, trace: Trace) -> Trace:
        conf = trace.confidence
        if conf is None:
            return trace
        if self.risk_bound is not None:
            self.risk_bound.apply(conf)
        elif self.threshold is not None:
            conf.threshold = self.threshold
            conf.abstained = conf.value < self.threshold
        return trace


@dataclass
class Runner:
    """A method, assembled: call it with a question for a :class:`Trace`."""

    spec: Spec
    llm: LLM
    retriever: Retriever | None
    method: Method

    abstention: Abstention | None = None  # when an abstention threshold is asked for

    def __call__(self, question: str) -> Trace:
        trace = answering(self.method, self.llm, self.spec.confidence_checks)(question)
        return self.abstention.apply(trace) if self.abstention else trace


def answering(method: Method, llm: LLM, checks: tuple[str, ...] = ()) -> Callable[[str], Trace]:
    """How every surface runs a method (the runner here, the service's engine): the method,
    traced; LLM-URL's reports (its URLs, their fates) and their usage in the trace; the
    corpus it searched and the model file that answered (part of the configuration a
    calibrator applies to); the costly confidence checks asked for; then the confidence,
    assessed once, knowing all of them."""
    from searchain.retrieval.identity import corpus_key
    from searchain.retrieval.llm_url.retriever import with_retrieval_reports
    from searchain.scoring.confidence import assess
    from searchain.scoring.confidence.checks import run_checks

    answer = with_retrieval_reports(traced(method, llm, assess_confidence=False))
    corpus = corpus_key(getattr(method, "retriever", None))

    def run(question: str) -> Trace:
        trace = with_identity(answer(question), corpus, llm)
        cost = run_checks(trace, checks, llm) if checks else None
        trace.confidence = assess(trace, getattr(llm, "model", None))
        if cost is not None:
            trace.confidence.cost = cost
        return trace

    return run


def with_identity(trace: Trace, corpus: str | None, llm: LLM) -> Trace:
    """The trace with the corpus it searched and the model file that answered recorded
    (where the method did not record them itself)."""
    from searchain.llm.base import model_file
    from searchain.scoring.confidence.configuration import CORPUS_KEY, MODEL_FILE_KEY

    trace.meta.setdefault(MODEL_FILE_KEY, model_file(llm))  # None: not known (a replay)
    if corpus is not None:
        trace.meta.setdefault(CORPUS_KEY, corpus)
    return trace


def assemble(
    spec: Spec,
    *,
    llm: LLM | None = None,
    retriever: Retriever | None = None,
    **objects: Any,
) -> Runner:
    """Open what ``spec`` names — its options checked first, before any model is loaded —
    and build its method. ``llm`` / ``retriever``: already open ones to share (a service
    opens them once); ``objects``: what a Python caller hands the builder itself (a tools
    list, an NLI judge)."""
    from searchain.retrieval.factory import is_llm_url

    record, fixed = resolve(spec.method)  # once: the record and what a variant fixes
    options = {**spec.options, **objects}
    check_options(spec.method, options, record)
    spec = dataclasses.replace(spec, confidence_checks=check_names(spec.confidence_checks))
    wanted = retriever is None and searches({**options, **fixed})
    if wanted and not is_llm_url(spec.retriever):  # a missing index fails before a model loads
        retriever = open_retriever(spec)
    llm = llm if llm is not None else open_llm(spec)
    if wanted and retriever is None:  # LLM-URL asks the LLM for its URLs
        retriever = open_retriever(spec, llm)
    method = build_as(spec.method, llm, retriever, options)
    runner = Runner(spec, llm, retriever, method)
    runner.abstention = abstention(spec, llm, spec.method if fixed else record.name)
    return runner


def abstention(spec: Spec, llm: LLM, method: str | None = None) -> Abstention | None:
    """The spec's abstention (None: every answer is given) for ``method``, the name whose
    calibrators apply (None: resolved from the spec): an alias is its method; an ablation
    stays itself (it has no calibrator of SearChain's)."""
    if method is None:
        record, fixed = resolve(spec.method)
        method = spec.method if fixed else record.name
    return abstention_for(
        method,
        llm,
        spec.abstain_below,
        spec.max_risk,
        spec.risk_delta,
        spec.confidence_checks,
    )


def abstention_for(
    method: str,
    llm: LLM,
    abstain_below: float | None,
    max_risk: float | None,
    delta: float = 0.1,
    checks: tuple[str, ...] = (),
) -> Abstention | None:
    """A plain threshold, or a maximum risk held with each answer's own calibrator's
    certified threshold; a ``ValueError`` (in words) when ``method`` on ``llm``'s model has
    no calibrator that gives a probability."""
    if max_risk is None:
        return None if abstain_below is None else Abstention(abstain_below)
    from searchain.scoring.confidence import model_key

    check_risk_bound(method, tuple(sorted(checks)), model_key(llm.model), max_risk, delta)
    return Abstention(risk_bound=RiskBound(max_risk, delta))
