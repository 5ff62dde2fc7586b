"""Build a method by name, the way the CLI, the HTTP service and the evaluation harness do."""

from __future__ import annotations

import functools
import logging
from typing import Any

from searchain.llm import LLM
from searchain.methods.base import Method
from searchain.methods.settings import Setting, option, settings_of, unknown_message
from searchain.retrieval.base import Retriever

log = logging.getLogger(__name__)

# SearChain's ablations as method names, so one evaluation run can hold them side by side.
SEARCHAIN_ABLATIONS: dict[str, dict[str, bool]] = {
    "searchain-no-ir": {"use_ir": False},
    "searchain-no-verification": {"verification": False},
    "searchain-no-completion": {"completion": False},
}
# The papers' baselines (methods/prompting.py, self_ask.py, react.py); "direct-retrieval" is
# the papers' name for retrieve-read.
BASELINES = ("direct-prompting", "cot", "self-ask", "self-ask-no-search", "react")
ALIASES = {"direct-retrieval": "retrieve-read"}
METHODS = (
    "searchain", "retrieve-read", "rebel", "thinkcite", *SEARCHAIN_ABLATIONS, *BASELINES,
    *ALIASES,
)  # fmt: skip


# Each method once by the name that builds it (no alias, no ablation).
CANONICAL_METHODS = ("searchain", "retrieve-read", "rebel", "thinkcite", *BASELINES)

# The methods told the data set's task kind (``task=``): SearChain picks its prompt family
# from it, the baselines the label instruction they add to the question (FEVER "(SUPPORTS or
# REFUTES)?", StrategyQA Yes/No).
TASK_AWARE = ("searchain", *SEARCHAIN_ABLATIONS, "retrieve-read", *BASELINES, *ALIASES)
SEARCHAIN_FAMILIES = ("multihop", "yesno", "factcheck", "longform")


def task_options(name: str, task: str | None) -> dict[str, str]:
    """The options that tell method ``name`` the task kind of the data set it answers
    (``eval/datasets.py``'s ``Example.task``): ``{}`` for a method that takes none. SearChain
    has a CoQ prompt per family and asks any other task (open, list) as multi-hop QA."""
    if name not in TASK_AWARE or task is None:
        return {}
    if name == "searchain" or name in SEARCHAIN_ABLATIONS:
        return {"task": task if task in SEARCHAIN_FAMILIES else "multihop"}
    return {"task": task}


# Settings that builders below consume rather than a config: what they name is opened here
# (a reader checkpoint, a tools file, a reference model), so none is set by a remote client.
K = option("k", int, None, "Passages per search (default: the method's own).", ge=1,
           remote_le=20)  # fmt: skip
READER = option(
    "reader", str, "llm", "SearChain reader: llm (the LLM reads; confidence from its "
    "log-probs) or the path of a local DPR / SQuAD-style reader model.", remote=False,
    flag="reader",
)  # fmt: skip
DEDUP = option(
    "dedup", str, "auto", "Query de-duplication: embedding (MiniLM), exact, or auto "
    "(embedding when sentence-transformers is installed, else exact).",
    choices=("auto", "exact", "embedding"),
)  # fmt: skip
TOOLS = option(
    "tools", str, None, "REBEL: a tools file (YAML/TOML/JSON) of HTTP tools described in "
    "natural language (default: a search tool over the index).", remote=False, flag="tools",
)  # fmt: skip
NLI = option(
    "nli", str, "llm", "Think&Cite's NLI judge of R_a: llm, none (R_a off) or a local NLI "
    "model path.", remote=False, flag="nli", nullable=True,
)  # fmt: skip
REWARD_MODEL = option(
    "reward_model", str, "qwen2.5-coder-1.5b", "Think&Cite's R_g reward model π: an embedded "
    "model name, a GGUF path, openai:MODEL@URL, or policy (the policy scores itself).",
    remote=False, flag="reward-model",
)  # fmt: skip
REWARD_REFERENCE = option(
    "reward_reference", str, "qwen2.5-coder-0.5b", "Think&Cite's R_g reference model π_ref: "
    "the same kinds as reward_model, or none (R_g off: R_a only, said in the trace).",
    remote=False, flag="reward-reference",
)  # fmt: skip
# Objects a Python caller may hand a builder instead of a setting (not on any other surface).
PYTHON_OBJECTS = {"thinkcite": {"judge"}}
# Who shows a method's settings under which heading (`searchain ask --help`, `settings`).
GROUPS = {"searchain": "SearChain", "retrieve-read": "Retrieve-read", "rebel": "REBEL",
          "thinkcite": "Think&Cite"}  # fmt: skip


