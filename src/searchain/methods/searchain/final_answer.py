"""SearChain's answer once the rounds end: by the configured final step (config.FINAL_STEPS),
from the first read when it answered (route.py), from a chain's bare [Final Content], or
without IR the chain's own."""

from __future__ import annotations

import re
from dataclasses import dataclass

from searchain.answers import short_answer
from searchain.llm import LLM
from searchain.methods.retrieve_read import extract_answer
from searchain.methods.searchain.config import SearChainConfig
from searchain.methods.searchain.coq_parser import Chain, CoQNode
from searchain.methods.searchain.drift import flag_drift
from searchain.methods.searchain.evidence_answer import evidence_answer
from searchain.methods.searchain.rounds import Rounds
from searchain.methods.searchain.route import adopt, kept_passages
from searchain.methods.searchain.tracing import tracing
from searchain.retrieval.base import Retriever
from searchain.scoring.confidence import maxprob
from searchain.types import Node, Passage, Trace


@dataclass
class Ended:
    """How the rounds ended: the verified path, the last chain, the rounds' state and prompt
    form, and (route="read-first") the question's hits, the first read and whether it chained."""

    path: list[Node]
    chain: Chain
    rounds: Rounds
    form: str
    hits: list[Passage] | None = None
    read: Trace | None = None
    chained: bool = True


def write_answer(
    trace: Trace,
    question: str,
    ended: Ended,
    cfg: SearChainConfig,
    llm: LLM,
    retriever: Retriever,
) -> None:
    """Final content, answer, references and citations of ``trace`` (module doc)."""
    path, chain, read = ended.path, ended.chain, ended.read
    if cfg.use_ir:
        flag_drift(trace, question)  # what each node searched, and whether it left the question
        # The configured final step (part of the configuration a calibrator holds for).
        trace.meta["final_step"] = cfg.final_step
        if cfg.final_step == "evidence":
            trace.meta["evidence_sources"] = cfg.evidence_sources
            trace.meta["evidence_k"] = cfg.evidence_k
    no_nodes = not path and not branch_nodes(trace)
    if read is not None and not ended.chained:
        adopt(trace, read)  # the read route: the first read is the answer
    elif read is None and cfg.use_ir and no_nodes and chain.final_content:
        answer_from_content(trace, question, chain)
    elif cfg.use_ir and cfg.final_step == "evidence":
        kept = kept_passages(read) if read is not None else None
        evidence_answer(trace, question, path, llm, retriever, cfg, ended.hits, kept)
        if read is not None and not trace.answer and read.answer:
            adopt(trace, read)
            trace.errors.append(
                "the chain's evidence step wrote no answer: the first read's is kept"
            )
    elif cfg.use_ir:
        tracing(trace, path, ended.rounds, ended.form, cfg)
    else:
        no_ir_answer(trace, chain, ended.form)
    trace.meta["hops"] = sum(1 for n in path if n.answer)  # <= 1: answered as one hop
    if cfg.maxprob and maxprob.KEY not in trace.meta:  # no final call wrote the answer
        maxprob.record_absent(trace, _no_final_call(trace, cfg))


def _no_final_call(trace: Trace, cfg: SearChainConfig) -> str:
    """Why no final call wrote the answer (so MaxProb has none), in words."""
    if not cfg.use_ir:
        return "SearChain without IR: the answer is the chain's own final content, no final call"
    if trace.meta.get("answered_without_nodes"):
        return "the chain had no node: the answer is its own [Final Content], no final call"
    return "no final call was made: nothing to answer from"


def answer_from_content(trace: Trace, question: str, chain: Chain) -> None:
    """A chain with no parsable node but a [Final Content]: the model needed no
    retrieval; its content is the answer (uncited, from the LLM), as the paper allows."""
    trace.final_content = content_only(chain.final_content)
    trace.answer = short_answer(trace.final_content)
    trace.nodes.append(
        Node(
            id="r1.content",
            query=question,
            answer=trace.answer,
            source="llm",
            parent="q",
            meta={"status": "final-content-only"},
        )
    )
    trace.meta["answered_without_nodes"] = True
    trace.errors.append("the chain had no parsable node; answered from its [Final Content]")


def no_ir_answer(trace: Trace, chain: Chain, form: str = "completion") -> None:
    trace.final_content = chain.final_content.strip()
    extract = short_answer if form == "chat" else extract_answer
    trace.answer = extract(trace.final_content) if trace.final_content else ""
    if not trace.answer and chain.nodes:
        last: CoQNode = chain.nodes[-1]
        trace.answer = last.answer or ""


def content_only(final_content: str) -> str:
    """A [Final Content] without the chain a looping model writes after it ("[Query] = ...")."""
    tags = r"\s\[(?:Query|Answer|Final Content|Question|Unsolved)"
    return re.split(tags, final_content)[0].strip()


def branch_nodes(trace: Trace) -> list[Node]:
    """The chain nodes of the ToR (every node but the question root)."""
    return [n for n in trace.nodes if n.id != "q"]
