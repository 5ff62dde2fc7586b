"""Read first, chain when it must (``route="read-first"``; beyond the paper, which always plans).

On documents people have, the evidence step reading the question's own top-k answered more
questions than the whole chain (issue 62: 39.6 vs 32.1 % on the 53 real-documentation
questions), while on questions built to need two passages the chain pays. As Adaptive-RAG
(Jeong et al., NAACL 2024) picks one step or many per question, and FLARE / Self-RAG retrieve
again only when the model is unsure, SearChain first answers from the question's own passages
(the evidence step with ``evidence_sources="question"``: one call) and plans a Chain-of-Query
only when a *trigger* of ``chain_when`` fires:

* ``two-parts`` — the question asks two things (``retrieval.query_plan.question_parts``);
* ``no-answer`` — the first read answered nothing, or said the passages do not tell;
* ``unstated`` — its short answer is stated in none of the passages it read;
* ``uncited`` — the model cited no passage for it;
* ``reader-disagrees`` — the reader (one short call on the passage the first read leaned on)
  gives a confident span that is not the first read's answer;
* ``always`` — chain every time (the first read is still made and recorded: what tune runs
  use to choose the triggers offline, bench/searchain_route.py).

Every signal is computed and recorded whichever triggers are on (``meta.route``), so a trace
says why its route was taken and what the other triggers would have said. When the chain
runs, what the first read found is not lost: the passages it cited lead the chain's evidence,
and its answer stays in ``meta.route.first_read`` (and is the answer if the chain writes none).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from searchain.events import emit
from searchain.methods.searchain.config import SearChainConfig
from searchain.methods.searchain.evidence_answer import evidence_answer, question_hits, states
from searchain.methods.searchain.route_rule import parse_triggers
from searchain.readers.base import Reader
from searchain.retrieval.query_plan import question_parts
from searchain.text import answers_agree, normalize_answer
from searchain.trace_extras import SHORT_ANSWER_READ_KEY
from searchain.types import Passage, Trace

# What each trigger says when it fires (the trace's and the faces' "why").
WHY = {
    "two-parts": "the question asks two things",
    "no-answer": "the first read found no answer in the question's passages",
    "unstated": "the first read's answer is not stated in the passages it read",
    "uncited": "the first read cited no passage",
    "reader-disagrees": "the reader found another answer in the passage the first read used",
    "always": "the configuration always chains after the first read",
}
# "The documents do not say", "not mentioned", "I cannot find": an answer that is none.
_NO_ANSWER = re.compile(
    r"\b(?:not (?:mentioned|specified|stated|provided|given|found|available|clear|known)|"
    r"(?:does|do|did) not (?:say|mention|specify|state|provide|contain|include)|"
    r"no (?:information|mention|answer|passage|document)|cannot (?:be )?(?:find|found|determine|"
    r"determined|answer)|can't|unable to|unknown|insufficient)\b",
    re.I,
)


@dataclass
class Route:
    """Which way a question went, why, and what the first read answered."""

    taken: str  # "read" | "chain"
    why: list[str]
    signals: dict[str, Any]
    first_read: dict[str, Any] = field(default_factory=dict)

    def to_meta(self) -> dict[str, Any]:
        return {
            "taken": self.taken,
            "why": self.why,
            "words": _words(self.taken, self.why),
            "signals": self.signals,
            "first_read": self.first_read,
        }


def read_first(
    question: str,
    llm: Any,
    retriever: Any,
    reader: Reader | None,
    theta: float,
    cfg: SearChainConfig,
    trace: Trace,
) -> tuple[list[Passage], Trace, str]:
    """The first read and the route it leads to, recorded in ``trace.meta["route"]``: the
    question's hits, the first read, and ``"read"`` or ``"chain"``."""
    triggers = parse_triggers(cfg.chain_when)
    hits = question_hits(question, retriever, cfg)
    read = first_read(question, llm, retriever, cfg, hits)
    ask_reader = "reader-disagrees" in triggers or "always" in triggers
    found = signals(question, read, reader, theta, ask_reader)
    trace.usage.add(read.usage)  # the first read's call and the reader's
    taken, why = decide(found, triggers)
    route = Route(taken, why, found, summary(read))
    trace.meta["route"] = {"rule": f"read-first:{cfg.chain_when}", **route.to_meta()}
    emit("route", taken=taken, why=why)
    return hits, read, taken