def canonical(name: str) -> str:
    """The method that ``name`` builds: an alias's target, an ablation's SearChain."""
    name = ALIASES.get(name, name)
    return "searchain" if name in SEARCHAIN_ABLATIONS else name


@functools.cache
def method_settings(name: str) -> tuple[Setting, ...]:
    """Every setting method ``name`` takes: its config's fields and its builder's options."""
    from searchain.methods import prompting
    from searchain.methods.react import ReActConfig
    from searchain.methods.rebel.config import RebelConfig
    from searchain.methods.retrieve_read import RetrieveReadConfig
    from searchain.methods.searchain.config import SearChainConfig
    from searchain.methods.self_ask import SelfAskConfig
    from searchain.methods.thinkcite import ThinkCiteConfig

    own: dict[str, tuple[Setting, ...]] = {
        "searchain": (*settings_of(SearChainConfig), READER, DEDUP),
        "retrieve-read": settings_of(RetrieveReadConfig),
        "rebel": (*settings_of(RebelConfig), K, TOOLS, DEDUP),
        "thinkcite": (*ThinkCiteConfig.settings(), NLI, REWARD_MODEL, REWARD_REFERENCE),
        "direct-prompting": settings_of(prompting.DirectConfig),
        "cot": settings_of(prompting.CoTConfig),
        "self-ask": settings_of(SelfAskConfig),
        "self-ask-no-search": tuple(s for s in settings_of(SelfAskConfig) if s.name != "k"),
        "react": settings_of(ReActConfig),
    }
    key = canonical(name)
    if key not in own:
        raise ValueError(f"unknown method {name!r}; available: {', '.join(METHODS)}")
    return own[key]


def check_options(name: str, options: dict[str, Any]) -> None:
    """Refuse a name method ``name`` does not take, or a value outside its setting's type,
    choices or range, before anything is opened (rules between settings are the config's)."""
    settings = {s.name: s for s in method_settings(name)}
    unknown = set(options) - set(settings) - PYTHON_OBJECTS.get(canonical(name), set())
    if unknown:
        raise ValueError(unknown_message(name, unknown, settings))
    for key, value in options.items():
        if key in settings and (value is None or isinstance(value, bool | int | float | str)):
            settings[key].check(value)  # objects (a tools list, an LLM) are the caller's


def make_reader(spec: str, llm: LLM) -> Any:
    """``"llm"`` (the LLM reads, confidence from its log-probs) or the path of a local Hugging
    Face extractive reader (DPR reader or SQuAD-style QA model)."""
    if spec == "llm":
        from searchain.readers.llm_reader import LLMReader

        return LLMReader(llm)
    from searchain.readers.hf_reader import HFExtractiveReader

    return HFExtractiveReader(spec)


EXACT_FALLBACK = (
    "query de-duplication fell back to exact matching: sentence-transformers is not installed "
    "(scripts/install.sh dense), so paraphrased copies are not caught"
)


def make_embedder(dedup: str) -> Any:
    """``"embedding"`` (MiniLM from the dense extra), ``"exact"``, or ``"auto"``: embedding
    when the dense extra is installed, else exact matching — a fallback that is warned about
    and that every trace of the method states (:func:`dedup_note`)."""
    if dedup == "exact":
        return None
    try:
        from searchain.readers.similarity import Embedder

        # NumPy: a few short queries need no torch (whose import would take a core from
        # the first LLM call); a model it cannot run loads torch while the first chain is written.
        return Embedder(background=True, engine="numpy")
    except ImportError:
        if dedup == "embedding":
            raise
        log.warning(EXACT_FALLBACK)
        return None


def dedup_note(dedup: str, embedder: Any) -> str | None:
    """What a trace says when ``auto`` de-duplication had to fall back (None: it did not)."""
    return EXACT_FALLBACK if dedup == "auto" and embedder is None else None


