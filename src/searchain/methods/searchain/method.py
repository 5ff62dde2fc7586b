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

Prompts are the paper's (``prompts/searchain/``), in both forms (``methods/searchain/rounds.py``):
for a chat model the paper's dialogue (chain = assistant turn, feedback = user turn); for a
base model one growing completion prompt that restates the chain up to the corrected node,
from which the model continues.

After feedback on node n the model gives its new answer a'_n (the root of the new branch,
``status="revised"``; the correct path R keeps the reader's g, as Algorithm 1 records it);
``answer_after_feedback="reader"`` writes g into the restated chain instead. A node with both
``[Unsolved Query]`` and ``[Answer]`` goes to completion (``both_tags``), as every unsolved
query does in the paper; ``meta.both_tag_nodes`` counts them.

A chain with no parsable node but a ``[Final Content]`` answers from that content (source
"llm", uncited), as a chain that needed no retrieval. Every round's raw chain is kept in
``meta.chains``. Settings: ``methods/searchain/config.py``; the answer once the rounds end:
``methods/searchain/final_answer.py``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from typing import Any

from searchain import prompts
from searchain.events import emit
from searchain.llm import LLM, prompt_form
from searchain.methods.searchain.config import SearChainConfig
from searchain.methods.searchain.coq_parser import Chain, parse_chain, same_query
from searchain.methods.searchain.final_answer import Ended, write_answer
from searchain.methods.searchain.node_labels import LABEL_RULE, ir_label, label, repeats_query
from searchain.methods.searchain.rounds import FeedbackText, Rounds, make_rounds
from searchain.methods.searchain.route import read_first
from searchain.methods.searchain.yesno_check import check_yes_no, yes_no_answer
from searchain.readers.base import UNGROUNDED, Reader, ReaderOutput, merged, supporting
from searchain.readers.query_memory import QueryMemory
from searchain.retrieval.base import Retriever
from searchain.text import contains_answer, rouge_l
from searchain.types import Node, Passage, Trace

log = logging.getLogger(__name__)


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
    judge: Any = None  # this question's NLI judge (yesno_check="nli"), its own memo and cost
    hits: list[Passage] | None = None  # the question's own top-k (route="read-first")
    read: Trace | None = None  # the first read (route="read-first")
    chains: bool = True  # whether the rounds run (False: the first read answers)


