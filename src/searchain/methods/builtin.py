"""The built-in methods, one record each (``catalog.py`` says what a record holds).

The settings their builders consume rather than a config (``k``, the reader, de-duplication,
REBEL's tools, Think&Cite's judge and reward pair) are declared in ``builder_options.py``; each
record lists the ones its builder takes, so they reach every surface like any config field.
"""

from __future__ import annotations

from typing import Any

from searchain.methods import builder_options as bo
from searchain.methods.record import MethodRecord
from searchain.methods.settings import Setting, settings_of

SEARCHAIN_FAMILIES = ("multihop", "yesno", "factcheck", "longform")


def _searchain_task(task: str) -> dict[str, Any]:
    """SearChain has a CoQ prompt per family and asks any other task (open, list) as
    multi-hop QA."""
    return {"task": task if task in SEARCHAIN_FAMILIES else "multihop"}


def _label_task(task: str) -> dict[str, Any]:
    """The baselines add the task's label instruction (StrategyQA Yes/No, FEVER labels)."""
    return {"task": task}


def _searchain_settings() -> tuple[Setting, ...]:
    from searchain.methods.searchain.config import SearChainConfig

    return (*settings_of(SearChainConfig), bo.READER, bo.DEDUP)


def _retrieve_read_settings() -> tuple[Setting, ...]:
    from searchain.methods.retrieve_read import RetrieveReadConfig

    return settings_of(RetrieveReadConfig)


def _rebel_settings() -> tuple[Setting, ...]:
    from searchain.methods.rebel.config import RebelConfig

    return (*settings_of(RebelConfig), bo.K, bo.TOOLS, bo.DEDUP)


def _thinkcite_settings() -> tuple[Setting, ...]:
    from searchain.methods.thinkcite import ThinkCiteConfig

    return (*ThinkCiteConfig.settings(), bo.NLI, bo.REWARD_MODEL, bo.REWARD_REFERENCE)


def _direct_settings() -> tuple[Setting, ...]:
    from searchain.methods.prompting import DirectConfig

    return settings_of(DirectConfig)


def _cot_settings() -> tuple[Setting, ...]:
    from searchain.methods.prompting import CoTConfig

    return settings_of(CoTConfig)


def _self_ask_settings() -> tuple[Setting, ...]:
    from searchain.methods.self_ask import SelfAskConfig

    return settings_of(SelfAskConfig)


def _self_ask_no_search_settings() -> tuple[Setting, ...]:
    return tuple(s for s in _self_ask_settings() if s.name != "k")


def _react_settings() -> tuple[Setting, ...]:
    from searchain.methods.react import ReActConfig

    return settings_of(ReActConfig)


def builtin_records() -> tuple[MethodRecord, ...]:
    from searchain.methods import builders as b

    return (
        MethodRecord(
            "searchain",
            "plan a chain of queries, verify and complete it with IR, trace citations",
            _searchain_settings,
            b.build_searchain,
            group="SearChain",
            variants={
                "searchain-no-ir": {"use_ir": False},
                "searchain-no-verification": {"verification": False},
                "searchain-no-completion": {"completion": False},
            },
            task_options=_searchain_task,
        ),
        MethodRecord(
            "retrieve-read",
            "top-k passages, one answer",
            _retrieve_read_settings,
            b.build_retrieve_read,
            group="Retrieve-read",
            aliases=("direct-retrieval",),  # the papers' name for it
            task_options=_label_task,
        ),
        MethodRecord(
            "rebel",
            "recursive subquestions answered with tools, see --tools",
            _rebel_settings,
            b.build_rebel,
            group="REBEL",
        ),
        MethodRecord(
            "thinkcite",
            "a long-form answer, 1-3 citations per sentence, found by tree search",
            _thinkcite_settings,
            b.build_thinkcite,
            group="Think&Cite",
            python_objects=frozenset({"judge"}),
        ),
        MethodRecord(
            "direct-prompting",
            "the question alone, one answer",
            _direct_settings,
            b.build_direct_prompting,
            task_options=_label_task,
        ),
        MethodRecord(
            "cot",
            "chain-of-thought, then the answer",
            _cot_settings,
            b.build_cot,
            task_options=_label_task,
        ),
        MethodRecord(
            "self-ask",
            "follow-up questions answered by retrieve-then-read",
            _self_ask_settings,
            b.build_self_ask,
            task_options=_label_task,
        ),
        MethodRecord(
            "self-ask-no-search",
            "follow-up questions the model answers itself",
            _self_ask_no_search_settings,
            b.build_self_ask_no_search,
            task_options=_label_task,
        ),
        MethodRecord(
            "react",
            "a Search[...]/Finish[...] loop",
            _react_settings,
            b.build_react,
            task_options=_label_task,
        ),
    )
