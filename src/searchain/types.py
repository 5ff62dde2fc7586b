"""The shared data model: every retriever, reader and method speaks these types.

Everything here is a plain dataclass that round-trips through JSON (``to_dict`` /
``from_dict``), so a method's trace can be written to ``results.jsonl``, sent over HTTP
or shown in a viewer without custom encoders.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Passage:
    """A retrievable unit of text. ``id`` is stable (``<doc id>#<n>`` for split documents).

    ``source`` says where in a user's document the passage lies, for passages read from
    files (``searchain index FOLDER``): ``path`` (relative to the indexed root), ``page``
    (PDF, 1-based), ``heading`` (the heading path, outermost first), ``start``/``end``
    (character offsets into the document's extracted text). ``None`` for corpus records.

    ``found_by`` lists the queries that ranked the passage when one question was searched
    as several (its parts, a bridge hop: ``retrieval.query_plan``); ``None`` when the question
    was the only query (and then it is left out of the dict, as traces made before it were).
    """

    id: str
    text: str
    title: str = ""
    score: float | None = None
    source: dict[str, Any] | None = None
    found_by: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        if d["found_by"] is None:
            del d["found_by"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Passage:
        return cls(
            id=str(d["id"]),
            text=d["text"],
            title=d.get("title", ""),
            score=d.get("score"),
            source=d.get("source"),
            found_by=d.get("found_by"),
        )

    def locator(self) -> str:
        """Where a person finds the passage: ``guide.pdf p. 12 · Installation``, or the title
        for corpus records."""
        src = self.source
        if not src or not src.get("path"):
            return self.title
        where = str(src["path"])
        if src.get("page"):
            where += f" p. {src['page']}"
        if src.get("heading"):
            where += " · " + " › ".join(src["heading"])
        return where

    def render(self) -> str:
        """How a passage is shown to an LLM: title first, as the papers' prompts do."""
        return f"(Title: {self.title}) {self.text}" if self.title else self.text


@dataclass(slots=True)
class Usage:
    """Cost accounting. Methods add up the usage of every LLM call they make."""

    llm_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0

    def add(self, other: Usage) -> None:
        self.llm_calls += other.llm_calls
        self.cached_calls += other.cached_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.llm_seconds += other.llm_seconds

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Usage:
        return cls(**{f.name: d.get(f.name, 0) for f in dataclasses.fields(cls)})


@dataclass(slots=True)
class Completion:
    """One generated sample. ``token_logprobs`` is filled when log-probs were asked for."""

    text: str
    finish_reason: str = "stop"  # "stop" | "length"
    tokens: list[str] | None = None
    token_logprobs: list[float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Completion:
        return cls(**d)


@dataclass(slots=True)
class CompletionResult:
    """The answer to one request: ``n`` samples plus the usage of producing them."""

    completions: list[Completion]
    usage: Usage = field(default_factory=Usage)
    cached: bool = False

    @property
    def text(self) -> str:
        return self.completions[0].text if self.completions else ""

    @property
    def finish_reason(self) -> str:
        """Why the first sample ended: "stop" (a stop sequence or the end of text) or
        "length" (``max_tokens`` reached)."""
        return self.completions[0].finish_reason if self.completions else "stop"

    def to_dict(self) -> dict[str, Any]:
        return {
            "completions": [c.to_dict() for c in self.completions],
            "usage": self.usage.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any], cached: bool = False) -> CompletionResult:
        return cls(
            completions=[Completion.from_dict(c) for c in d["completions"]],
            usage=Usage.from_dict(d.get("usage", {})),
            cached=cached,
        )


@dataclass(slots=True)
class Citation:
    """A ``[n]`` mark in the answer text and the passage it points to (``None`` if unresolved)."""

    mark: int
    passage_id: str | None
    sentence: str = ""
    origin: str = "model"  # "model": the LLM wrote the mark; "post-hoc": attached afterwards

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(slots=True)
class Node:
    """One reasoning step: a sub-query, its answer, where the answer came from and its evidence.

    ``source`` is one of ``"llm"``, ``"ir-corrected"``, ``"ir-completed"``, ``"retrieval"``,
    ``"tool"`` — the knowledge-source categories the papers report.
    """

    id: str
    query: str
    answer: str | None = None
    source: str = "llm"
    parent: str | None = None
    passages: list[Passage] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["passages"] = [p.to_dict() for p in self.passages]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Node:
        d = dict(d)
        d["passages"] = [Passage.from_dict(p) for p in d.get("passages", [])]
        return cls(**d)


@dataclass(slots=True)
class Confidence:
    """How likely the answer is right, and what that rests on. ``value`` is a probability
    only when ``calibrated``; otherwise it is a score in [0, 1] that says so (``note``)."""

    value: float
    calibrated: bool
    signals: dict[str, float] = field(default_factory=dict)
    calibrator: dict[str, Any] | None = None  # name, version, the data it was fit on
    naive: float | None = None  # mean token log-probability of the answer, where known
    abstained: bool = False  # below the asked threshold: the answer is a guess, kept
    threshold: float | None = None
    note: str = ""
    cost: dict[str, float] = field(default_factory=dict)  # extra LLM calls, seconds
    lowered_by: list[str] = field(default_factory=list)  # the signals against it, in words
    raised_by: list[str] = field(default_factory=list)  # those for it (a calibrator's terms)
    terms: str = ""  # a --max-risk threshold's guarantee, or why none was certified

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def headline(self) -> str:
        """How far to trust the answer, in the words every face leads with: a calibrated
        probability keeps its number; a score that is not one shows no number (a bare 0.97
        reads as certainty) — what holds and what fails lead instead."""
        if self.calibrated:
            return f"{self.value:.2f}, the probability that it is right (calibrated)"
        return (
            f"not a probability (uncalibrated). What holds: {self.holds()}. "
            f"What fails: {self.fails()}."
        )

    def holds(self) -> str:
        """What speaks for the answer, in words."""
        return "; ".join(self.raised_by) or "nothing the checks could confirm"

    def fails(self) -> str:
        """What speaks against it, in words."""
        return "; ".join(self.lowered_by) or "no check failed"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Confidence:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass(slots=True)
class Trace:
    """What every method returns: the answer, how it was reached, and what it cost."""

    question: str
    method: str
    answer: str = ""
    final_content: str = ""
    references: list[Passage] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    rounds: int = 0
    usage: Usage = field(default_factory=Usage)
    wall_seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    confidence: Confidence | None = None

    def cited(self) -> dict[int, Passage]:
        """``{mark: passage}`` for every ``[n]`` of the answer that points to a passage."""
        by_id = {p.id: p for p in self.references}
        return {
            c.mark: by_id[c.passage_id]
            for c in sorted(self.citations, key=lambda c: c.mark)
            if c.passage_id in by_id
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "method": self.method,
            "answer": self.answer,
            "final_content": self.final_content,
            "references": [p.to_dict() for p in self.references],
            "citations": [c.to_dict() for c in self.citations],
            "nodes": [n.to_dict() for n in self.nodes],
            "rounds": self.rounds,
            "usage": self.usage.to_dict(),
            "wall_seconds": self.wall_seconds,
            "errors": list(self.errors),
            "meta": self.meta,
            **({"confidence": self.confidence.to_dict()} if self.confidence else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trace:
        return cls(
            question=d["question"],
            method=d["method"],
            answer=d.get("answer", ""),
            final_content=d.get("final_content", ""),
            references=[Passage.from_dict(p) for p in d.get("references", [])],
            citations=[Citation(**c) for c in d.get("citations", [])],
            nodes=[Node.from_dict(n) for n in d.get("nodes", [])],
            rounds=d.get("rounds", 0),
            usage=Usage.from_dict(d.get("usage", {})),
            wall_seconds=d.get("wall_seconds", 0.0),
            errors=list(d.get("errors", [])),
            meta=d.get("meta", {}),
            confidence=Confidence.from_dict(d["confidence"]) if d.get("confidence") else None,
        )


class Stopwatch:
    """``with Stopwatch() as sw: ...; sw.seconds`` — wall time of a block."""

    def __enter__(self) -> Stopwatch:
        self._t0 = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._t0


def finite(obj: Any) -> Any:
    """JSON has no NaN or infinity: such floats (e.g. a log-probability) become null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite(v) for v in obj]
    return obj


def finite_float(x: float | None) -> float | None:
    """One number as JSON can hold it: a plain float (numpy scalars too), or None for a
    missing, NaN or infinite one (a broken score, a log-probability of -inf)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def strict_dumps(obj: Any, **options: Any) -> str:
    """``json.dumps`` of what every reader can parse: non-finite floats written as null (a
    parser that follows the JSON standard refuses ``NaN``), never a NaN literal."""
    return json.dumps(finite(obj), allow_nan=False, **options)
