"""SearChain's final answer written from evidence (``final_step="evidence"``, issue 50; beyond
the paper, whose tracing stays the default: ``methods/searchain/tracing.py``).

The paper's tracing writes the final content from the chain's [Query]-[Answer] pairs alone:
it never reads the passages that confirmed a node, nor any passage retrieved with the user's
own words. This step answers the user's question from

* the passages that confirmed, corrected or completed a node of the verified path (as its
  label says: node_labels.py), and
* the question-level top-k, retrieved with the user's own question,

deduplicated, capped in tokens, the strongest first and last (Liu et al. 2023, "Lost in the
Middle"), with the chain's pairs as the plan (IRCoT, Trivedi et al. 2023, reads the union of
its steps' passages). A pair IR did not confirm is marked "(unchecked)" in the plan and the
prompt says the documents win over it. ``[n]`` cites evidence passage n.

What it read is in ``meta.evidence`` (each passage's roles and tokens, what the cap left out);
``meta.final_read`` lists the passages the answering step read. A confirmed node answer the
final content does not state is listed in ``meta.dropped_node_answers``; when it states none
of them, ``errors`` says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from searchain import citations
from searchain.answers import clean_span, short_answer
from searchain.llm import LLM
from searchain.llm.base import find_tokenizer
from searchain.llm.prompting import call_template, is_chat
from searchain.methods.baseline_util import LABEL_INSTRUCTIONS, answer_ending
from searchain.methods.retrieve_read import extract_answer
from searchain.methods.searchain.config import SearChainConfig
from searchain.methods.short_answer_reading import asks_short_answer, read_short_answer
from searchain.retrieval.base import Retriever
from searchain.scoring.confidence import maxprob
from searchain.scoring.skc import supported_knowledge_count as skc
from searchain.text import contains_answer, normalize_answer
from searchain.types import Node, Passage, Trace

TEMPLATE = "searchain/evidence_answer"
# Statuses whose node IR checked and backed: its passage confirmed, corrected or completed it.
# A node IR corrected or completed with a span the label does not confirm (drawn from its own
# query, not confident, not a span: node_labels.ir_label) is "unconfirmed" and is not here.
CONFIRMED = ("verified", "corrected", "completed")
CHARS_PER_TOKEN = 4  # the estimate where the backend cannot count tokens here (remote, replay)
STOP = ("\n",)  # the completion form answers on one line, as retrieve-read
ROLE = {"verified": "confirms", "corrected": "corrects", "completed": "completes"}


@dataclass
class Evidence:
    """One passage the answering step reads, and why it is there."""

    passage: Passage
    roles: list[str] = field(default_factory=list)  # "question rank 2", "confirms r1.1"
    tokens: int = 0


def confirmed_nodes(path: list[Node]) -> list[Node]:
    """The path's nodes that IR confirmed, corrected or completed (the chain relied on them)."""
    return [n for n in path if n.answer and n.meta.get("status") in CONFIRMED and n.passages]


def unconfirmed_nodes(path: list[Node]) -> list[Node]:
    """The path's nodes IR searched but did not confirm (their answer is the LLM's guess)."""
    return [n for n in path if n.passages and n.meta.get("status") not in CONFIRMED]


def ranked_evidence(
    path: list[Node],
    question_hits: list[Passage],
    unconfirmed: bool = False,
    first_read: list[Passage] | None = None,
) -> list[Evidence]:
    """The evidence, strongest first: the passages a first read cited (``route="read-first"``
    when it chained: what it found is not lost to the cap), the question's top-1 (what a
    one-call reader leans on), then each confirmed node's passage from the last hop back (the
    last hop answers the question, earlier ones are bridges), then (``unconfirmed``) the top
    passage of each node IR searched but did not confirm, then the question's other hits in
    rank order. A passage found twice is one entry with both roles."""
    ordered: list[tuple[Passage, str]] = [(p, "cited by the first read") for p in first_read or []]
    if question_hits:
        ordered.append((question_hits[0], "question rank 1"))
    for n in reversed(confirmed_nodes(path)):
        ordered.append((n.passages[0], f"{ROLE[n.meta['status']]} {n.id}"))
    if unconfirmed:
        ordered += [(n.passages[0], f"searched for {n.id}") for n in unconfirmed_nodes(path)]
    ordered += [(p, f"question rank {r}") for r, p in enumerate(question_hits[1:], 2)]
    out: dict[str, Evidence] = {}
    for passage, role in ordered:
        key = passage.id or passage.text
        out.setdefault(key, Evidence(passage)).roles.append(role)
    return list(out.values())


def capped(ranked: list[Evidence], llm: LLM, max_tokens: int) -> tuple[list[Evidence], str]:
    """The strongest passages that fit ``max_tokens`` (the strongest one always), and how the
    tokens were counted."""
    tokenize = find_tokenizer(llm)
    counted = "model tokenizer" if tokenize else f"estimate ({CHARS_PER_TOKEN} characters a token)"
    kept, total = [], 0
    for e in ranked:
        text = citations.numbered_documents([e.passage])
        e.tokens = len(tokenize(text)) if tokenize else math.ceil(len(text) / CHARS_PER_TOKEN)
        if kept and total + e.tokens > max_tokens:
            continue
        kept.append(e)
        total += e.tokens
    return kept, counted


