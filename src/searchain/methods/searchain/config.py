"""SearChain's settings: the prompt family of each task and the knobs of Algorithm 1.

Defaults follow the paper (Xu et al., WWW 2024; ``../shared/spec/searchain.md``); where an
older behaviour of this code is kept as an option, the option says so. ``docs/searchain-
fidelity.md`` lists what still differs from the paper on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass

from searchain.methods.baseline_util import LABEL_INSTRUCTIONS
from searchain.methods.searchain.route_rule import ROUTES, parse_triggers
from searchain.methods.searchain.yesno_check import YESNO_CHECKS
from searchain.methods.settings import check_settings, setting

# The CoQ prompt of each task with IR (the paper's figures 9-12) ...
TASKS = {
    "multihop": "searchain/coq_multihop",  # HotpotQA, MuSiQue, 2Wiki, zsRE, T-REx (fig. 11)
    "yesno": "searchain/coq_yesno",  # StrategyQA (fig. 10)
    "factcheck": "searchain/coq_factcheck",  # FEVER (fig. 9)
    "longform": "searchain/coq_longform",  # ELI5 (fig. 12)
}
# ... and without IR (SearChain w/o IR, Table 1/3): figure 8's instruction, with the task's
# question format and as many demos as the paper's Table 8 gives (2, StrategyQA 6, FEVER 4).
NO_IR_TASKS = {
    "multihop": "searchain/coq_noir",
    "yesno": "searchain/coq_noir_yesno",
    "factcheck": "searchain/coq_noir_factcheck",
    "longform": "searchain/coq_noir_longform",
}
NO_IR_TEMPLATE = NO_IR_TASKS["multihop"]

# After feedback on node n, who answers q_n in the new branch:
# * "llm" (the paper, §3.3: "LLM receives the feedback of IR, gives the new answer a'_i for
#   q_i, and generates a new CoQ with (q_i, a'_i) as the root node"): the completion prompt
#   restates the chain up to q_n and cues "[Answer n]:", so the model writes a'_n;
# * "reader" (this code's earlier behaviour): the reader's g is written as "[Answer n]: g"
#   and the model continues from "[Query n+1]:".
# Either way the correct path R keeps (q_n, g, d_n), as Algorithm 1 records it, and tracing
# and the references are built from R.
ANSWER_AFTER_FEEDBACK = ("llm", "reader")
# A node the model gave both an [Unsolved Query] and an [Answer] (small models echo both of
# the demos' alternatives):
# * "unsolved" (the paper: its server sends every [Unsolved Query] line to completion);
# * "answer" (this code's earlier behaviour): the answer wins and the node is verified.
BOTH_TAGS = ("unsolved", "answer")
# What a chat model sees when tracing writes the final content (the completion form always
# traces from the CoQ prompt and the verified pairs):
# * "dialogue" (this code's first chat form): the tracing turn follows the whole dialogue of
#   the rounds, the model's latest chain included;
# * "demos": the tracing turn follows only the CoQ instruction and its demos, so the verified
#   pairs are the only account of the question the model sees (a stale chain's unverified
#   answers cannot leak into the final content);
# * "alone": the tracing turn is the whole conversation (neither a stale chain nor the demos'
#   answers — "First for Women" — can leak into it).
TRACING_CONTEXTS = ("dialogue", "demos", "alone")
# When a chat model's tracing reply copies the tracing turn back (a small model does): "none"
# answers from the verified path (the pairs' answers; the last pair's as the answer), else
# tracing is asked once more in that context first (the path still backs a second copy).
ECHO_RETRY = ("none", *TRACING_CONTEXTS)
# A reader answer that the node's own query already says ("What county borders McDowell
# County?" -> "McDowell County") names the question's entity, not its answer:
# * "accept" (the paper, and this code before): it is g like any other;
# * "ignore": it is no answer — it neither corrects the LLM nor completes an unsolved node
#   (the reader's verdict stays in the node's meta, with why it was set aside).
ANSWER_IN_QUERY = ("accept", "ignore")
# Where the CoQ prompt states the question:
# * "instruction" (the paper): inline in the instruction at the top, and again after the
#   demos, so no two questions' prompts share more than the instruction's first words;
# * "last": only after the demos (the instruction says the [Question] comes after the
#   examples), so the instruction and demos are one static prefix that is prefilled once
#   and kept as a KV snapshot (``prompts.QUESTION_LAST``; bench/prefix_reuse.py).
QUESTION_POSITIONS = ("instruction", "last")
# How the answer is written once the rounds end (issue 50):
# * "tracing" (the paper, §3.3, and the default until the tune measurement picks one): the LLM
#   writes the final content from the verified [Query]-[Answer] pairs alone;
# * "evidence" (beyond the paper): the LLM answers the user's question from the passages that
#   confirmed, corrected or completed a node plus the question's own top-k, with the pairs as
#   its plan (methods/searchain/evidence_answer.py) — IRCoT's union of the steps' passages.
FINAL_STEPS = ("tracing", "evidence")
# What the evidence step reads: "chain+question" (the step itself) or "question" (the
# ablation: the question's own top-k alone, no node passage and no plan, so what the chain
# adds is visible); "path+question" adds the top passage of each node IR searched but did not
# confirm, ranked after the confirmed ones, so the passage can overrule the unchecked guess
# (on the tune items a guess "6 members" stood against no passage about that band).
EVIDENCE_SOURCES = ("chain+question", "question", "path+question")
# Whether a Chain-of-Query is planned for every question (route.py; ROUTES, route_rule.py):
# * "chain" (the paper): always;
# * "read-first" (issue 62): the evidence step first answers from the question's own top-k,
#   and the chain is planned only when a trigger of ``chain_when`` fires.


@dataclass
class SearChainConfig:
    task: str = setting(
        "multihop",
        "Prompt family: multihop (HotpotQA, MuSiQue, ...), yesno "
        "(StrategyQA), factcheck (FEVER), longform (ELI5).",
        choices=TASKS,
        flag="task",
    )
    theta: float | None = setting(
        None,
        "Reader confidence threshold θ (null: the reader's calibrated value).",
        ge=-100,
        le=100,
        flag="theta",
    )
    alpha: float = setting(
        0.35, "Long-form consistency: ROUGE-L(a_i, d_i) must exceed it.", ge=0, le=1
    )
    r_max: int = setting(5, "Maximum rounds (chain generations).", ge=1, remote_le=10, flag="r-max")
    k: int = setting(1, "Passages per node (the paper: top-1).", ge=1, remote_le=20)
    verification: bool = setting(
        True, "Ablation: let IR correct the LLM's answers.", flag="verification"
    )
    completion: bool = setting(True, "Ablation: let IR answer unsolved queries.", flag="completion")
    use_ir: bool = setting(True, "Ablation: --no-ir is SearChain without IR.", flag="ir")
    template: str | None = setting(
        None,
        "Your own CoQ prompt template file (first line '# fields: question').",
        remote=False,
        flag="template",
    )
    max_tokens: int = setting(256, "Tokens per chain generation.", ge=1, remote_le=1024)
    trace_max_tokens: int = setting(
        160, "Tokens of the traced final content.", ge=1, remote_le=1024
    )
    post_cite: bool = setting(True, "Cite uncited sentences post hoc (labelled so).")
    # Only near-identical wording is safe: on the 420 query pairs of the HotpotQA tune runs'
    # traces the packaged embedder (nomic-embed-text-v1.5) puts exactly the 4 rewordings of one
    # question at >= 0.99 (0.994-0.998) and "When did the band … achieve their first / second
    # major success?" at 0.966 (MiniLM, the embedder before it, put that pair at 0.982 and
    # needed 0.97).
    dedup_threshold: float = setting(
        0.99,
        "Cosine similarity (the packaged embedder) at which a query counts as already processed.",
        gt=0,
        le=1,
        flag="dedup-threshold",
    )
    answer_after_feedback: str = setting(
        "llm",
        "Who answers a corrected node in the new branch: llm (the paper) or reader.",
        choices=ANSWER_AFTER_FEEDBACK,
    )
    both_tags: str = setting(
        "unsolved",
        "A node with both [Unsolved Query] and [Answer]: unsolved (the paper) or answer.",
        choices=BOTH_TAGS,
    )
    # "before": what the code did before the setting existed; a run manifest leaves the
    # setting out at that value, so earlier runs still resume.
    tracing_context: str = setting(
        "dialogue",
        "What a chat model sees when tracing: dialogue, demos or alone.",
        choices=TRACING_CONTEXTS,
        before="dialogue",
    )
    answer_in_query: str = setting(
        "accept",
        "A reader answer its own query already names: accept (the paper) or ignore.",
        choices=ANSWER_IN_QUERY,
        before="accept",
    )
    # The node's supporting passage is the best-ranked one that holds the reader's span.
    reader_passages: int = setting(
        1,
        "Passages the reader reads at once (the paper: the top-1).",
        ge=1,
        remote_le=10,
        before=1,
    )
    echo_retry: str = setting(
        "none",
        "When chat tracing copies its turn back: none (answer from the verified "
        "path) or ask again in context dialogue, demos or alone.",
        choices=ECHO_RETRY,
        before="none",
    )
    # Before, tracing asked the bare claim for "the short answer", and the 1.5B model
    # answered a claim with an entity or a sentence, not a label.
    label_in_tracing: bool = setting(
        True,
        "Chat tracing asks the question with the task's label instruction (FEVER: "
        "SUPPORTS or REFUTES).",
        before=False,
    )
    # "last" by default (issue 31): judged on the tune items, it lost no answer (cover-EM
    # +10.0 [0, +25]) and makes the instruction and demos a prefix computed once
    # (docs/searchain-fidelity.md); "instruction" is the paper's prompt.
    question_position: str = setting(
        "last",
        "Where the CoQ prompt states the question: last (after the demos, so they "
        "are one static prefix, computed once) or instruction (the paper's prompt).",
        choices=QUESTION_POSITIONS,
        before="instruction",
    )

    # "span" (the paper): a yes/no node is checked like any other, by the reader's span,
    # which "No" can never be, so the check is at best inconclusive. "nli": whether the
    # passage supports the node's answer or the opposite one (methods/searchain/yesno_check.py).
    yesno_check: str = setting(
        "span",
        "How IR checks a node answered Yes or No: span (the reader's span, as any "
        "node) or nli (whether the passage supports that answer or the opposite).",
        choices=YESNO_CHECKS,
        before="span",
    )

    # Chosen by issue 50's registered rule on 40 tune items (results/evidence-step): evidence
    # with path+question 27 right, evidence 26, tracing 24. The paper's tracing is in the
    # searchain-paper preset, which the Table reproductions use.
    final_step: str = setting(
        "evidence",
        "How the answer is written: tracing (the paper: from the verified pairs) or "
        "evidence (from the nodes' confirming passages and the question's own top-k, "
        "the pairs as the plan).",
        choices=FINAL_STEPS,
        before="tracing",
    )
    evidence_k: int = setting(
        5,
        "final_step=evidence: passages retrieved with the user's own question.",
        ge=0,
        remote_le=20,
        before=5,
    )
    # IRCoT reads up to 15 passages; at ~130 tokens a HotpotQA passage, 1,000 tokens hold about
    # 7, which keeps the answering prompt near the paper's tracing turn in a chat dialogue.
    evidence_max_tokens: int = setting(
        1000,
        "final_step=evidence: token cap of the passages the answering step reads.",
        ge=50,
        remote_le=8000,
        before=1000,
    )

    evidence_sources: str = setting(
        "path+question",
        "final_step=evidence: chain+question (the nodes' confirming passages, the "
        "question's top-k, the pairs as the plan), path+question (also the passages of "
        "nodes IR did not confirm) or question (the ablation: the question's top-k alone).",
        choices=EVIDENCE_SOURCES,
        before="chain+question",
    )

    # Chosen by issue 62's registered rule on the 96 tune items of both rounds pooled
    # (results/searchain-route/tune-round2.md): read first, chain when the reader disagrees —
    # 60 right with 19 of 96 chained; the first round's uncited,reader-disagrees 58 (52
    # chained), the first read alone 57, always chaining 55. The paper's route (always chain)
    # is in the searchain-paper preset.
    route: str = setting(
        "read-first",
        "chain (the paper: plan a Chain-of-Query for every question) or read-first "
        "(answer from the question's own passages first; chain only when chain_when fires).",
        choices=ROUTES,
        before="chain",
    )
    chain_when: str = setting(
        "reader-disagrees",
        "route=read-first: the triggers that make SearChain chain after its first read, "
        "comma-separated: two-parts, no-answer, unstated, uncited, reader-disagrees, always.",
        remote=False,  # free text: set where the service is started, not per request
        before="two-parts,no-answer,unstated",
    )

    # Opt-in: the final call is sent with logprobs=True, which changes its cache key and, on
    # an endpoint without log-probabilities, records why MaxProb is absent
    # (scoring/confidence/maxprob).
    maxprob: bool = setting(
        False,
        "Record MaxProb, the mean token probability of the final answer in the call that "
        "wrote it (asked of that call: no extra call), as a confidence signal.",
        before=False,
    )

    def inert_settings(self) -> set[str]:
        """Settings that change nothing under this configuration (a run manifest leaves them
        out, so a run made before they existed still resumes): the label instruction of
        tracing on a task without labels (HotpotQA's, MuSiQue's turn is the same word for
        word either way, tests/methods/searchain/test_searchain_tracing.py)."""
        inert = set() if self.task in LABEL_INSTRUCTIONS else {"label_in_tracing"}
        if self.final_step == "tracing":  # the evidence step's knobs
            inert |= {"evidence_k", "evidence_max_tokens", "evidence_sources"}
        if not self.reads_first:  # the paper's route: a chain for every question
            inert |= {"route", "chain_when"}
        return inert

    @property
    def reads_first(self) -> bool:
        """Whether SearChain reads first (route.py): route=read-first where there is a first
        read to make — with IR and the evidence step. Without IR (the no-IR ablation) or
        with the paper's tracing step it always chains, as the paper does (docs/searchain.md)."""
        return self.route == "read-first" and self.use_ir and self.final_step == "evidence"

    def validate(self) -> None:
        check_settings(self)  # each setting's own type, choices and range
        if self.route == "read-first":
            parse_triggers(self.chain_when)  # an unknown trigger is refused by name
        if self.echo_retry == self.tracing_context:  # greedy: the same call, the same copy
            raise ValueError(f"echo_retry={self.echo_retry!r} repeats the tracing call itself")

    def template_name(self) -> str:
        """The CoQ prompt this configuration sends in round 1."""
        name = self.template or (TASKS if self.use_ir else NO_IR_TASKS)[self.task]
        if self.question_position == "last":
            from searchain.prompts import QUESTION_LAST

            return name + QUESTION_LAST
        return name
