"""SearChain's tracing (the paper's §3.3): once the rounds end, the LLM writes the final
content from the verified path R, marking each sentence with ``[k]`` for the supporting passage
of node k. Which final step answers a run is ``final_answer.py``'s choice."""

from __future__ import annotations

import re

from searchain import citations
from searchain.answers import clean_span, short_answer
from searchain.methods.retrieve_read import extract_answer
from searchain.methods.searchain.config import SearChainConfig
from searchain.methods.searchain.coq_parser import parse_chain
from searchain.methods.searchain.rounds import Rounds
from searchain.scoring.confidence import maxprob
from searchain.scoring.skc import supported_knowledge_count as skc
from searchain.types import Node, Passage, Trace


def tracing(
    trace: Trace, path: list[Node], rounds: Rounds, form: str, cfg: SearChainConfig
) -> None:
    """Final content, answer, references and citations from the verified path ``path``."""
    path = [n for n in path if n.answer]
    references = [n.passages[0] if n.passages else Passage(id="", text="") for n in path]
    if not path:
        trace.errors.append("no verified query-answer pair to trace the answer from")
        trace.meta["final_read"] = []
        return
    result = rounds.trace_final(path, cfg.trace_max_tokens, cfg.tracing_context, cfg.maxprob)
    wrote = result  # the call whose output holds the answer (MaxProb reads its tokens)
    trace.usage.add(result.usage)
    text = result.text.strip() if form != "chat" else final_content_of(result.text)
    trace.meta["tracing_output"] = result.text
    trace.meta["tracing_context"] = cfg.tracing_context if form == "chat" else "demos"
    if text and echoes_tracing_prompt(text) and form == "chat" and cfg.echo_retry != "none":
        again = rounds.trace_final(path, cfg.trace_max_tokens, cfg.echo_retry, cfg.maxprob)
        trace.usage.add(again.usage)
        trace.meta["tracing_retry"] = {"context": cfg.echo_retry, "output": again.text}
        trace.errors.append(
            "tracing copied its prompt (kept in meta.tracing_output); asked again with "
            f"tracing_context={cfg.echo_retry} (meta.tracing_retry)"
        )
        if final_content_of(again.text):
            text, wrote = final_content_of(again.text), again
    if not text:
        trace.errors.append("tracing wrote no final content (its output is in meta)")
    elif echoes_tracing_prompt(text):
        # A small chat model may copy the tracing turn back instead of answering it; its
        # "answer" would be prompt text. The verified path still holds the answer.
        text = path_content(path)
        trace.meta["tracing_fallback"] = "echo"
        trace.errors.append(
            "tracing copied its prompt instead of writing the final content "
            "(kept in meta.tracing_output); the final content is the verified pairs' answers "
            "and the answer is the last pair's"
        )
    trace.references = references
    cites, errors = citations.resolve(text, references)
    # A node without a passage (retrieval found nothing) cannot support a sentence.
    for c in cites:
        if c.passage_id == "":
            c.passage_id = None
            errors.append(f"citation [{c.mark}] points to a step that has no passage")
    added: list = []
    written = text  # what the model wrote, before post-hoc marks split its sentences
    if cfg.post_cite:
        text, added = citations.post_cite(text, references)
    trace.final_content = text
    trace.citations = [*cites, *added]
    trace.errors.extend(errors)
    if trace.meta.get("tracing_fallback"):
        trace.answer = clean_span(path[-1].answer or "")
    else:
        trace.answer = short_answer(written) if form == "chat" else extract_answer(text)
    trace.meta["skc"] = skc(text, cites)  # what the LLM itself marked, as in the paper
    trace.meta["skc_with_post_hoc"] = skc(text, trace.citations)
    trace.meta["final_read"] = passages_read(trace, getattr(rounds, "traced", ""))
    if cfg.maxprob and trace.meta.get("tracing_fallback"):
        maxprob.record_absent(
            trace, "the answer is the last verified pair's, not the tracing call's"
        )
    elif cfg.maxprob:
        maxprob.record(trace, wrote, "tracing")


def passages_read(trace: Trace, sent: str) -> list[str]:
    """The ids of the trace's passages whose text the answering step was sent (tracing reads
    pairs; in a chat dialogue, the references that came with IR's feedback too)."""
    read: dict[str, None] = {}
    for node in trace.nodes:
        for p in node.passages:
            if p.text and p.text in sent:
                read.setdefault(p.id)
    return list(read)


# Fixed text of the tracing turn (prompts/searchain/tracing*.txt) that a final content never
# needs to say, and the pair tags a final content never carries.
_ECHO = re.compile(
    r"search engine has verified these|Write the \[Final Content\]|"
    r"\[(?:Query|Answer|Unsolved Query) ?\d*\]:",
    re.IGNORECASE,
)


def echoes_tracing_prompt(content: str) -> bool:
    """Whether a final content restates the tracing turn (its instruction or the
    ``[Query k]``/``[Answer k]`` pairs) instead of answering it."""
    return bool(_ECHO.search(content))


def path_content(path: list[Node]) -> str:
    """A final content made of the verified answers, each marked with its pair's passage."""
    return " ".join(f"{clean_span(n.answer or '')} [{k}]." for k, n in enumerate(path, 1))


def final_content_of(reply: str) -> str:
    """The [Final Content] paragraph of a chat reply to the tracing turn: the text after the
    tag (or the whole reply when the model left it out), up to another tag, as one line."""
    parsed = parse_chain(reply).final_content
    text = parsed if parsed.strip() else reply
    text = text.replace("**", "").strip()
    return " ".join(line.strip() for line in text.splitlines() if line.strip())