def edges_first(ranked: list[Evidence]) -> list[Evidence]:
    """Strongest first and last: ranks 1, 3, 5, ... then ..., 6, 4, 2."""
    return [*ranked[0::2], *reversed(ranked[1::2])]


def render_plan(path: list[Node]) -> str:
    """The chain's pairs, an answer IR did not confirm marked "(unchecked)"."""
    lines, i = [], 0
    for n in path:
        if not n.answer:
            continue
        i += 1
        mark = "" if n.meta.get("status") in CONFIRMED else " (unchecked)"
        lines.append(f"[Query {i}]: {n.query}\n[Answer {i}]: {clean_span(n.answer)}{mark}\n")
    return "".join(lines) or "(no step was answered)\n"


def states(content: str, answer: str) -> bool:
    """Whether ``content`` states ``answer``: as a phrase, or every one of its words
    ("Peter Schmeichel" in "Peter Bolesław Schmeichel")."""
    words = normalize_answer(answer).split()
    return bool(words) and (
        contains_answer(content, answer) or set(words) <= set(normalize_answer(content).split())
    )


def dropped_answers(content: str, path: list[Node]) -> list[str]:
    """The confirmed nodes whose answer (or the reader's span that confirmed it) the final
    content does not state."""
    out = []
    for n in confirmed_nodes(path):
        said = {clean_span(n.answer or ""), str((n.meta.get("reader") or {}).get("answer") or "")}
        if not any(states(content, s) for s in said):
            out.append(n.id)
    return out


def question_hits(question: str, retriever: Retriever, cfg: SearChainConfig) -> list[Passage]:
    """The passages the user's own question retrieves for the evidence step."""
    return retriever.search(question, k=cfg.evidence_k) if cfg.evidence_k else []


def evidence_answer(
    trace: Trace,
    question: str,
    path: list[Node],
    llm: LLM,
    retriever: Retriever,
    cfg: SearChainConfig,
    hits: list[Passage] | None = None,
    first_read: list[Passage] | None = None,
) -> None:
    """Final content, answer, references and citations from the evidence (module doc).
    ``hits``: the question's top-k when already retrieved; ``first_read``: the passages a
    first read cited (methods/searchain/route.py), which lead the evidence."""
    if hits is None:
        hits = question_hits(question, retriever, cfg)
    ablation = cfg.evidence_sources == "question"  # no node passage, no plan
    plan = "(none)\n" if ablation else render_plan(path)
    if ablation:
        path = []
    ranked = ranked_evidence(path, hits, cfg.evidence_sources == "path+question", first_read)
    kept, counted = capped(ranked, llm, cfg.evidence_max_tokens)
    evidence = edges_first(kept)
    references = [e.passage for e in evidence]
    trace.meta["evidence"] = {
        "passages": [{"id": e.passage.id, "roles": e.roles, "tokens": e.tokens} for e in evidence],
        "left_out": [e.passage.id for e in ranked if all(e is not k for k in kept)],
        "tokens_counted_by": counted,
    }
    trace.meta["final_read"] = [p.id for p in references]
    if not references:
        trace.errors.append(
            "nothing to answer from: no node was confirmed and the question retrieved no passage"
        )
        return
    result = call_template(
        llm,
        TEMPLATE,
        max_tokens=cfg.trace_max_tokens,
        stop=STOP,
        chat_stop=(),
        documents=citations.numbered_documents(references),
        plan=plan,
        question=question + LABEL_INSTRUCTIONS.get(cfg.task, ""),
        ending=answer_ending(cfg.task),
        logprobs=cfg.maxprob,
    )
    trace.usage.add(result.usage)
    text = result.text.strip()
    trace.meta["evidence_output"] = result.text
    _write(trace, text, references, cfg, llm)
    if cfg.maxprob:
        maxprob.record(trace, result, "evidence")
    dropped = dropped_answers(trace.final_content, path)
    trace.meta["dropped_node_answers"] = dropped
    if dropped and len(dropped) == len(confirmed_nodes(path)):
        trace.errors.append(
            "the final content states none of the confirmed nodes' answers "
            f"({', '.join(dropped)}): meta.dropped_node_answers"
        )


def _write(
    trace: Trace, text: str, references: list[Passage], cfg: SearChainConfig, llm: LLM
) -> None:
    if not text:
        trace.errors.append("the evidence step wrote no final content (meta.evidence_output)")
    cites, errors = citations.resolve(text, references)
    added: list = []
    written = text  # what the model wrote, before post-hoc marks split its sentences
    if cfg.post_cite:
        text, added = citations.post_cite(text, references)
    trace.references = references
    trace.final_content = text
    trace.citations = [*cites, *added]
    trace.errors.extend(errors)
    stated = short_answer(written) if is_chat(llm) else extract_answer(written)
    if asks_short_answer(cfg.task):
        stated = read_short_answer(llm, trace, written, stated)
    trace.answer = stated
    trace.meta["skc"] = skc(text, cites)
    trace.meta["skc_with_post_hoc"] = skc(text, trace.citations)
