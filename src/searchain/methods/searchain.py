"""SearChain (Xu et al., WWW 2024): Search-in-the-Chain.

The LLM plans a whole Chain-of-Query (CoQ); IR walks it node by node (top-1 passage + a
reader giving answer g and confidence f):

* completion — an ``[Unsolved Query]`` always gets ``g`` and the passage back;
* verification — a solved node whose answer disagrees with ``g`` gets corrective feedback
  only when ``f > θ`` (otherwise the LLM's knowledge is kept: IR must not mislead it).

The first node needing feedback ends the round; the LLM writes a new chain from that node
(a new branch of the Tree-of-Reasoning). When a chain passes, or after ``r_max`` rounds,
tracing has the LLM write the final content from the verified path with ``[k]`` marks, where
reference k is the supporting passage of node k.

Prompts are the paper's (``prompts/searchain/``), in both forms (``methods/searchain_rounds``):
for a chat model the paper's dialogue (chain = assistant turn, feedback = user turn); for a
base model one growing completion prompt that restates the chain up to the corrected node,
from which the model continues.

A chain with no parsable node but a ``[Final Content]`` answers from that content (source
"llm", uncited), as a chain that needed no retrieval. Every round's raw chain is kept in
``meta.chains``.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field

from searchain import citations, prompts
from searchain.answers import short_answer
from searchain.events import emit
from searchain.llm import LLM, prompt_form
from searchain.methods.coq_parser import Chain, CoQNode, parse_chain
from searchain.methods.retrieve_read import extract_answer
from searchain.methods.searchain_rounds import FeedbackText, Rounds, make_rounds
from searchain.readers.base import Reader, ReaderOutput
from searchain.readers.similarity import QueryMemory
from searchain.retrieval.base import Retriever
from searchain.text import contains_answer, rouge_l
from searchain.types import Node, Passage, Trace

log = logging.getLogger(__name__)

TASKS = {
    "multihop": "searchain/coq_multihop",  # HotpotQA, MuSiQue, 2Wiki, zsRE, T-REx
    "yesno": "searchain/coq_yesno",  # StrategyQA
    "factcheck": "searchain/coq_factcheck",  # FEVER
    "longform": "searchain/coq_longform",  # ELI5
}
NO_IR_TEMPLATE = "searchain/coq_noir"


@dataclass
class SearChainConfig:
    task: str = "multihop"
    theta: float | None = None  # None: the reader's own calibrated default
    alpha: float = 0.35  # ROUGE-L threshold for long-form consistency
    r_max: int = 5
    k: int = 1  # passages per node (the paper: top-1)
    verification: bool = True
    completion: bool = True
    use_ir: bool = True
    template: str | None = None  # a user CoQ template file overrides the task's
    max_tokens: int = 256
    trace_max_tokens: int = 160
    post_cite: bool = True  # cite uncited sentences post hoc (labelled so in the trace)
    # Cosine similarity at which a query counts as already processed. MiniLM puts paraphrases
    # at ~0.96 but also "Where/When was X born?" at 0.96: only near-identical wording is safe.
    dedup_threshold: float = 0.97


@dataclass
class Feedback:
    node: Node
    kind: str  # "verify" | "complete"
    reader: ReaderOutput
    passage: Passage


@dataclass
class _Run:
    """Mutable state of one question (the paper's M, R, T, r)."""

    question: str
    trace: Trace
    memory: QueryMemory
    path: list[Node] = field(default_factory=list)  # R: the verified reasoning path
    feedback_log: list[dict] = field(default_factory=list)


class SearChain:
    name = "searchain"

    def __init__(
        self,
        llm: LLM,
        retriever: Retriever | None,
        reader: Reader | None,
        config: SearChainConfig | None = None,
        embedder: object | None = None,
    ) -> None:
        self.llm, self.retriever, self.reader = llm, retriever, reader
        self.config = config or SearChainConfig()
        if self.config.task not in TASKS:
            raise ValueError(f"unknown task {self.config.task!r}; one of {sorted(TASKS)}")
        if self.config.use_ir and (retriever is None or reader is None):
            raise ValueError("SearChain with IR needs a retriever and a reader")
        if self.config.template:
            prompts.load(self.config.template)  # a missing or malformed file fails here, early
        self.embedder = embedder
        if self.config.use_ir:
            self.name = "searchain"
            if not self.config.verification:
                self.name += "-no-verification"
            if not self.config.completion:
                self.name += "-no-completion"
        else:
            self.name = "searchain-no-ir"

    @property
    def theta(self) -> float:
        if self.config.theta is not None:
            return self.config.theta
        return float(getattr(self.reader, "default_theta", 0.0))

    # -- the algorithm --------------------------------------------------------------------
    def run(self, question: str) -> Trace:
        t0 = time.perf_counter()
        cfg = self.config
        trace = Trace(question=question, method=self.name)
        memory = QueryMemory(self.embedder, cfg.dedup_threshold)  # type: ignore[arg-type]
        state = _Run(question, trace, memory)
        root = Node(id="q", query=question, answer=None, source="question")
        trace.nodes.append(root)

        template = cfg.template or (TASKS[cfg.task] if cfg.use_ir else NO_IR_TEMPLATE)
        form = prompt_form(self.llm)
        rounds: Rounds = make_rounds(self.llm, question, template, form)
        trace.errors.extend(getattr(rounds, "notes", []))
        parent, chain, chains = root.id, Chain([], "", ""), []
        emit("start", method=self.name, question=question)
        while trace.rounds < cfg.r_max:
            emit("round", n=trace.rounds + 1)
            offset = len(state.path) if rounds.cue else 0
            result = rounds.generate(cfg.max_tokens)
            trace.usage.add(result.usage)
            trace.rounds += 1
            chains.append(result.text)
            chain = parse_chain(rounds.cue + result.text)
            branch = self._add_branch(state, chain, parent, offset)
            emit("chain", n=trace.rounds, queries=[node.query for node in branch])
            if not cfg.use_ir:
                break
            fb = self._traverse(state, branch)
            if fb is None:
                break
            self._apply(state, fb)
            parent = fb.node.id
            said = FeedbackText(fb.kind, fb.node.query, fb.reader.answer, fb.passage.render())
            if not rounds.advance(trace, state.path, result.text, said, cfg.max_tokens):
                break
        if form == "chat" and not chain.nodes and not chain.final_content and chain.raw.strip():
            # A chat model that answers in prose, with no tag at all: its reply is its final
            # content (as a [Final Content] alone would be), said in the trace.
            chain = Chain([], chain.raw.strip(), chain.raw)
            trace.errors.append("the reply had no CoQ tag; its text is taken as [Final Content]")
        if cfg.use_ir and not state.path and not branch_nodes(trace) and chain.final_content:
            self._answer_from_content(state, chain, form)
        elif cfg.use_ir:
            self._tracing(state, rounds, form)
        else:
            self._no_ir_answer(state, chain, form)
        trace.meta.update(
            prompt_form=form,
            chains=chains,
            task=cfg.task,
            theta=self.theta,
            alpha=cfg.alpha,
            r_max=cfg.r_max,
            dedup=memory.kind,
            dedup_threshold=cfg.dedup_threshold,
            feedback=state.feedback_log,
            path=[n.id for n in state.path],
        )
        trace.wall_seconds = time.perf_counter() - t0
        emit("answer", text=trace.answer)
        return trace

    def _add_branch(self, state: _Run, chain: Chain, parent: str, offset: int) -> list[Node]:
        """Attach a round's chain to the ToR below ``parent`` (a path of nodes)."""
        nodes = []
        for c in chain.nodes:
            node = Node(
                id=f"r{state.trace.rounds}.{offset + c.index}",
                query=c.query,
                answer=c.answer,
                source="llm",
                parent=parent,
                meta={
                    "round": state.trace.rounds,
                    "step": offset + c.index,
                    "unsolved": c.unsolved,
                    "status": "unverified",
                },
            )
            state.trace.nodes.append(node)
            nodes.append(node)
            parent = node.id
        return nodes

    def _traverse(self, state: _Run, branch: list[Node]) -> Feedback | None:
        for node in branch:
            unsolved = bool(node.meta["unsolved"])
            # The official code never dedups unsolved queries: they still need an answer.
            if not unsolved:
                dup = state.memory.match(node.query)
                if dup is not None:
                    node.meta.update(status="duplicate", duplicate_of=dup[0], similarity=dup[1])
                    continue
            fb = self._ir(state, node, unsolved)
            state.memory.add(node.query)
            if fb is not None:
                return fb
        return None

    def _ir(self, state: _Run, node: Node, unsolved: bool) -> Feedback | None:
        cfg = self.config
        hits = self.retriever.search(node.query, k=cfg.k)  # type: ignore[union-attr]
        if not hits:
            node.meta["status"] = "no-passage"
            if not unsolved:
                state.path.append(node)
            return None
        top = hits[0]
        out = self.reader.read(node.query, top)  # type: ignore[union-attr]
        if out.usage is not None:
            state.trace.usage.add(out.usage)
        node.meta["reader"] = out.to_dict()
        node.passages = hits
        if unsolved:
            if cfg.completion and out.answer:
                return Feedback(node, "complete", out, top)
            node.meta["status"] = "unsolved"
            state.path.append(node)
            return None
        confident = cfg.verification and out.confidence > self.theta
        if confident and not self._consistent(out.answer, node.answer or "", top):
            return Feedback(node, "verify", out, top)
        node.meta["status"] = "verified"
        state.path.append(node)
        return None

    def _consistent(self, g: str, a: str, passage: Passage) -> bool:
        if self.config.task == "longform":
            return rouge_l(a, passage.text) >= self.config.alpha
        return contains_answer(a, g)

    def _apply(self, state: _Run, fb: Feedback) -> None:
        node = fb.node
        node.meta.update(status="corrected" if fb.kind == "verify" else "completed",
                         llm_answer=node.answer)  # fmt: skip
        node.answer = fb.reader.answer
        node.source = "ir-corrected" if fb.kind == "verify" else "ir-completed"
        state.path.append(node)
        emit("node", id=node.id, status=node.meta["status"], source=node.source)
        state.feedback_log.append(
            {
                "round": state.trace.rounds,
                "node": node.id,
                "kind": fb.kind,
                "query": node.query,
                "llm_answer": node.meta.get("llm_answer"),
                "reader_answer": fb.reader.answer,
                "confidence": fb.reader.confidence,
                "passage_id": fb.passage.id,
            }
        )

    # -- tracing --------------------------------------------------------------------------
    def _tracing(self, state: _Run, rounds: Rounds, form: str) -> None:
        trace, path = state.trace, [n for n in state.path if n.answer]
        references = [n.passages[0] if n.passages else Passage(id="", text="") for n in path]
        if not path:
            trace.errors.append("no verified query-answer pair to trace the answer from")
            return
        result = rounds.trace_final(path, self.config.trace_max_tokens)
        trace.usage.add(result.usage)
        text = result.text.strip() if form != "chat" else final_content_of(result.text)
        trace.meta["tracing_output"] = result.text
        if not text:
            trace.errors.append("tracing wrote no final content (its output is in meta)")
        trace.references = references
        cites, errors = citations.resolve(text, references)
        # A node without a passage (retrieval found nothing) cannot support a sentence.
        for c in cites:
            if c.passage_id == "":
                c.passage_id = None
                errors.append(f"citation [{c.mark}] points to a step that has no passage")
        added: list = []
        written = text  # what the model wrote, before post-hoc marks split its sentences
        if self.config.post_cite:
            text, added = citations.post_cite(text, references)
        trace.final_content = text
        trace.citations = [*cites, *added]
        trace.errors.extend(errors)
        trace.answer = short_answer(written) if form == "chat" else extract_answer(text)
        trace.meta["skc"] = skc(text, cites)  # what the LLM itself marked, as in the paper
        trace.meta["skc_with_post_hoc"] = skc(text, trace.citations)

    def _answer_from_content(self, state: _Run, chain: Chain, form: str) -> None:
        """A chain with no parsable node but a [Final Content]: the model needed no
        retrieval; its content is the answer (uncited, from the LLM), as the paper allows."""
        trace = state.trace
        trace.final_content = content_only(chain.final_content)
        trace.answer = short_answer(trace.final_content)
        trace.nodes.append(
            Node(id="r1.content", query=state.question, answer=trace.answer, source="llm",
                 parent="q", meta={"status": "final-content-only"})
        )  # fmt: skip
        trace.meta["answered_without_nodes"] = True
        trace.errors.append("the chain had no parsable node; answered from its [Final Content]")

    def _no_ir_answer(self, state: _Run, chain: Chain, form: str = "completion") -> None:
        trace = state.trace
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


def final_content_of(reply: str) -> str:
    """The [Final Content] paragraph of a chat reply to the tracing turn: the text after the
    tag (or the whole reply when the model left it out), up to another tag, as one line."""
    parsed = parse_chain(reply).final_content
    text = parsed if parsed.strip() else reply
    text = text.replace("**", "").strip()
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def skc(text: str, cites: list) -> int:
    """Supported knowledge count: sentences of the final content that carry at least one
    citation resolved to a passage (the paper's SKC, Table 4)."""
    supported = {c.sentence for c in cites if c.passage_id}
    return sum(1 for s in citations.split_sentences(text) if s in supported)
