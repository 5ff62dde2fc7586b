"""How each built-in method is built from an LLM, a retriever and its checked options.

A builder receives the settings that were given (its own defaults apply to the rest) and the
Python objects its record allows; ``catalog.build_method`` has already checked every value
against its declaration and applied the fixed settings of a variant (an ablation). A method
whose settings name something to open (a model pair, a judge, a tools file) has a resources
hook beside its builder: what a long-lived caller (the service) opens once and hands back."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from searchain.llm import LLM
from searchain.methods import builder_options as bo
from searchain.methods.base import Method
from searchain.retrieval.base import Retriever


def _needs(name: str, retriever: Retriever | None) -> Retriever:
    if retriever is None:
        raise ValueError(f"{name} needs a retriever")
    return retriever


def _yesno_judge(llm: LLM) -> Any:
    """SearChain's judge of yes/no nodes: the LLM itself, as Think&Cite's default R_a."""
    from searchain.readers.nli import make_judge

    return make_judge("llm", llm)


def build_searchain(llm: LLM, retriever: Retriever | None, options: dict[str, Any]) -> Method:
    from searchain.methods.searchain import SearChain, SearChainConfig

    options = dict(options)
    k = options.pop("k", None)
    reader = options.pop("reader", bo.READER.default)
    dedup = options.pop("dedup", bo.DEDUP.default)
    cfg = SearChainConfig(**options)
    if k:
        cfg.k = k
    embedder = bo.make_embedder(dedup) if cfg.use_ir else None
    method = SearChain(
        llm,
        retriever if cfg.use_ir else None,
        bo.make_reader(reader, llm) if cfg.use_ir else None,
        cfg,
        embedder=embedder,
        judge=_yesno_judge(llm) if cfg.use_ir and cfg.yesno_check == "nli" else None,
    )
    method.dedup_note = bo.dedup_note(dedup, embedder) if cfg.use_ir else None
    return method


def build_retrieve_read(llm: LLM, retriever: Retriever | None, options: dict[str, Any]) -> Method:
    from searchain.methods.retrieve_read import RetrieveRead

    options = {key: v for key, v in options.items() if not (key == "k" and v is None)}
    return RetrieveRead(llm, retriever, **options)  # type: ignore[arg-type]


def build_rebel(llm: LLM, retriever: Retriever | None, options: dict[str, Any]) -> Method:
    """REBEL with ``tools=`` a tools file (YAML/TOML/JSON), a list of Tool objects, or None:
    the paper's benchmark setting, a search tool over ``retriever``. Other options go to
    RebelConfig (max_depth, max_llm_calls, max_tool_calls, memory_check, ...)."""
    from searchain.methods.rebel import Rebel, RebelConfig
    from searchain.tools import SearchTool, default_tools, load_tools

    options = dict(options)
    spec = options.pop("tools", None)
    k = options.pop("k", None)
    dedup = options.pop("dedup", bo.DEDUP.default)
    if spec is None:
        tools = default_tools(retriever)
    elif isinstance(spec, list | tuple):  # copies: `k` is set on them per method
        tools = [copy.copy(t) for t in spec]
    else:
        tools = load_tools(spec, retriever)
    if k:
        for t in tools:
            if isinstance(t, SearchTool):
                t.k = k
    embedder = bo.make_embedder(dedup)
    method = Rebel(llm, tools, RebelConfig(**options), embedder=embedder)
    method.dedup_note = bo.dedup_note(dedup, embedder)
    return method


def rebel_resources(
    llm: LLM, retriever: Retriever | None, options: Mapping[str, Any]
) -> dict[str, Any]:
    """REBEL's tools file, read once (its tools are copied per method built)."""
    from searchain.tools import load_tools

    tools = options.get("tools")
    if tools is None or isinstance(tools, list | tuple):
        return {}
    return {"tools": load_tools(tools, retriever)}


