"""SearChain reading first and chaining when it must (``route="read-first"``) on the recorded
real outputs of the 0.5B Qwen instruct model (``tests/data/recordings/searchain_route.jsonl``):
run by the route's tests and by the viewer's."""

from __future__ import annotations

from searchain.llm.base import LLM
from searchain.methods.searchain import SEARCHAIN_PAPER, SearChain, SearChainConfig
from searchain.readers.llm_reader import LLMReader
from searchain.retrieval import BM25Index
from searchain.types import Trace

CHAT_MODEL = "qwen2.5-coder-0.5b"


def run(index: BM25Index, question: str, llm: LLM, **cfg) -> Trace:
    config = SearChainConfig(**{**SEARCHAIN_PAPER, "final_step": "evidence",
                                "route": "read-first", **cfg})  # fmt: skip
    return SearChain(llm, index, LLMReader(llm), config).run(question)
