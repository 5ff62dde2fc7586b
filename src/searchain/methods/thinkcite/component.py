"""Think&Cite's component: what every surface knows of it (its settings, its NLI judge and
reward model pair) and how it is built."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from searchain.llm import LLM
from searchain.methods import builder_options as bo
from searchain.methods.base import Method
from searchain.methods.component import MethodComponent, needs_retriever
from searchain.methods.thinkcite.method import ThinkCite, ThinkCiteConfig
from searchain.retrieval.base import Retriever


class ThinkCiteComponent(MethodComponent):
    name = "thinkcite"
    summary = "a long-form answer, 1-3 citations per sentence, found by tree search"
    config = ThinkCiteConfig
    options = (bo.NLI, bo.REWARD_MODEL, bo.REWARD_REFERENCE)
    group = "Think&Cite"
    python_objects = frozenset({"judge"})
    rank = 40

    @classmethod
    def build(cls, llm: LLM, retriever: Retriever | None, options: dict[str, Any]) -> Method:
        """Think&Cite. ``judge=`` an NLI judge object, or ``nli=`` ``"llm"`` (default) / a
        local HF NLI checkpoint path / ``None`` (R_a off); ``reward_model=`` /
        ``reward_reference=`` R_g's pair, specs or LLMs (``reward_models.py``; reference
        ``none``: R_a only, with a warning). Other options go to ThinkCiteConfig
        (max_iterations, family, ...)."""
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
        retriever = needs_retriever(cls.name, retriever)
        if k:
            cfg.agent.k = k
        return ThinkCite(
            llm, retriever, judge=judge, reward_model=reward_model, reference=reference, config=cfg
        )

    @classmethod
    def open_resources(
        cls, llm: LLM, retriever: Retriever | None, options: Mapping[str, Any]
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
