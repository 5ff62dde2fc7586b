"""Typed read views of what a trace records in ``meta``, for the code outside the methods.

``Trace.meta`` stays the wire format (``Trace.to_dict`` writes it as it is, so recorded runs
and golden traces do not change); the methods and the few scoring steps that add to a trace
write its keys. Everything else reads a trace through one of these views, each built by one
``of`` that reads the keys, and says there, once, what a trace made before a key existed
means — absence is never left for each reader to guess.

* :class:`ChainExtras` — what a Chain-of-Query (SearChain, its ablations) did: its rounds'
  chains, the verified path, the route, what its final step read;
* :class:`ChainSettings` — the settings such a trace was answered with (θ, k, the reader,
  the final step, the node-label rule);
* :class:`RunStamps` — what every answer records of the run that made it (prompt form,
  task, corpus, model file);
* :class:`AnswerExtras` — how the short answer was taken from the reply;
* :class:`RetrievalReports` — what the retrievers reported (LLM-URL's named URLs) and the
  passages asked per search;
* :class:`CheckExtras` — the costly confidence checks' signals and MaxProb's record;
* :class:`NodeExtras` — what one node records of IR's check of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from searchain.types import Node, Trace

# The keys read by more than one package; their writers name them by these constants.
CORPUS_KEY = "corpus"  # the corpus an answer searched (methods/assembly.corpus_key)
MODEL_FILE_KEY = "model_file"  # the model file that answered (llm.base.model_file)
LABEL_RULE_KEY = "label_rule"  # the version of SearChain's node-label rule
CHECKS_KEY = "confidence_checks"  # {check: {signal: value}} (scoring/confidence/checks.py)
MAXPROB_KEY = "maxprob"  # MaxProb's record (scoring/confidence/maxprob.py)
RETRIEVAL_KEY = "retrieval"  # the retrievers' reports (retrieval/llm_url/retriever.py)
SHORT_ANSWER_READ_KEY = "short_answer_read"  # methods/short_answer_reading.py

# What a trace made before a key existed means, said once here.
FINAL_STEP_BEFORE = "tracing"  # the only final step before the setting was recorded
LABEL_RULE_BEFORE = 1  # the node-label rule before it was versioned
YESNO_CHECK_BEFORE = "span"  # the yes/no check before it became a setting


@dataclass(frozen=True, slots=True)
class ChainExtras:
    """What a Chain-of-Query trace records of its chain (an empty view elsewhere)."""

    # Every round's chain (``[]`` when it answered in one read); None: not a chain's trace
    # (no other method records it, and every SearChain trace under results/ does).
    chains: list[Any] | None
    # The node ids of the final reasoning path; None: the trace records none.
    path: list[str] | None
    route: dict[str, Any] | None  # how it read first (route.py); None: it always chained
    hops: int | None  # answered nodes on the path; None: made before hops were recorded
    final_read: list[str] | None  # passage ids the final step read; None: all it retrieved
    evidence_read: list[dict[str, Any]] | None  # the evidence step's passages and roles
    dropped_node_answers: bool  # a confirmed node's answer the final content left out
    template: str | None  # the CoQ template sent; None: made before it was recorded

    @classmethod
    def of(cls, trace: Trace) -> ChainExtras:
        meta = trace.meta
        chains, route = meta.get("chains"), meta.get("route")
        return cls(
            chains=chains if isinstance(chains, list) else None,
            path=meta.get("path"),
            route=route if isinstance(route, dict) else None,
            hops=meta.get("hops"),
            final_read=meta.get("final_read"),
            evidence_read=(meta.get("evidence") or {}).get("passages"),
            dropped_node_answers=bool(meta.get("dropped_node_answers")),
            template=str(meta.get("template") or "") if "template" in meta else None,
        )

    @property
    def chain_of_query(self) -> bool:
        """Whether a Chain-of-Query made the trace (it records its rounds' chains)."""
        return self.chains is not None

    @property
    def read_route(self) -> bool:
        """Whether it answered in one read (route.py's read route: no chain planned)."""
        return self.route is not None and self.route.get("taken") == "read"


@dataclass(frozen=True, slots=True)
class ChainSettings:
    """The settings a Chain-of-Query trace records it was answered with."""

    theta: float | None  # None: made before θ was recorded
    k: int | None  # passages per node (also retrieve-read's per search: RetrievalReports.k)
    reader: str | None
    final_step: str  # absent: FINAL_STEP_BEFORE
    # The evidence step's sources and passages, recorded with final_step "evidence"; None
    # otherwise, and for evidence traces made before the sources were recorded (their
    # configuration cannot be named: scoring/confidence/configuration.final_step).
    evidence_sources: str | None
    evidence_k: int | None
    label_rule: int  # absent: LABEL_RULE_BEFORE
    yesno_check: str  # absent: YESNO_CHECK_BEFORE

    @classmethod
    def of(cls, trace: Trace) -> ChainSettings:
        meta = trace.meta
        return cls(
            theta=meta.get("theta"),
            k=meta.get("k"),
            reader=meta.get("reader"),
            final_step=str(meta.get("final_step", FINAL_STEP_BEFORE)),
            evidence_sources=meta.get("evidence_sources"),
            evidence_k=meta.get("evidence_k"),
            label_rule=int(meta.get(LABEL_RULE_KEY, LABEL_RULE_BEFORE)),
            yesno_check=meta.get("yesno_check", YESNO_CHECK_BEFORE),
        )


@dataclass(frozen=True, slots=True)
class RunStamps:
    """What an answer's trace records of the run that made it; None: not recorded (made
    before it was, or by a method that has none: ``eval/run_stamps`` stamps old runs from
    their manifests)."""

    prompt_form: str | None
    task: str | None
    corpus: str | None
    model_file: str | None
    template: str | None  # the prompt template named by the method's ``template`` setting

    @classmethod
    def of(cls, trace: Trace) -> RunStamps:
        meta = trace.meta
        return cls(
            prompt_form=meta.get("prompt_form"),
            task=meta.get("task"),
            corpus=meta.get(CORPUS_KEY),
            model_file=meta.get(MODEL_FILE_KEY),
            template=meta.get("template"),
        )


@dataclass(frozen=True, slots=True)
class AnswerExtras:
    """How an answer's short answer was taken from what the model wrote."""

    # The reply named no answer ("So the answer is"), so the reader read it out of the reply:
    # {why, stated, span, used}; None: the answer parser found it (every trace before).
    short_answer_read: dict[str, Any] | None

    @classmethod
    def of(cls, trace: Trace) -> AnswerExtras:
        return cls(short_answer_read=trace.meta.get(SHORT_ANSWER_READ_KEY))

    def note(self) -> str | None:
        """What a person is told of it, or None when the parser found the answer."""
        read = self.short_answer_read
        if not read:
            return None
        if read.get("used"):
            return "the reply named no short answer; it was read out of the reply"
        return "the reply named no short answer; its sentence is shown as the answer"


@dataclass(frozen=True, slots=True)
class RetrievalReports:
    """What the retrievers reported while the method ran, and the passages it asked for."""

    reports: list[dict[str, Any]]  # [] when no retriever reported (every index retriever)
    k: int | None  # passages asked per search; None: made before the request was kept

    @classmethod
    def of(cls, trace: Trace) -> RetrievalReports:
        meta = trace.meta
        return cls(reports=meta.get(RETRIEVAL_KEY, []), k=meta.get("k"))

    def of_retriever(self, name: str) -> list[dict[str, Any]]:
        """The reports of the retriever called ``name`` (``"llm-url"``)."""
        return [r for r in self.reports if r.get("retriever") == name]


@dataclass(frozen=True, slots=True)
class CheckExtras:
    """The confidence signals recorded after the answer: the costly checks' and MaxProb."""

    checks: dict[str, dict[str, float]]  # {check: {signal: value}}; {} when none ran
    maxprob_asked: bool  # MaxProb was asked for (its record: scoring/confidence/maxprob.py)

    @classmethod
    def of(cls, trace: Trace) -> CheckExtras:
        meta = trace.meta
        return cls(checks=meta.get(CHECKS_KEY) or {}, maxprob_asked=MAXPROB_KEY in meta)


@dataclass(frozen=True, slots=True)
class NodeExtras:
    """What a Tree-of-Reasoning node records of IR's check of it."""

    status: str | None  # verified, unconfirmed, corrected, completed; None: not checked
    reader_confidence: float | None  # the reader's confidence; None: no reader ran
    llm_answer: str | None  # the LLM's own answer before IR changed it

    @classmethod
    def of(cls, node: Node) -> NodeExtras:
        meta = node.meta
        return cls(
            status=meta.get("status"),
            reader_confidence=(meta.get("reader") or {}).get("confidence"),
            llm_answer=meta.get("llm_answer"),
        )
