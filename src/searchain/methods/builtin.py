"""The built-in methods, one record each (``catalog.py`` says what a record holds).

The settings their builders consume rather than a config (``k``, the reader, de-duplication,
REBEL's tools, Think&Cite's judge and reward pair) are declared in ``builder_options.py``; each
record lists the ones its builder takes, so they reach every surface like any config field.
"""

from __future__ import annotations

from typing import Any

from searchain.methods import builder_options as bo
from searchain.methods import builders as b
from searchain.methods.record import MethodRecord

SEARCHAIN_FAMILIES = ("multihop", "yesno", "factcheck", "longform")

# The paper's SearChain (Xu et al., WWW 2024; docs/searchain.md "The paper preset"): the
# spec's hyper-parameters and every setting where this code offers an alternative to the
# paper, pinned to the paper's choice, so "searchain-paper" stays the paper when a default
# moves (a default that is the paper's today is pinned too). The Table reproductions
# (bench/quality.py) run with these settings.
SEARCHAIN_PAPER: dict[str, Any] = {
    "r_max": 5,  # at most 5 rounds (Algorithm 1)
    "alpha": 0.35,  # long-form consistency threshold
    "k": 1,  # top-1 passage per node (§3.3)
    "reader_passages": 1,  # the reader reads that one passage
    "final_step": "tracing",  # the final content from the verified pairs alone (§3.3)
    "question_position": "instruction",  # the CoQ prompt of figures 9-12, question inline
    "answer_after_feedback": "llm",  # the LLM answers a corrected node anew (§3.3)
    "both_tags": "unsolved",  # its server sends every [Unsolved Query] to completion
    "answer_in_query": "accept",  # a reader answer is g whatever its query names
    "echo_retry": "none",  # no second tracing call (the paper traces once)
    "yesno_check": "span",  # a Yes/No node is checked by the reader's span, as any node
    "tracing_context": "dialogue",  # a chat model traces after the rounds' dialogue
    "label_in_tracing": True,  # the question as the paper asks it (FEVER: the labels)
    "route": "chain",  # a Chain-of-Query for every question (no first read)
}


def _searchain_task(task: str) -> dict[str, Any]:
    """SearChain has a CoQ prompt per family and asks any other task (open, list) as
    multi-hop QA."""
    return {"task": task if task in SEARCHAIN_FAMILIES else "multihop"}


def _label_task(task: str) -> dict[str, Any]:
    """The baselines add the task's label instruction (StrategyQA Yes/No, FEVER labels)."""
    return {"task": task}


BUILTIN = (
    MethodRecord(
        "searchain",
        "plan a chain of queries, verify and complete it with IR, trace citations",
        "searchain.methods.searchain.config:SearChainConfig",
        b.build_searchain,
        options=(bo.READER, bo.DEDUP),
        group="SearChain",
        variants={
            "searchain-no-ir": {"use_ir": False},
            "searchain-no-verification": {"verification": False},
            "searchain-no-completion": {"completion": False},
            "searchain-paper": SEARCHAIN_PAPER,
        },
        task_options=_searchain_task,
    ),
    MethodRecord(
        "retrieve-read",
        "top-k passages, one answer",
        "searchain.methods.retrieve_read:RetrieveReadConfig",
        b.build_retrieve_read,
        group="Retrieve-read",
        aliases=("direct-retrieval",),  # the papers' name for it
        task_options=_label_task,
    ),
    MethodRecord(
        "rebel",
        "recursive subquestions answered with tools, see --tools",
        "searchain.methods.rebel.config:RebelConfig",
        b.build_rebel,
        options=(bo.K, bo.TOOLS, bo.DEDUP),
        group="REBEL",
        resources=b.rebel_resources,
        tree="searchain.methods.rebel.render:recursion_tree",
    ),
    MethodRecord(
        "thinkcite",
        "a long-form answer, 1-3 citations per sentence, found by tree search",
        "searchain.methods.thinkcite:ThinkCiteConfig",
        b.build_thinkcite,
        options=(bo.NLI, bo.REWARD_MODEL, bo.REWARD_REFERENCE),
        group="Think&Cite",
        python_objects=frozenset({"judge"}),
        resources=b.thinkcite_resources,
    ),
    MethodRecord(
        "direct-prompting",
        "the question alone, one answer",
        "searchain.methods.prompting:DirectConfig",
        b.build_direct_prompting,
        task_options=_label_task,
    ),
    MethodRecord(
        "cot",
        "chain-of-thought, then the answer",
        "searchain.methods.prompting:CoTConfig",
        b.build_cot,
        task_options=_label_task,
    ),
    MethodRecord(
        "self-ask",
        "follow-up questions answered by retrieve-then-read",
        "searchain.methods.self_ask:SelfAskConfig",
        b.build_self_ask,
        task_options=_label_task,
    ),
    MethodRecord(
        "self-ask-no-search",
        "follow-up questions the model answers itself",
        "searchain.methods.self_ask:SelfAskConfig",
        b.build_self_ask_no_search,
        without=("k",),
        task_options=_label_task,
    ),
    MethodRecord(
        "react",
        "a Search[...]/Finish[...] loop",
        "searchain.methods.react:ReActConfig",
        b.build_react,
        task_options=_label_task,
    ),
)


def builtin_records() -> tuple[MethodRecord, ...]:
    return BUILTIN
