"""The settings a builder consumes rather than a config holds: what they name is opened when
the method is built (a reader checkpoint, a tools file, a reference model), so those are
``remote=False`` and no HTTP client sets them. Each method's component lists those it takes
beside its config's fields; to every surface they are settings like any other."""

from __future__ import annotations

import logging
from typing import Any

from searchain.llm import LLM
from searchain.methods.settings import option

log = logging.getLogger(__name__)

K = option("k", int, None, "Passages per search (default: the method's own).", ge=1, remote_le=20)
READER = option(
    "reader",
    str,
    "llm",
    "SearChain reader: llm (the LLM reads; confidence from its log-probs) or the path of a "
    "local DPR / SQuAD-style reader model.",
    remote=False,
    flag="reader",
)
DEDUP = option(
    "dedup",
    str,
    "auto",
    "Query de-duplication: embedding (the packaged GGUF embedder), exact, or auto "
    "(embedding when it is installed, else exact, said in the trace).",
    choices=("auto", "exact", "embedding"),
)
TOOLS = option(
    "tools",
    str,
    None,
    "REBEL: a tools file (YAML/TOML/JSON) of HTTP tools described in natural language "
    "(default: a search tool over the index).",
    remote=False,
    flag="tools",
)
NLI = option(
    "nli",
    str,
    "llm",
    "Think&Cite's NLI judge of R_a: llm, none (R_a off) or a local NLI model path.",
    remote=False,
    flag="nli",
    nullable=True,
)
REWARD_MODEL = option(
    "reward_model",
    str,
    "qwen2.5-coder-1.5b",
    "Think&Cite's R_g reward model π: an embedded model name, a GGUF path, "
    "openai:MODEL@URL, or policy (the policy scores itself).",
    remote=False,
    flag="reward-model",
)
REWARD_REFERENCE = option(
    "reward_reference",
    str,
    "qwen2.5-coder-0.5b",
    "Think&Cite's R_g reference model π_ref: the same kinds as reward_model, or none (R_g "
    "off: R_a only, said in the trace).",
    remote=False,
    flag="reward-reference",
)


def make_reader(spec: str, llm: LLM) -> Any:
    """``"llm"`` (the LLM reads, confidence from its log-probs) or the path of a local Hugging
    Face extractive reader (DPR reader or SQuAD-style QA model)."""
    if spec == "llm":
        from searchain.readers.llm_reader import LLMReader

        return LLMReader(llm)
    from searchain.readers.hf_reader import HFExtractiveReader

    return HFExtractiveReader(spec)


EXACT_FALLBACK = (
    "query de-duplication fell back to exact matching: the packaged embedding model is not "
    "installed (scripts/install.sh dense), so paraphrased copies are not caught"
)


def make_embedder(dedup: str) -> Any:
    """``"embedding"`` (the packaged GGUF embedder, run by llama.cpp), ``"exact"``, or
    ``"auto"``: embedding when the embedder is installed, else exact matching — a fallback
    that is warned about and that every trace of the method states (:func:`dedup_note`)."""
    if dedup == "exact":
        return None
    from searchain.readers.embedder_package import EmbedderNotInstalled
    from searchain.readers.embedders import open_embedder

    try:
        return open_embedder()
    except EmbedderNotInstalled:
        if dedup == "embedding":
            raise
        log.warning(EXACT_FALLBACK)
        return None


def dedup_note(dedup: str, embedder: Any) -> str | None:
    """What a trace says when ``auto`` de-duplication had to fall back (None: it did not)."""
    return EXACT_FALLBACK if dedup == "auto" and embedder is None else None