def build_method(
    name: str,
    llm: LLM,
    retriever: Retriever | None,
    *,
    k: int | None = None,
    reader: str = "llm",
    dedup: str = "auto",
    **options: Any,
) -> Method:
    check_options(name, options)
    for s in (READER, DEDUP):  # the builder's own options: their values are checked here
        s.check(reader if s is READER else dedup)
    if k is not None:
        K.check(k)
    name = ALIASES.get(name, name)
    if name in SEARCHAIN_ABLATIONS:
        name, options = "searchain", {**options, **SEARCHAIN_ABLATIONS[name]}
    if name in BASELINES:
        return _baseline(name, llm, retriever, k, options)
    if name == "retrieve-read":
        from searchain.methods.retrieve_read import RetrieveRead

        return RetrieveRead(llm, retriever, **options, **({"k": k} if k else {}))  # type: ignore[arg-type]
    if name == "searchain":
        from searchain.methods.searchain import SearChain, SearChainConfig

        cfg = SearChainConfig(**options)
        if k:
            cfg.k = k
        embedder = make_embedder(dedup) if cfg.use_ir else None
        method = SearChain(
            llm,
            retriever if cfg.use_ir else None,
            make_reader(reader, llm) if cfg.use_ir else None,
            cfg,
            embedder=embedder,
        )
        method.dedup_note = dedup_note(dedup, embedder) if cfg.use_ir else None
        return method
    if name == "rebel":
        return _rebel(llm, retriever, k, dedup, options)
    if name == "thinkcite":
        return _thinkcite(llm, retriever, k, options)
    raise ValueError(f"unknown method {name!r}; available: {', '.join(METHODS)}")


def _rebel(
    llm: LLM, retriever: Retriever | None, k: int | None, dedup: str, options: dict[str, Any]
) -> Method:
    """REBEL with ``tools=`` a tools file (YAML/TOML/JSON), a list of Tool objects, or None:
    the paper's benchmark setting, a search tool over ``retriever``. Other options go to
    RebelConfig (max_depth, max_llm_calls, max_tool_calls, memory_check, ...)."""
    from searchain.methods.rebel import Rebel, RebelConfig
    from searchain.tools import SearchTool, default_tools, load_tools

    options = dict(options)
    spec = options.pop("tools", None)
    if spec is None:
        tools = default_tools(retriever)
    elif isinstance(spec, list | tuple):
        tools = list(spec)
    else:
        tools = load_tools(spec, retriever)
    if k:
        for t in tools:
            if isinstance(t, SearchTool):
                t.k = k
    embedder = make_embedder(dedup)
    method = Rebel(llm, tools, RebelConfig(**options), embedder=embedder)
    method.dedup_note = dedup_note(dedup, embedder)
    return method


def _thinkcite(
    llm: LLM, retriever: Retriever | None, k: int | None, options: dict[str, Any]
) -> Method:
    """Think&Cite. ``judge=`` an NLI judge object, or ``nli=`` ``"llm"`` (default) / a local
    HF NLI checkpoint path / ``None`` (R_a off); ``reward_model=`` / ``reward_reference=`` R_g's
    pair, specs or LLMs (``reward_models.py``; reference ``none``: R_a only, with a warning).
    Other options go to ThinkCiteConfig (max_iterations, family, ...)."""
    from searchain.methods.thinkcite import ThinkCite, ThinkCiteConfig
    from searchain.methods.thinkcite.reward_models import reward_llm
    from searchain.readers.nli import make_judge

    options = dict(options)
    judge = options.pop("judge", None)
    nli = options.pop("nli", "llm")
    nli = None if nli == "none" else nli  # "none": R_a off (recorded in the trace)
    ref_spec = options.pop("reward_reference", REWARD_REFERENCE.default)
    model_spec = options.pop("reward_model", REWARD_MODEL.default)
    cfg = ThinkCiteConfig.from_options(**options)
    # The pair is loaded only when R_g is on (use_rg=False or no reference: nothing opened).
    wanted = cfg.reward.use_rg and ref_spec not in (None, "none")
    reference = reward_llm(ref_spec, policy=llm, role="reward_reference") if wanted else None
    reward_model = reward_llm(model_spec, policy=llm, role="reward_model") if wanted else None
    if judge is None and nli:
        judge = make_judge(nli, llm)
    if retriever is None:
        raise ValueError("thinkcite needs a retriever")
    if k:
        cfg.agent.k = k
    return ThinkCite(
        llm, retriever, judge=judge, reward_model=reward_model, reference=reference, config=cfg
    )


def _baseline(
    name: str, llm: LLM, retriever: Retriever | None, k: int | None, options: dict[str, Any]
) -> Method:
    from searchain.methods import prompting
    from searchain.methods.react import ReAct
    from searchain.methods.self_ask import SelfAsk

    if name == "direct-prompting":
        return prompting.direct_prompting(llm, **options)
    if name == "cot":
        return prompting.chain_of_thought(llm, **options)
    if name == "self-ask-no-search":
        return SelfAsk(llm, None, **options)
    if k:  # passages per search; the methods without search have no use for it
        options = {**options, "k": k}
    if retriever is None:
        raise ValueError(f"{name} needs a retriever")
    if name == "self-ask":
        return SelfAsk(llm, retriever, **options)
    return ReAct(llm, retriever, **options)