def thinkcite_resources(
    llm: LLM, retriever: Retriever | None, options: Mapping[str, Any]
) -> dict[str, Any]:
    """Think&Cite's R_g pair (when R_g is on) and a local NLI checkpoint, opened once."""
    from searchain.methods.thinkcite.reward_models import pair_wanted, reward_llm
    from searchain.readers.nli import make_judge

    found: dict[str, Any] = {}
    reference = options.get(bo.REWARD_REFERENCE.name, bo.REWARD_REFERENCE.default)
    if pair_wanted(options.get("use_rg"), reference):
        for setting in (bo.REWARD_MODEL, bo.REWARD_REFERENCE):
            spec = options.get(setting.name, setting.default)
            found[setting.name] = reward_llm(spec, policy=llm, role=setting.name)
    nli = options.get(bo.NLI.name)
    if isinstance(nli, str) and nli not in ("llm", "none") and "judge" not in options:
        found["judge"] = make_judge(nli, llm)
    return found


def build_thinkcite(llm: LLM, retriever: Retriever | None, options: dict[str, Any]) -> Method:
    """Think&Cite. ``judge=`` an NLI judge object, or ``nli=`` ``"llm"`` (default) / a local
    HF NLI checkpoint path / ``None`` (R_a off); ``reward_model=`` / ``reward_reference=`` R_g's
    pair, specs or LLMs (``reward_models.py``; reference ``none``: R_a only, with a warning).
    Other options go to ThinkCiteConfig (max_iterations, family, ...)."""
    from searchain.methods.thinkcite import ThinkCite, ThinkCiteConfig
    from searchain.methods.thinkcite.reward_models import pair_wanted, reward_llm
    from searchain.readers.nli import make_judge

    options = dict(options)
    judge = options.pop("judge", None)
    nli = options.pop("nli", bo.NLI.default)
    nli = None if nli == "none" else nli  # "none": R_a off (recorded in the trace)
    ref_spec = options.pop("reward_reference", bo.REWARD_REFERENCE.default)
    model_spec = options.pop("reward_model", bo.REWARD_MODEL.default)
    k = options.pop("k", None)
    cfg = ThinkCiteConfig.from_options(**options)
    # The pair is loaded only when R_g is on (use_rg=False or no reference: nothing opened).
    wanted = pair_wanted(cfg.reward.use_rg, ref_spec)
    reference = reward_llm(ref_spec, policy=llm, role="reward_reference") if wanted else None
    reward_model = reward_llm(model_spec, policy=llm, role="reward_model") if wanted else None
    if judge is None and nli:
        judge = make_judge(nli, llm)
    retriever = _needs("thinkcite", retriever)
    if k:
        cfg.agent.k = k
    return ThinkCite(
        llm, retriever, judge=judge, reward_model=reward_model, reference=reference, config=cfg
    )


def _without_unset_k(options: dict[str, Any]) -> dict[str, Any]:
    return {key: v for key, v in options.items() if not (key == "k" and not v)}


def build_direct_prompting(
    llm: LLM, retriever: Retriever | None, options: dict[str, Any]
) -> Method:
    from searchain.methods import prompting

    return prompting.direct_prompting(llm, **options)


def build_cot(llm: LLM, retriever: Retriever | None, options: dict[str, Any]) -> Method:
    from searchain.methods import prompting

    return prompting.chain_of_thought(llm, **options)


def build_self_ask(llm: LLM, retriever: Retriever | None, options: dict[str, Any]) -> Method:
    from searchain.methods.self_ask import SelfAsk

    return SelfAsk(llm, _needs("self-ask", retriever), **_without_unset_k(options))


def build_self_ask_no_search(
    llm: LLM, retriever: Retriever | None, options: dict[str, Any]
) -> Method:
    from searchain.methods.self_ask import SelfAsk

    return SelfAsk(llm, None, **options)


def build_react(llm: LLM, retriever: Retriever | None, options: dict[str, Any]) -> Method:
    from searchain.methods.react import ReAct

    return ReAct(llm, _needs("react", retriever), **_without_unset_k(options))
