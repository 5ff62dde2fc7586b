"""Think&Cite's R_g compares a reward-model pair of its own (issue 29, T1), not the policy.

The paper's π is a DPO-aligned model and π_ref its reference, both separate from the policy;
here the default pair is Qwen2.5-Coder-1.5B-Instruct (π) and -0.5B-Instruct (π_ref), the
closest installed offline pair (``methods/thinkcite/reward_models.py`` says why). A policy
behind an API that returns no prompt log-probs gets its R_g from the pair.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from searchain.eval.methods import describe
from searchain.llm import LLMError, make_llm
from searchain.llm.models import CHUNKED, ChunkedModel
from searchain.methods.catalog import REWARD_MODEL, REWARD_REFERENCE, build_method, method_settings
from searchain.methods.thinkcite import reward_models
from searchain.methods.thinkcite.reward_models import reward_llm
from searchain.retrieval.demo import default_index


class NoCallLLM:
    """A policy that must never be asked anything (the pair's specs are checked first)."""

    backend, model, defaults, form = "local", "none", None, "completion"

    def complete(self, *a, **k):  # pragma: no cover - a call is the failure
        raise AssertionError("the policy was called")

    chat = complete


def test_the_default_pair_is_the_installed_instruct_pair_and_is_declared_once() -> None:
    assert (
        (REWARD_MODEL.default, REWARD_REFERENCE.default)
        == (
            reward_models.DEFAULT_REWARD_MODEL,
            reward_models.DEFAULT_REWARD_REFERENCE,
        )
        == ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b")
    )
    names = {s.name: s for s in method_settings("thinkcite")}
    assert not names["reward_model"].remote and not names["reward_reference"].remote
    assert "reference" not in names  # one name per thing: reward_reference


def test_specs_name_the_policy_no_model_or_fail_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = NoCallLLM()
    assert reward_llm("policy", policy=policy, role="reward_model") is policy  # type: ignore[arg-type]
    assert reward_llm("none", policy=policy, role="reward_reference") is None  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match=r"reward_reference not found.*embedded"):
        reward_llm(str(tmp_path / "no.gguf"), policy=policy, role="reward_reference")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="openai:MODEL@BASE_URL"):
        reward_llm("openai:nourl", policy=policy, role="reward_model")  # type: ignore[arg-type]
    # An embedded model whose packages are not installed: the error names the extra and the
    # way out (another model, or R_a alone), never a silent R_a-only run.
    ghost = ChunkedModel("ghost-1b", "ghost.gguf", ("searchain_no_such_pkg_part1",), 1, "0",
                         "ghost-extra", "not installed")  # fmt: skip
    monkeypatch.setitem(CHUNKED, "ghost-1b", ghost)
    monkeypatch.setattr(reward_models, "MODEL_NAMES", (*reward_models.MODEL_NAMES, "ghost-1b"))
    with pytest.raises(LLMError, match=r"reward_model 'ghost-1b'.*install.sh ghost-extra.*none"):
        reward_llm("ghost-1b", policy=policy, role="reward_model")  # type: ignore[arg-type]


def test_the_pair_is_opened_only_when_rg_runs(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.gguf")
    index = default_index()
    # R_g off (the ablation, or no reference): what the pair names is never opened.
    for off in ({"use_rg": False}, {"reward_reference": "none"}):
        m = build_method("thinkcite", NoCallLLM(), index, nli=None, reward_model=missing, **off)  # type: ignore[arg-type]
        assert m.reward_model is None and m.reference is None
        assert m.manifest_extra() == {}  # a run made with R_a alone keeps its manifest
    with pytest.raises(FileNotFoundError, match="reward_model not found"):
        build_method("thinkcite", NoCallLLM(), index, nli=None, reward_model=missing)  # type: ignore[arg-type]


@pytest.mark.slow
def test_an_api_policy_without_prompt_logprobs_gets_rg_from_the_local_pair(
    chat_server: str,
) -> None:
    """The T1 failure: a policy behind llama_cpp.server's chat API cannot score a given
    sentence, so R_g scored by the policy failed every evaluation. The default pair scores
    it instead: every written sentence has a finite, non-zero R_g, no expansion fails."""
    policy = make_llm("openai", model="qwen2.5-coder-0.5b", base_url=chat_server, api="chat",
                      cache=False, temperature=0.0)  # fmt: skip
    with pytest.raises(LLMError, match=r"cannot score"):
        policy.score_chat([{"role": "user", "content": "Say hi."}], "Hi.")
    method = build_method("thinkcite", policy, default_index(), nli=None, max_iterations=1,
                          n_children=2, max_reflections=1, n_demos=1)  # fmt: skip
    assert "1.5b" in method.reward_model.model.lower()
    assert "0.5b" in method.reference.model.lower()
    trace = method.run("Were Scott Derrickson and Ed Wood of the same nationality?")
    assert trace.meta["failed_expansions"] == 0, trace.errors
    reward = trace.meta["reward"]
    assert reward["r_g"] and not reward["r_a"]
    assert reward["reward_model"] == method.reward_model.model
    assert reward["reference_model"] == method.reference.model
    assert trace.meta["rg_forms"] == {"model": "chat", "reference": "chat"}
    parts = [n.meta["reward_parts"] for n in trace.nodes if n.meta["action"] == "output"]
    assert parts, "no sentence was written"
    assert all(p["r_g"] is not None and math.isfinite(p["r_g"]) and p["r_g"] != 0 for p in parts)
    # The run manifest records the pair, so a run with another pair is not resumed as this one.
    described = describe(method)
    assert described["reward_model"] == method.reward_model.model
    assert described["reward_reference"] == method.reference.model


def test_a_reward_model_that_is_the_policys_gguf_shares_its_loaded_model() -> None:
    """The default pair's π is the 1.5B, which is also `ask`'s policy: one model in memory,
    whatever thread count the policy was opened with."""
    from searchain.llm.local import LocalLLM

    policy = LocalLLM(n_threads=1)
    pi = reward_llm("gemma-3-270m", policy=policy, role="reward_model")
    assert pi is not policy and pi._llama is policy._llama  # type: ignore[union-attr]
