"""Build a method by name, the way the CLI, the HTTP service and the evaluation harness do."""

from __future__ import annotations

import logging
from typing import Any

from searchain.llm import LLM
from searchain.methods.base import Method
from searchain.retrieval.base import Retriever

log = logging.getLogger(__name__)

METHODS = ("searchain", "retrieve-read")


def make_reader(spec: str, llm: LLM) -> Any:
    """``"llm"`` (the LLM reads, confidence from its log-probs) or the path of a local Hugging
    Face extractive reader (DPR reader or SQuAD-style QA model)."""
    if spec == "llm":
        from searchain.readers.llm_reader import LLMReader

        return LLMReader(llm)
    from searchain.readers.hf_reader import HFExtractiveReader

    return HFExtractiveReader(spec)


def make_embedder(dedup: str) -> Any:
    """``"embedding"`` (MiniLM from the dense extra), ``"exact"``, or ``"auto"``: embedding
    when the dense extra is installed, else exact matching (logged, and recorded in traces)."""
    if dedup == "exact":
        return None
    try:
        from searchain.readers.similarity import Embedder

        return Embedder()
    except ImportError:
        if dedup == "embedding":
            raise
        log.info("sentence-transformers not installed: query dedup falls back to exact match")
        return None


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
    if name == "retrieve-read":
        from searchain.methods.retrieve_read import RetrieveRead

        return RetrieveRead(llm, retriever, k=k or 5)  # type: ignore[arg-type]
    if name == "searchain":
        from searchain.methods.searchain import SearChain, SearChainConfig

        cfg = SearChainConfig(**options)
        if k:
            cfg.k = k
        return SearChain(
            llm,
            retriever if cfg.use_ir else None,
            make_reader(reader, llm) if cfg.use_ir else None,
            cfg,
            embedder=make_embedder(dedup) if cfg.use_ir else None,
        )
    raise ValueError(f"unknown method {name!r}; available: {', '.join(METHODS)}")