def first_read(
    question: str, llm: Any, retriever: Any, cfg: SearChainConfig, hits: list[Passage]
) -> Trace:
    """The evidence step over the question's own top-k (the ablation's answer), as a trace of
    its own: its answer, final content, references and citations."""
    read = Trace(question=question, method="searchain")
    scratch = replace(cfg, evidence_sources="question")
    evidence_answer(read, question, [], llm, retriever, scratch, hits=hits)
    return read


def model_cited(read: Trace) -> list[Passage]:
    """The passages the first read's model cited itself (not post hoc), each once, in order."""
    by_id = {p.id: p for p in read.references}
    seen: dict[str, Passage] = {}
    for c in read.citations:
        if c.origin == "model" and c.passage_id in by_id:
            seen.setdefault(c.passage_id, by_id[c.passage_id])
    return list(seen.values())


def leaned_on(read: Trace) -> Passage | None:
    """The passage the first read leaned on: the first it cited, else its first reference."""
    cited = model_cited(read)
    return cited[0] if cited else (read.references[0] if read.references else None)


def signals(
    question: str, read: Trace, reader: Reader | None, theta: float, ask_reader: bool
) -> dict[str, Any]:
    """Every trigger's verdict on the first read (``ask_reader``: make the reader's call)."""
    answer = (read.answer or "").strip()
    no_answer = not normalize_answer(answer) or bool(_NO_ANSWER.search(answer))
    texts = [f"{p.title}\n{p.text}" for p in read.references]
    stated = bool(answer) and any(states(t, answer) for t in texts)
    out: dict[str, Any] = {
        "two-parts": bool(question_parts(question)),
        "no-answer": no_answer,
        "unstated": not no_answer and not stated,
        "uncited": not any(c.origin == "model" for c in read.citations),
        "always": True,
    }
    passage = leaned_on(read)
    if ask_reader and reader is not None and passage is not None and not no_answer:
        verdict = reader.read(question, passage)
        if verdict.usage is not None:
            read.usage.add(verdict.usage)
        agrees = bool(verdict.answer) and answers_agree(answer, verdict.answer)
        out["reader-disagrees"] = verdict.confidence > theta and not agrees
        out["reader"] = {
            "answer": verdict.answer,
            "confidence": verdict.confidence,
            "passage": passage.id,
        }
    else:
        out["reader-disagrees"] = False
        out["reader"] = None if ask_reader else "not asked (reader-disagrees is not a trigger)"
    return out


def decide(found: dict[str, Any], triggers: tuple[str, ...]) -> tuple[str, list[str]]:
    """The route the triggers pick, and the reasons (every fired trigger, in words)."""
    fired = [t for t in triggers if found.get(t) is True]
    if fired:
        return "chain", [WHY[t] for t in fired]
    return "read", ["one read answered from the question's own passages: no trigger fired"]


def summary(read: Trace) -> dict[str, Any]:
    """What the first read answered (kept whichever route is taken)."""
    return {
        "answer": read.answer,
        "final_content": read.final_content,
        "references": [p.id for p in read.references],
        "cited": [p.id for p in model_cited(read)],
        "errors": list(read.errors),
        **({"short_answer_read": r} if (r := read.meta.get(SHORT_ANSWER_READ_KEY)) else {}),
    }


def adopt(trace: Trace, read: Trace) -> None:
    """Make the first read the answer of ``trace`` (the read route)."""
    trace.final_content = read.final_content
    trace.answer = read.answer
    trace.references = read.references
    trace.citations = read.citations
    trace.errors.extend(read.errors)
    kept = ("evidence", "final_read", "evidence_output", "skc", "skc_with_post_hoc", "maxprob")
    for key in (*kept, SHORT_ANSWER_READ_KEY):
        if key in read.meta:
            trace.meta[key] = read.meta[key]


def kept_passages(read: Trace) -> list[Passage]:
    """The first read's cited passages, which lead the chain's evidence (nothing found is
    lost to the cap)."""
    return model_cited(read)


def route_words(trace: Trace) -> str | None:
    """The route a trace took and why, in one sentence, as every face shows it (``None``:
    the trace has no route — the paper preset, and traces made before routes, always chain)."""
    route = trace.meta.get("route")
    return str(route["words"]) if isinstance(route, dict) and route.get("words") else None


def _words(taken: str, why: list[str]) -> str:
    if taken == "read":
        return "Route: answered in one read of the question's own passages (no reason to chain)."
    return f"Route: read first, then planned a chain of queries because {'; '.join(why)}."