class SearChain:
    name = "searchain"

    def __init__(
        self,
        llm: LLM,
        retriever: Retriever | None,
        reader: Reader | None,
        config: SearChainConfig | None = None,
        embedder: object | None = None,
        judge: Any = None,
    ) -> None:
        self.llm, self.retriever, self.reader = llm, retriever, reader
        self.config = config or SearChainConfig()
        self.config.validate()
        if self.config.use_ir and (retriever is None or reader is None):
            raise ValueError("SearChain with IR needs a retriever and a reader")
        if self.config.use_ir and self.config.yesno_check == "nli" and judge is None:
            raise ValueError('yesno_check="nli" needs an NLI judge')
        self.judge = judge
        prompts.load(self.config.template_name())  # a missing or malformed file fails here
        self.embedder = embedder
        self.dedup_note: str | None = None  # set by the registry when "auto" fell back
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

    @property
    def revise(self) -> bool:
        return self.config.answer_after_feedback == "llm"

    # -- the algorithm --------------------------------------------------------------------
    def run(self, question: str) -> Trace:
        t0 = time.perf_counter()
        cfg = self.config
        trace = Trace(question=question, method=self.name)
        memory = QueryMemory(self.embedder, cfg.dedup_threshold)  # type: ignore[arg-type]
        state = _Run(question, trace, memory, judge=_fork(self.judge))
        root = Node(id="q", query=question, answer=None, source="question")
        trace.nodes.append(root)

        form = prompt_form(self.llm)
        labels_of = cfg.task if cfg.label_in_tracing else None
        rounds: Rounds = make_rounds(
            self.llm, question, cfg.template_name(), form, self.revise, labels_of
        )
        trace.errors.extend(getattr(rounds, "notes", []))
        if self.dedup_note:  # an "auto" de-duplication without its embedder
            trace.errors.append(self.dedup_note)
        parent, chain, chains = root.id, Chain([], "", ""), []
        fed: Node | None = None  # the node whose feedback the next chain answers
        emit("start", method=self.name, question=question)
        if cfg.reads_first:  # route.py: read first, chain when it must
            state.hits, state.read, taken = read_first(
                question, self.llm, self.retriever, self.reader, self.theta, cfg, trace
            )
            state.chains = taken == "chain"
        # At most r_max rounds (the spec's and the official code's bound; see the docs).
        while state.chains and trace.rounds < cfg.r_max:
            emit("round", n=trace.rounds + 1)
            offset = rounds.offset
            result = rounds.generate(cfg.max_tokens)
            trace.usage.add(result.usage)
            trace.rounds += 1
            chains.append(result.text)
            chain = parse_chain(rounds.cue + result.text)
            branch = self._add_branch(state, chain, parent, offset)
            if fed is not None and self.revise:
                self._revision(state, fed, branch)
            emit("chain", n=trace.rounds, queries=[node.query for node in branch])
            if not cfg.use_ir:
                break
            fb = self._traverse(state, branch)
            if fb is None:
                break
            self._apply(state, fb)
            parent, fed = fb.node.id, fb.node
            if trace.rounds >= cfg.r_max:
                break  # no round is left to answer this feedback: no prompt to build for it
            said = FeedbackText(fb.kind, fb.node.query, fb.reader.answer, fb.passage.render())
            if not rounds.advance(trace, state.path, result.text, said, cfg.max_tokens):
                break
        if form == "chat" and not chain.nodes and not chain.final_content and chain.raw.strip():
            # A chat model that answers in prose, with no tag at all: its reply is its final
            # content (as a [Final Content] alone would be), said in the trace.
            chain = Chain([], chain.raw.strip(), chain.raw)
            trace.errors.append("the reply had no CoQ tag; its text is taken as [Final Content]")
        self._answer(state, chain, rounds, form)
        self._record_settings(state, form, chains)
        if state.judge is not None:
            trace.usage.add(state.judge.usage)  # the yes/no checks' LLM calls
        trace.wall_seconds = time.perf_counter() - t0
        emit("answer", text=trace.answer)
        return trace

    def _record_settings(self, state: _Run, form: str, chains: list[str]) -> None:
        """What the answer was made with (part of the configuration a calibrator holds for:
        scoring/confidence/configuration.py) and what the run did, in the trace's meta."""
        cfg, trace = self.config, state.trace
        trace.meta.update(
            prompt_form=form,
            chains=chains,
            task=cfg.task,
            template=cfg.template_name(),
            theta=self.theta,
            k=cfg.k,
            reader=self.reader.name if self.reader is not None else None,
            yesno_check=cfg.yesno_check,
            alpha=cfg.alpha,
            r_max=cfg.r_max,
            dedup=state.memory.kind,
            dedup_threshold=cfg.dedup_threshold,
            answer_after_feedback=cfg.answer_after_feedback,
            both_tags=cfg.both_tags,
            answer_in_query=cfg.answer_in_query,
            label_rule=LABEL_RULE,
            both_tag_nodes=sum(1 for n in trace.nodes if n.meta.get("both_tags")),
            feedback=state.feedback_log,
            path=[n.id for n in state.path],
        )

    def _answer(self, state: _Run, chain: Chain, rounds: Rounds, form: str) -> None:
        """The answer once the rounds end (final_answer.py)."""
        ended = Ended(state.path, chain, rounds, form, state.hits, state.read, state.chains)
        retriever: Retriever = self.retriever  # type: ignore[assignment]
        write_answer(state.trace, state.question, ended, self.config, self.llm, retriever)

    def _add_branch(self, state: _Run, chain: Chain, parent: str, offset: int) -> list[Node]:
        """Attach a round's chain to the ToR below ``parent`` (a path of nodes)."""
        nodes = []
        to_completion = self.config.both_tags == "unsolved"
        for c in chain.nodes:
            meta = {
                "round": state.trace.rounds,
                "step": offset + c.index,
                "unsolved": c.unsolved or (c.both and to_completion),
                "status": "unverified",
            }
            if c.both:  # the model wrote [Unsolved Query] and [Answer] for this step
                meta["both_tags"] = True
            node = Node(
                id=f"r{state.trace.rounds}.{offset + c.index}",
                query=c.query,
                answer=c.answer,
                source="llm",
                parent=parent,
                meta=meta,
            )
            state.trace.nodes.append(node)
            nodes.append(node)
            parent = node.id
        return nodes

    def _revision(self, state: _Run, fed: Node, branch: list[Node]) -> None:
        """The new branch's root (q_n, a'_n): the model's new answer to the node that got
        feedback. The completion form cued it; a chat reply restates q_n when it does. It is
        the LLM's answer after IR, kept in the ToR; IR does not check it again (q_n is in M)."""
        if not branch or not same_query(branch[0].query, fed.query) or not branch[0].answer:
            # No new answer: an unsolved restatement goes to IR again, as the official
            # server sends every [Unsolved Query] line.
            state.trace.errors.append(
                f"round {state.trace.rounds}: the new chain gives no new answer to {fed.id}'s query"
            )
            return
        root = branch[0]
        root.meta.update(status="revised", revises=fed.id)
        fed.meta["revised_answer"] = root.answer
        if state.feedback_log and state.feedback_log[-1]["node"] == fed.id:
            state.feedback_log[-1]["revised_answer"] = root.answer

    def _traverse(self, state: _Run, branch: list[Node]) -> Feedback | None:
        for node in branch:
            if node.meta["status"] == "revised":
                continue  # the model's answer to the feedback it was just given
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
        hits = self.retriever.search(node.query, k=max(cfg.k, cfg.reader_passages))  # type: ignore[union-attr]
        if not hits:
            node.meta["status"] = "no-passage"
            if not unsolved:
                state.path.append(node)
            return None
        top = hits[0]
        if cfg.reader_passages > 1:
            read = hits[: cfg.reader_passages]
            out = self.reader.read(node.query, merged(read))  # type: ignore[union-attr]
            top = supporting(read, out.answer)
            out = replace(out, passage_id=top.id)
        else:
            out = self.reader.read(node.query, top)  # type: ignore[union-attr]
        if out.usage is not None:
            state.trace.usage.add(out.usage)
        node.meta["reader"] = out.to_dict()
        node.passages = [top, *(h for h in hits if h is not top)]  # [0]: what supports it
        if cfg.answer_in_query == "ignore" and repeats_query(out.answer, node.query):
            node.meta["reader"]["set_aside"] = "the answer repeats the query"
            out = replace(out, answer="", confidence=UNGROUNDED)
        if unsolved:
            if cfg.completion and out.answer:
                return Feedback(node, "complete", out, top)
            node.meta["status"] = "unsolved"
            state.path.append(node)
            return None
        said_yes = yes_no_answer(node.answer) if state.judge is not None else None
        if said_yes is not None and cfg.verification:
            return self._check_yes_no(state, node, said_yes, top)
        confident = cfg.verification and out.confidence > self.theta
        if confident and not self._consistent(out.answer, node.answer or "", top):
            return Feedback(node, "verify", out, top)  # when to correct: the paper's rule
        # The node keeps the LLM's answer (as the paper does); its label says only what the
        # evidence confirmed (node_labels.py), and what the check found when it did not.
        found = label(
            node.query, node.answer or "", out, self.theta, cfg.verification, passage=top.render()
        )
        node.meta.update(found.meta())
        state.path.append(node)
        return None

    def _check_yes_no(
        self, state: _Run, node: Node, said_yes: bool, top: Passage
    ) -> Feedback | None:
        """A node answered Yes or No, checked by whether its passage supports that answer
        or the opposite (``yesno_check="nli"``; methods/searchain/yesno_check.py)."""
        verdict = check_yes_no(state.judge, node.query, said_yes, top)
        node.meta["nli"] = verdict.detail
        if verdict.verdict == "contradicted":
            return Feedback(node, "verify", verdict.reader_output(top), top)
        node.meta["status"] = "verified" if verdict.verdict == "entailed" else "unconfirmed"
        if verdict.verdict == "inconclusive":
            p_yes, p_no = verdict.detail["Yes"], verdict.detail["No"]
            node.meta["check"] = (
                f"inconclusive: the NLI judge finds the passage supports Yes at {p_yes:.2f} "
                f"and No at {p_no:.2f}"
            )
        state.path.append(node)
        return None

    def _consistent(self, g: str, a: str, passage: Passage) -> bool:
        if self.config.task == "longform":
            # The paper (§3.3): consistent when ROUGE between a_i and d_i "is greater than
            # the threshold α" — strictly.
            return rouge_l(a, passage.text) > self.config.alpha
        return contains_answer(a, g)

    def _apply(self, state: _Run, fb: Feedback) -> None:
        """Record feedback: the node enters R as (q_i, g, d_i), Algorithm 1's R.add. Its label
        says whether the reader's answer passes the label's checks (node_labels.ir_label): a
        node that fails keeps the answer, labelled "unconfirmed" with what the check found."""
        node = fb.node
        node.meta.update(
            status="corrected" if fb.kind == "verify" else "completed", llm_answer=node.answer
        )
        node.answer = fb.reader.answer
        node.source = "ir-corrected" if fb.kind == "verify" else "ir-completed"
        if "nli" not in node.meta:  # a yes/no node the NLI judge corrected: entailment checked it
            found = ir_label(
                fb.kind, node.query, fb.reader, self.theta, passage=fb.passage.render()
            )
            node.meta.update(found.meta())
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


def _fork(judge: Any) -> Any:
    """A judge of one question: its own memo and its own cost (the run's is shared)."""
    return judge.fork() if judge is not None and hasattr(judge, "fork") else judge
