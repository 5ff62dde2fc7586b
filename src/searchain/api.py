"""The Python API: index a folder, ask a question, read the answer and its cited sources.

    from searchain.api import ask, index_folder

    index = index_folder("docs/", "docs-index")
    trace = ask("Which command resumes an interrupted evaluation run?", index=index)
    print(trace.final_content)
    for mark, passage in trace.cited().items():
        print(f"[{mark}] {passage.locator()}")

``ask`` takes the same methods, models and retrievers as ``searchain ask`` and returns the
same :class:`~searchain.types.Trace` (``.answer``, ``.final_content``, ``.citations``,
``.references``, ``.nodes``, ``.to_dict()``). For many questions, :func:`make_asker` opens the
model and index once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from searchain.methods.settings import Setting
from searchain.retrieval import BM25Index
from searchain.retrieval.base import Retriever
from searchain.retrieval.documents import IndexReport, index_documents
from searchain.types import Trace

__all__ = ["ask", "index_folder", "make_asker", "open_index", "settings"]


def index_folder(
    paths: str | Path | Sequence[str | Path],
    out: str | Path,
    **options: Any,
) -> BM25Index:
    """Index the documents under ``paths`` into the directory ``out`` and return the index.

    Re-running it re-reads only added and changed files. ``options`` are those of
    :func:`searchain.retrieval.documents.index_documents` (``include``, ``exclude``,
    ``max_words``, ``strict``, ...); :func:`index_folder_report` also returns what changed.
    """
    return index_folder_report(paths, out, **options)[0]


def index_folder_report(
    paths: str | Path | Sequence[str | Path], out: str | Path, **options: Any
) -> tuple[BM25Index, IndexReport]:
    """:func:`index_folder` and its report (added, changed, removed, unchanged, skipped)."""
    given = [paths] if isinstance(paths, str | Path) else list(paths)
    return index_documents(given, out, **options)


def open_index(path: str | Path) -> BM25Index:
    """Open an index made by :func:`index_folder` or ``searchain index``."""
    return BM25Index.load(path)


def make_asker(
    *,
    index: Retriever | str | Path | None = None,
    method: str = "searchain",
    llm: str = "local",
    model: str | None = None,
    base_url: str | None = None,
    api: str = "auto",
    k: int | None = None,
    cache: bool = True,
    **method_options: Any,
) -> Callable[[str], Trace]:
    """A function that answers questions, with the model and index opened once.

    ``index``: an index object, the path of one, or ``None`` for the bundled demo corpus.
    ``llm``/``model``/``base_url``/``api``: as ``searchain ask --llm/--model/--base-url/--api``
    (the local default: ``$SEARCHAIN_MODEL``, else Qwen2.5-Coder-1.5B-Instruct).
    ``method_options``: the method's settings (``theta=``, ``r_max=`` for SearChain, ...;
    :func:`settings` lists them), checked by name, type and range before any model runs.
    """
    from searchain.llm import make_llm
    from searchain.llm.models import answer_model
    from searchain.methods.base import traced
    from searchain.methods.registry import build_method
    from searchain.retrieval import default_index

    if index is None:
        retriever: Retriever = default_index()
    elif isinstance(index, str | Path):
        retriever = open_index(index)
    else:
        retriever = index
    if llm == "local":
        model = answer_model(model)  # the 1.5B instruct model, unless told otherwise
    client = make_llm(llm, model=model, base_url=base_url, api=api, cache=cache)
    runner = build_method(method, client, retriever, k=k, **method_options)
    return traced(runner, client)


def settings(method: str = "searchain") -> tuple[Setting, ...]:
    """The settings ``method`` takes as keyword options of :func:`ask` and
    :func:`make_asker` (name, type, default, allowed values, help), as ``searchain settings
    METHOD`` lists them. An unknown name or a value out of range is a ``ValueError``."""
    from searchain.methods.registry import method_settings

    return method_settings(method)


def ask(question: str, **options: Any) -> Trace:
    """Answer ``question`` with [n] citations; ``options`` as :func:`make_asker`'s."""
    return make_asker(**options)(question)
