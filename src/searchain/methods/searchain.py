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

Prompts are the paper's (``prompts/searchain/``). The model here is a base model, so a new
round is one growing completion prompt: the previous prompt and chain, the paper's feedback
message, then the chain restated up to the corrected node, from which the model continues.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from searchain import citations, prompts
from searchain.events import emit
from searchain.llm import LLM
from searchain.llm.base import prompt_fits
from searchain.methods.coq_parser import Chain, CoQNode, parse_chain
from searchain.methods.retrieve_read import extract_answer
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
# A new [Question] is a new demo; "According to this Reference" is the model echoing feedback.
STOP = ("\n[Question]", "[Question]:", "\n\n\n", "\nAccording to this Reference", "\nReference:")
# The final content is one paragraph; models that go on start a new tag or a new line.
TRACE_STOP = ("\n", "[Question", "[Query", "[Answer", "[Final Content", "[Unsolved")


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
    chain_prompt: str = ""  # the first-round CoQ prompt (demos + question)


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
        prompt = prompts.fill(template, question=question)
        state.chain_prompt = prompt
        parent, offset, chain = root.id, 0, Chain([], "", "")
        emit("start", method=self.name, question=question)
        while trace.rounds < cfg.r_max:
            emit("round", n=trace.rounds + 1)
            result = self.llm.complete(prompt, max_tokens=cfg.max_tokens, stop=STOP)
            trace.usage.add(result.usage)
            trace.rounds += 1
            # Later rounds' prompts end with the cue "[Query n]:" (see _next_prompt).
            cue = f"[Query {offset + 1}]:" if offset else ""
            chain = parse_chain(cue + result.text)
            branch = self._add_branch(state, chain, parent, offset)
            emit("chain", n=trace.rounds, queries=[node.query for node in branch])
            if not cfg.use_ir:
                break
            fb = self._traverse(state, branch)
            if fb is None:
                break
            self._apply(state, fb)
            parent = fb.node.id
            fitting = self._fitting_prompt(state, prompt, result.text, fb)
            if fitting is None:
                break
            prompt = fitting
            offset = len(state.path)
        if cfg.use_ir:
            self._tracing(state)
        else:
            self._no_ir_answer(state, chain)
        trace.meta.update(
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

    def _next_prompt(self, state: _Run, prompt: str, generated: str, fb: Feedback) -> str:
        template = (
            "searchain/feedback_verify" if fb.kind == "verify" else "searchain/feedback_complete"
        )
        message = prompts.fill(
            template,
            query=fb.node.query,
            answer=fb.reader.answer,
            question=state.question,
            reference=fb.passage.render(),
        )
        restated = "".join(
            f"[Query {i}]: {n.query}\n[Answer {i}]: {n.answer}\n"
            for i, n in enumerate(state.path, 1)
        )
        chain_text = generated.rstrip()
        # Base models given a finished-looking chain start a new [Question]; the cue makes the
        # new branch continue from the corrected node, as the paper's chat model does.
        cue = f"[Query {len(state.path) + 1}]:"
        return f'{prompt}{chain_text}\n{message}\n[Question]: "{state.question}"\n{restated}{cue}'

    def _fitting_prompt(self, state: _Run, prompt: str, generated: str, fb: Feedback) -> str | None:
        """The next round's prompt, kept inside the model's context window.

        The growing prompt holds every earlier round. When it would leave no room for a
        chain, the earlier rounds are dropped: the first-round prompt, the latest chain and
        its feedback, then the path so far. When even that does not fit, the rounds stop and
        tracing answers from the path verified so far (a round that cannot run must not fail
        the question). Backends that cannot count tokens here (remote servers) are not
        checked; their server rejects an oversized prompt, and the item records that error.
        """
        grown = self._next_prompt(state, prompt, generated, fb)
        if prompt_fits(self.llm, grown, self.config.max_tokens) is not False:
            return grown
        compact = self._next_prompt(state, state.chain_prompt, generated, fb)
        meta = state.trace.meta
        if prompt_fits(self.llm, compact, self.config.max_tokens):
            meta["compacted_rounds"] = [*meta.get("compacted_rounds", []), state.trace.rounds + 1]
            emit("note", text="earlier rounds dropped from the prompt to fit the context")
            return compact
        meta["stopped"] = "context window"
        state.trace.errors.append(
            f"round {state.trace.rounds + 1} not run: its prompt does not fit the model's "
            "context window; the answer is traced from the path verified so far"
        )
        return None

    # -- tracing --------------------------------------------------------------------------
    def _tracing(self, state: _Run) -> None:
        trace, path = state.trace, [n for n in state.path if n.answer]
        references = [n.passages[0] if n.passages else Passage(id="", text="") for n in path]
        if not path:
            trace.errors.append("no verified query-answer pair to trace the answer from")
            return
        # The paper's tracing asks for [Final Content] from the verified [Query]-[Answer]
        # pairs. We show the pairs in the CoQ prompt's own format, right after its demos
        # (whose final contents cite [k] per step), so base models follow the format too.
        pairs = "".join(
            f"[Query {i}]: {n.query}\n[Answer {i}]: {n.answer}\n" for i, n in enumerate(path, 1)
        )
        result = self.llm.complete(
            prompts.fill("searchain/tracing", chain_prompt=state.chain_prompt, pairs=pairs),
            max_tokens=self.config.trace_max_tokens,
            stop=TRACE_STOP,
        )
        trace.usage.add(result.usage)
        text = result.text.strip()
        trace.references = references
        cites, errors = citations.resolve(text, references)
        # A node without a passage (retrieval found nothing) cannot support a sentence.
        for c in cites:
            if c.passage_id == "":
                c.passage_id = None
                errors.append(f"citation [{c.mark}] points to a step that has no passage")
        added: list = []
        if self.config.post_cite:
            text, added = citations.post_cite(text, references)
        trace.final_content = text
        trace.citations = [*cites, *added]
        trace.errors.extend(errors)
        trace.answer = extract_answer(text)
        trace.meta["skc"] = skc(text, cites)  # what the LLM itself marked, as in the paper
        trace.meta["skc_with_post_hoc"] = skc(text, trace.citations)

    def _no_ir_answer(self, state: _Run, chain: Chain) -> None:
        trace = state.trace
        trace.final_content = chain.final_content.strip()
        trace.answer = extract_answer(trace.final_content) if trace.final_content else ""
        if not trace.answer and chain.nodes:
            last: CoQNode = chain.nodes[-1]
            trace.answer = last.answer or ""


def skc(text: str, cites: list) -> int:
    """Supported knowledge count: sentences of the final content that carry at least one
    citation resolved to a passage (the paper's SKC, Table 4)."""
    supported = {c.sentence for c in cites if c.passage_id}
    return sum(1 for s in citations.split_sentences(text) if s in supported)
