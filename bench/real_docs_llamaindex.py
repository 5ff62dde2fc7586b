"""The LlamaIndex arm of ``bench/real_docs_answers.py``: run by the peer's own Python (the
virtual environment ``python -m bench.real_docs_answers setup`` creates), never by
searchain's.

A LlamaIndex pipeline with its documented defaults: ``SimpleDirectoryReader`` over the corpus
folder (recursive; PDFs by its default reader, one document per page with ``page_label``;
HTML as text, the default for a suffix it has no reader for), ``SentenceSplitter`` of 1,024
tokens, ``BM25Retriever`` top 5 and the default response synthesizer of
``RetrieverQueryEngine`` (``compact``), the model behind ``llama_cpp.server`` talked to by
``OpenAILike``. Three settings are not defaults, and none changes what is read or asked:
``exclude_hidden=False`` (the corpus lies under ``~/.cache``, and the reader's hidden-file
rule looks at every part of the absolute path, so it would find no file at all), the client's
``timeout`` (a 5,000-token prompt on one thread takes longer than its 60 s), and
``max_tokens=256``, LlamaIndex's own default output room (without it the server writes until
its context is full when a model does not stop). ``context_window`` is the served context
and ``is_chat_model=True``, as the ``OpenAILike`` documentation says to set them.

Reads ``{"id", "question"}`` lines on stdin; writes JSON lines on stdout: first
``{"versions", "documents", "nodes", "build_seconds"}``, then one per question with the
answer, the source nodes (file, page label, physical page, text), seconds and tokens, or an
``error``. Only the standard library and LlamaIndex are imported: searchain is not installed
here, and scoring is done by the caller with searchain's scorer.

    PEER_PYTHON bench/real_docs_llamaindex.py --corpus DIR --base-url URL --model NAME
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import traceback
from importlib import metadata
from typing import Any

PACKAGES = (
    "llama-index-core",
    "llama-index-llms-openai-like",
    "llama-index-retrievers-bm25",
    "llama-index-readers-file",
    "bm25s",
    "PyStemmer",
    "pypdf",
    "tiktoken",
    "openai",
)
CHUNK_SIZE = 1024
TOP_K = 5
# LlamaIndex's DEFAULT_NUM_OUTPUTS, the room its prompt helper leaves for the answer. Sent as
# the client's max_tokens: with none sent, llama_cpp.server writes until the context is full.
MAX_TOKENS = 256


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "missing"
    return out


def emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    sys.stdout.flush()


class UsageCounter:
    """Prompt and completion tokens of the LLM calls, as the endpoint reported them (read
    from LlamaIndex's instrumentation events)."""

    def __init__(self) -> None:
        from llama_index.core.instrumentation import get_dispatcher
        from llama_index.core.instrumentation.event_handlers import BaseEventHandler
        from llama_index.core.instrumentation.events.llm import (
            LLMChatEndEvent,
            LLMCompletionEndEvent,
        )

        counter = self
        self.reset()

        class Handler(BaseEventHandler):
            @classmethod
            def class_name(cls) -> str:
                return "BenchUsage"

            def handle(self, event: Any, **kwargs: Any) -> None:
                if isinstance(event, LLMChatEndEvent | LLMCompletionEndEvent):
                    counter.add(event.response)

        get_dispatcher().add_event_handler(Handler())

    def reset(self) -> None:
        self.calls, self.prompt, self.completion = 0, 0, 0

    def add(self, response: Any) -> None:
        self.calls += 1
        usage = getattr(getattr(response, "raw", None), "usage", None)
        extra = getattr(response, "additional_kwargs", None) or {}
        self.prompt += int(getattr(usage, "prompt_tokens", 0) or extra.get("prompt_tokens", 0))
        self.completion += int(
            getattr(usage, "completion_tokens", 0) or extra.get("completion_tokens", 0)
        )


def build(args: argparse.Namespace) -> tuple[Any, dict[str, int], int, int]:
    """The query engine, the physical page of each PDF page document, documents, nodes."""
    from llama_index.core import SimpleDirectoryReader
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.llms.openai_like import OpenAILike
    from llama_index.retrievers.bm25 import BM25Retriever

    documents = SimpleDirectoryReader(args.corpus, recursive=True, exclude_hidden=False).load_data()
    # The PDF reader makes one document per page, in order: its ordinal is the physical page
    # (``page_label`` is the PDF's own label: roman numerals, chapter-relative numbers).
    page_of: dict[str, int] = {}
    seen: dict[str, int] = {}
    for doc in documents:
        if "page_label" in doc.metadata:
            path = doc.metadata.get("file_path", "")
            seen[path] = seen.get(path, 0) + 1
            page_of[doc.doc_id] = seen[path]
    nodes = SentenceSplitter(chunk_size=CHUNK_SIZE).get_nodes_from_documents(documents)
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=TOP_K)
    llm = OpenAILike(
        model=args.model,
        api_base=args.base_url,
        api_key="not-needed",
        context_window=args.context_window,
        is_chat_model=True,
        timeout=args.timeout,
        max_tokens=MAX_TOKENS,
    )
    engine = RetrieverQueryEngine.from_args(retriever, llm=llm)
    return engine, page_of, len(documents), len(nodes)


def source(node_with_score: Any, page_of: dict[str, int]) -> dict[str, Any]:
    node = node_with_score.node
    meta = node.metadata
    return {
        "file_path": meta.get("file_path"),
        "file_name": meta.get("file_name"),
        "page_label": meta.get("page_label"),
        "page": page_of.get(node.ref_doc_id or ""),
        "score": node_with_score.score,
        "text": node.get_content(),
    }


def answer(engine: Any, usage: UsageCounter, page_of: dict[str, int], q: dict) -> dict:
    usage.reset()
    t0 = time.perf_counter()
    try:
        response = engine.query(q["question"])
    except Exception as e:  # recorded per item, not fatal
        return {
            "id": q["id"],
            "error": f"{type(e).__name__}: {e}",
            "trace": traceback.format_exc(limit=3),
            "seconds": time.perf_counter() - t0,
        }
    return {
        "id": q["id"],
        "answer": str(response.response or ""),
        "sources": [source(n, page_of) for n in response.source_nodes],
        "seconds": time.perf_counter() - t0,
        "llm_calls": usage.calls,
        "prompt_tokens": usage.prompt,
        "completion_tokens": usage.completion,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", help="the folder of documents")
    ap.add_argument("--base-url", help="the OpenAI-compatible endpoint, .../v1")
    ap.add_argument("--model", help="the endpoint's model name")
    ap.add_argument("--context-window", type=int, default=16384)
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--versions", action="store_true", help="print the versions and stop")
    args = ap.parse_args()
    if args.versions:
        emit({"versions": versions()})
        return
    logging.disable(logging.WARNING)  # pypdf's font notes, bm25s's progress
    t0 = time.perf_counter()
    engine, page_of, n_docs, n_nodes = build(args)
    usage = UsageCounter()
    emit(
        {
            "versions": versions(),
            "documents": n_docs,
            "nodes": n_nodes,
            "build_seconds": time.perf_counter() - t0,
        }
    )
    for line in sys.stdin:
        if line.strip():
            emit(answer(engine, usage, page_of, json.loads(line)))


if __name__ == "__main__":
    main()
