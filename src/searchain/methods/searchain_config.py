"""SearChain's settings: the prompt family of each task and the knobs of Algorithm 1.

Defaults follow the paper (Xu et al., WWW 2024; ``../shared/spec/searchain.md``); where an
older behaviour of this code is kept as an option, the option says so. ``docs/searchain-
fidelity.md`` lists what still differs from the paper on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from searchain.methods.baseline_util import LABEL_INSTRUCTIONS

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


@dataclass
class SearChainConfig:
    task: str = "multihop"
    theta: float | None = None  # None: the reader's own calibrated default
    alpha: float = 0.35  # long-form consistency: ROUGE-L(a_i, d_i) > alpha (strictly)
    r_max: int = 5  # at most r_max rounds (chain generations), as the official code loops
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
    answer_after_feedback: str = "llm"  # see ANSWER_AFTER_FEEDBACK
    both_tags: str = "unsolved"  # see BOTH_TAGS
    # see TRACING_CONTEXTS. metadata "before": what the code did before this setting existed;
    # a run manifest leaves the setting out at that value, so earlier runs still resume.
    tracing_context: str = field(default="dialogue", metadata={"before": "dialogue"})
    answer_in_query: str = field(default="accept", metadata={"before": "accept"})
    # Passages the reader reads at once (the top ones, merged; the paper: the top-1). The
    # node's supporting passage is the best-ranked one that holds the reader's span.
    reader_passages: int = field(default=1, metadata={"before": 1})
    echo_retry: str = field(default="none", metadata={"before": "none"})  # see ECHO_RETRY
    # The chat tracing turn asks the [Question] as the CoQ prompt posed it, with the task's
    # label instruction (FEVER: "(SUPPORTS or REFUTES)?", the paper's question), and asks
    # for one of the labels; before, it asked the bare claim for "the short answer", and
    # the 1.5B model answered a claim with an entity or a sentence, not a label.
    label_in_tracing: bool = field(default=True, metadata={"before": False})
    question_position: str = field(default="instruction", metadata={"before": "instruction"})

    def inert_settings(self) -> set[str]:
        """Settings that change nothing under this configuration (a run manifest leaves them
        out, so a run made before they existed still resumes): the label instruction of
        tracing on a task without labels (HotpotQA's, MuSiQue's turn is the same word for
        word either way, tests/test_searchain_tracing.py)."""
        return set() if self.task in LABEL_INSTRUCTIONS else {"label_in_tracing"}

    def validate(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"unknown task {self.task!r}; one of {sorted(TASKS)}")
        if self.answer_after_feedback not in ANSWER_AFTER_FEEDBACK:
            raise ValueError(
                f"answer_after_feedback must be one of {ANSWER_AFTER_FEEDBACK}, "
                f"not {self.answer_after_feedback!r}"
            )
        if self.both_tags not in BOTH_TAGS:
            raise ValueError(f"both_tags must be one of {BOTH_TAGS}, not {self.both_tags!r}")
        if self.tracing_context not in TRACING_CONTEXTS:
            raise ValueError(
                f"tracing_context must be one of {TRACING_CONTEXTS}, not {self.tracing_context!r}"
            )
        if self.echo_retry not in ECHO_RETRY:
            raise ValueError(f"echo_retry must be one of {ECHO_RETRY}, not {self.echo_retry!r}")
        if self.echo_retry == self.tracing_context:  # greedy: the same call, the same copy
            raise ValueError(f"echo_retry={self.echo_retry!r} repeats the tracing call itself")
        if self.answer_in_query not in ANSWER_IN_QUERY:
            raise ValueError(
                f"answer_in_query must be one of {ANSWER_IN_QUERY}, not {self.answer_in_query!r}"
            )
        if self.question_position not in QUESTION_POSITIONS:
            raise ValueError(
                f"question_position must be one of {QUESTION_POSITIONS}, "
                f"not {self.question_position!r}"
            )
        if self.reader_passages < 1:
            raise ValueError(f"reader_passages must be at least 1, not {self.reader_passages}")
        if self.r_max < 1:
            raise ValueError(f"r_max must be at least 1, not {self.r_max}")

    def template_name(self) -> str:
        """The CoQ prompt this configuration sends in round 1."""
        name = self.template or (TASKS if self.use_ir else NO_IR_TASKS)[self.task]
        if self.question_position == "last":
            from searchain.prompts import QUESTION_LAST

            return name + QUESTION_LAST
        return name
